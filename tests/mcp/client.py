"""A real MCP client (the official Python SDK, pinned in
tests/python/requirements.txt) for tests/integration/mcp_python.rs: connects
over Streamable HTTP with the given headers, lists the tools, makes the calls
it is given and prints one JSON object:

    {protocolVersion, sessionId, statuses, tools, calls: [result | {error}]}

or, when it cannot connect, {connectError, statuses}. `statuses` are the HTTP
status codes the server answered, in order.

    python client.py <url> '<{"headers": {…}, "mode": "auto", "calls": […]}>'

`mode` is the SDK's: "auto" probes for the stateless 2026-07-28 protocol and
falls back to the initialize handshake; "legacy" forces the handshake.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def describe(error):
    """The innermost messages of an exception (group), joined."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in error.exceptions)
    return f"{type(error).__name__}: {error}"


async def run(url, options):
    seen = {"statuses": [], "session": None}

    async def record(response):
        seen["statuses"].append(response.status_code)
        session = response.headers.get("mcp-session-id")
        if session:
            seen["session"] = session

    http = httpx2.AsyncClient(
        headers=options.get("headers", {}),
        timeout=httpx2.Timeout(30, read=300),
        event_hooks={"response": [record]},
    )
    out = {}
    try:
        async with http, Client(
            streamable_http_client(url, http_client=http),
            mode=options.get("mode", "auto"),
        ) as client:
            tools = await client.list_tools()
            calls = []
            for call in options.get("calls", []):
                try:
                    result = await client.call_tool(call["name"], call.get("arguments", {}))
                    calls.append(dump(result))
                except Exception as error:  # noqa: BLE001 - reported to the test
                    calls.append({"error": describe(error)})
            out = {
                "protocolVersion": client.protocol_version,
                "sessionId": seen["session"],
                "tools": [dump(tool) for tool in tools.tools],
                "calls": calls,
            }
    except BaseException as error:  # noqa: BLE001 - reported to the test
        if not out:
            out = {"connectError": describe(error)}
    out["statuses"] = seen["statuses"]
    return out


def main():
    url, options = sys.argv[1], json.loads(sys.argv[2])
    print(json.dumps(asyncio.run(run(url, options))))


if __name__ == "__main__":
    main()

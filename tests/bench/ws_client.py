"""An agent outside the host's crate, for `cargo bench --bench figures -- side_by_side`.

Speaks to a plugin's WebSocket server with the `websockets` package, as the
Python harnesses do, and prints one JSON object per figure group on stdout:

    ws_client.py sequential PORT TOKEN CALLS
    ws_client.py load PORT TOKEN CLIENTS REQUESTS
    ws_client.py agent PORT TOKEN REQUESTS
    ws_client.py hold PORT TOKEN BYTES

`agent` is one agent of the load in a process of its own, as agents are:
it connects, prints {"ready": true}, starts on a line of stdin and prints
every latency.

`hold` connects, prints {"ready": true}, then on each line of stdin sends one
request of BYTES bytes, waits for its answer and prints {"answered": true};
the connection stays open until stdin closes.
"""

import asyncio
import json
import sys
import time
import uuid

from websockets.asyncio.client import connect

HEADER = "x-pi-ide-authorization"
WARMUP = 50


async def open_agent(port, token):
    ws = await connect(
        f"ws://127.0.0.1:{port}/",
        additional_headers={HEADER: token},
        compression=None,
        max_size=None,
        ping_interval=None,
    )
    await call(ws, "initialize", {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "pi-ide", "version": "0.1.0"},
    })
    await ws.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    return ws


async def call(ws, method, params):
    """Sends one request and waits for its answer; notifications are skipped."""
    request_id = str(uuid.uuid4())
    await ws.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
    while True:
        message = json.loads(await ws.recv())
        if message.get("id") == request_id:
            return message


REQUESTS = {
    "ping": ("ping", {}),
    "tools_list": ("tools/list", {}),
    "get_diagnostics": ("tools/call", {"name": "getDiagnostics", "arguments": {}}),
}


def quantile(sorted_ms, q):
    return sorted_ms[round((len(sorted_ms) - 1) * q)]


async def sequential(port, token, calls):
    ws = await open_agent(port, token)
    figures = {}
    for name, (method, params) in REQUESTS.items():
        for _ in range(WARMUP):
            await call(ws, method, params)
        latencies = []
        for _ in range(calls):
            started = time.perf_counter_ns()
            await call(ws, method, params)
            latencies.append((time.perf_counter_ns() - started) / 1e6)
        latencies.sort()
        figures[name] = {"p50": quantile(latencies, 0.5), "p99": quantile(latencies, 0.99)}
    await ws.close()
    print(json.dumps(figures), flush=True)


async def load(port, token, clients, requests):
    agents = [await open_agent(port, token) for _ in range(clients)]
    print(json.dumps({"ready": True}), flush=True)

    async def flood(ws):
        latencies = []
        for n in range(requests):
            method, params = REQUESTS["tools_list" if n % 2 == 0 else "get_diagnostics"]
            started = time.perf_counter_ns()
            reply = await call(ws, method, params)
            latencies.append((time.perf_counter_ns() - started) / 1e6)
            assert "result" in reply, reply
        return latencies

    every = [ms for agent in await asyncio.gather(*map(flood, agents)) for ms in agent]
    every.sort()
    for ws in agents:
        await ws.close()
    print(json.dumps({
        "answered": len(every),
        "p50": quantile(every, 0.5),
        "p99": quantile(every, 0.99),
        "max": every[-1],
    }), flush=True)


async def agent(port, token, requests):
    ws = await open_agent(port, token)
    print(json.dumps({"ready": True}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    latencies = []
    for n in range(requests):
        method, params = REQUESTS["tools_list" if n % 2 == 0 else "get_diagnostics"]
        started = time.perf_counter_ns()
        reply = await call(ws, method, params)
        latencies.append((time.perf_counter_ns() - started) / 1e6)
        assert "result" in reply, reply
    await ws.close()
    print(json.dumps({"latencies": latencies}), flush=True)


async def hold(port, token, size):
    ws = await open_agent(port, token)
    print(json.dumps({"ready": True}), flush=True)
    loop = asyncio.get_running_loop()
    filler = "x" * size
    while await loop.run_in_executor(None, sys.stdin.readline):
        await call(ws, "ping", {"filler": filler})
        print(json.dumps({"answered": True}), flush=True)
    await ws.close()


def main():
    mode, port, token, *rest = sys.argv[1:]
    numbers = [int(n) for n in rest]
    run = {"sequential": sequential, "load": load, "agent": agent, "hold": hold}[mode]
    asyncio.run(run(int(port), token, *numbers))


if __name__ == "__main__":
    main()

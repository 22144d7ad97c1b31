//! MCP tool latency at the client vs the same work done directly inside
//! Neovim, on a warm C file with a real clangd: `find_references` against
//! `textDocument/references` sent from Lua, `get_file_problems` against
//! `vim.diagnostic.get` (diagnostics are pushed, there is no request),
//! each timed inside Neovim with `vim.uv.hrtime`; `get_project_problems`
//! at the client. The difference of the
//! medians is what the host (HTTP, MCP, the seam, its Lua) adds. `ping`
//! is the MCP round trip alone, `get_all_open_file_paths` adds one seam
//! call answered at once, `nvim_rpc` is a bare `nvim_exec_lua` round trip
//! from the benchmark's own connection.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::Session;
use crate::common::python_tools::python_tools;
use crate::mcp_client::McpClient;
use crate::report;

const CALLS: usize = 300;
const WARM_UP: usize = 20;

const MAIN_C: &str = "#include \"util.h\"\n\nint main(void) {\n  int total = add_numbers(1, 2);\n  int unused;\n  return total;\n}\n";

pub async fn run() {
    let session = Session::start().await;
    let root = session.work_dir.canonicalize().unwrap();
    session.write_file("compile_flags.txt", "-xc\n-Wall\n");
    session.write_file("util.h", "int add_numbers(int a, int b);\n");
    session.write_file(
        "util.c",
        "#include \"util.h\"\nint add_numbers(int a, int b) { return a + b; }\n",
    );
    session.write_file("main.c", MAIN_C);
    let clangd = python_tools().join("clangd");
    session
        .exec(&format!(
            "vim.api.nvim_create_autocmd('FileType', {{ pattern = 'c', callback = function(args)
               vim.lsp.start({{ name = 'clangd', cmd = {{ {clangd:?} }}, root_dir = {root:?} }},
                 {{ bufnr = args.buf }})
             end }})
             vim.cmd.edit('main.c')",
            clangd = clangd.to_str().unwrap(),
            root = root.to_str().unwrap(),
        ))
        .await;
    let (_, lock) = session.lockfile().await;
    let url = lock["mcpUrl"].as_str().expect("mcpUrl").to_owned();
    let token = lock["authToken"].as_str().unwrap().to_owned();
    let mut client = McpClient::connect(&url, &token).await;

    let references = json!({"filePath": "main.c", "line": 4, "column": 15});
    let problems = json!({"filePath": "main.c", "errorsOnly": false});
    warm_up(&mut client, &references, &problems).await;

    let at_client = time_tool(&mut client, "find_references", &references).await;
    let in_nvim = time_in_nvim(&session, REFERENCES_LUA).await;
    figures("find_references", &at_client, &in_nvim);

    let at_client = time_tool(&mut client, "get_file_problems", &problems).await;
    let in_nvim = time_in_nvim(&session, DIAGNOSTICS_LUA).await;
    figures("get_file_problems", &at_client, &in_nvim);

    // The loaded and kept files' diagnostics, with a pull that Lua answers
    // at once (clangd offers no workspace diagnostics).
    let mut project = time_tool(&mut client, "get_project_problems", &json!({})).await;
    report(
        "mcp_tools_get_project_problems_client_p50",
        percentile(&mut project, 0.5),
        "ms",
    );

    // One seam round trip (a Lua function that answers at once).
    let mut open = time_tool(&mut client, "get_all_open_file_paths", &json!({})).await;
    report(
        "mcp_tools_get_all_open_file_paths_client_p50",
        percentile(&mut open, 0.5),
        "ms",
    );
    // Neovim's own RPC round trip, from this process (nvim-rs over pipes).
    let mut rpc = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        session.lua("return 1").await;
        rpc.push(started.elapsed().as_secs_f64() * 1e3);
    }
    report("mcp_tools_nvim_rpc_p50", percentile(&mut rpc, 0.5), "ms");
    let mut pings = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        client.request("ping", json!({})).await;
        pings.push(started.elapsed().as_secs_f64() * 1e3);
    }
    report("mcp_tools_ping_p50", percentile(&mut pings, 0.5), "ms");
}

/// Until clangd answers with the usage and main.c's diagnostics are in.
async fn warm_up(client: &mut McpClient, references: &Value, problems: &Value) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = client
            .call_tool("find_references", references.clone())
            .await;
        let diagnosed = client
            .call_tool("get_file_problems", problems.clone())
            .await;
        let usages = found["structuredContent"]["locations"]
            .as_array()
            .map_or(0, Vec::len);
        let problems_found = diagnosed["structuredContent"]["errors"]
            .as_array()
            .map_or(0, Vec::len);
        if usages >= 1 && problems_found >= 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "clangd never warmed up: {found} {diagnosed}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for _ in 0..WARM_UP {
        client
            .call_tool("find_references", references.clone())
            .await;
        client
            .call_tool("get_file_problems", problems.clone())
            .await;
    }
}

/// `CALLS` calls of `tool`, one after another; latencies in ms.
async fn time_tool(client: &mut McpClient, tool: &str, arguments: &Value) -> Vec<f64> {
    let mut sample = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        let result = client.call_tool(tool, arguments.clone()).await;
        sample.push(started.elapsed().as_secs_f64() * 1e3);
        assert_ne!(result["isError"], true, "{tool}: {result}");
    }
    sample
}

/// `textDocument/references` at the same position, from Lua, each sent
/// when the previous one answered.
const REFERENCES_LUA: &str = "
local n = ...
local buf = vim.fn.bufnr('main.c')
local client = vim.lsp.get_clients({ bufnr = buf, name = 'clangd' })[1]
local params = { textDocument = { uri = vim.uri_from_bufnr(buf) },
  position = { line = 3, character = 14 }, context = { includeDeclaration = true } }
local times = {}
local function one()
  local started = vim.uv.hrtime()
  client:request('textDocument/references', params, function(err, result)
    assert(not err and result and #result > 0, 'no references')
    times[#times + 1] = (vim.uv.hrtime() - started) / 1e6
    if #times < n then one() else _G.bench_times = times end
  end, buf)
end
_G.bench_times = nil
one()
";

/// `vim.diagnostic.get` of the buffer, as any plugin reads problems.
const DIAGNOSTICS_LUA: &str = "
local n = ...
local buf = vim.fn.bufnr('main.c')
local times = {}
for i = 1, n do
  local started = vim.uv.hrtime()
  assert(#vim.diagnostic.get(buf) > 0, 'no diagnostics')
  times[i] = (vim.uv.hrtime() - started) / 1e6
end
_G.bench_times = times
";

/// Runs `lua` with `CALLS` and waits for the times it leaves in
/// `_G.bench_times`.
async fn time_in_nvim(session: &Session, lua: &str) -> Vec<f64> {
    session.lua_with(lua, vec![json!(CALLS)]).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let times = session.lua("return _G.bench_times").await;
        if let Some(list) = times.as_array() {
            return list.iter().filter_map(Value::as_f64).collect();
        }
        assert!(Instant::now() < deadline, "the Lua timing never finished");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn figures(tool: &str, at_client: &[f64], in_nvim: &[f64]) {
    let (mut client, mut nvim) = (at_client.to_vec(), in_nvim.to_vec());
    let client_p50 = percentile(&mut client, 0.5);
    let nvim_p50 = percentile(&mut nvim, 0.5);
    report(&format!("mcp_tools_{tool}_client_p50"), client_p50, "ms");
    report(
        &format!("mcp_tools_{tool}_client_p95"),
        percentile(&mut client, 0.95),
        "ms",
    );
    report(&format!("mcp_tools_{tool}_nvim_p50"), nvim_p50, "ms");
    report(
        &format!("mcp_tools_{tool}_nvim_p95"),
        percentile(&mut nvim, 0.95),
        "ms",
    );
    report(
        &format!("mcp_tools_{tool}_overhead_p50"),
        client_p50 - nvim_p50,
        "ms",
    );
}

/// The `q` quantile (nearest rank) of a sample.
fn percentile(sample: &mut [f64], q: f64) -> f64 {
    sample.sort_by(f64::total_cmp);
    sample[((sample.len() - 1) as f64 * q).round() as usize]
}

//! Neovim's (UI-thread) time for one `find_references` answer naming 500
//! files, from a language server inside Neovim (`tests/fixtures/fake_lsp.lua`)
//! that counts columns in UTF-8 on lines that are not ASCII: the time Neovim
//! spends handling the server's answer (its response callback, where the
//! plugin shapes or passes on the locations) plus the time of every seam
//! call the tool makes (the request, and the lines of edited buffers).
//! Measured with `vim.uv.hrtime` inside Neovim, median of the calls.

use std::time::Instant;

use serde_json::{Value, json};

use crate::common::{Session, repo_root};
use crate::mcp_client::McpClient;
use crate::{median, report};

const FILES: usize = 500;
const CALLS: usize = 40;
const WARM_UP: usize = 3;

pub async fn run() {
    let session = Session::start().await;
    let root = session.work_dir.canonicalize().unwrap();
    std::fs::create_dir(root.join("pkg")).unwrap();
    let mut locations = Vec::with_capacity(FILES);
    for i in 0..FILES {
        let line = format!("let é😀 = target; // {i}");
        let path = root.join(format!("pkg/f{i:03}.fake"));
        let body: String = (0..40).map(|n| format!("filler line {n}\n")).collect();
        std::fs::write(&path, format!("{line}\n{body}")).unwrap();
        let at = line.find("target").unwrap();
        locations.push(json!({"uri": format!("file://{}", path.display()),
            "range": {"start": {"line": 0, "character": at}, "end": {"line": 0, "character": at + 6}}}));
    }
    session.write_file("main.fake", "target();\n");
    let fixture = repo_root().join("tests/fixtures/fake_lsp.lua");
    session
        .lua_with(
            &format!(
                "vim.filetype.add({{ extension = {{ fake = 'fake' }} }})
                 dofile({fixture:?})({{ filetype = 'fake', encoding = 'utf-8', root = {root:?} }})
                 _G.fake_lsp.references = ...
                 local seam = require('pi-ide.seam')
                 local call = seam.call
                 _G.seam_ns = 0
                 seam.call = function(...)
                   local started = vim.uv.hrtime()
                   local result = {{ call(...) }}
                   _G.seam_ns = _G.seam_ns + (vim.uv.hrtime() - started)
                   return unpack(result)
                 end",
                fixture = fixture.to_str().unwrap(),
                root = root.to_str().unwrap(),
            ),
            vec![json!(locations)],
        )
        .await;
    let (_, lock) = session.lockfile().await;
    let url = lock["mcpUrl"].as_str().expect("mcpUrl").to_owned();
    let token = lock["authToken"].as_str().unwrap().to_owned();
    let mut client = McpClient::connect(&url, &token).await;
    let arguments = json!({"filePath": "main.fake", "line": 1, "column": 1});

    let (mut answer, mut seam, mut total, mut at_client) = (vec![], vec![], vec![], vec![]);
    for call in 0..WARM_UP + CALLS {
        session
            .exec("_G.fake_lsp.answer_ns = 0; _G.fake_lsp.answers = 0; _G.seam_ns = 0")
            .await;
        let started = Instant::now();
        let result = client.call_tool("find_references", arguments.clone()).await;
        let elapsed = started.elapsed().as_secs_f64() * 1e3;
        let found = result["structuredContent"]["locations"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(found, FILES, "{result}");
        let times = session
            .lua("return { _G.fake_lsp.answer_ns, _G.seam_ns, _G.fake_lsp.answers }")
            .await;
        assert_eq!(times[2], 1, "one answer per call");
        if call < WARM_UP {
            continue;
        }
        let ms = |v: &Value| v.as_f64().unwrap_or(f64::NAN) / 1e6;
        answer.push(ms(&times[0]));
        seam.push(ms(&times[1]));
        total.push(ms(&times[0]) + ms(&times[1]));
        at_client.push(elapsed);
    }
    report("references_500_files_ui_total_p50", median(total), "ms");
    report("references_500_files_ui_answer_p50", median(answer), "ms");
    report("references_500_files_ui_seam_calls_p50", median(seam), "ms");
    report("references_500_files_client_p50", median(at_client), "ms");
}

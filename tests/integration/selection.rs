//! selection_changed: what agents learn about the cursor and selection.

use serde_json::{Value, json};

use crate::common::Session;

async fn open(session: &Session, name: &str, contents: &str) -> String {
    let path = session.write_file(name, contents);
    session
        .exec(&format!("vim.cmd.edit('{}')", path.display()))
        .await;
    path.to_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_current_position_is_pushed_right_after_initialize() {
    let session = Session::start().await;
    let path = open(&session, "pushed.rs", "fn a() {}\nfn b() {}\nfn c() {}\n").await;
    session.exec("vim.api.nvim_win_set_cursor(0, {3, 3})").await;
    let mut agent = session.connect().await;
    let params = agent.notification("selection_changed", |_| true).await;
    assert_eq!(params["filePath"], path);
    assert_eq!(params["fileUrl"], format!("file://{path}"));
    assert_eq!(params["text"], "");
    assert_eq!(
        params["selection"],
        json!({"start": {"line": 2, "character": 3}, "end": {"line": 2, "character": 3}, "isEmpty": true})
    );
}

#[tokio::test]
async fn cursor_moves_and_visual_selections_reach_every_client() {
    let session = Session::start_with("{ selection = { debounce_ms = 20 } }").await;
    let path = open(&session, "moves.txt", "alpha\nbeta\ngamma\ndelta\n").await;
    let mut first = session.connect().await;
    let mut second = session.connect().await;
    session.wait_clients(2).await;
    session.input("jj").await;
    for agent in [&mut first, &mut second] {
        let params = agent
            .notification("selection_changed", |p| {
                p["selection"]["start"]["line"] == 2
            })
            .await;
        assert_eq!(params["filePath"], path);
        assert_eq!(params["selection"]["isEmpty"], true);
    }
    session.input("Vj").await;
    let params = first
        .notification("selection_changed", |p| p["selection"]["isEmpty"] == false)
        .await;
    assert_eq!(params["text"], "gamma\ndelta");
    assert_eq!(
        params["selection"]["start"],
        json!({"line": 2, "character": 0})
    );
    assert_eq!(
        params["selection"]["end"],
        json!({"line": 3, "character": 5})
    );
    session.input("<Esc>gg0vl").await;
    let params = second
        .notification("selection_changed", |p| p["text"] == "al")
        .await;
    assert_eq!(
        params["selection"]["end"],
        json!({"line": 0, "character": 2})
    );
}

#[tokio::test]
async fn only_real_file_buffers_are_reported() {
    let session = Session::start_with("{ selection = { debounce_ms = 20 } }").await;
    let path = open(&session, "real.txt", "one\ntwo\nthree\n").await;
    let mut agent = session.connect().await;
    agent.notification("selection_changed", |_| true).await;
    session.exec("vim.cmd('enew'); vim.bo.buftype = 'nofile'; vim.api.nvim_buf_set_lines(0, 0, -1, false, {'a', 'b', 'c'})").await;
    session.input("jj").await;
    session.exec("vim.cmd('help')").await;
    session.input("jj").await;
    session
        .exec(&format!("vim.cmd('only'); vim.cmd.edit('{path}')"))
        .await;
    session.input("G").await;
    let mut seen: Vec<Value> = Vec::new();
    loop {
        let message = agent.read().await.expect("connection open");
        if message["method"] == "selection_changed" {
            seen.push(message["params"].clone());
            if message["params"]["selection"]["start"]["line"] == 2 {
                break;
            }
        }
    }
    for params in seen {
        assert_eq!(params["filePath"], path, "only the real file is reported");
    }
}

//! The channel's messages: the requests read from a frame and the
//! responses written to one. Codex's own errors are short kebab-case
//! words it knows (`no-client-found`, `no-handler-for-request`).

use bytes::Bytes;
use serde_json::{Value, json};

/// No editor here has the workspace asked about.
pub const NO_CLIENT: &str = "no-client-found";
/// A method this editor does not answer.
pub const NO_HANDLER: &str = "no-handler-for-request";

/// One request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub request_id: String,
    pub method: String,
    pub params: Value,
}

/// The request a frame holds; `None` for anything else (a broadcast, a
/// response, a frame that is not JSON).
pub fn request(frame: &[u8]) -> Option<Request> {
    let message: Value = serde_json::from_slice(frame).ok()?;
    if message.get("type")?.as_str()? != "request" {
        return None;
    }
    Some(Request {
        request_id: message.get("requestId")?.as_str()?.to_owned(),
        method: message.get("method")?.as_str()?.to_owned(),
        params: message.get("params").cloned().unwrap_or(Value::Null),
    })
}

/// The response to `request`: its result, or an error word.
pub fn response(request: &Request, answer: Result<Value, &str>) -> Bytes {
    let mut message = json!({
        "type": "response",
        "requestId": request.request_id,
        "method": request.method,
        "handledByClientId": "neovim",
    });
    match answer {
        Ok(result) => {
            message["resultType"] = json!("success");
            message["result"] = result;
        }
        Err(error) => {
            message["resultType"] = json!("error");
            message["error"] = json!(error);
        }
    }
    Bytes::from(message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_requests_and_answers_them_by_id() {
        let frame = br#"{"type":"request","requestId":"r1","sourceClientId":"codex-tui","version":0,"method":"ide-context","params":{"workspaceRoot":"/w"}}"#;
        let request = request(frame).unwrap();
        assert_eq!(request.method, "ide-context");
        assert_eq!(request.params["workspaceRoot"], "/w");
        let ok: Value = serde_json::from_slice(&response(&request, Ok(json!({"x": 1})))).unwrap();
        assert_eq!(ok["type"], "response");
        assert_eq!(ok["requestId"], "r1");
        assert_eq!(ok["resultType"], "success");
        assert_eq!(ok["result"]["x"], 1);
        let error: Value = serde_json::from_slice(&response(&request, Err(NO_CLIENT))).unwrap();
        assert_eq!(error["resultType"], "error");
        assert_eq!(error["error"], "no-client-found");
        for other in [
            &br#"{"type":"broadcast","method":"client-status-changed"}"#[..],
            br#"{"type":"request","method":"x"}"#,
            b"not json",
            b"[]",
        ] {
            assert_eq!(super::request(other), None);
        }
    }
}

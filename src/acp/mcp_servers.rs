//! `mcpServers` for `session/new`: this Neovim's `/mcp` endpoint (its
//! language tools, every edit through the person's approval). Over HTTP
//! with its token when the agent takes HTTP servers; otherwise the host
//! binary itself as a stdio server (`pi-ide mcp-stdio`) that relays to it.

use serde_json::{Value as Json, json};

/// The name the agent lists our tools under.
const SERVER_NAME: &str = "nvim";

/// Where the endpoint listens and its token.
#[derive(Clone)]
pub struct Endpoint {
    pub url: String,
    pub token: String,
}

impl std::fmt::Debug for Endpoint {
    /// Never the token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint").field("url", &self.url).finish()
    }
}

/// The `mcpServers` list for an agent whose `initialize` said `capabilities`.
pub fn servers(endpoint: Option<&Endpoint>, capabilities: &Json) -> Json {
    let Some(endpoint) = endpoint else {
        return json!([]);
    };
    if capabilities["mcpCapabilities"]["http"] == true {
        return json!([{
            "type": "http",
            "name": SERVER_NAME,
            "url": endpoint.url,
            "headers": [{"name": "Authorization", "value": format!("Bearer {}", endpoint.token)}],
        }]);
    }
    let Ok(binary) = std::env::current_exe() else {
        return json!([]);
    };
    json!([{
        "name": SERVER_NAME,
        "command": binary.to_string_lossy(),
        "args": ["mcp-stdio"],
        "env": [
            {"name": super::mcp_stdio::URL_VAR, "value": endpoint.url},
            {"name": super::mcp_stdio::TOKEN_VAR, "value": endpoint.token},
        ],
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_when_the_agent_takes_it_else_the_stdio_relay() {
        let endpoint = Endpoint {
            url: "http://127.0.0.1:9/mcp".into(),
            token: "secret".into(),
        };
        let http = servers(Some(&endpoint), &json!({"mcpCapabilities": {"http": true}}));
        assert_eq!(http[0]["type"], "http");
        assert_eq!(http[0]["headers"][0]["value"], "Bearer secret");
        let stdio = servers(Some(&endpoint), &json!({}));
        assert_eq!(stdio[0]["args"], json!(["mcp-stdio"]));
        assert!(stdio[0].get("type").is_none());
        assert_eq!(servers(None, &json!({})), json!([]));
        assert!(!format!("{endpoint:?}").contains("secret"));
    }
}

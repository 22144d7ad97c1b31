//! HTTP request heads → the MCP endpoint's checks (bearer token, path,
//! body cap, then rmcp's Host and Origin). Nothing may panic, and a request
//! that gets past them carries the token and no Origin but a loopback one.

#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ide::fuzzing::{HTTP_TOKEN, http_request};

/// The first value of header `name`.
fn header<'a>(headers: &'a [(String, Vec<u8>)], name: &str) -> Option<&'a [u8]> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_slice())
}

/// `Bearer <token>`, the scheme in any case.
fn bearer(value: &[u8]) -> bool {
    let Some(space) = value.iter().position(|b| *b == b' ') else {
        return false;
    };
    let (scheme, rest) = value.split_at(space);
    scheme.eq_ignore_ascii_case(b"bearer") && rest.trim_ascii() == HTTP_TOKEN.as_bytes()
}

/// A reference reading of an `Origin`: http(s), then a host that is
/// loopback once userinfo, port and path are set aside.
fn loopback(origin: &[u8]) -> bool {
    let Ok(origin) = std::str::from_utf8(origin) else {
        return false;
    };
    let lower = origin.trim().to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
    else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_port.split(':').next().unwrap_or(""),
    };
    matches!(host, "localhost" | "127.0.0.1" | "::1")
}

fuzz_target!(|data: &[u8]| {
    let Some(verdict) = http_request(data) else {
        return;
    };
    let refused = matches!(
        verdict.status,
        400 | 401 | 403 | 404 | 405 | 406 | 413 | 415
    );
    let authorized = header(&verdict.headers, "authorization").is_some_and(bearer);
    if !authorized {
        assert_eq!(verdict.status, 401, "{verdict:?}");
    }
    if !refused {
        if let Some(origin) = header(&verdict.headers, "origin") {
            assert!(
                loopback(origin),
                "a foreign Origin got through: {verdict:?}"
            );
        }
    }
});

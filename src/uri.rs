//! `file://` URIs and the paths they name, percent-encoded both ways by
//! the `percent-encoding` crate.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// Everything but what a URI path may hold as it is.
const NOT_IN_PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `file://` URL of an absolute path, percent-encoding what URLs may not hold.
pub fn file_url(path: &str) -> String {
    format!("file://{}", utf8_percent_encode(path, NOT_IN_PATH))
}

/// `file:///a%20b` → `/a b`; anything else is returned as given.
pub fn path_of(uri: &str) -> String {
    match uri.strip_prefix("file://") {
        Some(rest) => percent_decode_str(rest).decode_utf8_lossy().into_owned(),
        None => uri.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_urls() {
        for path in [
            "/w/a b.rs",
            "/w/ünï/%41.rs",
            "/w/a#b?c.rs",
            "/plain/x-y_z.~",
        ] {
            assert_eq!(path_of(&file_url(path)), path, "{}", file_url(path));
        }
        assert_eq!(file_url("/w/a b.rs"), "file:///w/a%20b.rs");
        assert_eq!(file_url("/w/ü"), "file:///w/%C3%BC");
    }

    #[test]
    fn decoding_keeps_what_is_no_escape_and_leaves_other_uris() {
        assert_eq!(path_of("file:///w/100%"), "/w/100%");
        assert_eq!(path_of("file:///w/%zz%4"), "/w/%zz%4");
        assert_eq!(path_of("untitled:Untitled-1"), "untitled:Untitled-1");
    }
}

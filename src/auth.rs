//! Secret tokens, and checking them.

/// A fresh token: 32 bytes (256 bits) from the OS CSPRNG, in hex.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    // Without the OS's randomness no token is safe to hand out.
    getrandom::fill(&mut bytes).expect("the OS random number generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares without an early exit, so timing reveals nothing about the token.
pub fn tokens_match(expected: &str, given: &[u8]) -> bool {
    let expected = expected.as_bytes();
    let mut diff = expected.len() ^ given.len();
    for (i, byte) in expected.iter().enumerate() {
        diff |= usize::from(byte ^ given.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_distinct() {
        let a = new_token();
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, new_token());
    }

    #[test]
    fn every_hex_digit_of_a_token_is_random() {
        // A UUIDv4 fixes its version and variant digits; 32 random bytes fix none.
        let tokens: Vec<String> = (0..64).map(|_| new_token()).collect();
        for at in 0..64 {
            let first = tokens[0].as_bytes()[at];
            assert!(
                tokens.iter().any(|t| t.as_bytes()[at] != first),
                "digit {at} is the same in 64 tokens"
            );
        }
    }

    #[test]
    fn match_needs_the_exact_token() {
        let token = new_token();
        assert!(tokens_match(&token, token.as_bytes()));
        assert!(!tokens_match(&token, &token.as_bytes()[..63]));
        assert!(!tokens_match(&token, format!("{token}0").as_bytes()));
        assert!(!tokens_match(&token, b""));
        let mut flipped = token.clone().into_bytes();
        flipped[10] ^= 1;
        assert!(!tokens_match(&token, &flipped));
    }
}

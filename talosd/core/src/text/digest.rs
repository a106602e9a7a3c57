//! Digests: SHA-256 of texts and bytes, and the counts a trace keeps instead of content.

use sha2::{Digest, Sha256};

/// A text reduced to its hash and counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Digested {
    pub hash: String,
    pub chars: usize,
    pub bytes: usize,
    pub lines: usize,
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

/// Lower-case hex of the SHA-256 of `bytes`, without prefix (content addresses).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub fn digest_text(text: &str) -> Digested {
    Digested {
        hash: sha256(text.as_bytes()),
        chars: text.chars().count(),
        bytes: text.len(),
        lines: count_lines(text),
    }
}

/// Lines as a person counts them: a final newline does not start a new line.
pub fn count_lines(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.lines().count()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_hash_and_count() {
        let d = digest_text("a\nb\n");
        assert_eq!(d.hash, format!("sha256:{}", sha256_hex(b"a\nb\n")));
        assert_eq!((d.chars, d.bytes, d.lines), (4, 4, 2));
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}

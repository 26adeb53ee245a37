//! Case-insensitive ASCII matching without allocating: the rules compare every word of every
//! command against lowercase names and markers, and a `to_ascii_lowercase()` copy per word
//! and per check was a good part of the guard's time. [`with_lowercase`] lends the lowercase
//! form of a short text from a stack buffer (a heap copy only past [`STACK_BYTES`]), as does
//! [`CaseBuf`], for upper case too; [`contains_lowercase`] searches without any copy.
//!
//! Only ASCII letters change case here, exactly as `str::to_ascii_lowercase` does, so a
//! check rewritten with these helpers answers as before.

use std::borrow::Cow;

/// Texts up to this length are lowercased on the stack.
pub(crate) const STACK_BYTES: usize = 256;

/// A stack buffer that lends the ASCII lowercase or uppercase form of a short text: the
/// drop-in for `let l = text.to_ascii_lowercase();` is
/// `let mut buf = CaseBuf::new(); let l = buf.lower(text);`.
pub(crate) struct CaseBuf([u8; STACK_BYTES]);

impl CaseBuf {
    pub(crate) fn new() -> Self {
        CaseBuf([0; STACK_BYTES])
    }

    /// `text` in ASCII lowercase.
    pub(crate) fn lower<'b>(&'b mut self, text: &str) -> Cow<'b, str> {
        self.fold(text, false)
    }

    /// `text` in ASCII uppercase.
    pub(crate) fn upper<'b>(&'b mut self, text: &str) -> Cow<'b, str> {
        self.fold(text, true)
    }

    fn fold<'b>(&'b mut self, text: &str, upper: bool) -> Cow<'b, str> {
        let on_heap = || {
            Cow::Owned(if upper {
                text.to_ascii_uppercase()
            } else {
                text.to_ascii_lowercase()
            })
        };
        if text.len() > STACK_BYTES {
            return on_heap();
        }
        let folded = &mut self.0[..text.len()];
        folded.copy_from_slice(text.as_bytes());
        if upper {
            folded.make_ascii_uppercase();
        } else {
            folded.make_ascii_lowercase();
        }
        // Changing the case of ASCII bytes keeps UTF-8 valid; the fallback is never taken.
        match std::str::from_utf8(folded) {
            Ok(folded) => Cow::Borrowed(folded),
            Err(_) => on_heap(),
        }
    }
}

/// Calls `f` with `text` in ASCII lowercase.
pub(crate) fn with_lowercase<R>(text: &str, f: impl FnOnce(&str) -> R) -> R {
    f(&CaseBuf::new().lower(text))
}

/// Whether `haystack` contains `needle` when ASCII case is ignored. `needle` is given in
/// lowercase (a needle with an upper-case letter never matches).
pub(crate) fn contains_lowercase(haystack: &str, needle: &str) -> bool {
    let (hay, needle) = (haystack.as_bytes(), needle.as_bytes());
    if needle.is_empty() {
        return true;
    }
    if needle.len() > hay.len() {
        return false;
    }
    hay.windows(needle.len())
        .any(|w| w.iter().zip(needle).all(|(h, n)| h.to_ascii_lowercase() == *n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercase_matches_the_standard_library() {
        let long = "AbC-".repeat(100);
        for text in ["", "MiXeD Case", "ÄÖü ß ABC", "x", long.as_str()] {
            assert_eq!(
                with_lowercase(text, str::to_string),
                text.to_ascii_lowercase(),
                "{text}"
            );
            assert_eq!(CaseBuf::new().upper(text), text.to_ascii_uppercase(), "{text}");
            assert_eq!(CaseBuf::new().lower(text), text.to_ascii_lowercase(), "{text}");
        }
    }

    #[test]
    fn contains_ignores_ascii_case_only() {
        assert!(contains_lowercase("Bearer YOUR_TOKEN", "your"));
        assert!(contains_lowercase("abc", ""));
        assert!(!contains_lowercase("ab", "abc"));
        assert!(!contains_lowercase("EXAMPLE", "Example"));
        assert!(contains_lowercase("ÄxAMPLE", "xample"));
        assert!(!contains_lowercase("Ä", "ä"));
    }
}

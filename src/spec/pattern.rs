//! Regexes that come from specs (`matches`, `pattern`, `stdout`, `message`, …) or from agents
//! (`verify file_contains`): one way to compile them, with limits, so a pattern can neither
//! exhaust memory nor take long to compile.
//!
//! | limit | value |
//! |---|---|
//! | pattern length | [`MAX_PATTERN_BYTES`] = 16 KiB |
//! | compiled size | [`SIZE_LIMIT`] = 1 MiB (`RegexBuilder::size_limit`), and the same for the lazy DFA cache |
//! | nesting | [`NEST_LIMIT`] = 64 groups, repetitions and classes (`RegexBuilder::nest_limit`) |
//!
//! Patterns match in multi-line mode, as `grep` reads text: `^` and `$` match at every line
//! start and end, so `^v\d+$` matches the output `v42\n`.

use regex::{Regex, RegexBuilder};

/// Longest pattern compiled, in bytes.
pub const MAX_PATTERN_BYTES: usize = 16 * 1024;
/// Largest compiled program, in bytes (also the lazy DFA's cache).
pub const SIZE_LIMIT: usize = 1024 * 1024;
/// Deepest nesting of groups, repetitions and classes.
pub const NEST_LIMIT: u32 = 64;

/// Why a pattern did not compile.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PatternError {
    #[error("the pattern is {len} bytes, over the 16 KiB limit for a pattern; match a shorter, distinctive part")]
    TooLong { len: usize },
    /// A syntax error, or a pattern over the size or nesting limit; the text says which.
    #[error("{0}")]
    Regex(#[from] regex::Error),
}

impl PatternError {
    /// The regex library's own message, first line of a syntax error only.
    pub fn detail(&self) -> String {
        match self {
            PatternError::Regex(regex::Error::Syntax(s)) => s
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("error: "))
                .unwrap_or(s)
                .to_string(),
            PatternError::Regex(regex::Error::CompiledTooBig(limit)) => format!(
                "the compiled pattern is over the size limit of {limit} bytes; use smaller counted repetitions (`{{n}}`) or fewer alternatives"
            ),
            other => other.to_string(),
        }
    }
}

/// Compiles `pattern` in multi-line mode within the limits.
pub fn compile(pattern: &str) -> Result<Regex, PatternError> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(PatternError::TooLong { len: pattern.len() });
    }
    Ok(RegexBuilder::new(pattern)
        .multi_line(true)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(SIZE_LIMIT)
        .nest_limit(NEST_LIMIT)
        .build()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_patterns_compile_multi_line() {
        assert!(compile("^v\\d+$").unwrap().is_match("x\nv42\n"));
    }

    #[test]
    fn big_long_and_deep_patterns_are_refused_quickly() {
        let start = std::time::Instant::now();
        assert!(matches!(
            compile(&"a".repeat(20_000)),
            Err(PatternError::TooLong { len: 20_000 })
        ));
        let e = compile("(\\w{100}){100}").unwrap_err();
        assert!(e.detail().contains("size limit"), "{}", e.detail());
        let deep = format!("{}a{}", "(".repeat(100), ")".repeat(100));
        assert!(compile(&deep).is_err());
        assert!(compile("a(b").unwrap_err().detail().contains("unclosed group"));
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
    }
}

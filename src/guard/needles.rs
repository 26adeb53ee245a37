//! Sets of literal needles, each searched for in one pass over a text.
//!
//! Many checks ask "does this word hold any of these markers?" of every word of every command:
//! a token format's prefix, a placeholder word, a database verb. Asked as one `contains` per
//! needle, each question paid a substring searcher per needle, a good part of the guard's time
//! on long commands. A [`Needles`] answers it with one Aho-Corasick automaton over the whole
//! set, built the first time the set is used (a contiguous NFA: tens of microseconds to build
//! for a few dozen needles, which a one-shot `medin guard --hook` process pays only for the
//! sets its command reaches).
//!
//! A set [`Needles::ignoring_case`] matches as `text.to_ascii_lowercase().contains(needle)`
//! does for lowercase needles: only ASCII letters fold. The unit tests hold each search to the
//! `contains` loop it replaces.
//!
//! This module owns no needles; the rules own theirs.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

/// A fixed set of lowercase needles, matched with ASCII case ignored, compiled into one
/// automaton on first use.
pub(crate) struct Needles {
    words: &'static [&'static str],
    automaton: OnceLock<AhoCorasick>,
}

impl Needles {
    /// Needles matched with ASCII case ignored (written in lowercase).
    pub(crate) const fn ignoring_case(words: &'static [&'static str]) -> Self {
        Self {
            words,
            automaton: OnceLock::new(),
        }
    }

    fn automaton(&self) -> &AhoCorasick {
        self.automaton.get_or_init(|| build(self.words.iter().copied(), true))
    }

    /// Whether `text` holds any of the needles.
    pub(crate) fn found_in(&self, text: &str) -> bool {
        self.automaton().is_match(text)
    }
}

/// One automaton over `words`; a constant set always builds.
pub(crate) fn build<'w>(words: impl IntoIterator<Item = &'w str>, ignore_case: bool) -> AhoCorasick {
    let words: Vec<&str> = words.into_iter().collect();
    // An upper-case letter in a needle that ignores case would match where the lowercase
    // `contains` it stands for never did.
    debug_assert!(
        !ignore_case || words.iter().all(|w| !w.bytes().any(|b| b.is_ascii_uppercase())),
        "needles that ignore case are written in lowercase: {words:?}"
    );
    AhoCorasick::builder()
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .match_kind(MatchKind::Standard)
        .ascii_case_insensitive(ignore_case)
        .build(words)
        .expect("a constant set of needles compiles")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    static MARKERS: Needles = Needles::ignoring_case(&["example", "xxxx", "<", "...", "fake"]);

    fn lowercase_contains_any(text: &str, words: &[&str]) -> bool {
        let text = text.to_ascii_lowercase();
        words.iter().any(|w| text.contains(w))
    }

    #[test]
    fn finds_a_needle_anywhere_folding_only_ascii_case() {
        assert!(MARKERS.found_in("AKIAEXAMPLEKEY"));
        assert!(MARKERS.found_in("my...token"));
        assert!(!MARKERS.found_in("sk-proj-real"));
        assert!(!MARKERS.found_in("ÉXAMPLE"), "only ASCII letters fold");
        let exact = build(["ghp_", "AKIA"], false);
        assert!(exact.is_match("token=ghp_abc"));
        assert!(!exact.is_match("GHP_abc"), "a case-sensitive automaton does not fold");
    }

    proptest! {
        #[test]
        fn answers_as_the_contains_loop_it_replaces(text in "[a-zA-Z.<_ kKsS-]{0,24}") {
            prop_assert_eq!(MARKERS.found_in(&text), lowercase_contains_any(&text, MARKERS.words));
        }
    }
}

//! The guard's regexes, each compiled only when a rule first needs it, and on ASCII text in
//! its cheap ASCII form.
//!
//! A [`Pattern`] is written for Unicode text (as `regex` reads it) and compiled lazily in one
//! of two forms: for a text that is all ASCII, the same pattern under `(?-u)` as a byte regex;
//! for any other text, the pattern itself. On ASCII text the two match alike, span for span
//! and group for group: `\w`, `\s`, `\d`, `\b`, `.`, negated classes and case folding restricted
//! to ASCII characters are the ASCII classes. The ASCII form compiles into far fewer states
//! (the fork-bomb pattern's Unicode `\w` cost ~8 M instructions to compile, its ASCII form
//! ~0.4 M), which a one-shot `medin guard --hook` process pays in full; commands are almost
//! always ASCII. A pattern must not use `\p{..}` (there is no ASCII form of it): the tests of
//! each pattern compile both forms.
//!
//! This module owns no pattern; the rules own theirs.

use std::ops::Range;
use std::sync::OnceLock;

/// The spans of a match's capture groups; index 0 is the whole match.
pub(crate) type Groups = Vec<Option<Range<usize>>>;

/// A regex compiled on first use, in the form the text needs.
pub(crate) struct Pattern {
    source: &'static str,
    ascii: OnceLock<regex::bytes::Regex>,
    unicode: OnceLock<regex::Regex>,
}

impl Pattern {
    pub(crate) const fn new(source: &'static str) -> Self {
        Self {
            source,
            ascii: OnceLock::new(),
            unicode: OnceLock::new(),
        }
    }

    #[cfg(test)]
    pub(crate) fn source(&self) -> &'static str {
        self.source
    }

    /// The ASCII form: the pattern under `(?-u)`, for byte strings that are all ASCII.
    fn ascii(&self) -> &regex::bytes::Regex {
        self.ascii.get_or_init(|| {
            regex::bytes::Regex::new(&format!("(?-u){}", self.source)).expect("constant regex compiles")
        })
    }

    fn unicode(&self) -> &regex::Regex {
        self.unicode
            .get_or_init(|| regex::Regex::new(self.source).expect("constant regex compiles"))
    }

    /// The leftmost match starting at or after `start` (looking behind `start` for `\b`), as
    /// `regex::Regex::find_at` finds it.
    pub(crate) fn find_at(&self, text: &str, start: usize) -> Option<Range<usize>> {
        if text.is_ascii() {
            self.ascii().find_at(text.as_bytes(), start).map(|m| m.range())
        } else {
            self.unicode().find_at(text, start).map(|m| m.range())
        }
    }

    /// The groups of each successive match, as `regex::Regex::captures_iter` finds them.
    pub(crate) fn captures_iter<'t>(&'t self, text: &'t str) -> Box<dyn Iterator<Item = Groups> + 't> {
        if text.is_ascii() {
            Box::new(
                self.ascii()
                    .captures_iter(text.as_bytes())
                    .map(|c| c.iter().map(|m| m.map(|m| m.range())).collect()),
            )
        } else {
            Box::new(
                self.unicode()
                    .captures_iter(text)
                    .map(|c| c.iter().map(|m| m.map(|m| m.range())).collect()),
            )
        }
    }

    /// The groups of the first match.
    pub(crate) fn captures(&self, text: &str) -> Option<Groups> {
        self.captures_iter(text).next()
    }

    /// Both forms' groups of every match in `text`, to check that they agree.
    #[cfg(test)]
    pub(crate) fn both_forms(&self, text: &str) -> (Vec<Groups>, Vec<Groups>) {
        let ascii = self
            .ascii()
            .captures_iter(text.as_bytes())
            .map(|c| c.iter().map(|m| m.map(|m| m.range())).collect())
            .collect();
        let unicode = self
            .unicode()
            .captures_iter(text)
            .map(|c| c.iter().map(|m| m.map(|m| m.range())).collect())
            .collect();
        (ascii, unicode)
    }
}

/// The text of group `i` of a match in `text`.
pub(crate) fn group<'t>(text: &'t str, groups: &Groups, i: usize) -> Option<&'t str> {
    groups.get(i)?.clone().and_then(|r| text.get(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_text_takes_the_ascii_form_and_other_text_the_unicode_one() {
        static WORDS: Pattern = Pattern::new(r"(\w+)\s(\w+)");
        assert_eq!(WORDS.captures("ab cd").map(|g| g[2].clone()), Some(Some(3..5)));
        assert!(WORDS.unicode.get().is_none(), "ASCII text needs no Unicode form");
        // `é` is a word character in Unicode: the Unicode form is used, and spans are bytes.
        assert_eq!(WORDS.captures("é x").map(|g| g[1].clone()), Some(Some(0..2)));
        assert!(WORDS.unicode.get().is_some());
        let text = "é\u{2003}x";
        let g = WORDS.captures(text).expect("an em space is Unicode whitespace");
        assert_eq!(group(text, &g, 2), Some("x"));
        assert_eq!(WORDS.find_at("ab cd ef", 1), Some(1..5));
    }

    /// ASCII characters each class of the patterns tells apart: every whitespace the two forms
    /// might disagree on, word and non-word characters, the patterns' own punctuation.
    fn ascii_bit() -> impl proptest::strategy::Strategy<Value = &'static str> {
        proptest::sample::select(vec![
            "", " ", "\t", "\n", "\x0b", "\x0c", "\r", "\x00", "\x7f", "x", "_", "9", ".", ":", "-", "+", "/", "@",
            "}", "{", "|", "&", "()",
        ])
    }

    fn agree(pattern: &Pattern, text: &str) -> Result<(), proptest::test_runner::TestCaseError> {
        let (ascii, unicode) = pattern.both_forms(text);
        proptest::prop_assert_eq!(ascii, unicode, "{} on {:?}", pattern.source(), text);
        Ok(())
    }

    proptest::proptest! {
        // The shapes each pattern looks for with every slot filled by characters its classes
        // tell apart, so that texts match, nearly match and overlap: both forms must find the
        // same groups.
        #[test]
        fn both_forms_of_the_fork_bomb_agree_on_ascii_text(
            slots in proptest::collection::vec(ascii_bit(), 12),
            names in proptest::collection::vec(proptest::sample::select(vec![":", "f", "bomb", "a.b:c_9", "9"]), 3),
        ) {
            let text = format!(
                "{}{}{}(){}{{{}{}{}|{}{}{}&{}",
                slots[0], names[0], slots[1], slots[2], slots[3], names[1], slots[4], slots[5], names[2], slots[6],
                slots[7..].concat()
            );
            agree(&crate::guard::rules::process::BOMB, &text)?;
        }

        #[test]
        fn both_forms_of_url_userinfo_agree_on_ascii_text(
            slots in proptest::collection::vec(ascii_bit(), 8),
            scheme in proptest::sample::select(vec!["https", "s3+x.y-z", "9x", ""]),
        ) {
            let text = format!(
                "{}{scheme}://{}u{}:{}pw{}@{}",
                slots[0], slots[1], slots[2], slots[3], slots[4], slots[5..].concat()
            );
            agree(&crate::guard::rules::secrets::URL_USERINFO, &text)?;
        }
    }
}

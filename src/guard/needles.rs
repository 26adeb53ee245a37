//! Sets of literal needles, each searched for in one pass over a text.
//!
//! Many checks ask "does this word hold any of these markers?" of every word of every command:
//! a token format's prefix, a placeholder word, a database verb. Asked as one `contains` per
//! needle, each question paid a substring searcher per needle, a good part of the guard's time
//! on long commands. A [`Needles`] answers it in one pass: a table, made at compile time, of
//! the needles each byte can start, so each byte of the text costs a lookup and only needles
//! that start there are compared.
//!
//! Why not an Aho-Corasick automaton (the `aho-corasick` crate): building one costs hundreds
//! of thousands of instructions, which a one-shot `medin guard --hook` process paid again for
//! every set its command reached (it more than doubled the hook's instructions for `git
//! status`), while the texts searched are argv words of a few dozen bytes, where the table is
//! as fast. A static set here is built by the compiler and costs nothing at start.
//!
//! A set made [`Needles::ignoring_case`] matches as `text.to_ascii_lowercase().contains(needle)`
//! does for its lowercase needles: only ASCII letters fold. The unit tests hold each search to
//! the `contains` loop it replaces.
//!
//! This module owns no needles; the rules own theirs.

use std::borrow::Cow;

/// Most needles a set holds (one bit each in a [`Mask`]).
const MOST: usize = 128;

/// A set of needles found, bit `i` standing for needle `i`.
type Mask = u128;

/// A fixed set of needles with the table of the needles each byte starts.
pub(crate) struct Needles {
    words: Cow<'static, [&'static str]>,
    ignore_case: bool,
    /// For each byte value, the needles whose first byte it is (in either case, when case is
    /// ignored).
    starts: [Mask; 256],
}

impl Needles {
    /// Needles matched with ASCII case ignored, written in lowercase (a needle with an
    /// upper-case letter does not compile: it would match where the lowercase `contains` it
    /// stands for never did).
    pub(crate) const fn ignoring_case(words: &'static [&'static str]) -> Self {
        Self {
            words: Cow::Borrowed(words),
            ignore_case: true,
            starts: starts(words, true),
        }
    }

    /// Needles matched byte for byte.
    pub(crate) const fn exact(words: &'static [&'static str]) -> Self {
        Self {
            words: Cow::Borrowed(words),
            ignore_case: false,
            starts: starts(words, false),
        }
    }

    /// Needles matched byte for byte, gathered at run time (from a table of needles spread
    /// over other entries).
    pub(crate) fn exact_from(words: Vec<&'static str>) -> Self {
        Self {
            starts: starts(&words, false),
            words: Cow::Owned(words),
            ignore_case: false,
        }
    }

    /// Whether `text` holds any of the needles.
    pub(crate) fn found_in(&self, text: &str) -> bool {
        self.scan(text, true) != 0
    }

    /// Which needles `text` holds, by their place in the set.
    pub(crate) fn held_in(&self, text: &str) -> impl Iterator<Item = usize> {
        let mut held = self.scan(text, false);
        std::iter::from_fn(move || {
            (held != 0).then(|| {
                let i = held.trailing_zeros() as usize;
                held &= held - 1;
                i
            })
        })
    }

    /// The needles found in `text` (stopping at the first when `first`).
    fn scan(&self, text: &str, first: bool) -> Mask {
        let hay = text.as_bytes();
        let mut found: Mask = 0;
        for (at, byte) in hay.iter().enumerate() {
            let mut candidates = self.starts[usize::from(*byte)] & !found;
            while candidates != 0 {
                let i = candidates.trailing_zeros() as usize;
                candidates &= candidates - 1;
                let needle = self.words[i].as_bytes();
                let Some(here) = hay.get(at..at + needle.len()) else {
                    continue;
                };
                let same = if self.ignore_case {
                    here.iter().zip(needle).all(|(h, n)| h.to_ascii_lowercase() == *n)
                } else {
                    here == needle
                };
                if same {
                    found |= 1 << i;
                    if first {
                        return found;
                    }
                }
            }
        }
        found
    }
}

/// For each byte value, the needles of `list` that start with it.
const fn starts(list: &[&str], ignore_case: bool) -> [Mask; 256] {
    assert!(list.len() <= MOST, "a set holds at most 128 needles");
    let mut starts = [0 as Mask; 256];
    let mut i = 0;
    while i < list.len() {
        let word = list[i].as_bytes();
        assert!(!word.is_empty(), "a needle is never empty");
        if ignore_case {
            let mut k = 0;
            while k < word.len() {
                assert!(
                    !word[k].is_ascii_uppercase(),
                    "needles that ignore case are written in lowercase"
                );
                k += 1;
            }
            starts[word[0].to_ascii_uppercase() as usize] |= 1 << i;
        }
        starts[word[0] as usize] |= 1 << i;
        i += 1;
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    static MARKERS: Needles = Needles::ignoring_case(&["example", "xxxx", "<", "...", "fake", "xx"]);

    fn prefixes() -> Needles {
        Needles::exact_from(vec!["ghp_", "AKIA", "sk-", "k-l", "sk-proj"])
    }

    #[test]
    fn finds_a_needle_anywhere_folding_only_ascii_case_when_asked() {
        assert!(MARKERS.found_in("AKIAEXAMPLEKEY"));
        assert!(MARKERS.found_in("my...token"));
        assert!(!MARKERS.found_in("sk-proj-real"));
        assert!(!MARKERS.found_in("ÉXAMPLE"), "only ASCII letters fold");
        assert!(
            !MARKERS.found_in("exampl"),
            "a needle past the end of the text is not there"
        );
        let exact = prefixes();
        assert!(exact.found_in("token=ghp_abc"));
        assert!(!exact.found_in("GHP_abc"), "an exact set does not fold");
    }

    #[test]
    fn reports_every_needle_held_including_overlapping_ones() {
        // `sk-live` holds `sk-` and `k-l`, overlapping; `sk-proj` holds `sk-` too.
        assert_eq!(prefixes().held_in("sk-live AKIA").collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(prefixes().held_in("sk-proj").collect::<Vec<_>>(), vec![2, 4]);
        assert_eq!(prefixes().held_in("none").count(), 0);
    }

    proptest! {
        #[test]
        fn answers_as_the_contains_loop_it_replaces(text in "[a-zA-Z.<_ kKsSpP-]{0,24}") {
            let lower = text.to_ascii_lowercase();
            prop_assert_eq!(MARKERS.found_in(&text), MARKERS.words.iter().any(|w| lower.contains(w)));
            let exact = prefixes();
            let held: Vec<usize> = exact.held_in(&text).collect();
            let expected: Vec<usize> = (0..exact.words.len()).filter(|&i| text.contains(exact.words[i])).collect();
            prop_assert_eq!(held, expected);
        }
    }
}

//! Short option bundles: the one place that decides how `-abcV value` reads.
//!
//! POSIX programs let single-letter options share one dash (`-sSL`), and the last letter of a
//! bundle may take a value, glued (`-sofile`, `-XPOST`) or in the next word (`-so /tmp/.u`,
//! `-sF "file=@.env"`, `ex -sc '!cmd'`). Every reader of options — the program specs
//! (`effects::spec`), the wrappers' option skipping (`carriers::wrappers`), the HTTP upload,
//! download and secret rules — asks [`bundle`] how such a word reads, given which letters take
//! a value for its program, instead of comparing the word with `-o` or `-F` itself.
//!
//! For the programs whose options are read in many places (HTTP clients, the ssh family,
//! rsync, editors; [`BUNDLING`]), the walker also writes the argv in its canonical form
//! ([`split_bundles`]): `curl -sfo /tmp/x URL` becomes `curl -s -f -o /tmp/x URL`, so a rule
//! looking for `-o` finds it however it was spelled. Programs not in that table keep their
//! words: a single dash may start a long option there (`find -name`, `java -jar`), and a
//! letter glued to a value (`mysql -pSECRET`) means something only its program knows.

/// Programs whose short options bundle the POSIX way, with the letters that take a value.
const BUNDLING: &[(&[&str], &str)] = &[
    (&["curl"], "AbcCdDeEFHKmoPQrTtuUwxXyYz"),
    (&["wget"], "aABDeiIlnoOPQRtTUwX"),
    (&["ssh", "autossh"], "BbcDEeFIiJLlmOoPpQRSWw"),
    (&["scp"], "cFiJloPS"),
    (&["sftp"], "BbcDFiJloPRS"),
    (&["rsync"], "BefMT"),
    (
        &["vi", "vim", "nvim", "view", "ex", "vimdiff", "rvim", "gvim"],
        "cSTtuUiW",
    ),
];

/// How a word of short options reads: the flags before the letter that takes a value, that
/// letter, and its value when it is glued to the word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bundle<'a> {
    /// The letters before the value letter (all of them when none takes a value).
    pub flags: &'a str,
    /// The first letter that takes a value, if any.
    pub value_letter: Option<char>,
    /// The rest of the word after the value letter: its value (`-ofile`). None when the value
    /// is the next word.
    pub glued: Option<&'a str>,
}

impl Bundle<'_> {
    /// Whether the next word of the argv is this bundle's value.
    pub fn takes_next(&self) -> bool {
        self.value_letter.is_some() && self.glued.is_none()
    }
}

/// `word` read as a bundle of short options, where `takes_value` says which letters take a
/// value; None when it is no such word (`--long`, `-`, a positional word, a negative number).
pub(crate) fn bundle(word: &str, takes_value: impl Fn(char) -> bool) -> Option<Bundle<'_>> {
    let letters = word.strip_prefix('-')?;
    if letters.is_empty() || letters.starts_with('-') || !letters.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    for (at, c) in letters.char_indices() {
        if takes_value(c) {
            let rest = &letters[at + c.len_utf8()..];
            return Some(Bundle {
                flags: &letters[..at],
                value_letter: Some(c),
                glued: (!rest.is_empty()).then_some(rest),
            });
        }
        if !c.is_ascii_alphanumeric() {
            return None;
        }
    }
    Some(Bundle {
        flags: letters,
        value_letter: None,
        glued: None,
    })
}

/// Whether `letter` takes a value according to a list of options (`-o`, `--output`, ...).
pub(crate) fn listed(value_opts: &[&str], letter: char) -> bool {
    value_opts.iter().any(|o| {
        let mut chars = o.chars();
        chars.next() == Some('-') && chars.next() == Some(letter) && chars.next().is_none()
    })
}

/// `-c` for the letter `c` (ASCII letters and digits), as a `'static` word.
pub(crate) fn dashed(c: char) -> Option<&'static str> {
    const ALL: &str = "-a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z-A-B-C-D-E-F-G-H-I-J-K-L-M-N-O-P-Q-R-S-T-U-V-W-X-Y-Z-0-1-2-3-4-5-6-7-8-9";
    let byte = u8::try_from(c).ok()?;
    let at = ALL.as_bytes().chunks(2).position(|pair| pair[1] == byte)? * 2;
    ALL.get(at..at + 2)
}

/// The value letters of `name` when its options bundle the POSIX way ([`BUNDLING`]).
fn bundling(name: &str) -> Option<&'static str> {
    BUNDLING
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|(_, letters)| *letters)
}

/// Writes the options of a program in [`BUNDLING`] one per word, each value after its letter
/// (`-sfo /tmp/x` → `-s -f -o /tmp/x`, `-XPOST` → `-X POST`); words after `--`, values and
/// positional words stay as they are. Other programs are left alone.
pub(crate) fn split_bundles(argv: &mut Vec<String>) {
    let Some(letters) = argv.first().and_then(|w| bundling(super::basename(w))) else {
        return;
    };
    let takes = |c: char| letters.contains(c);
    // Most argvs hold no bundle: nothing is copied for them.
    let splits = |w: &String| {
        bundle(w, takes).is_some_and(|b| b.flags.len() + usize::from(b.value_letter.is_some()) > 1 || b.glued.is_some())
    };
    if !argv.iter().skip(1).any(splits) {
        return;
    }
    let mut out = Vec::with_capacity(argv.len() + 4);
    let mut words = std::mem::take(argv).into_iter();
    out.extend(words.next());
    while let Some(w) = words.next() {
        if w == "--" {
            out.push(w);
            out.extend(words.by_ref());
            break;
        }
        let Some(b) = bundle(&w, takes) else {
            out.push(w);
            continue;
        };
        out.extend(b.flags.chars().map(|c| format!("-{c}")));
        if let Some(c) = b.value_letter {
            out.push(format!("-{c}"));
            match b.glued {
                Some(v) => out.push(v.to_string()),
                None => out.extend(words.next()),
            }
        }
    }
    *argv = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Vec<String> {
        let mut argv: Vec<String> = line.split(' ').map(String::from).collect();
        split_bundles(&mut argv);
        argv
    }

    #[test]
    fn a_bundle_ends_at_the_letter_that_takes_a_value() {
        let curl = |c: char| "oF".contains(c);
        assert_eq!(
            bundle("-so", curl),
            Some(Bundle {
                flags: "s",
                value_letter: Some('o'),
                glued: None
            })
        );
        assert_eq!(bundle("-sofile", curl).and_then(|b| b.glued), Some("file"));
        assert_eq!(
            bundle("-sSL", curl).map(|b| (b.flags, b.value_letter)),
            Some(("sSL", None))
        );
        assert!(bundle("-sF", curl).is_some_and(|b| b.takes_next()));
        for word in ["--output", "-", "x", "-1", ""] {
            assert_eq!(bundle(word, curl), None, "{word}");
        }
        assert!(listed(&["-o", "--output"], 'o') && !listed(&["-o", "--output"], 'u'));
        assert_eq!(
            (dashed('o'), dashed('Z'), dashed('7'), dashed('-')),
            (Some("-o"), Some("-Z"), Some("-7"), None)
        );
    }

    #[test]
    fn bundled_programs_get_one_option_per_word() {
        assert_eq!(
            split("curl -so /tmp/.u https://x"),
            ["curl", "-s", "-o", "/tmp/.u", "https://x"]
        );
        assert_eq!(split("curl -sF file=@.env u"), ["curl", "-s", "-F", "file=@.env", "u"]);
        assert_eq!(split("curl -XPOST u"), ["curl", "-X", "POST", "u"]);
        assert_eq!(split("wget -qO- u"), ["wget", "-q", "-O", "-", "u"]);
        assert_eq!(split("ex -sc !id -c q"), ["ex", "-s", "-c", "!id", "-c", "q"]);
        assert_eq!(split("ssh -oProxyCommand=x h"), ["ssh", "-o", "ProxyCommand=x", "h"]);
        // A value that looks like a bundle is a value; words after `--` stay.
        assert_eq!(split("curl -H -sX u"), ["curl", "-H", "-sX", "u"]);
        assert_eq!(split("rsync -av -- -ax d"), ["rsync", "-a", "-v", "--", "-ax", "d"]);
        // Other programs keep their words.
        assert_eq!(split("find . -name x"), ["find", ".", "-name", "x"]);
        assert_eq!(split("mysql -psecret"), ["mysql", "-psecret"]);
    }
}

//! Secrets by their look alone: a word that reads as random characters, wherever it stands.
//!
//! The other checks of `secrets` find a credential by what surrounds it: a token format, an
//! option or a variable named for a secret, a URL's user-info, a login option of a known
//! client. A new program's password option (`stegsnow -p`, `zpaq -k`, `nmcli .. password`)
//! has none of that, and the list of such options never ends. (A short password of letters and
//! digits alone echoed into a hashing tool, `echo PW | argon2 salt`, has no option before it
//! and is missed: see the last condition below.) What a generated password or key
//! does have is its shape: upper case, lower case and digits, thrown together. Words people
//! write have runs: names (`Squeak64-Trunk`), identifiers (`BuildID_or_NVR1`), versions, paths,
//! hashes (one case of hex), ids with separators (`web-7d4b9c6f5-x2kqz`).
//!
//! A word is random when, after an option name glued in front (`-kVALUE`, `--opt=VALUE`,
//! `KEY=VALUE`, `user:VALUE`):
//! - it is 8 to 64 characters of letters, digits and at most two symbols (`%_+@#!*^&~-`), at
//!   most one of them a separator (`_`, `-`);
//! - it holds upper case, lower case and digits;
//! - the kind of character changes at no fewer than 40% of its steps, no run of one kind is
//!   longer than four, and its entropy is at least 2.5 bits per character;
//! - less than half of it stands in syllables (`get`, `User`, `By`: identifiers such as
//!   `getUserById2` or `TestParse2Url` are words run together);
//! - it is not the value of a search option (`--grep=`, `--pattern=`), nor an object id of a
//!   typed API (`cus_NffrFeUfNV2Hib`: a short lower-case type in front);
//! - it is not base64 of text (`echo 'dGFzay0x..' | base64 -d` decodes a message), not a URL,
//!   a path or a file name, not a placeholder (`literal_value`);
//! - and, since public ids are random too (a video's `dQw4w9WgXcQ`, a nanoid, a short link), it
//!   has what ids lack: a symbol other than `_` and `-` (`%+@#!*^&~`), or the length of a key
//!   (30+), or it follows a password or key option or word (`-p V`, `-kV`, `password V`).
//!
//! Owns only the shape; `secrets::check` decides where words are read from and what is done.

use super::{entropy, literal_value};
use crate::guard::carriers::base64_decode;

/// The kind of a character, for counting changes and runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Upper,
    Lower,
    Digit,
    Symbol,
}

fn kind(c: u8) -> Kind {
    match c {
        b'A'..=b'Z' => Kind::Upper,
        b'a'..=b'z' => Kind::Lower,
        b'0'..=b'9' => Kind::Digit,
        _ => Kind::Symbol,
    }
}

/// The value a word carries after an option or key glued in front of it, if any.
fn value_of(word: &str) -> &str {
    if let Some(long) = word.strip_prefix("--") {
        // `--grep=AbC9xYz2`: what to search for, not what opens anything.
        return long
            .split_once('=')
            .filter(|(name, _)| {
                !["grep", "search", "pattern", "match", "filter", "query"]
                    .iter()
                    .any(|s| name.contains(s))
            })
            .map_or("", |(_, v)| v);
    }
    if let Some(short) = word.strip_prefix('-') {
        // `-kVALUE`: one option letter, then the value.
        return short
            .get(1..)
            .filter(|_| short.starts_with(|c: char| c.is_ascii_alphabetic()))
            .unwrap_or("");
    }
    if let Some((_, v)) = word.rsplit_once('=') {
        return v;
    }
    word.rsplit_once(':').map_or(word, |(_, v)| v)
}

/// Base64 that decodes to printable text: an encoded message, not a key.
fn encoded_text(v: &str) -> bool {
    v.len() % 4 != 1
        && base64_decode(v).is_some_and(|bytes| {
            !bytes.is_empty() && bytes.iter().filter(|b| (0x20..0x7f).contains(*b)).count() * 10 >= bytes.len() * 9
        })
}

/// How many characters of `bytes` stand in syllables: an optional capital, then two or more
/// lower-case letters with a vowel among them (`get`, `User`, `By` in `getUserById2`). Identifiers
/// are made of them; generated characters rarely hold one.
fn wordy(bytes: &[u8]) -> usize {
    let mut total = 0;
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        if bytes[i].is_ascii_uppercase() {
            i += 1;
        }
        let lower = i;
        while i < bytes.len() && bytes[i].is_ascii_lowercase() {
            i += 1;
        }
        let syllable = &bytes[lower..i];
        if syllable.len() >= 2 && syllable.iter().any(|b| b"aeiouy".contains(b)) {
            total += i - start;
        }
        if i == start {
            i += 1;
        }
    }
    total
}

/// An object id of a typed API: a short lower-case type, a separator, then random characters
/// (`cus_NffrFeUfNV2Hib`, `file-4Xk9..`). It names a record; it opens nothing.
fn typed_id(v: &str) -> bool {
    v.split_once(['_', '-'])
        .is_some_and(|(kind, _)| (2..=6).contains(&kind.len()) && kind.bytes().all(|b| b.is_ascii_lowercase()))
}

/// Whether `v` (already stripped of any option name) has the shape of generated characters.
fn random_shape(v: &str) -> bool {
    let bytes = v.as_bytes();
    if !(8..=64).contains(&bytes.len()) {
        return false;
    }
    let symbols = bytes.iter().filter(|b| !b.is_ascii_alphanumeric()).count();
    let separators = bytes.iter().filter(|b| matches!(b, b'_' | b'-')).count();
    let allowed = bytes
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || b"%_+@#!*^&~-".contains(b));
    if !allowed || symbols > 2 || separators > 1 {
        return false;
    }
    let has = |k: Kind| bytes.iter().any(|b| kind(*b) == k);
    if !(has(Kind::Upper) && has(Kind::Lower) && has(Kind::Digit)) {
        return false;
    }
    let changes = bytes.windows(2).filter(|w| kind(w[0]) != kind(w[1])).count();
    let mut longest = 1;
    let mut run = 1;
    for w in bytes.windows(2) {
        run = if kind(w[0]) == kind(w[1]) { run + 1 } else { 1 };
        longest = longest.max(run);
    }
    changes * 10 >= (bytes.len() - 1) * 4
        && longest <= 4
        && entropy(v) >= 2.5
        && !typed_id(v)
        && wordy(bytes) * 2 < bytes.len()
}

/// The random-looking word in `word`, if it holds one (see the module doc). `after` is the word
/// before it (`-p`, `--lock`, or a word naming a secret: `nmcli .. password V`).
pub(super) fn random_word<'a>(word: &'a str, after: Option<&str>) -> Option<&'a str> {
    if word.contains("://") || word.contains(char::is_whitespace) {
        return None;
    }
    let v = value_of(word);
    if !(random_shape(v) && literal_value(v) && !encoded_text(v)) {
        return None;
    }
    // Public ids are random too (a video, a record, a short link: base62, or base64url with
    // `_` and `-`). A password mixes in another symbol; a key is long; otherwise the word must
    // be handed to a password or key option (`-p V`, `-kV`).
    let strong_symbol = v.bytes().any(|b| b"%+@#!*^&~".contains(&b));
    let key_length = v.len() >= 30;
    let glued_short =
        word.len() > v.len() + 1 && word.starts_with('-') && !word.starts_with("--") && !word.contains('=');
    let option = if glued_short { Some(&word[..2]) } else { after };
    let secret_option = option.is_some_and(|o| {
        matches!(o, "-p" | "-P" | "-k" | "-K" | "-w" | "-W")
            || matches!(
                o.trim_start_matches('-').to_ascii_lowercase().as_str(),
                "password" | "passwd" | "pass" | "passphrase" | "secret" | "token" | "key" | "apikey" | "api-key"
            )
    });
    (strong_symbol || key_length || secret_option).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::random_word;

    #[test]
    fn generated_passwords_and_keys_are_random_wherever_they_are_glued() {
        for word in [
            "8qY9%asUg7V92",
            "-kFK22+2ztsDz24",
            "--passphrase=Q5ZF@XRyBtV73",
            "PASS=aZ3kQ9#mX2pL7",
            "admin:x7Kp2Qm9Zr4T+",
            "rT5yU8iO2pA4sD6fG7hJ9kL2zX4cV6bN",
        ] {
            assert!(random_word(word, None).is_some(), "{word}");
        }
        assert!(random_word("Q5ZF_XRyBtV73", Some("-p")).is_some());
        assert!(random_word("Xk9aQ2b7", Some("password")).is_some());
        assert!(random_word("Xk9aQ2b7", Some("--id")).is_none());
    }

    #[test]
    fn names_identifiers_hashes_paths_and_encoded_text_are_not() {
        for word in [
            "Squeak64-Trunk",
            "BuildID_or_NVR1",
            "getUserById2",
            "TestGetUser2",
            "web-7d4b9c6f5-x2kqz",
            "0123456789abcdef0123",
            "docs/Ab3Cd5Ef7Gh9.txt",
            "dGFzay0xIHJlYWR5",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
            "https://youtu.be/?v=Mwa0_nE9H7A",
            "Python3",
            "--max-old-space-size=4096",
            "v1.2.3-Beta4",
            "$SECRET_2Kx",
            "cus_NffrFeUfNV2Hib",
            "--grep=AbC9xYz2",
            // Public ids: a video, a nanoid, a KSUID, a short link.
            "dQw4w9WgXcQ",
            "V1StGXR8_Z5jdHi6B",
            "0ujtsYcgvSTl8PAuAdqWYSMnLOv",
            "3xYzAbC9",
        ] {
            assert!(random_word(word, None).is_none(), "{word}");
        }
    }
}

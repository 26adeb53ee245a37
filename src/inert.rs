//! What is inert: the one place that decides which characters of agent- or command-controlled
//! text may reach a terminal, the activity log or a report.
//!
//! Text an agent or a command controls (stderr tails, final messages, tool names, file names,
//! test output) can carry terminal escape sequences (a window-title OSC, an OSC 52 clipboard
//! write, cursor moves that hide lines), lone control characters (backspace and carriage return
//! overwrite what was shown), and Unicode bidi controls that reorder what a reader sees
//! ("trojan source"). None of it may reach a person's terminal or an editor raw.
//!
//! **What is removed or replaced** by [`text`]:
//!
//! - ESC-introduced sequences, whole: CSI (`ESC [` … final byte), OSC (`ESC ]` … BEL or ST),
//!   DCS / SOS / PM / APC strings (`ESC P`, `ESC X`, `ESC ^`, `ESC _` … ST), and the short
//!   two- and three-byte escapes (`ESC c`, `ESC ( B`); the same sequences introduced by their
//!   C1 forms (U+009B CSI, U+009D OSC, U+0090 DCS, U+0098 SOS, U+009E PM, U+009F APC). A string
//!   sequence without its terminator ends at the end of its line;
//! - every other C0 control except `\n` and `\t` (a `\r` before `\n` is dropped), DEL, and
//!   every other C1 control (U+0080–U+009F): replaced by U+FFFD `�`;
//! - the bidi embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069, and the bidi
//!   marks U+061C, U+200E, U+200F: replaced by `�`.
//!
//! Sanitizing is idempotent: the output of [`text`] passes through it unchanged.
//!
//! **Where it is applied: where text leaves medin for people**, not where it is stored. The
//! libtest/terminal lines and failure messages (`runner::TaskResult::failure_message`,
//! `harness`, the `medin` binary), the metrics block (`report`), the markdown body and front
//! matter of `ACTIVITY_LOG.md`, `medin status` tables and markdown, and the markdown files of
//! TDD state and PRP artifacts. Evidence stays exact: receipts, transcripts, `metrics.json`,
//! `summary.json` and the activity log's `medin:data` line keep the raw text, made inert by
//! JSON escaping — [`json`] additionally escapes DEL, C1 and bidi controls (which JSON would
//! otherwise leave raw) as `\uXXXX`, so a `cat` of any of those files shows nothing live.
//!
//! [`clip`] bounds how much of one text is shown (terminal lines, log entries), with a count of
//! what was cut.
//!
//! **No secret leaves either**: every function here first masks the values of the host
//! variables tasks are passed ([`crate::secrets`]), in JSON inside its strings only, and
//! [`clip`] and [`tail`] mask before they cut. Whatever medin writes or shows passes here, so
//! this is the one place that keeps those values out of receipts, transcripts, logs and
//! reports.

use std::borrow::Cow;

/// U+FFFD, shown in place of a character that is not safe to show.
pub const REPLACEMENT: char = '\u{FFFD}';

/// Whether `c` is a bidi control (embedding, override, isolate or mark).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{061C}' | '\u{200E}' | '\u{200F}')
}

/// Whether `c` needs handling by [`text`] (`\n` and `\t` do not).
fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// Whether `s` is already inert (nothing for [`text`] to change).
pub fn is_inert(s: &str) -> bool {
    !s.chars().any(is_unsafe)
}

/// `s` with every secret masked ([`crate::secrets`]), escape sequences removed and every other
/// control character (except `\n` and `\t`) and bidi control replaced by `�`. Borrowed when
/// nothing needed changing.
pub fn text(s: &str) -> Cow<'_, str> {
    match crate::secrets::mask_text(s) {
        Cow::Borrowed(s) => sanitize(s),
        Cow::Owned(masked) => Cow::Owned(sanitize(&masked).into_owned()),
    }
}

/// [`text`] without the mask.
fn sanitize(s: &str) -> Cow<'_, str> {
    if is_inert(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(c) = s[i..].chars().next() {
        let next = i + c.len_utf8();
        if !is_unsafe(c) {
            out.push(c);
            i = next;
            continue;
        }
        i = match c {
            '\r' if s[next..].starts_with('\n') => next,
            '\u{1b}' => skip_escape(s, next),
            '\u{9b}' => skip_csi(s, next),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(s, next),
            _ => {
                out.push(REPLACEMENT);
                next
            }
        };
    }
    Cow::Owned(out)
}

/// [`text`] on one line: newlines, carriage returns and tabs become spaces too.
pub fn line(s: &str) -> Cow<'_, str> {
    let t = text(s);
    if t.contains(['\n', '\t']) {
        Cow::Owned(t.replace(['\n', '\t'], " "))
    } else {
        t
    }
}

/// The byte at `i` of `s`, if it is ASCII (every byte of a sequence's body is).
fn ascii_at(s: &str, i: usize) -> Option<u8> {
    s.as_bytes().get(i).copied().filter(u8::is_ascii)
}

/// The index after the escape sequence whose ESC ends just before `i`.
fn skip_escape(s: &str, i: usize) -> usize {
    match ascii_at(s, i) {
        Some(b'[') => skip_csi(s, i + 1),
        Some(b']' | b'P' | b'X' | b'^' | b'_') => skip_string(s, i + 1),
        // nF escapes: intermediates, then one final byte (`ESC ( B`).
        Some(b' '..=b'/') => {
            let mut j = i;
            while matches!(ascii_at(s, j), Some(b' '..=b'/')) {
                j += 1;
            }
            if matches!(ascii_at(s, j), Some(b'0'..=b'~')) {
                j + 1
            } else {
                j
            }
        }
        // Two-byte escapes (`ESC c`, `ESC 7`, `ESC M`).
        Some(b'0'..=b'~') => i + 1,
        _ => i,
    }
}

/// A control sequence after its introducer: parameter bytes, intermediates, one final byte.
fn skip_csi(s: &str, mut i: usize) -> usize {
    while matches!(ascii_at(s, i), Some(b'0'..=b'?')) {
        i += 1;
    }
    while matches!(ascii_at(s, i), Some(b' '..=b'/')) {
        i += 1;
    }
    if matches!(ascii_at(s, i), Some(b'@'..=b'~')) {
        i + 1
    } else {
        i
    }
}

/// An OSC / DCS / SOS / PM / APC string after its introducer, through its terminator (BEL,
/// `ESC \` or U+009C ST); without one, up to the end of the line.
fn skip_string(s: &str, i: usize) -> usize {
    for (at, c) in s[i..].char_indices() {
        let at = i + at;
        match c {
            '\u{7}' | '\u{9c}' => return at + c.len_utf8(),
            '\u{1b}' if s[at + 1..].starts_with('\\') => return at + 2,
            '\n' => return at,
            _ => {}
        }
    }
    s.len()
}

/// At most `max` bytes of `s` (cut at a character boundary), followed by
/// `… [N more bytes]` when anything was cut. Secrets are masked before the cut, so no piece of
/// one is left at the cut.
pub fn clip(s: &str, max: usize) -> Cow<'_, str> {
    match crate::secrets::mask_text(s) {
        Cow::Borrowed(s) => clip_unmasked(s, max),
        Cow::Owned(masked) => Cow::Owned(clip_unmasked(&masked, max).into_owned()),
    }
}

fn clip_unmasked(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}… [{} more bytes]", &s[..end], s.len() - end))
}

/// The last `max` characters of `s` (where runners print their summaries and errors), trimmed,
/// after `…` when anything was cut. Secrets are masked before the cut.
pub fn tail(s: &str, max: usize) -> String {
    let s = crate::secrets::mask_text(s);
    let n = s.chars().count();
    if n <= max {
        s.trim().to_string()
    } else {
        let kept: String = s.chars().skip(n - max).collect();
        format!("…{}", kept.trim())
    }
}

/// Serialized JSON with DEL, C1 controls and bidi controls escaped as `\uXXXX`, so the file or
/// line shows nothing live while a JSON reader gets exactly the same strings back. (serde_json
/// already escapes the C0 controls, ESC included.)
///
/// Valid for any JSON text: outside strings JSON is plain ASCII structure, so every such
/// character is inside a string, where `\uXXXX` means the same character.
///
/// Every secret inside its strings is masked first ([`crate::secrets::mask_json`]).
pub fn json(serialized: &str) -> Cow<'_, str> {
    match crate::secrets::mask_json(serialized) {
        Cow::Borrowed(s) => escape_json(s),
        Cow::Owned(masked) => Cow::Owned(escape_json(&masked).into_owned()),
    }
}

fn escape_json(serialized: &str) -> Cow<'_, str> {
    let needs = |c: char| c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) || is_bidi_control(c);
    if !serialized.chars().any(needs) {
        return Cow::Borrowed(serialized);
    }
    let mut out = String::with_capacity(serialized.len() + 16);
    for c in serialized.chars() {
        if needs(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_end_and_says_when_it_cut() {
        assert_eq!(tail("  short \n", 10), "short");
        assert_eq!(tail("abcdefgh", 3), "…fgh");
        assert_eq!(tail("ééééé", 2), "…éé");
    }

    #[test]
    fn escape_sequences_are_removed_whole() {
        assert_eq!(text("a\x1b]0;pwned\x07b"), "ab");
        assert_eq!(text("a\x1b]52;c;ZXZpbA==\x1b\\b"), "ab");
        assert_eq!(text("\x1b[31mred\x1b[0m"), "red");
        assert_eq!(text("\x1b[?1049h\x1b[2J"), "");
        assert_eq!(text("x\x1bPq#0;2;0;0;0\x1b\\y"), "xy");
        assert_eq!(text("x\x1b_apc\x1b\\y\x1b^pm\x07z"), "xyz");
        assert_eq!(text("\x1b(Bok\x1bc"), "ok");
        assert_eq!(text("\u{9b}31mred\u{9d}0;t\u{9c}!"), "red!");
        // An unterminated string ends at its line.
        assert_eq!(text("a\x1b]0;title\nnext"), "a\nnext");
        assert_eq!(text("trailing\x1b"), "trailing");
    }

    #[test]
    fn controls_and_bidi_are_replaced_and_newlines_tabs_kept() {
        assert_eq!(text("a\tb\nc"), "a\tb\nc");
        assert_eq!(text("crlf\r\nline"), "crlf\nline");
        assert_eq!(text("over\rwrite"), "over�write");
        assert_eq!(text("bs\x08\x00\x7f\u{85}"), "bs����");
        assert_eq!(
            text("if access \u{202E}\u{2066}// admin\u{2069}\u{2066}"),
            "if access ��// admin��"
        );
        assert_eq!(line("a\nb\tc\r\nd"), "a b c d");
        assert!(matches!(text("plain ✅ text"), Cow::Borrowed(_)));
    }

    #[test]
    fn sanitizing_is_idempotent_and_total() {
        let nasty = "\x1b]0;x\x07\u{202e}\r\x1b[1;2\u{9b}\u{9d}";
        let once = text(nasty).into_owned();
        assert!(is_inert(&once), "{once:?}");
        assert_eq!(text(&once), once);
    }

    #[test]
    fn clip_cuts_at_a_char_boundary_and_counts() {
        assert_eq!(clip("hello", 10), "hello");
        assert_eq!(clip("héllo", 2), "h… [5 more bytes]");
    }

    proptest::proptest! {
        /// Whatever the mix of escapes, controls and text, the output is inert, stable under a
        /// second pass, and one line when asked.
        #[test]
        fn any_text_comes_out_inert(chars in proptest::collection::vec(proptest::sample::select(vec![
            '\u{1b}', '[', ']', '\u{7}', '\\', '\u{9b}', '\u{9c}', '\u{9d}', '\u{90}', '\r', '\n', '\t', 'a', 'P',
            '_', '^', 'X', '0', ';', '(', '\u{202e}', '\u{2066}', '\u{200f}', '\u{7f}', '\u{85}', '\u{0}', 'é', '✅',
        ]), 0..80)) {
            let s: String = chars.into_iter().collect();
            let once = text(&s).into_owned();
            proptest::prop_assert!(is_inert(&once), "{:?} -> {:?}", s, once);
            proptest::prop_assert_eq!(text(&once).into_owned(), once.clone());
            proptest::prop_assert!(!line(&s).contains(['\n', '\t']));
            let j = serde_json::to_string(&s).unwrap();
            proptest::prop_assert_eq!(serde_json::from_str::<String>(&json(&j)).unwrap(), s);
        }
    }

    #[test]
    fn json_escaping_keeps_the_value() {
        let v = serde_json::json!({ "m": "a\u{1b}]0;t\u{7}\u{7f}\u{9b}\u{202e}z" });
        let s = serde_json::to_string(&v).unwrap();
        let escaped = json(&s);
        assert!(escaped.is_ascii(), "{escaped}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&escaped).unwrap(), v);
    }
}

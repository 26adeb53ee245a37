//! fish scripts (`fish -c SCRIPT`, `fish -C SCRIPT`, a script piped into `fish`) as the bash
//! text that runs the same commands, for the walker (which reads bash) to judge.
//!
//! fish differs from bash where it matters to a guard in three ways, each of which would
//! otherwise let a fish script hide a command from a bash reading:
//! - **quotes**: in fish's single quotes `\'` and `\\` are escapes, so `'a\'' ; rm -rf ~ ; '`
//!   is two strings around a command to fish and one string to bash;
//! - **command substitution** is a bare `(..)` (`echo (rm -rf ~)`), which bash reads as a
//!   syntax error or a subshell;
//! - **keywords**: `and`, `or`, `not`, `if`, `while`, `else` and `begin` run the words after
//!   them as a command; `if`, `while`, `begin`, `for` and `switch` open a block that `end`
//!   closes (a brace group here, so a block's output goes where its `end` is piped), and
//!   `function NAME` opens a function (a bash function, whose `$argv` the walker fills at each
//!   call);
//! - **escapes outside quotes** make characters (`\x72m` is `rm`), and `set NAME VALUE`,
//!   `alias NAME BODY` and `.. | source` assign, alias and run what they are given.
//!
//! The translation is conservative: block bodies are read as if they ran (a function's body
//! whether or not it is called), and what fish would reject is passed on for the walker to fail
//! closed on (an unterminated quote, which fish rejects before running anything, is one string
//! to the end). `$argv` is the script's arguments.

use crate::guard::shell::shell_quote;

/// fish's long options, whose unique prefixes it also takes (`--comm` is `--command`), and
/// whether each takes a value.
const LONG_OPTIONS: &[(&str, bool)] = &[
    ("command", true),
    ("init-command", true),
    ("debug", true),
    ("debug-output", true),
    ("debug-stack-frames", true),
    ("features", true),
    ("profile", true),
    ("profile-startup", true),
    ("no-execute", false),
    ("interactive", false),
    ("login", false),
    ("private", false),
    ("no-config", false),
    ("print-rusage-self", false),
    ("print-debug-categories", false),
    ("version", false),
    ("help", false),
];

/// fish's short options that take a value (glued to the bundle's rest, or the next word).
const SHORT_WITH_VALUE: &[char] = &['c', 'C', 'd', 'o', 'f', 'p', 'D'];

/// `fish [OPTIONS] -c SCRIPT [ARGS..]` and `-C`/`--init-command SCRIPT`: every script given,
/// in bash's words, with `$argv` as `ARGS`. None when no script is given on the command line,
/// or when fish only checks the syntax (`-n`). Options are read as fish's getopt reads them:
/// bundles (`-lc`), values glued to a bundle (`-c'rm ..'`) or to a long option (`--command=..`),
/// and long options abbreviated to a unique prefix (`--comm`, `--init`).
pub(super) fn scripts_of(argv: &[String]) -> Option<String> {
    let mut scripts = Vec::new();
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, glued) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let exact = LONG_OPTIONS.iter().find(|(o, _)| *o == name);
            let mut prefixed = LONG_OPTIONS.iter().filter(|(o, _)| o.starts_with(name));
            let (option, takes_value) = match (exact, prefixed.next(), prefixed.next()) {
                (Some(o), _, _) | (None, Some(o), None) => *o,
                // Unknown or ambiguous: fish refuses to start.
                _ => return None,
            };
            if option == "no-execute" {
                return None;
            }
            if takes_value {
                let value = match glued {
                    Some(v) => v.to_string(),
                    None => {
                        i += 1;
                        argv.get(i)?.clone()
                    }
                };
                if matches!(option, "command" | "init-command") {
                    scripts.push(value);
                }
            }
        } else if a.len() > 1 && a.starts_with('-') {
            for (k, c) in a.char_indices().skip(1) {
                if c == 'n' {
                    return None;
                }
                if SHORT_WITH_VALUE.contains(&c) {
                    let rest = &a[k + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        i += 1;
                        argv.get(i)?.clone()
                    } else {
                        rest.to_string()
                    };
                    if matches!(c, 'c' | 'C') {
                        scripts.push(value);
                    }
                    break;
                }
            }
        } else {
            break;
        }
        i += 1;
    }
    if scripts.is_empty() {
        return None;
    }
    let args = argv.get(i..).unwrap_or_default();
    let text = as_bash(&scripts.join("\n"));
    let filled = crate::guard::shell::positional(&text, None, args);
    // A function's `$argv` is its caller's words: the text is read once more as written, for
    // the walker to fill at each call.
    Some(if text.contains("() {") && filled != text {
        format!("{filled}\n{text}")
    } else {
        filled
    })
}

/// Where a command ends: at these bytes (or a closing parenthesis).
fn ends_command(c: u8) -> bool {
    matches!(c, b';' | b'\n' | b'&' | b'|' | b')')
}

/// `script`, a fish script, as bash text that runs the same commands (see the module doc).
/// `$argv` becomes `"$@"` and `$argv[N]` `"${N}"`, for [`crate::guard::shell::positional`]
/// (or the array `argv` where the script sets it).
pub(crate) fn as_bash(script: &str) -> String {
    let b = script.as_bytes();
    let argv_set = script.split([';', '\n']).any(|c| {
        let mut w = c.split_whitespace();
        w.next() == Some("set") && w.find(|x| !x.starts_with('-')) == Some("argv")
    });
    let mut out = String::with_capacity(script.len() + 8);
    let mut command_start = true;
    let mut after_else = false;
    // Blocks open: each is a brace group (a function's body, for `function`), so what a
    // block prints goes where its `end` is piped (`begin; curl ..; end | sh`).
    let mut open = 0usize;
    // The words up to the next one, from `at`: (end, raw, bash spelling).
    let words_from = |mut at: usize| {
        let mut words = Vec::new();
        loop {
            while at < b.len() && matches!(b[at], b' ' | b'\t' | b'\r') {
                at += 1;
            }
            if at >= b.len() || ends_command(b[at]) || b[at] == b'(' || b[at] == b'#' {
                return (at, words);
            }
            let (end, word) = word_at(script, at, argv_set);
            words.push((&script[at..end], word));
            at = end;
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\r' => {
                out.push(char::from(b[i]));
                i += 1;
            }
            b'\n' | b';' | b'|' | b'&' => {
                out.push(char::from(b[i]));
                command_start = true;
                i += 1;
            }
            b'(' => {
                // `$(..)` and `(..)` are both substitutions in fish; a `$` already copied
                // opens the first.
                out.push_str(if out.ends_with('$') && !out.ends_with("\\$") {
                    "("
                } else {
                    "$("
                });
                command_start = true;
                i += 1;
            }
            b')' => {
                out.push(')');
                command_start = false;
                i += 1;
            }
            b'#' => {
                let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |n| i + n);
                out.push_str(&script[i..end]);
                i = end;
            }
            _ => {
                let (end, word) = word_at(script, i, argv_set);
                let raw = &script[i..end];
                let was_else = std::mem::replace(&mut after_else, false);
                if !command_start {
                    out.push_str(&word);
                    i = end;
                    continue;
                }
                command_start = false;
                // Whether no other word follows in the command (`else;`); the words themselves
                // are read only by the statements that need them.
                let after = b[end..]
                    .iter()
                    .position(|c| !matches!(c, b' ' | b'\t' | b'\r'))
                    .map_or(b.len(), |n| end + n);
                let alone = b
                    .get(after)
                    .is_none_or(|&c| matches!(c, b';' | b'\n' | b'&' | b'|' | b')' | b'#'));
                let needs_words = matches!(raw, "function" | "set" | "alias" | "source" | ".");
                let (next, rest) = if needs_words {
                    words_from(end)
                } else {
                    (end, Vec::new())
                };
                match raw {
                    "function" if !rest.is_empty() => {
                        // `function f --on-event x; BODY; end`: `f() { :; BODY; }`.
                        out.push_str(&rest[0].1);
                        out.push_str("() { :");
                        open += 1;
                        i = next;
                        continue;
                    }
                    "end" if open > 0 => {
                        open -= 1;
                        out.push('}');
                    }
                    "else" if !alone => {
                        after_else = true;
                        command_start = true;
                    }
                    // `else if` goes on the same block.
                    "if" if was_else && !alone => command_start = true,
                    "if" | "while" | "begin" if !alone => {
                        out.push_str("{ ");
                        open += 1;
                        command_start = true;
                    }
                    "and" | "or" | "not" | "!" if !alone => command_start = true,
                    "if" | "while" | "begin" | "for" | "switch" => {
                        out.push_str("{ :");
                        open += 1;
                    }
                    "function" | "case" | "else" | "end" | "and" | "or" | "not" | "!" => out.push(':'),
                    // `set -l NAME VALUE`: an assignment (`set -l tmp (mktemp -d)` too).
                    "set" => match assignment(&rest, b.get(next) == Some(&b'(')) {
                        Some(text) => {
                            out.push_str(&text);
                            i = next;
                            continue;
                        }
                        // `set -q x`, `set -e x`: no assignment, and not bash's `set`.
                        None => out.push(':'),
                    },
                    // `alias NAME 'BODY'`: bash's `alias NAME=BODY`.
                    "alias" if rest.len() == 2 && !rest[0].0.contains('=') => {
                        out.push_str(&format!("alias {}={}", rest[0].1, rest[1].1));
                        i = next;
                        continue;
                    }
                    // `.. | source`: what it reads on stdin runs in this shell.
                    "source" | "." if alone || rest.first().is_some_and(|w| w.0 == "-") => out.push_str("sh"),
                    _ => out.push_str(&word),
                }
                i = end;
            }
        }
    }
    out
}

/// fish's `set [OPTIONS] NAME VALUES..` as a bash assignment (`NAME=VALUE`, `NAME=(V1 V2)`,
/// `NAME=` before a substitution that follows), or None for the forms that assign nothing
/// (`set -e`, `set -q`, `set -S`, a bare `set`) or that add to a list.
fn assignment(words: &[(&str, String)], substitution_follows: bool) -> Option<String> {
    let flags = words.iter().take_while(|w| w.0.starts_with('-'));
    let other = |f: &str| {
        f.starts_with("--")
            && !matches!(
                f,
                "--local" | "--global" | "--universal" | "--export" | "--unexport" | "--function"
            )
            || (!f.starts_with("--") && f[1..].chars().any(|c| !matches!(c, 'l' | 'g' | 'U' | 'x' | 'u' | 'f')))
    };
    if flags.clone().any(|f| other(f.0)) {
        return None;
    }
    let mut rest = words.iter().skip_while(|w| w.0.starts_with('-'));
    let name = rest.next()?;
    if !name.0.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        return None;
    }
    let values: Vec<&str> = rest.map(|w| w.1.as_str()).collect();
    Some(match (values.as_slice(), substitution_follows) {
        ([], _) => format!("{}=", name.0),
        ([one], false) => format!("{}={one}", name.0),
        (many, false) => format!("{}=({})", name.0, many.join(" ")),
        (_, true) => return None,
    })
}

/// The word that starts at `start` (up to an unquoted blank, operator or parenthesis): where
/// it ends, and its bash spelling.
fn word_at(script: &str, start: usize, argv_set: bool) -> (usize, String) {
    let b = script.as_bytes();
    let mut out = String::new();
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\r' | b'\n' | b';' | b'|' | b'&' | b'(' | b')' => break,
            b'\\' => {
                // fish's escapes make characters (`\x72` is `r`): the character, quoted.
                let (end, made) = escape_at(script, i);
                match made {
                    Some(c) => out.push_str(&shell_quote(&c.to_string())),
                    None => out.push_str(&script[i..end]),
                }
                i = end;
            }
            b'\'' => {
                // fish's single quotes: `\'` and `\\` are escapes, any other `\` is itself.
                let mut text = String::new();
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    if b[i] == b'\\' && matches!(b.get(i + 1), Some(b'\'' | b'\\')) {
                        i += 1;
                    }
                    let end = next_char(script, i);
                    text.push_str(&script[i..end]);
                    i = end;
                }
                i = (i + 1).min(b.len());
                out.push_str(&shell_quote(&text));
            }
            b'"' => {
                // Double quotes escape as bash's do; `$argv` inside is the arguments joined.
                out.push('"');
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        let end = next_char(script, i + 1);
                        out.push_str(&script[i..end]);
                        i = end;
                    } else if let Some((len, nth)) = argv_at(&b[i..]).filter(|_| !argv_set) {
                        out.push_str(&nth.map_or_else(|| "$*".to_string(), |n| format!("${{{n}}}")));
                        i += len;
                    } else {
                        let end = next_char(script, i);
                        out.push_str(&script[i..end]);
                        i = end;
                    }
                }
                if i < b.len() {
                    out.push('"');
                    i += 1;
                }
            }
            b'$' => match argv_at(&b[i..]) {
                Some((len, _)) if argv_set => {
                    out.push_str("\"${argv[@]}\"");
                    i += len;
                }
                Some((len, nth)) => {
                    out.push_str(&nth.map_or_else(|| "\"$@\"".to_string(), |n| format!("\"${{{n}}}\"")));
                    i += len;
                }
                None => {
                    out.push('$');
                    i += 1;
                }
            },
            _ => {
                let end = next_char(script, i);
                out.push_str(&script[i..end]);
                i = end;
            }
        }
    }
    (i, out)
}

/// The escape at `at` (a backslash) outside quotes: where it ends, and the character it makes
/// when it makes one that bash would read otherwise (`\x72`, `\u006d`, `\155`, `\n`, `\cA`);
/// None for a backslash before a character that stands for itself in both (`\ `, `\$`, `\*`).
fn escape_at(script: &str, at: usize) -> (usize, Option<char>) {
    let b = script.as_bytes();
    let Some(&kind) = b.get(at + 1) else {
        return (b.len(), None);
    };
    let digits = |from: usize, max: usize, radix: u32| {
        let n = b[from..]
            .iter()
            .take(max)
            .take_while(|c| char::from(**c).is_digit(radix))
            .count();
        let value = u32::from_str_radix(&script[from..from + n], radix).ok();
        (from + n, value.and_then(char::from_u32))
    };
    match kind {
        b'x' | b'X' => digits(at + 2, 2, 16),
        b'u' => digits(at + 2, 4, 16),
        b'U' => digits(at + 2, 8, 16),
        b'0'..=b'7' => digits(at + 1, 3, 8),
        b'c' => match script.get(at + 2..).and_then(|r| r.chars().next()) {
            Some(c) if c.is_ascii() => (at + 3, Some(char::from(c.to_ascii_uppercase() as u8 ^ 0x40))),
            Some(c) => (at + 2 + c.len_utf8(), Some(c)),
            None => (b.len(), None),
        },
        b'a' => (at + 2, Some('\u{7}')),
        b'b' => (at + 2, Some('\u{8}')),
        b'e' => (at + 2, Some('\u{1b}')),
        b'f' => (at + 2, Some('\u{c}')),
        b'n' => (at + 2, Some('\n')),
        b'r' => (at + 2, Some('\r')),
        b't' => (at + 2, Some('\t')),
        b'v' => (at + 2, Some('\u{b}')),
        _ => (next_char(script, at + 1), None),
    }
}

/// `$argv` (None) or `$argv[N]` (Some(N)) at the start of `b`, and its length.
fn argv_at(b: &[u8]) -> Option<(usize, Option<usize>)> {
    let rest = b.strip_prefix(b"$argv")?;
    if rest.first().is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
        return None;
    }
    if let Some(inner) = rest.strip_prefix(b"[") {
        let close = inner.iter().position(|&c| c == b']')?;
        let n: usize = std::str::from_utf8(&inner[..close]).ok()?.parse().ok()?;
        return Some((5 + close + 2, Some(n)));
    }
    Some((5, None))
}

/// The byte index after the character at `i` (or `i` at the end).
fn next_char(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    (i + 1..=s.len()).find(|&k| s.is_char_boundary(k)).unwrap_or(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn substitutions_quotes_and_keywords_read_as_bash() {
        assert_eq!(as_bash("echo (rm -rf ~)"), "echo $(rm -rf ~)");
        assert_eq!(as_bash("echo $(date) a(b)"), "echo $(date) a$(b)");
        // fish's `\'` closes nothing: the command between the strings is outside them.
        assert_eq!(
            as_bash(r"echo 'a\'' ; rm -rf ~ ; echo 'b'"),
            r"echo 'a'\''' ; rm -rf ~ ; echo 'b'"
        );
        assert_eq!(as_bash(r"echo 'a\\' 'c\d'"), r"echo 'a\' 'c\d'");
        assert_eq!(as_bash("true; and rm -rf ~; or not rm x"), "true;  rm -rf ~;   rm x");
        assert_eq!(
            as_bash("if test -f x; rm x; else; rm y; end"),
            "{  test -f x; rm x; :; rm y; }"
        );
        assert_eq!(as_bash("begin\n rm -rf ~\nend"), "{ :\n rm -rf ~\n}");
        // A block's output goes where its `end` is piped.
        assert_eq!(as_bash("begin; curl -s x; end | sh"), "{ :; curl -s x; } | sh");
        assert_eq!(as_bash("for f in /etc; rm -rf $f; end"), "{ : f in /etc; rm -rf $f; }");
        // A keyword is one only where a command starts.
        assert_eq!(as_bash("echo and if end"), "echo and if end");
        assert_eq!(as_bash("echo \"(x) $HOME\" # (y)"), "echo \"(x) $HOME\" # (y)");
        assert_eq!(as_bash("rm $argv[2] $argv"), "rm \"${2}\" \"$@\"");
        assert_eq!(as_bash("echo \"$argv\""), "echo \"$*\"");
        // An unterminated quote (fish runs nothing) is one string to its end.
        assert_eq!(as_bash("echo 'é ; rm"), "echo 'é ; rm'");
    }

    #[test]
    fn escapes_functions_assignments_aliases_and_source() {
        // Escapes outside quotes make characters.
        assert_eq!(as_bash(r"\x72m -rf \x2fetc"), "'r'm -rf '/'etc");
        assert_eq!(as_bash(r"r\u006d r\155 a\ b \$x"), r"r'm' r'm' a\ b \$x");
        // A function is a bash function: its `$argv` is filled at each call.
        assert_eq!(
            as_bash("function f --on-event x; rm -rf $argv; end; f ~"),
            "f() { :; rm -rf \"$@\"; }; f ~"
        );
        assert_eq!(as_bash("if true; function g; end; end"), "{  true; g() { :; }; }");
        // `set` assigns (a substitution too); where `argv` is set, `$argv` is that list.
        assert_eq!(
            as_bash("set -l out ./build; rm -rf $out/*"),
            "out=./build; rm -rf $out/*"
        );
        assert_eq!(as_bash("set -gx tmp (mktemp -d)"), "tmp=$(mktemp -d)");
        assert_eq!(as_bash("set argv a b; $argv"), "argv=(a b); \"${argv[@]}\"");
        assert_eq!(as_bash("set -q x; set -e y"), ": -q x; : -e y");
        // Hostile escapes and long keyword chains.
        assert_eq!(as_bash("\\c\u{e9}x"), "'\u{e9}'x");
        let chain = format!("{}rm -rf ~", "not ".repeat(20_000));
        assert_eq!(as_bash(&chain).trim_start(), "rm -rf ~");
        // `alias NAME BODY` and `source` reading stdin.
        assert_eq!(as_bash("alias foo 'rm -rf ~'; foo"), "alias foo='rm -rf ~'; foo");
        assert_eq!(as_bash("echo x | source"), "echo x | sh");
        assert_eq!(as_bash("source ./env.fish"), "source ./env.fish");
    }

    #[test]
    fn scripts_from_the_command_line_with_their_arguments() {
        // Options as fish's getopt reads them: values glued or next, unique long prefixes.
        assert_eq!(scripts_of(&args(&["fish", "-D", "3", "-c", "a"])).as_deref(), Some("a"));
        assert_eq!(scripts_of(&args(&["fish", "--comm=a"])).as_deref(), Some("a"));
        assert_eq!(scripts_of(&args(&["fish", "--init", "a"])).as_deref(), Some("a"));
        assert_eq!(scripts_of(&args(&["fish", "-ca"])).as_deref(), Some("a"));
        assert_eq!(scripts_of(&args(&["fish", "--p=x", "-c", "a"])), None);
        // A function's `$argv` is read as written too, for the walker to fill at the call.
        assert_eq!(
            scripts_of(&args(&["fish", "-c", "function f; rm $argv; end; f ~", "x"])).as_deref(),
            Some("f() { :; rm 'x'; }; f ~\nf() { :; rm \"$@\"; }; f ~")
        );
        assert_eq!(
            scripts_of(&args(&["fish", "-c", "rm -rf $argv", "x /", "y"])).as_deref(),
            Some("rm -rf 'x /' 'y'")
        );
        assert_eq!(
            scripts_of(&args(&["fish", "-C", "rm -rf ~"])).as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            scripts_of(&args(&["fish", "--init-command=a", "-lc", "b"])).as_deref(),
            Some("a\nb")
        );
        assert_eq!(
            scripts_of(&args(&["fish", "-d", "3", "--command", "ls"])).as_deref(),
            Some("ls")
        );
        assert_eq!(scripts_of(&args(&["fish", "-n", "-c", "rm -rf ~"])), None);
        assert_eq!(scripts_of(&args(&["fish", "x.fish"])), None);
        assert_eq!(scripts_of(&args(&["fish", "-c"])), None);
    }
}

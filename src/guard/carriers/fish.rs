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
//!   them as a command; `for`, `function`, `switch`, `case` and `end` close or name blocks.
//!
//! The translation is conservative: block bodies are read as if they ran (a function's body
//! whether or not it is called), and what fish would reject is passed on for the walker to fail
//! closed on (an unterminated quote, which fish rejects before running anything, is one string
//! to the end). `$argv` is the script's arguments.

use crate::guard::shell::shell_quote;

/// Keywords after which the next words are a command that runs.
const RUNS_NEXT: &[&str] = &["and", "or", "not", "!", "if", "while", "else", "begin"];

/// Keywords whose words name a block or a value rather than a command: read as `:`'s words.
const NAMES_BLOCK: &[&str] = &["for", "function", "switch", "case", "end"];

/// `fish [OPTIONS] -c SCRIPT [ARGS..]` and `-C`/`--init-command SCRIPT`: every script given,
/// in bash's words, with `$argv` as `ARGS`. None when no script is given on the command line,
/// or when fish only checks the syntax (`-n`).
pub(super) fn scripts_of(argv: &[String]) -> Option<String> {
    let mut scripts = Vec::new();
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let (flag, glued) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (a.as_str(), None),
        };
        match flag {
            "-n" | "--no-execute" => return None,
            "-c" | "--command" | "-C" | "--init-command" => match glued {
                Some(v) => scripts.push(v.to_string()),
                None => {
                    scripts.push(argv.get(i + 1)?.clone());
                    i += 1;
                }
            },
            "-d" | "--debug" | "-o" | "--debug-output" | "-f" | "--features" | "--profile" | "--profile-startup"
                if glued.is_none() =>
            {
                i += 1;
            }
            f if f.starts_with("--") => {}
            // Bundled short options (`-lc SCRIPT`): the script follows the bundle.
            f if f.starts_with('-') && f.len() > 1 => {
                if f[1..].contains('n') {
                    return None;
                }
                if f[1..].contains(['c', 'C']) {
                    scripts.push(argv.get(i + 1)?.clone());
                    i += 1;
                }
            }
            _ => break,
        }
        i += 1;
    }
    if scripts.is_empty() {
        return None;
    }
    let args = argv.get(i..).unwrap_or_default();
    let text = scripts.join("\n");
    Some(crate::guard::shell::positional(&as_bash(&text), None, args))
}

/// `script`, a fish script, as bash text that runs the same commands (see the module doc).
/// `$argv` becomes `"$@"` and `$argv[N]` `"${N}"`, for [`crate::guard::shell::positional`].
pub(crate) fn as_bash(script: &str) -> String {
    let b = script.as_bytes();
    let mut out = String::with_capacity(script.len() + 8);
    let mut command_start = true;
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
                let (end, word) = word_at(script, i);
                let raw = &script[i..end];
                let alone = || {
                    b[end..]
                        .iter()
                        .find(|c| !matches!(c, b' ' | b'\t' | b'\r'))
                        .is_none_or(|c| matches!(c, b';' | b'\n' | b'&' | b'|'))
                };
                if command_start && RUNS_NEXT.contains(&raw) && !alone() {
                    // The words after it are the command.
                } else if command_start && (NAMES_BLOCK.contains(&raw) || RUNS_NEXT.contains(&raw)) {
                    // A block's name, or a keyword with no command after it (`else;`).
                    out.push(':');
                    command_start = false;
                } else {
                    out.push_str(&word);
                    command_start = false;
                }
                i = end;
            }
        }
    }
    out
}

/// The word that starts at `start` (up to an unquoted blank, operator or parenthesis): where
/// it ends, and its bash spelling.
fn word_at(script: &str, start: usize) -> (usize, String) {
    let b = script.as_bytes();
    let mut out = String::new();
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\r' | b'\n' | b';' | b'|' | b'&' | b'(' | b')' => break,
            b'\\' => {
                let end = next_char(script, i + 1);
                out.push_str(&script[i..end]);
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
                    } else if let Some((len, nth)) = argv_at(&b[i..]) {
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
    s.get(i..)
        .and_then(|r| r.chars().next())
        .map_or(s.len().max(i), |c| i + c.len_utf8())
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
            " test -f x; rm x; :; rm y; :"
        );
        assert_eq!(as_bash("begin\n rm -rf ~\nend"), ":\n rm -rf ~\n:");
        assert_eq!(as_bash("for f in /etc; rm -rf $f; end"), ": f in /etc; rm -rf $f; :");
        // A keyword is one only where a command starts.
        assert_eq!(as_bash("echo and if end"), "echo and if end");
        assert_eq!(as_bash("echo \"(x) $HOME\" # (y)"), "echo \"(x) $HOME\" # (y)");
        assert_eq!(as_bash("rm $argv[2] $argv"), "rm \"${2}\" \"$@\"");
        assert_eq!(as_bash("echo \"$argv\""), "echo \"$*\"");
        // An unterminated quote (fish runs nothing) is one string to its end.
        assert_eq!(as_bash("echo 'é ; rm"), "echo 'é ; rm'");
    }

    #[test]
    fn scripts_from_the_command_line_with_their_arguments() {
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

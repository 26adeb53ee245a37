//! Programs whose own command language runs shell lines: `ed`'s, `ftp`'s and `dc`'s `!cmd`,
//! `gdb`'s `shell cmd`, sqlite3's `.shell` and `.system`, psql's and mysql's `\! cmd`, mysql's
//! `system cmd`, gnuplot's `system "cmd"`, mailx's `!cmd` and `shell`.
//!
//! Such a program reads its commands from stdin when nothing else gives them (`echo '!rm -rf
//! /' | ed`, `sqlite3 db <<EOF`), or from its words (`psql -c '\! ..'`, `mysql -e 'system ..'`,
//! `sqlite3 db '.shell ..'`, `dc -e '!..'`, `ed '!cmd'` reads the output of `cmd`). The shell
//! line after an escape is a script the program carries, run in a process of its own with the
//! program's rights; an escape with nothing after it is an interactive shell (`sh`).
//!
//! Every word of the program is read for escapes, and every line of what it is fed: a word or
//! a line that only looks like an escape (an ftp host named `!x`) carries a command the rules
//! then find harmless. Mail in send mode reads its stdin as the message (its tilde escapes are
//! the effect judge's, see `effects::judge`), so mail's `!` counts only in command mode.

use super::{Carried, SimpleCommand};

/// One family of programs that share an escape syntax.
struct Language {
    names: &'static [&'static str],
    /// Escapes that open a line (after blanks): the rest of the line is the shell command.
    line: &'static [&'static str],
    /// Escapes that may stand anywhere in a line (`select 1; \! rm -rf /`).
    anywhere: &'static [&'static str],
}

const LANGUAGES: &[Language] = &[
    // ed's and ex's `r !cmd` reads a command's output, `w !cmd` feeds one (after addresses:
    // `1,$w !cmd`).
    Language {
        names: &["ed", "ex"],
        line: &["!"],
        anywhere: &["r !", "w !", "e !"],
    },
    Language {
        names: &[
            "ftp",
            "sftp",
            "lftp",
            "smbclient",
            "dc",
            "crash",
            "nmap",
            "telnet",
            "cscope",
        ],
        line: &["!"],
        anywhere: &[],
    },
    Language {
        names: &["gdb", "cgdb", "gdb-multiarch"],
        line: &["!", "shell ", "shell\t"],
        anywhere: &[],
    },
    Language {
        names: &["mail", "mailx", "Mail", "nail", "s-nail", "bsd-mailx", "heirloom-mailx"],
        line: &["!", "shell", "sh"],
        anywhere: &[],
    },
    Language {
        names: &["sqlite3", "sqlite"],
        line: &[".shell ", ".shell\t", ".system ", ".system\t"],
        anywhere: &[],
    },
    Language {
        names: &["psql"],
        line: &[],
        anywhere: &["\\!"],
    },
    Language {
        names: &["mysql", "mariadb"],
        line: &["system ", "system\t"],
        anywhere: &["\\!"],
    },
    Language {
        names: &["gnuplot"],
        line: &["!", "system ", "system\t"],
        anywhere: &[],
    },
    Language {
        names: &["ghci"],
        line: &[":!"],
        anywhere: &[],
    },
];

/// Whether `name`'s own command language has a shell escape: run with no command, as root,
/// it is a root shell a keystroke away.
pub(crate) fn has_shell_escape(name: &str) -> bool {
    language(name).is_some()
}

fn language(name: &str) -> Option<&'static Language> {
    LANGUAGES.iter().find(|l| l.names.contains(&name))
}

/// Most escapes read from one program's words or input.
const MOST: usize = 16;

/// The shell commands the escapes in `text` run, for the program `name`: one per escape, an
/// escape with nothing after it read as `sh` (an interactive shell).
pub(super) fn escaped_commands(name: &str, text: &str) -> Vec<String> {
    let Some(lang) = language(name) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        let after_line = lang.line.iter().find_map(|e| {
            let rest = line.strip_prefix(e)?;
            // `shell` and `sh` are whole words: `shelltest` is not one.
            let word_ends =
                !e.ends_with(|c: char| c.is_ascii_alphabetic()) || rest.is_empty() || rest.starts_with([' ', '\t']);
            word_ends.then_some(rest)
        });
        let anywhere = || {
            lang.anywhere
                .iter()
                .find_map(|e| line.find(e).map(|at| &line[at + e.len()..]))
        };
        if let Some(rest) = after_line.or_else(anywhere) {
            out.push(shell_line(rest));
        }
        if out.len() >= MOST {
            break;
        }
    }
    out
}

/// The command an escape's rest of line runs: gnuplot's and mysql's quoted form unquoted
/// (`system "rm -rf /"`), nothing at all an interactive shell.
fn shell_line(rest: &str) -> String {
    let rest = rest.trim();
    let unquoted = ['"', '\''].iter().find_map(|&q| {
        rest.strip_prefix(q)
            .and_then(|r| r.strip_suffix(q))
            .filter(|inside| !inside.contains(q))
    });
    match unquoted.unwrap_or(rest) {
        "" => "sh".to_string(),
        command => command.to_string(),
    }
}

/// Whether `cmd` reads its commands from stdin for escapes: mail only in command mode (no
/// recipient named, or `-f` reading a mailbox), every other program of the table always.
pub(super) fn reads_commands(cmd: &SimpleCommand) -> bool {
    let Some(lang) = language(cmd.name()) else {
        return false;
    };
    if !lang.names.contains(&"mail") {
        return true;
    }
    let args = &cmd.argv[1..];
    let reads_box = args
        .iter()
        .any(|a| a == "-f" || a == "--file" || (a.starts_with('-') && !a.starts_with("--") && a.ends_with('f')));
    let recipients = super::operands(&cmd.argv, MAIL_VALUE_OPTIONS);
    reads_box || recipients.is_empty()
}

/// Options of mailx that take a value.
const MAIL_VALUE_OPTIONS: &[&str] = &[
    "-s",
    "-c",
    "-b",
    "-r",
    "-a",
    "-A",
    "-q",
    "-S",
    "-u",
    "-T",
    "-X",
    "-Y",
    "-E",
    "--exec",
    "--subject",
];

/// The scripts `cmd`'s own words run through its escapes (`psql -c '\! rm -rf /'`, `sqlite3
/// db '.shell ..'`, `ed '!cmd'`).
pub(super) fn in_words(cmd: &SimpleCommand) -> Vec<Carried> {
    if language(cmd.name()).is_none() {
        return Vec::new();
    }
    cmd.argv[1..]
        .iter()
        .flat_map(|w| {
            // `--command=\! ..`, `-e!..`: the value glued to its option.
            let value = match w.split_once('=') {
                Some((o, v)) if o.starts_with("--") => v,
                _ => w.as_str(),
            };
            escaped_commands(cmd.name(), value)
        })
        .take(MOST)
        .map(Carried::child)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_open_lines_or_stand_anywhere_by_program() {
        assert_eq!(escaped_commands("ed", "1p\n!rm -rf /\nq"), ["rm -rf /"]);
        assert_eq!(escaped_commands("ed", "1,$w !sh\n"), ["sh"]);
        assert_eq!(escaped_commands("ftp", "  !"), ["sh"]);
        assert_eq!(escaped_commands("gdb", "shell id\nshelltest\n"), ["id"]);
        assert_eq!(escaped_commands("sqlite3", ".tables\n.system rm x"), ["rm x"]);
        assert_eq!(escaped_commands("psql", "select 1; \\! rm -rf /"), ["rm -rf /"]);
        assert_eq!(escaped_commands("mysql", "system rm -rf /\n\\! id"), ["rm -rf /", "id"]);
        assert_eq!(escaped_commands("gnuplot", "system \"rm -rf /\""), ["rm -rf /"]);
        assert_eq!(escaped_commands("mail", "shell"), ["sh"]);
        // Another program's text is not read for escapes; a plain line carries nothing.
        assert!(escaped_commands("cat", "!rm -rf /").is_empty());
        assert!(escaped_commands("psql", "select '!x'").is_empty());
    }
}

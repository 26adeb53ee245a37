//! Text one command hands to another through a pipe or a file: what `echo`/`printf` of literal
//! words print, what `cat`/`tee` pass on from a here-document, and the files written that way
//! earlier in the line ([`WrittenFiles`]), which a later command may run or read.
//!
//! Text on its way down a pipeline is followed through the filters whose output is plain to
//! compute ([`filtered`]: `tr` of plain sets, `rev`, `base64 -d`, `xxd -r -p`, and `cat`,
//! `tee`, `head`, `tail`, which pass it on), so [`stdin_of`] knows what `echo 'eq -pe v/' | tr
//! eqv rmf | sh` feeds the shell; [`disguised_literal`] names the filter that changed a literal
//! on its way, whether or not its output can be computed.

use std::collections::HashMap;

use crate::guard::shell::is_literal;
use crate::guard::SimpleCommand;

/// The text an `echo`/`printf` of literal words prints, or one line of what `yes` repeats (None
/// for other commands, or when a word is not literal).
pub(crate) fn printed_text(cmd: &SimpleCommand) -> Option<String> {
    let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
    let text = match cmd.name() {
        "echo" => args
            .iter()
            .skip_while(|a| matches!(**a, "-n" | "-e" | "-E" | "-ne" | "-en"))
            .copied()
            .collect::<Vec<_>>()
            .join(" "),
        "printf" => {
            // The format's `\n` escapes are newlines; `%s` takes the following words in turn.
            let args = args.strip_prefix(&["--"]).unwrap_or(&args);
            let (fmt, rest) = args.split_first()?;
            let mut s = fmt.replace("\\n", "\n").replace("%s", "");
            for r in rest {
                s.push('\n');
                s.push_str(r);
            }
            s
        }
        // `yes PASSWORD | sudo -S ..`: the words as one line, over and over (`y` without any).
        "yes" if args.first().is_none_or(|a| !a.starts_with("--")) => match args.is_empty() {
            true => "y".to_string(),
            false => args.join(" "),
        },
        _ => return None,
    };
    (is_literal(&text) && !text.trim().is_empty()).then_some(text)
}

/// Texts longer than this are not followed through filters.
const MAX_TEXT: usize = 64 * 1024;

/// What stage `i` of `pipeline` reads on stdin, when it is known: its own here-document or
/// here-string, or what the stage before it prints ([`output_of`]).
pub(crate) fn stdin_of(pipeline: &[SimpleCommand], i: usize) -> Option<String> {
    let cmd = pipeline.get(i)?;
    if let Some(t) = &cmd.stdin_text {
        return Some(t.clone());
    }
    output_of(pipeline, i.checked_sub(1)?)
}

/// What stage `i` reads on stdin ([`stdin_of`]), or else what an `echo` or `printf` before it
/// prints, its words as written: a `$` or a backquote in them is the reading program's own
/// syntax, not the shell's (`printf '$p\n!rm -rf /\n' | ed f`, `` echo 'esyscmd(`rm -rf
/// /')' | m4 ``).
pub(crate) fn stdin_as_written(pipeline: &[SimpleCommand], i: usize) -> Option<String> {
    match &pipeline.get(i)?.stdin_text {
        Some(t) => Some(t.clone()),
        None => piped_as_written(&pipeline[..i]),
    }
}

/// What the last of `upstream` prints into the pipe, for a program that reads it as its own
/// code: the text [`output_of`] knows, or the words of an `echo`/`printf` as written (a `$` in
/// them is the program's syntax: `echo 'print $x' | perl`).
pub(crate) fn piped_as_written(upstream: &[SimpleCommand]) -> Option<String> {
    let last = upstream.len().checked_sub(1)?;
    output_of(upstream, last).or_else(|| {
        let up = &upstream[last];
        matches!(up.name(), "echo" | "printf").then(|| up.argv[1..].join(" ").replace("\\n", "\n"))
    })
}

/// What stage `i` of `pipeline` prints into the pipe, when it is known: the literal words of an
/// `echo`/`printf`, or the text a filter computes from what it reads (`cat <<EOF`, `.. | tr a
/// b`), followed back to the nearest stage that prints or reads a literal.
pub(crate) fn output_of(pipeline: &[SimpleCommand], i: usize) -> Option<String> {
    // The nearest stage at or before `i` whose text is its own; every stage after it, up to
    // `i`, must be a filter whose output can be computed.
    let mut start = i;
    let mut text = loop {
        let cmd = pipeline.get(start)?;
        if let Some(t) = printed_text(cmd) {
            break t;
        }
        // `cat x.sql` of a file written earlier in the line holds that file as its stdin text.
        match &cmd.stdin_text {
            Some(t) if cmd.name() == "cat" => break t.clone(),
            Some(t) => break filtered(cmd, t)?,
            None => start = start.checked_sub(1)?,
        }
    };
    for cmd in &pipeline[start + 1..=i] {
        text = filtered(cmd, &text)?;
    }
    Some(text)
}

/// What the last stage of `pipeline` prints, when it is known ([`output_of`]).
pub(crate) fn printed_by(pipeline: &[SimpleCommand]) -> Option<String> {
    output_of(pipeline, pipeline.len().checked_sub(1)?)
}

/// Filters that pass on what they read, or a part of it, unchanged.
const PASS_THROUGH: &[&str] = &["cat", "tee", "head", "tail", "stdbuf"];

/// The filter in front of stage `i` that changed literal text on its way there (`echo 'eq -pe
/// v/' | tr eqv rmf | sh`, `rev <<< '/ fr- mr' | sh`): the first stage after one that prints a
/// literal (or that reads a here-document itself) which is not a mere pass-through (`cat`,
/// `tee`, `head`, `tail`). None when the text comes unchanged or not from a literal.
pub(crate) fn disguised_literal(pipeline: &[SimpleCommand], i: usize) -> Option<&str> {
    let upstream = pipeline.get(..i)?;
    let source = upstream
        .iter()
        .rposition(|c| printed_text(c).is_some() || c.stdin_text.is_some())?;
    // A pass-through name with an option that cuts inside lines is a change too (`cat -s`,
    // `tail -c +2`): whole lines (`head -1`, `tail -n +2`, `tee -a log`) pass as they were.
    let keeps_lines = |a: &str| {
        matches!(a, "-" | "-u" | "-a" | "--append" | "-n" | "-q" | "--quiet")
            || a.starts_with("--lines")
            || a[1..].chars().all(|c| c.is_ascii_digit())
    };
    let changes = |c: &&SimpleCommand| {
        !c.name().is_empty()
            && (!PASS_THROUGH.contains(&c.name())
                || c.argv[1..]
                    .iter()
                    .any(|a| a.starts_with('-') && a.len() > 1 && !keeps_lines(a)))
    };
    let src = &upstream[source];
    if printed_text(src).is_none() && changes(&src) {
        return Some(src.name());
    }
    upstream[source + 1..].iter().find(changes).map(SimpleCommand::name)
}

/// The text `cmd` prints when it reads `input`, for the filters whose output is plain to
/// compute (see the module doc); None for any other command or option.
pub(crate) fn filtered(cmd: &SimpleCommand, input: &str) -> Option<String> {
    if input.len() > MAX_TEXT {
        return None;
    }
    let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
    match cmd.name() {
        // `cat` / `cat -`: what it reads; `head`/`tail` print a part of it, taken whole.
        "cat" if args.iter().all(|a| *a == "-" || *a == "-u") => Some(input.to_string()),
        "tee" | "head" | "tail" => Some(input.to_string()),
        "rev" if args.is_empty() => Some(
            input
                .split('\n')
                .map(|l| l.chars().rev().collect::<String>())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        "tr" => translate(&args, input),
        "base64"
            if args
                .iter()
                .any(|a| matches!(*a, "-d" | "--decode" | "-D" | "-di" | "-id")) =>
        {
            let bytes = base64_decode(input)?;
            String::from_utf8(bytes).ok()
        }
        // `xxd -r -p`: plain hex back to bytes.
        "xxd"
            if args.iter().any(|a| matches!(*a, "-r" | "-rp" | "-pr" | "-revert"))
                && args
                    .iter()
                    .any(|a| matches!(*a, "-p" | "-ps" | "-plain" | "-rp" | "-pr")) =>
        {
            let hex: Vec<u8> = input.bytes().filter(u8::is_ascii_hexdigit).collect();
            let bytes: Option<Vec<u8>> = hex
                .chunks(2)
                .map(|p| std::str::from_utf8(p).ok().and_then(|h| u8::from_str_radix(h, 16).ok()))
                .collect();
            String::from_utf8(bytes?).ok()
        }
        _ => None,
    }
}

/// `tr SET1 SET2`, `tr -d SET1` of plain sets: characters, ranges (`a-z`), escapes (`\n`,
/// `\\`, octal) and the classes `[:lower:]`, `[:upper:]`, `[:digit:]`; a shorter SET2 is padded
/// with its last character. None for other options (`-c`, `-s`) and forms (`[c*n]`).
fn translate(args: &[&str], input: &str) -> Option<String> {
    match args {
        ["-d", set] => {
            let set = tr_set(set)?;
            Some(input.chars().filter(|c| !set.contains(c)).collect())
        }
        [from, to] if !from.starts_with('-') => {
            let from = tr_set(from)?;
            let to = tr_set(to)?;
            let last = *to.last()?;
            Some(
                input
                    .chars()
                    .map(|c| match from.iter().rposition(|f| *f == c) {
                        Some(k) => to.get(k).copied().unwrap_or(last),
                        None => c,
                    })
                    .collect(),
            )
        }
        _ => None,
    }
}

/// The characters of a `tr` set, in order.
fn tr_set(spec: &str) -> Option<Vec<char>> {
    const MAX_SET: usize = 4096;
    let mut chars: Vec<char> = Vec::new();
    for (class, members) in [
        ("[:lower:]", "abcdefghijklmnopqrstuvwxyz"),
        ("[:upper:]", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
        ("[:digit:]", "0123456789"),
    ] {
        if spec == class {
            return Some(members.chars().collect());
        }
    }
    if spec.contains("[:") || spec.contains("[=") || spec.contains('*') && spec.contains('[') {
        return None;
    }
    // Escapes first, then ranges between the characters they leave.
    let src: Vec<char> = spec.chars().collect();
    let mut plain: Vec<char> = Vec::new();
    let mut k = 0;
    while k < src.len() {
        if src[k] == '\\' && k + 1 < src.len() {
            let e = src[k + 1];
            k += 2;
            plain.push(match e {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                '0'..='7' => {
                    let digits: String = std::iter::once(e)
                        .chain(src[k..].iter().take(2).take_while(|c| c.is_digit(8)).copied())
                        .collect();
                    k += digits.len() - 1;
                    char::from_u32(u32::from_str_radix(&digits, 8).ok()?)?
                }
                other => other,
            });
        } else {
            plain.push(src[k]);
            k += 1;
        }
    }
    let mut k = 0;
    while k < plain.len() {
        if k + 2 < plain.len() && plain[k + 1] == '-' {
            let (a, b) = (plain[k] as u32, plain[k + 2] as u32);
            if a > b {
                return None;
            }
            chars.extend((a..=b).filter_map(char::from_u32));
            k += 3;
        } else {
            chars.push(plain[k]);
            k += 1;
        }
        if chars.len() > MAX_SET {
            return None;
        }
    }
    (!chars.is_empty()).then_some(chars)
}

/// Standard base64 (and the URL-safe alphabet), whitespace ignored, padded quanta decoded one
/// after another; None on other bytes.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        // Padding ends a quantum, not the text: GNU `base64 -d` goes on decoding what
        // follows (`YSA=Lw==` is `a /`).
        if c == b'=' {
            (acc, bits) = (0, 0);
            continue;
        }
        acc = (acc << 6) | u32::from(value(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The text `cmd` writes into its output redirections, when it is known: a `cat`/`tee`
/// here-document, or what `echo`/`printf` print.
fn written_text(cmd: &SimpleCommand) -> Option<String> {
    match cmd.name() {
        "cat" | "tee" if cmd.stdin_text.is_some() => cmd.stdin_text.clone(),
        _ => printed_text(cmd),
    }
}

/// Files written earlier in the line (`echo .. > x.sh`, `cat > x.sql <<EOF`), by path as
/// written (`./x` and `x` are one file), with their text: running or reading one of them later
/// in the line runs or reads that text. A copy or link of a file made earlier in the line
/// (`cp`, `ln`, `install`, `mv`, `cat SRC > DEST`, see [`copied`]) is that file: it carries
/// the text written to its source, and a copy of a program is that program when it runs
/// (`cp /bin/rm /tmp/cleanup && /tmp/cleanup -rf ~` runs `rm -rf ~`).
#[derive(Debug, Clone, Default)]
pub(crate) struct WrittenFiles {
    by_path: HashMap<String, String>,
    /// Copies and links of programs, by path as written: the program each one is.
    programs: HashMap<String, String>,
}

/// What `cp`/`ln`/`install`/`mv`/`ditto`/`rsync` (or `cat SRC > DEST`) copy and where: the
/// source words and, for each, the path its copy gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Copy<'a> {
    pub pairs: Vec<(&'a str, String)>,
}

/// The copies `cmd` makes (see [`Copy`]); None when it makes none the guard can name. The one
/// place that reads these programs' operands: `-t DIR`/`--target-directory=DIR`, the options
/// that take a value, and a destination that is a directory (a trailing `/`, `.`, several
/// sources, or a `bin` directory) where the copy keeps its source's name.
pub(crate) fn copied(cmd: &SimpleCommand) -> Option<Copy<'_>> {
    if cmd.name() == "cat" {
        let sources: Vec<&str> = cmd.argv[1..]
            .iter()
            .filter(|a| !a.starts_with('-'))
            .map(String::as_str)
            .collect();
        let dests: Vec<&String> = cmd.redirects.iter().filter(|r| !r.starts_with("/dev/")).collect();
        return match (sources.as_slice(), dests.as_slice()) {
            ([source], [dest]) => Some(Copy {
                pairs: vec![(*source, dest.to_string())],
            }),
            _ => None,
        };
    }
    if !matches!(cmd.name(), "cp" | "ln" | "install" | "mv" | "rsync" | "ditto" | "gcp") {
        return None;
    }
    let mut positional: Vec<&str> = Vec::new();
    let mut target_dir: Option<&str> = None;
    let mut args = cmd.argv[1..].iter();
    let mut options_end = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            _ if options_end => positional.push(a),
            "--" => options_end = true,
            "-t" | "--target-directory" => target_dir = args.next().map(String::as_str),
            // Options that take a value (cp/install/ln, and rsync's).
            "-S" | "--suffix" | "-m" | "--mode" | "-o" | "--owner" | "-g" | "--group" | "--exclude" | "--include"
            | "--filter" | "-f" | "-e" | "--rsh" | "-T" | "--temp-dir" | "--partial-dir" | "--log-file" | "--chmod"
            | "--chown" | "--files-from" | "--backup-dir" | "--exclude-from" | "--include-from" | "--compare-dest"
            | "--copy-dest" | "--link-dest" => {
                args.next();
            }
            _ if a.starts_with("--target-directory=") => target_dir = a.split_once('=').map(|(_, v)| v),
            _ if a.starts_with('-') && a.len() > 1 => {}
            _ => positional.push(a),
        }
    }
    let (sources, dest) = match target_dir {
        Some(d) => (&positional[..], d),
        None => match positional.split_last() {
            Some((last, rest)) if !rest.is_empty() => (rest, *last),
            _ => return None,
        },
    };
    let dest = dest.trim_matches(['"', '\'']);
    let into_dir = target_dir.is_some()
        || dest.ends_with('/')
        || dest == "."
        || sources.len() > 1
        || matches!(crate::guard::basename(dest), "bin" | "sbin" | "libexec");
    // A file fetched from another machine is no copy of a program here.
    let pairs: Vec<(&str, String)> = sources
        .iter()
        .filter(|s| !names_a_remote_file(s))
        .map(|s| {
            let to = if into_dir {
                let name = crate::guard::basename(s.trim_matches(['"', '\'']).trim_end_matches('/'));
                format!("{}/{name}", dest.trim_end_matches('/'))
            } else {
                dest.to_string()
            };
            (*s, to)
        })
        .collect();
    (!pairs.is_empty()).then_some(Copy { pairs })
}

/// Whether a copy program's operand names a file on another machine (`host:path`,
/// `user@host:path`, `scp://host/path`, rsync's `host::module`): a colon before any slash.
pub(crate) fn names_a_remote_file(word: &str) -> bool {
    word.starts_with("scp://")
        || word.starts_with("rsync://")
        || word.split('/').next().is_some_and(|head| head.contains(':'))
}

/// The program a source word names: `$(which rm)`, `$(command -v rm)` and `` `which rm` `` name
/// `rm`; other words name themselves.
fn program_named(source: &str) -> &str {
    for prefix in ["$(which ", "$(command -v ", "`which ", "`command -v "] {
        if let Some(rest) = source.strip_prefix(prefix) {
            return rest.trim_end_matches([')', '`']).trim();
        }
    }
    source
}

impl WrittenFiles {
    fn key(path: &str) -> &str {
        path.trim_start_matches("./")
    }

    pub fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }

    /// The text written to `path`, if it was written earlier in the line.
    pub fn text(&self, path: &str) -> Option<&str> {
        self.by_path.get(Self::key(path)).map(String::as_str)
    }

    /// Remembers that `path` holds `text` (a process substitution's file, `<(echo ..)`).
    pub fn record_text(&mut self, path: &str, text: String) {
        self.by_path.insert(Self::key(path).to_string(), text);
    }

    /// The program a copy or link made earlier in the line stands for, when `word` (a command
    /// word) names one (`/tmp/cleanup` after `cp /bin/rm /tmp/cleanup`).
    pub fn program_at(&self, word: &str) -> Option<&str> {
        if self.programs.is_empty() {
            return None;
        }
        self.programs.get(Self::key(word)).map(String::as_str)
    }

    /// Remembers what `cmd` writes: the text it writes to its redirect targets, when it is
    /// known (`>` replaces what was there, `>>` appends), and the copies it makes ([`copied`]).
    pub fn record(&mut self, cmd: &SimpleCommand) {
        self.record_copies(cmd);
        if cmd.redirects.is_empty() {
            return;
        }
        let Some(text) = written_text(cmd) else {
            return;
        };
        for r in &cmd.redirects {
            let entry = self.by_path.entry(Self::key(r).to_string()).or_default();
            if !cmd.appends.contains(r) {
                entry.clear();
            }
            entry.push_str(&text);
            entry.push('\n');
        }
    }

    /// A copy carries its source: the text written to it earlier in the line, or the program
    /// it is (a copy of a copy is the first program).
    fn record_copies(&mut self, cmd: &SimpleCommand) {
        let Some(copy) = copied(cmd) else {
            return;
        };
        for (source, dest) in copy.pairs {
            let dest = Self::key(&dest).to_string();
            if let Some(text) = self.text(source).map(String::from) {
                self.by_path.insert(dest, text);
                continue;
            }
            let program = self
                .program_at(source)
                .map(String::from)
                .unwrap_or_else(|| program_named(source).to_string());
            if program != dest && !program.is_empty() {
                self.programs.insert(dest, program);
            }
        }
    }

    /// The text of a file written earlier that `cmd` reads on stdin: `psql < x.sql`, or `cat
    /// x.sql` (which prints it into the next command of its pipeline).
    pub fn read_by(&self, cmd: &SimpleCommand) -> Option<String> {
        let file = cmd
            .inputs
            .first()
            .or_else(|| (cmd.argv.len() == 2 && cmd.name() == "cat").then(|| &cmd.argv[1]))?;
        self.text(file).map(String::from)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::command;
    use super::*;

    #[test]
    fn echo_and_printf_of_literal_words() {
        assert_eq!(
            printed_text(&command(&["echo", "-n", "rm", "-rf", "/"])).as_deref(),
            Some("rm -rf /")
        );
        assert_eq!(
            printed_text(&command(&["printf", "a\\n%s", "b", "c"])).as_deref(),
            Some("a\n\nb\nc")
        );
        assert_eq!(printed_text(&command(&["echo", "$HOME"])), None);
        assert_eq!(printed_text(&command(&["echo", "-n"])), None);
        assert_eq!(printed_text(&command(&["cat", "x"])), None);
    }

    fn piped(stages: &[SimpleCommand]) -> Option<String> {
        stdin_of(stages, stages.len() - 1)
    }

    #[test]
    fn text_is_followed_through_plain_filters() {
        let echo = |t: &str| command(&["echo", t]);
        let sh = command(&["sh"]);
        for (filter, input, want) in [
            (&["tr", "eqv", "rmf"][..], "eq -ve /", "rm -fr /"),
            (&["tr", "a-z", "A-Z"], "hello", "HELLO"),
            (&["tr", "[:upper:]", "[:lower:]"], "RM", "rm"),
            (&["tr", "a-c", "x"], "abcd", "xxxd"),
            (&["tr", "-d", "_"], "r_m -_rf /", "rm -rf /"),
            (&["tr", "\\n", " "], "a", "a"),
            (&["rev"], "/ fr- mr", "rm -rf /"),
            (&["base64", "-d"], "cm0gLXJmIC8=", "rm -rf /"),
            (&["base64", "--decode"], "cm0g\nLXJmIC8=", "rm -rf /"),
            (&["xxd", "-r", "-p"], "726d202d7266202f", "rm -rf /"),
            (&["cat"], "x", "x"),
            (&["tee", "log"], "x", "x"),
        ] {
            let got = piped(&[echo(input), command(filter), sh.clone()]);
            assert_eq!(got.as_deref(), Some(want), "{filter:?} of {input:?}");
        }
        // Two filters in a row; a here-string read by the filter itself.
        let got = piped(&[
            echo("/ fr- mr"),
            command(&["rev"]),
            command(&["tr", "m", "M"]),
            sh.clone(),
        ]);
        assert_eq!(got.as_deref(), Some("rM -rf /"));
        let mut rev = command(&["rev"]);
        rev.stdin_text = Some("/ fr- mr".into());
        assert_eq!(piped(&[rev, sh.clone()]).as_deref(), Some("rm -rf /"));
        // Filters whose output is not computed here, and options not modelled.
        for filter in [
            &["sed", "s/a/b/"][..],
            &["tr", "-s", "a"],
            &["tr", "-c", "a", "b"],
            &["tr", "[a*3]", "b"],
            &["tr", "z-a", "b"],
            &["base64"],
            &["grep", "x"],
        ] {
            assert_eq!(piped(&[echo("abc"), command(filter), sh.clone()]), None, "{filter:?}");
        }
        assert_eq!(piped(&[command(&["echo", "$X"]), command(&["rev"]), sh.clone()]), None);
        assert_eq!(piped(&[echo("!!!"), command(&["base64", "-d"]), sh]), None);
    }

    #[test]
    fn a_literal_changed_on_its_way_is_disguised() {
        let sh = command(&["sh"]);
        let echo = command(&["echo", "ls"]);
        let by = |stages: &[SimpleCommand]| disguised_literal(stages, stages.len() - 1).map(String::from);
        assert_eq!(
            by(&[echo.clone(), command(&["tr", "a", "b"]), sh.clone()]).as_deref(),
            Some("tr")
        );
        assert_eq!(
            by(&[echo.clone(), command(&["sort"]), sh.clone()]).as_deref(),
            Some("sort")
        );
        assert_eq!(
            by(&[echo.clone(), command(&["cat"]), command(&["rev"]), sh.clone()]).as_deref(),
            Some("rev")
        );
        let mut rev = command(&["rev"]);
        rev.stdin_text = Some("sl".into());
        assert_eq!(by(&[rev, sh.clone()]).as_deref(), Some("rev"));
        // Unchanged, or not from a literal.
        assert_eq!(by(&[echo.clone(), sh.clone()]), None);
        assert_eq!(
            by(&[echo, command(&["tee", "log"]), command(&["head", "-1"]), sh.clone()]),
            None
        );
        let mut cat = command(&["cat"]);
        cat.stdin_text = Some("ls".into());
        assert_eq!(by(&[cat, sh.clone()]), None);
        assert_eq!(by(&[command(&["ls"]), command(&["sort"]), sh]), None);
    }

    #[test]
    fn written_files_are_replaced_appended_and_read() {
        let mut files = WrittenFiles::default();
        assert!(files.is_empty());
        let mut first = command(&["echo", "a"]);
        first.redirects = vec!["./x.sql".into()];
        files.record(&first);
        let mut more = command(&["printf", "b"]);
        more.redirects = vec!["x.sql".into()];
        more.appends = more.redirects.clone();
        files.record(&more);
        assert_eq!(files.text("x.sql"), Some("a\nb\n"));
        let mut heredoc = command(&["cat"]);
        heredoc.stdin_text = Some("DROP TABLE t;".into());
        heredoc.redirects = vec!["x.sql".into()];
        files.record(&heredoc);
        assert_eq!(files.text("./x.sql"), Some("DROP TABLE t;\n"));

        let mut psql = command(&["psql"]);
        psql.inputs = vec!["x.sql".into()];
        assert_eq!(files.read_by(&psql).as_deref(), Some("DROP TABLE t;\n"));
        assert_eq!(
            files.read_by(&command(&["cat", "./x.sql"])).as_deref(),
            Some("DROP TABLE t;\n")
        );
        assert_eq!(files.read_by(&command(&["cat", "y.sql"])), None);
        assert_eq!(files.read_by(&command(&["less", "x.sql"])), None);
    }
}

//! `xargs` and GNU `parallel`: commands built from what they read. Both take a command
//! template and add items read from stdin (`echo / | xargs rm -rf` runs `rm -rf /`); both know
//! a replacement string (`xargs -I{}`, `-i`, `--replace`, BSD `-J`; `parallel`'s `{}`) that the
//! items replace instead of being appended; `parallel` with no command runs each input line
//! (or each argument after `:::`) as a command line of its own.
//!
//! This file owns their options: where the template starts ([`template_start`], used by
//! [`super::unwrap_command`]), and, when the text they read is known (an `echo`/`printf` of
//! literal words, a here-document, see [`super::text::stdin_of`]), the command lines they run
//! ([`command_lines`]). Items are split as xargs splits them: on blanks and newlines with
//! quotes and backslashes honoured, by line under `-I`/`-L`/`-d '\n'` and for `parallel`. The
//! number of runs built one by one is bounded ([`MAX_RUNS`]); the items past it are never
//! dropped: they go into one more run that holds them all (a superset of what the runs past
//! the bound do), so an item hidden after many harmless ones is still judged.
//!
//! One reading is deliberately wider than xargs: a shell given `-c` with no script (`echo 'rm
//! -rf /' | xargs bash -c`) gets each input line as its script. xargs itself would hand it the
//! line's first word as the script and the rest as `$0`, `$1`, ..; a quote or `-d '\n'` away
//! from running the whole line, which is what the line is written to do.

use super::{is_shell, Carried};
use crate::guard::shell::shell_quote;
use crate::guard::{basename, SimpleCommand};

/// At most this many command lines are built one by one from one input; the rest are merged.
const MAX_RUNS: usize = 16;
/// A merged run that would repeat the template's replaced words more than this many times
/// keeps every item in one word per replaced word instead (bounded size, items still seen).
const MAX_MERGED_WORDS: usize = 65_536;

/// The `parallel` markers that end its command and start argument groups.
const GROUP_MARKS: &[&str] = &[":::", "::::", ":::+", "::::+"];

/// How an `xargs` invocation turns its input into command lines.
#[derive(Debug, Default, PartialEq, Eq)]
struct XargsOptions {
    /// `-I R`, `-i[R]`, `--replace[=R]`: one run per input line, R replaced by the line.
    replace: Option<String>,
    /// BSD `-J R`: the word R replaced by all the items of a run.
    insert: Option<String>,
    /// `-n N`: at most N items per run.
    max_args: Option<usize>,
    /// `-L N`, `-l[N]`: at most N input lines per run.
    max_lines: Option<usize>,
    /// `-d '\n'`: items are whole lines.
    by_line: bool,
    /// `-0`, `--null`: items end at NUL bytes (text with none is one item, newlines and all).
    null: bool,
    /// `-E EOF`, `-e[EOF]`: input ends at this item.
    eof: Option<String>,
    /// The items do not come from stdin (`-a FILE`), or are split in a way not modelled (`-d`
    /// with another delimiter).
    not_stdin: bool,
}

/// The index in `argv` (which starts with `xargs` or `parallel`) of the first word of the
/// command it runs; `argv.len()` when there is none.
pub(crate) fn template_start(argv: &[String]) -> usize {
    match argv.first().map(|w| basename(w)) {
        Some("parallel") => parallel_options(argv).0,
        _ => xargs_options(argv).0,
    }
}

/// The options of `xargs` (`argv[0]`), and the index of its command.
fn xargs_options(argv: &[String]) -> (usize, XargsOptions) {
    let mut o = XargsOptions::default();
    let number = |v: &str| v.parse::<usize>().ok().filter(|n| *n > 0);
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            // Long options with a required value take the next word when none is attached.
            let value = |i: &mut usize| match &attached {
                Some(v) => Some(v.clone()),
                None => {
                    *i += 1;
                    argv.get(*i).cloned()
                }
            };
            match name {
                "replace" => o.replace = Some(attached.clone().unwrap_or_else(|| "{}".into())),
                "max-lines" => o.max_lines = attached.as_deref().map_or(Some(1), number),
                "eof" => o.eof = attached.clone().filter(|v| !v.is_empty()),
                "max-args" => o.max_args = value(&mut i).as_deref().and_then(number),
                "delimiter" => set_delimiter(&mut o, value(&mut i).as_deref()),
                "null" => o.null = true,
                "arg-file" => {
                    o.not_stdin = true;
                    value(&mut i);
                }
                "max-procs" | "max-chars" | "process-slot-var" => {
                    value(&mut i);
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        // A bundle of short options; the first that takes a value ends it.
        let flags = &a[1..];
        for (pos, c) in flags.char_indices() {
            let rest = &flags[pos + c.len_utf8()..];
            let mut value = || {
                if rest.is_empty() {
                    i += 1;
                    argv.get(i).cloned()
                } else {
                    Some(rest.to_string())
                }
            };
            match c {
                'I' => o.replace = value(),
                'J' => o.insert = value(),
                'n' => o.max_args = value().as_deref().and_then(number),
                'L' => o.max_lines = value().as_deref().and_then(number),
                'd' => set_delimiter(&mut o, value().as_deref()),
                'E' => o.eof = value(),
                'a' => {
                    o.not_stdin = true;
                    value();
                }
                'P' | 's' | 'R' | 'S' => {
                    value();
                }
                'i' => o.replace = Some(if rest.is_empty() { "{}".into() } else { rest.into() }),
                'l' => o.max_lines = if rest.is_empty() { Some(1) } else { number(rest) },
                'e' => o.eof = (!rest.is_empty()).then(|| rest.to_string()),
                '0' => {
                    o.null = true;
                    continue;
                }
                _ => continue,
            }
            break;
        }
        i += 1;
    }
    (i.min(argv.len()), o)
}

fn set_delimiter(o: &mut XargsOptions, value: Option<&str>) {
    match value {
        Some("\\n" | "\n") => o.by_line = true,
        Some("\\0" | "\0") => o.null = true,
        _ => o.not_stdin = true,
    }
}

/// How a `parallel` invocation reads its input.
#[derive(Debug, Default, PartialEq, Eq)]
struct ParallelOptions {
    /// `-I R`: the replacement string (`{}` by default).
    replace: Option<String>,
    /// `--pipe`: the input is the command's stdin, not its arguments.
    pipe: bool,
    /// `-a FILE`, `--arg-file FILE`: the arguments come from a file.
    arg_file: bool,
    /// `--dry-run`: the commands are printed, not run.
    dry_run: bool,
}

/// The options of `parallel` (`argv[0]`), and the index of its command (of the first `:::`
/// marker, or `argv.len()`, when it has none).
fn parallel_options(argv: &[String]) -> (usize, ParallelOptions) {
    const WITH_VALUE: &[&str] = &[
        "-j",
        "-P",
        "-S",
        "-n",
        "-N",
        "-d",
        "-a",
        "-I",
        "-E",
        "-C",
        "-L",
        "--jobs",
        "--delimiter",
        "--arg-file",
        "--colsep",
        "--halt",
        "--delay",
        "--timeout",
        "--tmpdir",
        "--results",
        "--res",
        "--joblog",
        "--sshlogin",
        "--workdir",
        "--wd",
        "--max-args",
        "--max-lines",
        "--env",
        "--basefile",
        "--retries",
        "--load",
        "--memfree",
        "--block",
        "--block-size",
        "--tag-string",
        "--tagstring",
        "--eof",
        "--replace",
        // Less common ones, so that their value is not read as the command word
        // (`parallel --rpl '{x} s/a/b/' rm -rf ::: /etc`).
        "--rpl",
        "--nice",
        "--header",
        "--ssh",
        "--sshloginfile",
        "--slf",
        "--sshdelay",
        "--limit",
        "--return",
        "--transferfile",
        "--tf",
        "--termseq",
        "--memsuspend",
        "--id",
        "--compress-program",
        "--decompress-program",
        "--profile",
        "-J",
        "--seqreplace",
        "--sql",
        "--sqlmaster",
        "--sqlworker",
        "--max-procs",
        "--template",
    ];
    let mut o = ParallelOptions::default();
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        let name = a.split_once('=').map_or(a, |(n, _)| n);
        let attached = a.contains('=') && a.starts_with("--");
        match name {
            "--pipe" | "--pipepart" => o.pipe = true,
            "-a" | "--arg-file" => o.arg_file = true,
            "--dry-run" | "--dryrun" => o.dry_run = true,
            _ if a.starts_with("-a") && !a.starts_with("--") => o.arg_file = true,
            _ => {}
        }
        if name == "-I" || name == "--replace" {
            o.replace = if attached {
                a.split_once('=').map(|(_, v)| v.to_string())
            } else {
                argv.get(i + 1).cloned()
            };
        } else if let Some(r) = a.strip_prefix("-I").filter(|r| !r.is_empty()) {
            o.replace = Some(r.to_string());
        }
        i += if WITH_VALUE.contains(&name) && !attached { 2 } else { 1 };
    }
    (i.min(argv.len()), o)
}

/// The command lines the xargs or parallel of `cmd` runs when it reads `input` on stdin
/// (`cmd` is unwrapped; its words as written, with the wrappers around xargs, are in
/// [`SimpleCommand::unwrapped_from`]). Empty when the items do not come from stdin.
pub(super) fn command_lines(cmd: &SimpleCommand, input: &str) -> Vec<String> {
    let words = cmd.unwrapped_from.as_deref().unwrap_or(&cmd.argv);
    let Some(k) = words.iter().position(|w| matches!(basename(w), "xargs" | "parallel")) else {
        return Vec::new();
    };
    let (prefix, runner) = words.split_at(k);
    if basename(&runner[0]) == "parallel" {
        parallel_lines(prefix, runner, input)
    } else {
        xargs_lines(prefix, runner, input)
    }
}

fn xargs_lines(prefix: &[String], runner: &[String], input: &str) -> Vec<String> {
    let (start, o) = xargs_options(runner);
    if o.not_stdin {
        return Vec::new();
    }
    let template: Vec<String> = if start < runner.len() {
        runner[start..].to_vec()
    } else {
        vec!["echo".to_string()]
    };
    let line = |words: Vec<String>| {
        prefix
            .iter()
            .chain(words.iter())
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let lines = if o.null {
        input.split('\0').filter(|i| !i.is_empty()).map(String::from).collect()
    } else {
        input_lines(input, o.eof.as_deref())
    };
    // `-I{}`: one run per line, the line put in place of the string (and not appended).
    if let Some(r) = o.replace.as_deref().filter(|r| !r.is_empty()) {
        let item = |l: &str| {
            if o.null {
                l.to_string()
            } else {
                l.trim_start().to_string()
            }
        };
        let mut out: Vec<String> = lines
            .iter()
            .take(MAX_RUNS)
            .map(|l| line(template.iter().map(|w| w.replace(r, &item(l))).collect()))
            .collect();
        // The runs past the bound, as one: each replaced word once per item.
        if lines.len() > MAX_RUNS {
            let rest: Vec<String> = lines[MAX_RUNS..].iter().map(|l| item(l)).collect();
            let replaced = template.iter().filter(|w| w.contains(r)).count();
            let words: Vec<String> = template
                .iter()
                .flat_map(|w| {
                    if !w.contains(r) {
                        vec![w.clone()]
                    } else if replaced * rest.len() <= MAX_MERGED_WORDS {
                        rest.iter().map(|i| w.replace(r, i)).collect()
                    } else {
                        rest.iter()
                            .flat_map(|i| i.split_whitespace().map(String::from).collect::<Vec<_>>())
                            .take(MAX_MERGED_WORDS)
                            .collect()
                    }
                })
                .collect();
            out.push(line(words));
        }
        return out;
    }
    // `xargs bash -c`: each line is the script (see the module doc).
    if shell_without_script(&template) {
        let script = |ls: &[String]| {
            let mut words = template.clone();
            words.push(
                ls.iter()
                    .map(|l| items_of(l, &o).join(" "))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            line(words)
        };
        let mut out: Vec<String> = lines
            .iter()
            .take(MAX_RUNS)
            .map(|l| script(std::slice::from_ref(l)))
            .collect();
        if lines.len() > MAX_RUNS {
            out.push(script(&lines[MAX_RUNS..]));
        }
        return out;
    }
    // Runs: groups of items (`-n N`), of lines (`-L N`), or all the items in one run.
    let runs: Vec<Vec<String>> = if let Some(n) = o.max_lines {
        lines
            .chunks(n)
            .map(|ls| ls.iter().flat_map(|l| items_of(l, &o)).collect())
            .collect()
    } else {
        let items: Vec<String> = lines.iter().flat_map(|l| items_of(l, &o)).collect();
        match o.max_args {
            Some(n) => items.chunks(n).map(<[String]>::to_vec).collect(),
            None => vec![items],
        }
    };
    let mut runs: Vec<Vec<String>> = runs.into_iter().filter(|items| !items.is_empty()).collect();
    // The runs past the bound, as one run holding all their items.
    if runs.len() > MAX_RUNS {
        let rest: Vec<String> = runs.drain(MAX_RUNS..).flatten().collect();
        runs.push(rest);
    }
    runs.into_iter()
        .map(|items| {
            let mut words = template.clone();
            match o.insert.as_deref().and_then(|r| words.iter().position(|w| w == r)) {
                Some(at) => {
                    words.splice(at..=at, items);
                }
                None => words.extend(items),
            }
            line(words)
        })
        .collect()
}

/// The items of one input line: the line itself under `-d '\n'`, else its words.
fn items_of(line: &str, o: &XargsOptions) -> Vec<String> {
    if o.by_line || o.null {
        vec![line.to_string()]
    } else {
        split_items(line, o.eof.as_deref())
    }
}

/// The non-empty lines of `input`, up to the end-of-file item `eof`.
fn input_lines(input: &str, eof: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for l in input.lines().filter(|l| !l.trim().is_empty()) {
        if eof.is_some_and(|e| l.split_whitespace().next() == Some(e)) {
            break;
        }
        out.push(l.to_string());
    }
    out
}

/// Words of `line` as xargs splits them: blanks separate, quotes and backslashes group.
pub(super) fn split_items(line: &str, eof: Option<&str>) -> Vec<String> {
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut started = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                started = true;
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                    cur.push(d);
                }
            }
            '\\' => {
                started = true;
                cur.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if started {
                    if eof == Some(cur.as_str()) {
                        return items;
                    }
                    items.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            c => {
                started = true;
                cur.push(c);
            }
        }
    }
    if started && eof != Some(cur.as_str()) {
        items.push(cur);
    }
    items
}

/// `bash -c`, `sh -xc` with no script after the option: the script comes from the items.
fn shell_without_script(template: &[String]) -> bool {
    let Some((name, args)) = template.split_first() else {
        return false;
    };
    is_shell(basename(name))
        && args.iter().all(|a| a.starts_with('-'))
        && args
            .iter()
            .any(|a| !a.starts_with("--") && a.len() > 1 && a[1..].contains('c'))
}

fn parallel_lines(prefix: &[String], runner: &[String], input: &str) -> Vec<String> {
    let (start, o) = parallel_options(runner);
    let end = runner[start..]
        .iter()
        .position(|w| GROUP_MARKS.contains(&w.as_str()))
        .map_or(runner.len(), |p| start + p);
    // Arguments given after `:::` (or read from a file) are not read from stdin.
    if o.arg_file || o.dry_run || end < runner.len() {
        return Vec::new();
    }
    let template = &runner[start..end];
    let prefix: String = prefix.iter().map(|w| format!("{} ", shell_quote(w))).collect();
    let lines = input_lines(input, None);
    // `--pipe`: the input is the command's stdin; a shell reading it runs it.
    if o.pipe {
        let reads = template.first().is_some_and(|n| is_shell(basename(n)))
            && template.iter().skip(1).all(|a| a.starts_with('-') && !a.contains('c'));
        return if reads { vec![input.to_string()] } else { Vec::new() };
    }
    let r = o.replace.as_deref().unwrap_or("{}");
    // One run per line; the lines past the bound go into one more run together (as a script
    // of lines, or as quoted words in place of the replacement string).
    let run = |ls: &[String]| {
        // No command, or `{}` alone: each line is a command line.
        if template.is_empty() || (template.len() == 1 && template[0] == r) {
            return ls.iter().map(|l| format!("{prefix}{l}")).collect::<Vec<_>>().join("\n");
        }
        // The command words are joined as shell text; the lines go in quoted.
        let item = ls.iter().map(|l| shell_quote(l)).collect::<Vec<_>>().join(" ");
        let mut words = template.join(" ");
        if words.contains(r) {
            words = words.replace(r, &item);
        } else {
            words.push(' ');
            words.push_str(&item);
        }
        format!("{prefix}{words}")
    };
    let mut out: Vec<String> = lines
        .iter()
        .take(MAX_RUNS)
        .map(|l| run(std::slice::from_ref(l)))
        .collect();
    if lines.len() > MAX_RUNS {
        out.push(run(&lines[MAX_RUNS..]));
    }
    out
}

/// The commands `parallel` runs from the arguments on its line: with no command (`parallel
/// ::: 'rm -rf /' ls`) each argument (each combination, with several groups) is a command
/// line; with one (`parallel 'git push origin --delete {}' ::: a b`), its words are joined
/// into a shell command line, as parallel does, with each combination in place of `{}` (or
/// after it). `--dry-run` prints the commands and runs none.
pub(super) fn parallel_arguments(argv: &[String]) -> Option<Carried> {
    let (start, o) = parallel_options(argv);
    let first_mark = argv[start..].iter().position(|w| GROUP_MARKS.contains(&w.as_str()))? + start;
    if o.arg_file || o.dry_run {
        return None;
    }
    let template = &argv[start..first_mark];
    let replace = o.replace.as_deref().unwrap_or("{}");
    let mut groups: Vec<Vec<&str>> = Vec::new();
    let mut from_file = false;
    for w in &argv[first_mark..] {
        if GROUP_MARKS.contains(&w.as_str()) {
            from_file = w.starts_with("::::");
            groups.push(Vec::new());
        } else if !from_file {
            if let Some(g) = groups.last_mut() {
                g.push(w);
            }
        }
    }
    let mut lines: Vec<String> = vec![String::new()];
    for g in groups.iter().filter(|g| !g.is_empty()) {
        lines = lines
            .iter()
            .flat_map(|l| {
                g.iter().map(move |w| {
                    if l.is_empty() {
                        w.to_string()
                    } else {
                        format!("{l} {w}")
                    }
                })
            })
            .take(MAX_RUNS + 1)
            .collect();
    }
    // More combinations than the bound: one more line with every word of every group, so
    // that none of them goes unjudged.
    if lines.len() > MAX_RUNS {
        lines.truncate(MAX_RUNS);
        let all: Vec<&str> = groups.iter().flatten().copied().collect();
        lines.push(all.join(" "));
        lines.extend(groups.iter().flatten().map(|w| w.to_string()));
    }
    if !template.is_empty() {
        // Parallel joins the command's words into shell text; a command of several words, one
        // of them quoted with spaces (`bash -c 'git reset --hard {}'`), is read as the argv it
        // was written as, which is what the line means to run (joined, `bash -c git reset ..`
        // would run `git` alone).
        let readings = if template.len() > 1 && template.iter().any(|w| w.contains(' ')) {
            vec![template.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ")]
        } else {
            vec![template.join(" ")]
        };
        lines = lines
            .iter()
            .flat_map(|l| {
                let items: Vec<String> = l.split(' ').map(shell_quote).collect();
                readings
                    .iter()
                    .map(|command| with_items(command, replace, &items))
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    let script = lines.join("\n");
    (!script.trim().is_empty()).then(|| Carried::child(script))
}

/// `command` with the items of one run in place of the replacement string (all of them) and of
/// `{1}`, `{2}`, .. (one group's each), or after it when it holds none of them.
fn with_items(command: &str, replace: &str, items: &[String]) -> String {
    let mut out = command.replace(replace, &items.join(" "));
    for (k, item) in items.iter().enumerate().take(9) {
        out = out.replace(&format!("{{{}}}", k + 1), item);
    }
    if out == command {
        out.push(' ');
        out.push_str(&items.join(" "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::command;
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(String::from).collect()
    }

    /// The command lines `runner` (xargs or parallel with its words) runs on `input`.
    fn runs(runner: &str, input: &str) -> Vec<String> {
        let mut cmd = command(&[]);
        cmd.unwrapped_from = Some(words(runner));
        command_lines(&cmd, input)
    }

    #[test]
    fn the_template_starts_after_the_options() {
        for (line, at) in [
            ("xargs rm -rf", 1),
            ("xargs -0 -n 1 -P4 rm", 5),
            ("xargs -I {} cp {} b/", 3),
            ("xargs -I{} cp", 2),
            ("xargs -J % cp % b/", 3),
            ("xargs -i rm", 2),
            ("xargs --replace rm", 2),
            ("xargs --max-args 2 --arg-file f rm", 5),
            ("xargs -rt -L1 rm", 3),
            ("xargs", 1),
            ("parallel -j 4 --joblog log gzip ::: a", 5),
            ("parallel ::: a", 1),
            ("parallel --pipe -N1 sh", 3),
        ] {
            assert_eq!(template_start(&words(line)), at, "{line}");
        }
    }

    #[test]
    fn items_are_appended_split_and_grouped() {
        assert_eq!(runs("xargs rm -rf", "/\n"), ["'rm' '-rf' '/'"]);
        assert_eq!(runs("xargs", "a b"), ["'echo' 'a' 'b'"]);
        assert_eq!(runs("xargs -n1 echo", "a b"), ["'echo' 'a'", "'echo' 'b'"]);
        assert_eq!(runs("xargs -L 1 rm", "a b\nc"), ["'rm' 'a' 'b'", "'rm' 'c'"]);
        assert_eq!(runs("xargs rm", "'a b' c\\ d"), ["'rm' 'a b' 'c d'"]);
        assert_eq!(runs("xargs -d \\n rm", "a b\nc"), ["'rm' 'a b' 'c'"]);
        assert_eq!(runs("xargs -E stop rm", "a stop b"), ["'rm' 'a'"]);
        // The wrappers in front of xargs stay in front of the command.
        assert_eq!(runs("sudo xargs rm", "/"), ["'sudo' 'rm' '/'"]);
        // Items not read from stdin, or split in a way not modelled, build nothing.
        assert!(runs("xargs -a list rm", "/").is_empty());
        // `-0`: the whole text is one item (a path with a newline in it).
        assert_eq!(runs("xargs -0 rm", "/\n"), ["'rm' '/\n'"]);
        assert_eq!(runs("xargs -0 -I{} sh -c {}", "rm -rf ~\n"), ["'sh' '-c' 'rm -rf ~\n'"]);
        assert!(runs("xargs -d , rm", "/").is_empty());
    }

    #[test]
    fn a_replacement_string_takes_the_line_instead() {
        assert_eq!(runs("xargs -I{} rm -rf {}", "/"), ["'rm' '-rf' '/'"]);
        assert_eq!(runs("xargs -I % cp %.bak %", "a b"), ["'cp' 'a b.bak' 'a b'"]);
        assert_eq!(runs("xargs -i rm -rf {}/x", "/etc"), ["'rm' '-rf' '/etc/x'"]);
        assert_eq!(runs("xargs --replace=@ rm @", "/"), ["'rm' '/'"]);
        // With -i the items are not appended: `rm -rf` with no operand.
        assert_eq!(runs("xargs -i rm -rf", "/"), ["'rm' '-rf'"]);
        // BSD -J: the word is replaced by all the items.
        assert_eq!(runs("xargs -J % mv % dest", "a b"), ["'mv' 'a' 'b' 'dest'"]);
        assert_eq!(runs("xargs -I{} sh -c {}", "rm -rf /"), ["'sh' '-c' 'rm -rf /'"]);
    }

    #[test]
    fn a_shell_with_no_script_runs_the_line() {
        assert_eq!(runs("xargs bash -c", "rm -rf /"), ["'bash' '-c' 'rm -rf /'"]);
        assert_eq!(runs("xargs sh -xc", "'rm -rf ~'"), ["'sh' '-xc' 'rm -rf ~'"]);
        // A shell given a script gets the items as its arguments.
        assert_eq!(runs("xargs sh -c ls", "a"), ["'sh' '-c' 'ls' 'a'"]);
    }

    #[test]
    fn parallel_runs_lines_as_commands_or_into_its_template() {
        assert_eq!(runs("parallel", "rm -rf /\nls"), ["rm -rf /", "ls"]);
        assert_eq!(runs("parallel {}", "rm -rf /"), ["rm -rf /"]);
        assert_eq!(runs("parallel bash -c {}", "rm -rf /"), ["bash -c 'rm -rf /'"]);
        assert_eq!(runs("parallel -j4 gzip", "a b"), ["gzip 'a b'"]);
        assert_eq!(runs("parallel -I @ cp @ b/", "x"), ["cp 'x' b/"]);
        assert_eq!(runs("nice parallel", "rm -rf /"), ["'nice' rm -rf /"]);
        assert_eq!(runs("parallel --pipe sh", "rm -rf /\n"), ["rm -rf /\n"]);
        assert!(runs("parallel --pipe wc -l", "rm -rf /").is_empty());
        // Arguments after `:::` are not read from stdin.
        assert!(runs("parallel gzip ::: a", "rm -rf /").is_empty());
    }

    #[test]
    fn parallel_arguments_without_a_command_are_command_lines() {
        let got = |line: &str| parallel_arguments(&words(line)).map(|c| c.script);
        let argv: Vec<String> = ["parallel", ":::", "rm -rf /", "ls"].map(String::from).to_vec();
        assert_eq!(
            parallel_arguments(&argv).map(|c| c.script).as_deref(),
            Some("rm -rf /\nls")
        );
        assert_eq!(got("parallel -j2 ::: rm ::: -rf").as_deref(), Some("rm -rf"));
        // With a command, one command line per argument.
        assert_eq!(got("parallel gzip ::: a").as_deref(), Some("gzip 'a'"));
        assert_eq!(got("parallel :::: list"), None);
        assert_eq!(got("parallel"), None);
    }

    #[test]
    fn bounded_and_nothing_past_the_bound_is_dropped() {
        let many = "x ".repeat(10_000);
        let built = runs("xargs -n1 rm", &many);
        assert!(built.len() <= MAX_RUNS + 1);
        let lines = "x\n".repeat(10_000);
        assert!(runs("parallel", &lines).len() <= MAX_RUNS + 1);
        // An item hidden after many harmless ones is in the last run.
        for (cmd, input) in [
            ("xargs -n1 rm -rf", format!("{}/etc", "a ".repeat(300))),
            ("xargs -I{} rm -rf {}", format!("{}/etc\n", "a\n".repeat(300))),
            ("xargs bash -c", format!("{}rm -rf /etc\n", "true\n".repeat(300))),
            ("parallel rm -rf {}", format!("{}/etc\n", "a\n".repeat(300))),
        ] {
            let built = runs(cmd, &input);
            assert!(built.len() <= MAX_RUNS + 1, "{cmd}");
            assert!(
                built.last().is_some_and(|l| l.contains("/etc")),
                "{cmd}: {:?}",
                built.last()
            );
        }
    }
}

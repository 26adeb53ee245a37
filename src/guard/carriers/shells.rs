//! Shells and shell-like runners: `sh -c SCRIPT` (and `busybox sh -c`), `eval WORDS`, `su -c`,
//! `runuser -c`, `ssh HOST WORDS..`, `script -c`, `tmux new-session CMD`; scripts fed to a
//! shell on stdin (`echo .. | sh`, `sh <<EOF`, `.. | at now`, `.. | crontab -`, what `sudo -s`
//! reads), to m4 (`esyscmd(..)`, `syscmd(..)`), and the commands `xargs`/`parallel` build from
//! known input (see [`super::xargs`]); a script file written earlier in the line and then run
//! (`bash x.sh`, `source x.sh`, `./x.sh`); text appended to a shell startup file (`>>
//! ~/.bashrc`), which every new shell runs.

use super::text::{output_of, printed_text, WrittenFiles};
use super::{is_shell, Carried, StdinScript};
use crate::guard::shell::{option_values, positional, quote_word};
use crate::guard::targets::startup_file;
use crate::guard::{basename, Pipeline, SimpleCommand};

/// `sh -c SCRIPT [NAME ARGS..]`, `busybox sh -c ..`: the script, with `$0`, `$1`, .. replaced
/// by the words after it.
pub(super) fn dash_c(argv: &[String]) -> Option<Carried> {
    let mut i = 1;
    if argv.first().map(|w| basename(w)) == Some("busybox") {
        if !argv.get(1).is_some_and(|a| is_shell(a)) {
            return None;
        }
        i = 2;
    }
    // `bash -n -c '..'`: read for syntax, never run.
    if syntax_check_only(&argv[i..]) {
        return None;
    }
    let zsh = argv.get(i - 1).is_some_and(|w| basename(w) == "zsh");
    while i < argv.len() {
        let a = &argv[i];
        if a.starts_with('-') && a.len() > 1 && !a.starts_with("--") && a[1..].contains('c') {
            // `bash -c 'script' name args`: the first word after the options, the values of
            // `-o`/`-O` (`bash -co pipefail 'script'`, `sh -c +o posix 'script'`) skipped.
            let mut j = i + 1 + option_values(a);
            while let Some(w) = argv
                .get(j)
                .filter(|w| w.starts_with('-') || (w.starts_with('+') && w.len() > 1))
            {
                // `--`, and a lone `-`, end the options.
                if w == "--" || w == "-" {
                    j += 1;
                    break;
                }
                j += 1 + if matches!(w.as_str(), "--rcfile" | "--init-file") {
                    1
                } else {
                    option_values(w)
                };
            }
            // `sh -c 'rm -rf "$0"' ~`: the words after the script are `$0`, `$1`, ...
            let script = argv.get(j)?;
            let rest = &argv[j + 1..];
            let script = match rest.split_first() {
                Some((zero, more)) => with_positional_words(script, zero, more),
                None => script.clone(),
            };
            let script = if zsh { without_glob_qualifiers(&script) } else { script };
            return Some(Carried::child(script));
        }
        if a == "--rcfile" || a == "--init-file" {
            i += 2;
            continue;
        }
        if !a.starts_with('-') && !a.starts_with('+') {
            return None;
        }
        i += 1 + option_values(a);
    }
    None
}

/// `sh -c SCRIPT ZERO ARGS..`: the script with its parameters filled in, and read again where
/// the script moves them: after each `shift` (up to three), and as written when it defines a
/// function (whose `$1`, `$@` are its caller's words, filled by the walker at each call) or
/// calls `set` (`set -- WORDS`, which the walker follows).
fn with_positional_words(script: &str, zero: &str, args: &[String]) -> String {
    let filled = positional(script, Some(zero), args);
    let mut readings = vec![filled.clone()];
    // Each reading once: a script that copies itself through `$0` must not multiply.
    let mut add = |r: String| {
        if !readings.contains(&r) {
            readings.push(r);
        }
    };
    let words = || script.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '{' | '}'));
    if words().any(|w| w == "shift") {
        for k in 1..=args.len().min(3) {
            add(positional(script, Some(zero), &args[k..]));
        }
    }
    // A function's parameters are its caller's; `set -- WORDS` gives new ones: the walker
    // follows both in the script as written.
    let defines_function = script.contains("()") || words().any(|w| w == "function");
    let sets_parameters = words().any(|w| w == "set");
    if (defines_function || sets_parameters) && filled != script {
        add(script.to_string());
    }
    readings.join("\n")
}

/// Whether a shell's options (`args`, the words after its name) make it only read its script
/// for syntax: `-n` (alone or bundled, `-nc`) or `-o noexec`, before the script.
pub(super) fn syntax_check_only(args: &[String]) -> bool {
    let mut words = args.iter();
    while let Some(a) = words.next() {
        if a == "-o" {
            if words.next().is_some_and(|v| v == "noexec") {
                return true;
            }
            continue;
        }
        if !a.starts_with('-') || a == "-" || a == "--" {
            return false;
        }
        if !a.starts_with("--") && a[1..].contains('n') {
            return true;
        }
    }
    false
}

/// A zsh script with its glob qualifiers removed (`src/**/*.ts(.N)` → `src/**/*.ts`): they
/// filter what a pattern matches and run nothing (bar `e`/`+` qualifiers, which name code and
/// are kept), and bash's grammar cannot read them.
fn without_glob_qualifiers(script: &str) -> String {
    let mut out = String::with_capacity(script.len());
    let mut rest = script;
    while let Some(open) = rest.find('(') {
        let before = &rest[..open];
        let glob_before = before
            .rsplit(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ';' | '|' | '&'))
            .next()
            .is_some_and(|w| w.contains(['*', '?', ']']));
        let close = rest[open..].find(')').map(|c| open + c);
        match close {
            Some(close)
                if glob_before
                    && rest[open + 1..close]
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() && !matches!(c, 'e') || "./@=*%^-:[]<>,".contains(c)) =>
            {
                out.push_str(before);
                rest = &rest[close + 1..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `eval WORDS`: the words joined, run by the shell itself.
pub(super) fn eval(argv: &[String]) -> Option<Carried> {
    (argv.len() > 1).then(|| Carried::this_shell(argv[1..].join(" ")))
}

/// `trap 'CMD' EXIT INT ..`: the command this shell runs when a signal arrives or it exits,
/// whenever that is (an exit always comes): judged when it is set. `trap - EXIT`, `trap ''
/// INT` (ignore), `trap -p` and a lone signal name set nothing to run.
pub(super) fn trap(argv: &[String]) -> Option<Carried> {
    let mut words = argv[1..].iter().skip_while(|w| *w == "--");
    let action = words.next()?;
    let has_signal = words.next().is_some();
    let sets = has_signal && !action.is_empty() && action != "-" && !action.starts_with('-');
    sets.then(|| Carried::this_shell(action.clone()))
}

/// `alias NAME='CMD' ..`: what each name runs in this shell from now on, the next action of a
/// persistent shell included; judged when it is defined, as a function's body is. A body that
/// only starts a command (`alias s=sudo`, `alias e='env '`: see
/// [`super::only_starts_a_command`]) waits for the words of each call, and is judged there.
pub(super) fn alias(argv: &[String]) -> Option<Carried> {
    let bodies: Vec<&str> = argv[1..]
        .iter()
        .filter_map(|a| a.split_once('='))
        .map(|(_, body)| body)
        .filter(|body| !super::only_starts_a_command(body))
        .collect();
    (!bodies.is_empty()).then(|| Carried::this_shell(bodies.join("\n")))
}

/// `su -c SCRIPT USER`, `runuser -c SCRIPT USER` (`runuser -u USER -- cmd` is a wrapper).
pub(super) fn su_c(argv: &[String]) -> Option<Carried> {
    let i = argv.iter().position(|a| a == "-c" || a == "--command")?;
    argv.get(i + 1).cloned().map(Carried::child)
}

/// `sg [-] GROUP [-c] COMMAND`: the command line run by `/bin/sh -c` with the group's rights
/// (words after the group are joined into it). ast-grep installs a program of the same name,
/// read by its subcommand or options (`sg run --pattern ..`, `sg --version`): it carries
/// nothing.
pub(super) fn sg(argv: &[String]) -> Option<Carried> {
    let mut words = argv[1..].iter().map(String::as_str).skip_while(|w| *w == "-");
    let group = words.next()?;
    if group.starts_with('-') || is_ast_grep_subcommand(group) {
        return None;
    }
    let rest: Vec<&str> = words.skip_while(|w| *w == "-c").collect();
    (!rest.is_empty()).then(|| Carried::child(rest.join(" ")))
}

/// ast-grep's subcommands: its `sg` is not the group switcher.
pub(super) fn is_ast_grep_subcommand(word: &str) -> bool {
    matches!(word, "run" | "scan" | "test" | "new" | "lsp" | "completions" | "help")
}

/// Options of `machinectl` that take a value.
pub(super) const MACHINECTL_VALUE_OPTIONS: &[&str] = &[
    "-M",
    "--machine",
    "-H",
    "--host",
    "-E",
    "--setenv",
    "--uid",
    "-p",
    "--property",
    "-o",
    "--output",
];

/// `machinectl shell [USER@][MACHINE] [PATH [ARGS..]]`: the program run in a login session
/// of the machine; the user's shell when no program is named. The host (no machine, `.host`)
/// is this machine; a container has files of its own, like another machine's.
pub(super) fn machinectl_shell(argv: &[String]) -> Option<Carried> {
    // `shell`, then the machine; the program's words follow as they are (`-p` and all).
    let at = super::operand_positions(argv, MACHINECTL_VALUE_OPTIONS, 2);
    if at.first().map(|&k| argv[k].as_str()) != Some("shell") {
        return None;
    }
    let elsewhere = super::on_another_machine(argv);
    let machine = at.get(1).map_or("", |&k| argv[k].rsplit('@').next().unwrap_or(""));
    let program: Vec<String> = at
        .get(1)
        .map_or(&[][..], |&k| &argv[k + 1..])
        .iter()
        .map(|w| quote_word(w))
        .collect();
    let script = if program.is_empty() {
        "sh".to_string()
    } else {
        program.join(" ")
    };
    Some(if !elsewhere && (machine.is_empty() || machine == ".host") {
        Carried::child(script)
    } else {
        Carried::remote(script)
    })
}

/// `ssh [OPTIONS] HOST WORDS..`: the remote command line, run on the host.
pub(super) fn ssh(argv: &[String]) -> Option<Carried> {
    let with_value = [
        "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S",
        "-W", "-w", "-B",
    ];
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if with_value.contains(&a) {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    // argv[i] is the host; the rest is the remote command line.
    let rest = argv.get(i + 1..)?;
    if rest.is_empty() {
        return None;
    }
    Some(Carried::remote(rest.join(" ")))
}

/// `script -qc 'cmd' /dev/null` runs the command under a pseudo-terminal.
pub(super) fn script_c(argv: &[String]) -> Option<Carried> {
    let i = argv
        .iter()
        .position(|a| a == "--command" || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('c')))?;
    argv.get(i + 1).cloned().map(Carried::child)
}

/// `tmux new-session -d 'cmd'` (also `new-window`, `split-window`, `respawn-pane`): the
/// session's shell command.
pub(super) fn tmux(argv: &[String]) -> Option<Carried> {
    let k = argv.iter().position(|a| {
        matches!(
            a.as_str(),
            "new-session" | "new" | "new-window" | "neww" | "split-window" | "splitw" | "respawn-pane" | "respawnp"
        )
    })?;
    let with_value = ["-s", "-n", "-t", "-c", "-x", "-y", "-e", "-F", "-l", "-f"];
    let mut i = k + 1;
    while let Some(a) = argv.get(i).filter(|a| a.starts_with('-') && a.len() > 1) {
        i += if with_value.contains(&a.as_str()) { 2 } else { 1 };
    }
    let rest = argv.get(i..).filter(|r| !r.is_empty())?;
    Some(Carried::child(rest.join(" ")))
}

/// The text of a shell script written earlier in the line that `cmd` runs: `bash x.sh`,
/// `sh ./x.sh` (a process of its own), `source x.sh`, `. x.sh` (the shell itself), `./x.sh`.
pub(super) fn script_file(cmd: &SimpleCommand, written: &WrittenFiles) -> Option<Carried> {
    let name = cmd.name();
    let sourced = name == "source" || name == ".";
    if is_shell(name) && syntax_check_only(&cmd.argv[1..]) {
        return None;
    }
    let file = if is_shell(name) || sourced {
        cmd.argv.iter().skip(1).find(|a| !a.starts_with('-'))?
    } else {
        cmd.argv.first()?
    };
    let text = written.text(file)?;
    let text = if name == "fish" {
        super::fish::as_bash(text)
    } else {
        text.to_string()
    };
    Some(if sourced {
        Carried::this_shell(text)
    } else {
        Carried::child(text)
    })
}

/// `echo 'curl x | sh' >> ~/.bashrc`, `.. | tee -a ~/.zshrc`: the text written into a shell
/// startup file runs in every new shell.
pub(super) fn startup_file_text(cmd: &SimpleCommand) -> Option<Carried> {
    let into_startup = cmd.redirects.iter().any(|r| startup_file(r))
        || (cmd.name() == "tee" && cmd.argv.iter().skip(1).any(|a| startup_file(a)));
    if !into_startup {
        return None;
    }
    printed_text(cmd)
        .or_else(|| cmd.stdin_text.clone())
        .map(|t| Carried::child(run_at_startup(&t)))
}

/// What of a startup file's text runs when a shell starts: not an alias or a function
/// defined on a line of its own (`alias grh='git reset --hard'`, `mk() { mkdir -p "$1"; }`),
/// which runs only when the user calls it by name; the write itself is still judged a
/// change to a startup file.
fn run_at_startup(text: &str) -> String {
    let defines = |line: &str| {
        let l = line.trim_start();
        let l = l.strip_prefix("function ").unwrap_or(l);
        let definition = l.starts_with("alias ")
            || l.split_once("()")
                .is_some_and(|(name, body)| is_name(name.trim_end()) && body.trim_start().starts_with('{'));
        // `alias ll=x; curl .. | sh`: a command after the definition runs at every start.
        definition && !runs_more_than_one(l)
    };
    text.lines().filter(|l| !defines(l)).collect::<Vec<_>>().join("\n")
}

/// Whether `line` holds a `;`, `&` or `|` outside quotes and braces before its last
/// character: more than one command (a trailing `;` ends the one there is).
fn runs_more_than_one(line: &str) -> bool {
    let line = line.trim_end().trim_end_matches(';');
    let (mut single, mut double, mut depth) = (false, false, 0usize);
    let mut escaped = false;
    for c in line.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '{' if !single && !double => depth += 1,
            '}' if !single && !double => depth = depth.saturating_sub(1),
            ';' | '&' | '|' if !single && !double && depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// A shell function's or variable's name.
fn is_name(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with(|c: char| c.is_ascii_digit())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
}

/// Scripts that a pipeline feeds to a shell on stdin: a here-document or here-string of a
/// shell (or `at`/`batch`, a root shell, `crontab -`, a `tee` into a shell startup file), or
/// the literal words an upstream `echo`/`printf` (or `cat <<EOF`) prints into it, followed
/// through filters (`tr`, `rev`, `base64 -d`); the commands of m4's `esyscmd(..)` in what m4
/// reads; and the commands `xargs`/`parallel` build from what they read.
pub(super) fn fed_on_stdin(pipeline: &Pipeline) -> Vec<StdinScript> {
    let mut out = Vec::new();
    for (i, cmd) in pipeline.iter().enumerate() {
        let name = cmd.name();
        // `echo / | xargs rm -rf`: xargs reads arguments, not a script, from stdin (the
        // commands it builds are `super::built_by_xargs`').
        if cmd.args_from_stdin {
            continue;
        }
        if name == "m4" && m4_reads_stdin(&cmd.argv) {
            let scripts = super::text::stdin_as_written(pipeline, i)
                .map(|t| m4_commands(&t))
                .unwrap_or_default();
            out.extend(scripts.into_iter().map(|script| StdinScript {
                script,
                cwd: cmd.cwd.clone(),
                as_root: cmd.as_root,
            }));
            continue;
        }
        let cron = name == "crontab"
            && cmd
                .argv
                .iter()
                .skip(1)
                .all(|a| a == "-" || a == "-u" || !a.starts_with('-'));
        let runs_stdin = match name {
            "at" | "batch" => !cmd.argv.iter().any(|a| a == "-f" || a == "-l" || a == "-c"),
            // `sudo -s`, `pkexec bash` (kept whole by unwrap_command): a root shell.
            n if super::is_root_wrapper(n) => true,
            // `(crontab -l; echo '* * * * * CMD') | crontab -`: the jobs' commands.
            "crontab" => cron,
            // `echo 'curl .. | sh' | tee -a ~/.bashrc`: every new shell runs what tee writes.
            "tee" => cmd.argv.iter().skip(1).any(|a| startup_file(a)),
            // `sh -n <<< '..'`: read for syntax only.
            n if is_shell(n) && syntax_check_only(&cmd.argv[1..]) => false,
            n if is_shell(n) => {
                let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
                let c = args
                    .iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.len() > 1 && a[1..].contains('c'));
                !c && (args.iter().all(|a| a.starts_with('-')) || args.contains(&"-s"))
            }
            _ => false,
        };
        if !runs_stdin {
            continue;
        }
        let mut texts = Vec::new();
        if let Some(t) = &cmd.stdin_text {
            texts.push(t.clone());
        }
        // `echo .. | sh`, `cat <<EOF | sh`, `echo .. | rev | sh`.
        if let Some(text) = i.checked_sub(1).and_then(|up| output_of(pipeline, up)) {
            texts.push(text);
        }
        for t in texts {
            let script = if cron {
                cron_commands(&t)
            } else if name == "tee" {
                run_at_startup(&t)
            } else if name == "fish" {
                super::fish::as_bash(&t)
            } else {
                t
            };
            out.push(StdinScript {
                script,
                cwd: cmd.cwd.clone(),
                as_root: cmd.as_root || super::is_root_wrapper(name),
            });
        }
    }
    out
}

/// Whether m4 reads its input on stdin: no input file named (or `-`).
fn m4_reads_stdin(argv: &[String]) -> bool {
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if matches!(
            a.as_str(),
            "-D" | "-U" | "-I" | "-o" | "-d" | "--define" | "--undefine" | "--include"
        ) {
            i += 2;
            continue;
        }
        if !a.starts_with('-') || a == "-" {
            return a == "-";
        }
        i += 1;
    }
    true
}

/// The arguments of the `esyscmd(..)` and `syscmd(..)` calls in m4 input: each runs in a
/// shell. One level of m4 quotes (`` `..' ``) is removed, as m4 does when it collects them.
fn m4_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(p) = rest.find("syscmd(") {
        let before = &rest[..p];
        let head = before.strip_suffix('e').unwrap_or(before);
        let after = &rest[p + "syscmd(".len()..];
        if !head.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            out.extend(m4_argument(after).filter(|a| !a.trim().is_empty()));
        }
        if out.len() >= 16 {
            break;
        }
        rest = after;
    }
    out
}

/// The first argument of an m4 call whose `(` has been read.
fn m4_argument(text: &str) -> Option<String> {
    let (mut quotes, mut parens) = (0usize, 0usize);
    let mut arg = String::new();
    for c in text.trim_start().chars() {
        match c {
            '`' => {
                if quotes > 0 {
                    arg.push(c);
                }
                quotes += 1;
            }
            '\'' if quotes > 0 => {
                quotes -= 1;
                if quotes > 0 {
                    arg.push(c);
                }
            }
            '(' if quotes == 0 => {
                parens += 1;
                arg.push(c);
            }
            ')' | ',' if quotes == 0 && parens == 0 => return Some(arg),
            ')' if quotes == 0 => {
                parens -= 1;
                arg.push(c);
            }
            _ => arg.push(c),
        }
    }
    None
}

/// The commands of crontab lines: each line without its schedule (five fields, or `@daily`).
fn cron_commands(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.contains('=') || l.starts_with('@'))
        .map(|l| {
            let skip = if l.starts_with('@') { 1 } else { 5 };
            l.split_whitespace().skip(skip).collect::<Vec<_>>().join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::super::testing::{command, script, scripts};
    use super::super::Runs;
    use super::*;

    #[test]
    fn dash_c_with_its_positional_words() {
        assert_eq!(script(&["sh", "-c", "rm -rf ~"], Runs::Child), "rm -rf ~");
        assert_eq!(script(&["/bin/bash", "-lc", "ls"], Runs::Child), "ls");
        assert_eq!(
            script(&["sh", "-c", "rm -rf \"$0\" $1", "~", "/"], Runs::Child),
            "rm -rf '~' '/'"
        );
        assert_eq!(script(&["busybox", "sh", "-c", "rm -rf /"], Runs::Child), "rm -rf /");
        assert_eq!(script(&["bash", "-o", "pipefail", "-c", "x"], Runs::Child), "x");
        // Options after `-c` and their values come before the script.
        assert_eq!(script(&["bash", "-c", "-o", "pipefail", "x"], Runs::Child), "x");
        assert_eq!(script(&["bash", "-co", "pipefail", "x"], Runs::Child), "x");
        assert_eq!(script(&["sh", "-c", "+o", "posix", "-e", "x"], Runs::Child), "x");
        assert_eq!(script(&["bash", "-c", "-O", "extglob", "--", "x"], Runs::Child), "x");
        assert_eq!(script(&["bash", "-c", "-", "x"], Runs::Child), "x");
        // A script that copies itself through `$0` is read once per reading, not four times.
        let copy = "shift; sh -c \"$0\" \"$0\" a b c";
        assert_eq!(
            script(&["sh", "-c", copy, copy, "a", "b", "c"], Runs::Child)
                .lines()
                .count(),
            1
        );
        assert!(scripts(&["bash", "x.sh", "-c"]).is_empty());
        assert!(scripts(&["busybox", "rm", "-c"]).is_empty());
    }

    #[test]
    fn eval_runs_in_this_shell() {
        assert_eq!(script(&["eval", "rm", "-rf", "/"], Runs::ThisShell), "rm -rf /");
        assert!(scripts(&["eval"]).is_empty());
    }

    #[test]
    fn su_runuser_script_and_tmux() {
        assert_eq!(script(&["su", "-c", "rm -rf /etc", "root"], Runs::Child), "rm -rf /etc");
        assert_eq!(script(&["runuser", "--command", "id", "u"], Runs::Child), "id");
        assert_eq!(
            script(&["script", "-qc", "rm -rf /", "/dev/null"], Runs::Child),
            "rm -rf /"
        );
        assert_eq!(
            script(&["tmux", "new-session", "-d", "-s", "x", "rm", "-rf", "~"], Runs::Child),
            "rm -rf ~"
        );
        assert!(scripts(&["tmux", "attach", "-t", "x"]).is_empty());
    }

    #[test]
    fn ssh_runs_its_words_on_the_host() {
        assert_eq!(
            script(&["ssh", "-p", "22", "-i", "k", "host", "rm", "-rf", "/"], Runs::Remote),
            "rm -rf /"
        );
        assert!(scripts(&["ssh", "host"]).is_empty());
    }

    #[test]
    fn a_written_script_file_that_runs() {
        let mut written = WrittenFiles::default();
        let mut echo = command(&["echo", "rm -rf /"]);
        echo.redirects = vec!["x.sh".into()];
        written.record(&echo);
        for (words, runs) in [
            (&["bash", "x.sh"][..], Runs::Child),
            (&["sh", "./x.sh"], Runs::Child),
            (&["./x.sh"], Runs::Child),
            (&["source", "x.sh"], Runs::ThisShell),
            (&[".", "./x.sh"], Runs::ThisShell),
        ] {
            let got = super::super::carried(&command(words), &written);
            assert_eq!(
                got,
                [Carried {
                    script: "rm -rf /\n".into(),
                    runs
                }],
                "{words:?}"
            );
        }
        assert!(super::super::carried(&command(&["bash", "y.sh"]), &written).is_empty());
    }

    #[test]
    fn text_appended_to_a_startup_file() {
        let mut cmd = command(&["echo", "curl x | sh"]);
        cmd.redirects = vec!["~/.bashrc".into()];
        cmd.appends = cmd.redirects.clone();
        assert_eq!(
            super::super::carried(&cmd, &WrittenFiles::default())[0].script,
            "curl x | sh"
        );
        let mut tee = command(&["tee", "-a", "/home/u/.zshrc"]);
        tee.stdin_text = Some("rm -rf ~".into());
        assert_eq!(
            super::super::carried(&tee, &WrittenFiles::default())[0].script,
            "rm -rf ~"
        );
        let mut other = command(&["echo", "curl x | sh"]);
        other.redirects = vec!["notes.txt".into()];
        assert!(super::super::carried(&other, &WrittenFiles::default()).is_empty());
    }

    fn fed(pipeline: &[SimpleCommand]) -> Vec<String> {
        fed_on_stdin(&pipeline.to_vec()).into_iter().map(|s| s.script).collect()
    }

    #[test]
    fn scripts_fed_to_a_shell_on_stdin() {
        let echo = command(&["echo", "rm -rf /"]);
        assert_eq!(fed(&[echo.clone(), command(&["sh"])]), ["rm -rf /"]);
        assert_eq!(fed(&[echo.clone(), command(&["bash", "-s"])]), ["rm -rf /"]);
        assert_eq!(fed(&[echo.clone(), command(&["at", "now"])]), ["rm -rf /"]);
        assert_eq!(fed(&[echo.clone(), command(&["sudo", "-s"])]), ["rm -rf /"]);
        let mut cat = command(&["cat"]);
        cat.stdin_text = Some("rm -rf ~".into());
        assert_eq!(fed(&[cat, command(&["sh"])]), ["rm -rf ~"]);
        let mut heredoc = command(&["bash"]);
        heredoc.stdin_text = Some("rm -rf /etc".into());
        assert_eq!(fed(&[heredoc]), ["rm -rf /etc"]);
        // A shell given a script (or `-c`) does not read one on stdin; nor does `at -f`.
        assert!(fed(&[echo.clone(), command(&["sh", "x.sh"])]).is_empty());
        assert!(fed(&[echo.clone(), command(&["sh", "-c", "cat"])]).is_empty());
        assert!(fed(&[echo.clone(), command(&["at", "-f", "job", "now"])]).is_empty());
        assert!(fed(&[echo, command(&["grep", "x"])]).is_empty());
    }

    #[test]
    fn m4_runs_what_esyscmd_and_syscmd_hold() {
        let m4 = command(&["m4"]);
        for (text, want) in [
            ("esyscmd(rm -rf /)", &["rm -rf /"][..]),
            ("syscmd(`rm -rf ~')dnl", &["rm -rf ~"]),
            ("define(x, esyscmd(`id'))x syscmd(ls, y)", &["id", "ls"]),
            ("esyscmd(`f(1)' )", &["f(1) "]),
        ] {
            assert_eq!(fed(&[command(&["echo", text]), m4.clone()]), want, "{text}");
        }
        let mut doc = command(&["m4", "-P"]);
        doc.stdin_text = Some("esyscmd(rm -rf /etc)".into());
        assert_eq!(fed(&[doc]), ["rm -rf /etc"]);
        // No call, a name that only ends in `syscmd`, an unclosed call, or m4 reading a file.
        for text in ["define(x,1)x", "mysyscmd(rm -rf /)", "esyscmd(rm -rf /"] {
            assert!(fed(&[command(&["echo", text]), m4.clone()]).is_empty(), "{text}");
        }
        assert!(fed(&[command(&["echo", "esyscmd(id)"]), command(&["m4", "x.m4"])]).is_empty());
        assert_eq!(
            fed(&[command(&["echo", "esyscmd(id)"]), command(&["m4", "-D", "a=1", "-"])]),
            ["id"]
        );
    }

    #[test]
    fn filtered_text_reaches_the_shell() {
        let rev = command(&["rev"]);
        assert_eq!(
            fed(&[command(&["echo", "/ fr- mr"]), rev, command(&["bash"])]),
            ["rm -rf /"]
        );
        // A command run by xargs reads its arguments, not a script.
        let mut sudo = command(&["sudo", "--"]);
        sudo.args_from_stdin = true;
        assert!(fed(&[command(&["echo", "ok"]), sudo]).is_empty());
    }

    #[test]
    fn crontab_lines_lose_their_schedule() {
        let jobs = command(&["echo", "* * * * * rm -rf ~\n@daily curl x | sh\nMAILTO=x"]);
        assert_eq!(
            fed(&[jobs.clone(), command(&["crontab", "-"])]),
            ["rm -rf ~\ncurl x | sh"]
        );
        assert!(fed(&[jobs, command(&["crontab", "-l"])]).is_empty());
    }
}

//! Commands that carry other commands, and what they carry.
//!
//! The rules judge simple commands: `rm -rf /`, `curl .. | sh`. Most dangerous commands do not
//! arrive that plainly. They arrive *carried*: wrapped in another command word (`sudo`, `env`,
//! `timeout`, `xargs`), handed as text to another shell (`sh -c '..'`, `eval`, `su -c`,
//! `ssh host '..'`), hidden in an option of a program that runs commands (`git -c
//! core.sshCommand=..`, `tar --checkpoint-action=exec=..`, `find -exec`, `vim -c ':!..'`),
//! written in another language (`python -c 'os.system(..)'`, PowerShell's `Remove-Item
//! -Recurse`), mounted into a container (`docker run -v ~:/d img rm -rf /d`), fed on stdin
//! (`echo 'rm -rf /' | sh`), or written to a file that runs later in the line (`echo .. >
//! x.sh; bash x.sh`, a `package.json` script, `>> ~/.bashrc`). A *carrier* is such a command;
//! this module is the one place that knows them.
//!
//! The shell walker ([`super::shell`]) parses a line into simple commands and knows nothing of
//! what any command name means. For each command it builds, it asks this module three
//! questions:
//!
//! 1. [`unwrap_command`]: *is this command word a wrapper?* `sudo -u x env A=1 nice rm -rf y`
//!    is `rm -rf y` (with `A=1` as an assignment, and "more arguments come from stdin" after
//!    `xargs`). The wrapper disappears: the rules see the real command in its place. A shell
//!    named by a variable that holds one (`$SHELL -c ..`, [`shell_variable`]) is a shell.
//! 2. [`carried`]: *what other commands does it run?* Each answer is a [`Carried`] script —
//!    always bash text, whatever the carrier's own language was (PowerShell and inline
//!    programs are translated here into the shell commands that do the same), with where it
//!    runs ([`Runs`]): in the same shell (`eval`, `source`: a `cd` carries on), in a process
//!    of its own (`sh -c`, `find -exec`: a `cd` ends with it), or on another machine (`ssh`:
//!    paths do not resolve against the workspace). The walker parses each script as commands
//!    of their own, nested one level deeper (depth is bounded), and keeps the carrier too.
//! 3. [`scripts_fed_on_stdin`]: *which scripts does this pipeline feed a shell?* (`echo .. |
//!    sh`, `sh <<EOF`, `cat <<EOF | sh`, `.. | at now`, `.. | crontab -`, `sudo -s <<EOF`,
//!    `echo 'esyscmd(..)' | m4`), and *which commands do `xargs` and `parallel` build from
//!    the text they read* (`echo / | xargs -I{} rm -rf {}`, `echo 'rm -rf /' | parallel`).
//!    The text is followed through filters whose output is plain to compute (`echo 'eq -pe
//!    v/' | tr eqv rmf | sh`). Asked once the whole line is parsed.
//!
//! [`WrittenFiles`] is the walker's memory of files written earlier in the line, which
//! [`carried`] reads when a command runs one of them; [`printed_text`] (what `echo`/`printf`
//! print) and [`disguised_literal`] (the filter that changed a literal on its way into a
//! command) are shared with the rules.
//!
//! One file per family: [`wrappers`], [`xargs`] (`xargs` and `parallel`), [`shells`] (other
//! shells and shell-like runners, m4), [`escapes`] (command languages with a shell escape:
//! `ed`'s `!`, sqlite3's `.shell`, psql's `\!`), [`programs`] (tools that run a command given in an
//! option, a variable or a file they read), [`interpreters`] (inline programs),
//! [`containers`], [`powershell`], [`text`], and [`table`]: carriers as data, one entry per
//! program that runs what it is handed in an option (`man -P`, `rsync -e`, `zip -TT`, `ssh -o
//! ProxyCommand=`, `make --eval`), in its remaining words (`poetry run`, `npx`, `watch`,
//! `tmux send-keys`) or after `--` (`kubectl exec`), and the programs that are another one
//! under a package name (`rimraf` is `rm -rf`).
//!
//! Two facts hold whatever the carrier: a copy or link of a program made earlier in the line
//! is that program when it runs (`cp /bin/rm /tmp/x && /tmp/x -rf ~`, see [`WrittenFiles`]),
//! and a wrapper that starts its command elsewhere (`env -C /`, `sudo -D`) moves where the
//! command's relative paths resolve ([`chdir`]). A carrier that only reads its script for
//! syntax (`bash -n`, `parallel --dry-run`) or asks before each run with nobody to answer
//! (`find -ok .. < /dev/null`) carries nothing.
//!
//! This module never parses shell text and never judges anything: it turns a command into the
//! text of the commands it carries, and the walker and the rules do the rest.

pub(crate) mod code;
mod containers;
mod escapes;
mod fish;
mod interpreters;
mod powershell;
mod programs;
mod shells;
mod table;
mod text;
mod wrappers;
mod xargs;

use std::path::PathBuf;

use super::{basename, Pipeline, SimpleCommand};

pub(crate) use escapes::{has_shell_escape, reads_commands as reads_escape_commands};
pub(crate) use powershell::encoded_script as powershell_encoded_script;
pub(crate) use programs::git_setting_runs_program;
pub(crate) use table::{hands_on_words, UNSHARE_VALUE_OPTIONS};
pub(crate) use text::{
    base64_decode, copied, disguised_literal, names_a_remote_file, output_of, printed_by, printed_text,
    stdin_as_written, stdin_of, WrittenFiles,
};
pub use wrappers::{chdir, unwrap_command, unwrap_command_keeping};
pub(crate) use wrappers::{wrapper_outputs, WrapperOutput};

/// Where a carried script runs, which decides what its `cd` and its paths mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runs {
    /// In the shell that runs the line (`eval ..`, `source x.sh`): a `cd` in it carries on to
    /// the commands after it.
    ThisShell,
    /// In a process of its own on this machine, starting in the carrier's directory (`sh -c`,
    /// `find -exec`, `os.system(..)`): a `cd` in it ends with it.
    Child,
    /// On another machine (`ssh HOST ..`): its paths do not resolve against the workspace.
    Remote,
}

/// A script a command carries: bash text to be parsed as commands of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Carried {
    pub script: String,
    pub runs: Runs,
}

impl Carried {
    fn child(script: impl Into<String>) -> Self {
        Carried {
            script: script.into(),
            runs: Runs::Child,
        }
    }

    fn this_shell(script: impl Into<String>) -> Self {
        Carried {
            script: script.into(),
            runs: Runs::ThisShell,
        }
    }

    fn remote(script: impl Into<String>) -> Self {
        Carried {
            script: script.into(),
            runs: Runs::Remote,
        }
    }
}

/// A script a pipeline feeds a shell on stdin, with the directory the reading command runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StdinScript {
    pub script: String,
    pub cwd: Option<PathBuf>,
    /// The command that reads it has another user's rights (`echo .. | sudo m4`, `sudo -s
    /// <<EOF`): so does what it runs.
    pub as_root: bool,
}

/// Every script `cmd` (already unwrapped, see [`unwrap_command`]) carries, in the order the
/// walker parses them; `written` holds the files written earlier in the line.
pub(crate) fn carried(cmd: &SimpleCommand, written: &WrittenFiles) -> Vec<Carried> {
    let mut out = programs::run_variables(cmd);
    out.extend(by_name(&cmd.argv));
    out.extend(table::carried(&cmd.argv));
    out.extend(interpreters::carried(cmd));
    out.extend(programs::found_exec(cmd));
    out.extend(programs::command_options(&cmd.argv));
    out.extend(programs::removed_sources(&cmd.argv));
    out.extend(written_script(cmd, written));
    out.extend(shells::startup_file_text(cmd));
    out.extend(escapes::in_words(cmd));
    // `strace -p PID -o '|cmd'`: a tracer attached to a process wraps no command, and is the
    // command itself; its piped output still runs.
    if cmd.name() == "strace" {
        out.extend(wrapper_outputs(&cmd.argv).into_iter().filter_map(|o| match o {
            WrapperOutput::Command(line) => Some(line),
            WrapperOutput::File(_) => None,
        }));
    }
    out
}

/// `echo 'import os; os.system(..)' | python3`, `cat <<'JS' | tee x | node`: each stage of
/// `pipeline` that reads its program on stdin ([`code::reads_program_on_stdin`]) and has no
/// here-document of its own is given what the stages before it print as its stdin text, and
/// read as the inline program it is; the shell commands those programs amount to are
/// returned, to be parsed as carried scripts.
pub(crate) fn read_piped_programs(pipeline: &mut Pipeline) -> Vec<StdinScript> {
    let mut out = Vec::new();
    for i in 1..pipeline.len() {
        let stage = &pipeline[i];
        let reads_program = code::reads_program_on_stdin(stage) || interpreters::reads_literal_program_on_stdin(stage);
        if stage.stdin_text.is_some() || stage.upstream_copy || !reads_program {
            continue;
        }
        let Some(text) = text::piped_as_written(&pipeline[..i]) else {
            continue;
        };
        let stage = &mut pipeline[i];
        stage.stdin_text = Some(text);
        stage.inline = code::read(stage);
        for carried in interpreters::carried(stage) {
            out.push(StdinScript {
                script: carried.script,
                cwd: stage.cwd.clone(),
                as_root: stage.as_root,
            });
        }
    }
    out
}

/// Scripts that `pipeline` feeds to a shell (or `at`, `crontab`, a root shell, m4) on stdin,
/// and the commands its `xargs`/`parallel` stages build from known input.
pub(crate) fn scripts_fed_on_stdin(pipeline: &Pipeline) -> Vec<StdinScript> {
    let mut out = shells::fed_on_stdin(pipeline);
    for (i, cmd) in pipeline.iter().enumerate() {
        // `echo '!rm -rf /' | ed`, `sqlite3 db <<< '.shell ..'`: a program's own shell escapes.
        if !cmd.args_from_stdin && escapes::reads_commands(cmd) {
            let commands =
                escapes::escaped_commands(cmd.name(), &text::stdin_as_written(pipeline, i).unwrap_or_default());
            if !commands.is_empty() {
                out.push(StdinScript {
                    script: commands.join("\n"),
                    cwd: cmd.cwd.clone(),
                    as_root: cmd.as_root,
                });
            }
        }
        // `make -f - <<EOF`, `curl .. | make -f -`: the makefile is read from stdin, and its
        // recipes run.
        if programs::reads_makefile_on_stdin(cmd) {
            let recipes = programs::recipes(&text::stdin_as_written(pipeline, i).unwrap_or_default());
            if !recipes.is_empty() {
                out.push(StdinScript {
                    script: recipes.join("\n"),
                    cwd: cmd.cwd.clone(),
                    as_root: cmd.as_root,
                });
            }
        }
        if let Some(lines) = built_by_xargs(pipeline, i) {
            out.push(StdinScript {
                script: lines.join("\n"),
                cwd: cmd.cwd.clone(),
                as_root: cmd.as_root,
            });
        }
    }
    out
}

/// The command lines the `xargs` or `parallel` unwrapped in front of stage `i` runs, when
/// what it reads is known (`echo / | xargs -I{} rm -rf {}` runs `rm -rf /`); None when the
/// stage reads no arguments from stdin, its input is not known, or its items do not come from
/// stdin (`xargs -a FILE`). The rules then judge the stage itself without the unknown items.
pub(crate) fn built_by_xargs(pipeline: &[SimpleCommand], i: usize) -> Option<Vec<String>> {
    let cmd = pipeline.get(i).filter(|c| c.args_from_stdin)?;
    let text = text::stdin_of(pipeline, i)?;
    let lines = xargs::command_lines(cmd, &text);
    (!lines.is_empty()).then_some(lines)
}

const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "fish", "rbash"];

/// Whether `name` is a shell interpreter.
pub fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name) || SHELLS.contains(&crate::guard::unversioned(name))
}

/// `python3 -m http.server`, `python -I -m pip ..`, `python3 -mvenv ..`: the module Python is
/// told to run, and the index of the word that holds it (the word after `-m`, or `-mNAME`
/// itself). Python's own options before it are bundles of its one-letter flags
/// (`bBdEhiIOPqRsSuvVx`), or `-X`/`-W` with a value, separate or glued (`-Xdev`); anything
/// else (`-c ..`, a script) runs instead.
pub(crate) fn python_module(argv: &[String]) -> Option<(usize, &str)> {
    let name = crate::guard::unversioned(basename(argv.first()?));
    if !matches!(name, "python" | "python3" | "python2" | "py" | "pypy" | "pypy3") {
        return None;
    }
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        // A bundle of flags, which may end in `m`, `X` or `W` with their value glued or next.
        let bundle = a.strip_prefix('-').filter(|b| !b.is_empty() && !b.starts_with('-'))?;
        let flags = bundle
            .find(|c: char| !"bBdEhiIOPqRsSuvVx".contains(c))
            .unwrap_or(bundle.len());
        let (letter, glued) = match bundle[flags..].chars().next() {
            None => {
                i += 1;
                continue;
            }
            Some(c) => (c, &bundle[flags + c.len_utf8()..]),
        };
        match (letter, glued.is_empty()) {
            ('m', true) => return argv.get(i + 1).map(|m| (i + 1, m.as_str())),
            ('m', false) => return Some((i, glued)),
            ('X' | 'W', true) => i += 2,
            ('X' | 'W', false) => i += 1,
            _ => return None,
        }
    }
    None
}

/// Whether the program `name` records an account's login shell (`chsh -s /bin/zsh`, `usermod
/// --shell=/bin/bash`): a shell given to it is written down, not started.
pub(crate) fn records_login_shell(name: &str) -> bool {
    matches!(name, "chsh" | "lchsh" | "usermod" | "useradd" | "adduser")
}

/// Whether `text`, kept to be run later with more words after it (an alias body, a variable
/// such as `SUDO_CMD=sudo` used as `$SUDO_CMD apt install ..`), only starts a command: nothing
/// but wrappers, or a root wrapper with options that run nothing by themselves (`sudo -E`, not
/// `sudo -i`). What it starts is judged where the words are given.
pub(crate) fn only_starts_a_command(text: &str) -> bool {
    let mut words: Vec<String> = text.split_whitespace().map(String::from).collect();
    unwrap_command(&mut words);
    match words.split_first() {
        None => true,
        Some((first, options)) => {
            is_root_wrapper(basename(first))
                && options
                    .iter()
                    .all(|w| w.starts_with('-') && !matches!(w.as_str(), "-i" | "-s" | "--login" | "--shell"))
        }
    }
}

/// Whether `name` runs the command after it with root's rights (`sudo`, `doas`, `pkexec`, and
/// systemd's `run0`); given no command, or a bare shell, it is a root shell.
pub fn is_root_wrapper(name: &str) -> bool {
    matches!(name, "sudo" | "doas" | "pkexec" | "run0" | "sudo-rs")
}

/// The value of the option `names` in `argv` (`-u bob`, `--user=bob`, `-ubob`, or a bundle
/// that ends in the letter: `-vu bob`); the last one given wins. `letters` lists the
/// one-letter options that take a value, which end a bundle.
pub(crate) fn option_value<'a>(argv: &'a [String], names: &[&str], letters: &str) -> Option<&'a str> {
    let mut value = None;
    for (i, a) in argv.iter().enumerate().skip(1) {
        if a == "--" {
            break;
        }
        if names.contains(&a.as_str()) {
            value = argv.get(i + 1).map(String::as_str);
        } else if let Some((o, v)) = a.split_once('=').filter(|(o, _)| o.starts_with("--")) {
            if names.contains(&o) {
                value = Some(v);
            }
        } else if let Some(bundle) = a.strip_prefix('-').filter(|b| !b.starts_with('-')) {
            for (k, c) in bundle.char_indices() {
                if !letters.contains(c) {
                    continue;
                }
                if names.iter().any(|n| n.len() == 2 && n.ends_with(c)) {
                    let glued = &bundle[k + 1..];
                    value = if glued.is_empty() {
                        argv.get(i + 1).map(String::as_str)
                    } else {
                        Some(glued)
                    };
                }
                break;
            }
        }
    }
    value
}

/// The words of `argv` after its name that are neither options nor the values of the
/// options in `with_value`.
fn operands<'a>(argv: &'a [String], with_value: &[&str]) -> Vec<&'a str> {
    operand_positions(argv, with_value, usize::MAX)
        .into_iter()
        .map(|k| argv[k].as_str())
        .collect()
}

/// Where the first `most` operands of `argv` stand ([`operands`]): what follows the last of
/// them may be another program's words, options and all.
pub(super) fn operand_positions(argv: &[String], with_value: &[&str], most: usize) -> Vec<usize> {
    let mut found = Vec::new();
    let mut i = 1;
    while let Some(a) = argv.get(i).filter(|_| found.len() < most) {
        if with_value.contains(&a.as_str()) {
            i += 2;
            continue;
        }
        if !(a.starts_with('-') && a.len() > 1) {
            found.push(i);
        }
        i += 1;
    }
    found
}

/// Options of `su` and `runuser` that take a value.
const SU_VALUE_OPTIONS: &[&str] = &[
    "-c",
    "--command",
    "-s",
    "--shell",
    "-g",
    "--group",
    "-G",
    "--supp-group",
    "-w",
    "--whitelist-environment",
    "-u",
    "--user",
];

/// The account `su` or `runuser` switches to (`argv` is its words up to the command it runs,
/// or all of them): the value of `-u`, else the first operand after the login flag `-`; None
/// for root, the default.
pub(crate) fn su_account(argv: &[String]) -> Option<&str> {
    option_value(argv, &["-u", "--user"], "ucsgGw")
        .or_else(|| operands(argv, SU_VALUE_OPTIONS).into_iter().find(|w| *w != "-"))
        .filter(|account| !is_root_account(account))
}

/// `root`, `0`, `00`, `root:root`, `0:0`, sudo's `#0`: root's account (with a group). An
/// account computed at run time (`$U`) may be root: it counts as root. So do sudo's `#-1` and
/// `#4294967295`, which ran as root before sudo 1.8.28 (CVE-2019-14287).
fn is_root_account(account: &str) -> bool {
    if account.contains(['$', '`']) {
        return true;
    }
    let user = account.split(':').next().unwrap_or_default();
    if user == "root" {
        return true;
    }
    // A number as the C libraries read one (`strtol`, `strtonum`): blanks, then a sign, then
    // digits (`#+0`, `# 0`, `-0` are 0).
    let number = user.strip_prefix('#').unwrap_or(user).trim_start();
    let (negative, digits) = match number.as_bytes().first() {
        Some(b'-') => (true, &number[1..]),
        Some(b'+') => (false, &number[1..]),
        _ => (false, number),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let digits = digits.trim_start_matches('0');
    digits.is_empty() || (negative && digits == "1") || (!negative && digits == "4294967295")
}

/// Whether systemd's `-M box`, `--machine=box` or `-H host` names another machine than this
/// one (`-M .host`, `-M root@` name this one).
pub(crate) fn on_another_machine(argv: &[String]) -> bool {
    option_value(argv, &["-M", "--machine", "-H", "--host"], "MH")
        .is_some_and(|m| !matches!(m.rsplit('@').next(), Some("" | ".host")))
}

/// Whether `systemd-run` runs its command in a service of the system manager, as that
/// service's account, rather than as its caller: not for the user's own manager (the last of
/// `--user` and `--system` wins) and not in a scope (`--scope`, the caller's process), unless
/// `--uid` names the account.
fn systemd_run_switches(argv: &[String]) -> bool {
    let user_manager = argv
        .iter()
        .rev()
        .find(|a| *a == "--user" || *a == "--system")
        .is_some_and(|a| a == "--user");
    let scope = argv.iter().any(|a| a == "--scope");
    !user_manager && (!scope || option_value(argv, &["--uid"], "").is_some())
}

/// Whether `argv` (a wrapper's or carrier's words) switches the account its command runs as,
/// to root or another: the programs [`runs_as_root`] decides for. The last switch in a chain
/// of wrappers decides (`sudo gosu app sh` runs as app).
pub(crate) fn switches_account(argv: &[String]) -> bool {
    let Some(name) = argv.first().map(|w| basename(w)) else {
        return false;
    };
    match name {
        "su" | "runuser" | "setuidgid" | "s6-setuidgid" | "gosu" | "su-exec" | "s6-applyuidgid" => true,
        "systemd-run" => systemd_run_switches(argv),
        "machinectl" => argv.iter().any(|a| a == "shell"),
        "chpst" => option_value(argv, &["-u"], CHPST_VALUE_LETTERS).is_some(),
        "setpriv" => option_value(argv, &["--reuid", "--ruid", "--euid"], "").is_some(),
        n => is_root_wrapper(n),
    }
}

/// Whether one of the wrappers `words` (each one's words up to the command it runs) is a
/// privilege wrapper told to read its password on stdin: `sudo -S`, `sudo --stdin`, `sudo
/// -kS` (a bundle of its one-letter options).
pub(crate) fn wrapper_reads_password(words: &[String]) -> bool {
    let mut in_root_wrapper = false;
    for (k, w) in words.iter().enumerate() {
        if !w.starts_with('-') {
            // A word after an option may be its value (`sudo -u postgres -S`); any other
            // starts the next wrapper (`sudo env -S ..` is env's split string).
            let value = k > 0 && words[k - 1].starts_with('-');
            in_root_wrapper = matches!(basename(w), "sudo" | "sudo-rs") || (in_root_wrapper && value);
            continue;
        }
        let bundle = !w.starts_with("--") && w[1..].bytes().all(|b| b.is_ascii_alphabetic());
        if in_root_wrapper && (w == "--stdin" || (bundle && w.contains('S'))) {
            return true;
        }
    }
    false
}

/// Whether the command or script the wrapper or carrier `argv` runs runs as root because it
/// switches to root's account (`argv` holds the wrapper's words, up to the command it runs):
/// - `sudo`, `doas`, `pkexec`, `run0`, `sudo-rs` ([`is_root_wrapper`]), unless told to run
///   as another account (`sudo -u postgres`);
/// - `su -c`, `runuser` (root unless another account is named);
/// - systemd's `systemd-run` (a system service: root unless `--user` or `--uid` says
///   otherwise, or it runs on another machine) and `machinectl shell` (root unless `USER@`
///   or `--uid` names another, on this host);
/// - daemontools' `setuidgid root`, s6's `s6-setuidgid root`, `gosu root`, `su-exec root`,
///   runit's `chpst -u root`, util-linux's `setpriv --reuid=0`.
///
/// A switch to any other account leaves the command that account's rights, which the rules do
/// not raise; `sg` switches the group only.
pub(crate) fn runs_as_root(argv: &[String]) -> bool {
    let Some(name) = argv.first().map(|w| basename(w)) else {
        return false;
    };
    let uid = || option_value(argv, &["--uid"], "");
    // `systemd-run -p User=app`, `-p DynamicUser=yes`: the service's account.
    let service_user = || {
        argv.windows(2).find_map(|w| {
            let p = w[1].as_str();
            (w[0] == "-p" || w[0] == "--property")
                .then(|| {
                    p.strip_prefix("User=")
                        .or(p.strip_prefix("DynamicUser=").map(|_| "dynamic"))
                })
                .flatten()
        })
    };
    match name {
        // `sudo -u postgres psql` runs as postgres.
        n if is_root_wrapper(n) => wrappers::root_wrapper_account(argv).is_none_or(is_root_account),
        "su" | "runuser" => su_account(argv).is_none(),
        "systemd-run" => {
            systemd_run_switches(argv)
                && uid().is_none_or(is_root_account)
                && service_user().is_none_or(is_root_account)
                && !on_another_machine(argv)
        }
        "machinectl" => {
            let words = operands(argv, shells::MACHINECTL_VALUE_OPTIONS);
            let user = words.get(1).and_then(|m| m.split_once('@')).map(|(u, _)| u);
            // A user named before the `@` wins over `--uid` (machinectl(1)).
            let account = user.filter(|u| !u.is_empty()).or_else(uid);
            words.first() == Some(&"shell") && !on_another_machine(argv) && account.is_none_or(is_root_account)
        }
        "setuidgid" | "s6-setuidgid" | "gosu" | "su-exec" => {
            operands(argv, &[]).first().is_some_and(|a| is_root_account(a))
        }
        "s6-applyuidgid" => option_value(argv, &["-u"], "ugG").is_some_and(is_root_account),
        "chpst" => {
            option_value(argv, &["-u"], CHPST_VALUE_LETTERS).is_some_and(|a| is_root_account(a.trim_start_matches(':')))
        }
        "setpriv" => option_value(argv, &["--reuid", "--ruid", "--euid"], "").is_some_and(is_root_account),
        _ => false,
    }
}

/// The one-letter options of runit's `chpst` that take a value.
pub(crate) const CHPST_VALUE_LETTERS: &str = "uUbe/nlLmdofcrt";

/// Whether a command word is a variable that holds the path of a shell (`$SHELL`, `${SHELL}`,
/// `$BASH`): `$SHELL -c 'rm -rf /'` is `bash -c 'rm -rf /'`, not a command computed at run
/// time.
pub(crate) fn shell_variable(word: &str) -> bool {
    matches!(word, "$SHELL" | "${SHELL}" | "$BASH" | "${BASH}")
}

/// The script a command hands over by its own name and arguments: `sh -c SCRIPT`, `eval
/// WORDS`, `su -c`, `ssh HOST ..`, `git -c core.sshCommand=..`, `docker run -v ~:/d ..`, ...
fn by_name(argv: &[String]) -> Option<Carried> {
    let name = argv.first().map(|w| basename(w))?;
    let carried = match name {
        // fish quotes, substitutes and chains commands otherwise than bash: read in its terms.
        "fish" => fish::scripts_of(argv).map(Carried::child),
        n if is_shell(n) || n == "busybox" => shells::dash_c(argv),
        "eval" => shells::eval(argv),
        "trap" => shells::trap(argv),
        "alias" => shells::alias(argv),
        "su" | "runuser" => shells::su_c(argv),
        "machinectl" => shells::machinectl_shell(argv),
        "sg" => shells::sg(argv),
        "ssh" => shells::ssh(argv),
        "ansible" => programs::ansible(argv),
        "mvn" | "mvnw" => programs::maven_exec(argv),
        "script" => shells::script_c(argv),
        "tmux" => shells::tmux(argv),
        "parallel" => xargs::parallel_arguments(argv),
        "git" => programs::git(argv),
        "tar" | "gtar" | "bsdtar" => programs::tar(argv),
        "npm" | "pnpm" | "yarn" | "bun" => programs::npm_pkg_set(argv),
        "vi" | "vim" | "nvim" | "view" | "ex" => programs::vim(argv),
        "expect" => programs::expect(argv),
        "sed" | "gsed" => programs::sed(argv),
        "tex" | "latex" | "pdflatex" | "xelatex" | "lualatex" | "pdftex" | "xetex" | "luatex" | "etex" | "lamed"
        | "amstex" | "mptopdf" | "context" => programs::tex(argv),
        "docker" | "podman" => containers::mounted_command(argv),
        "pwsh" | "powershell" | "powershell.exe" | "pwsh.exe" => powershell::carried(argv),
        _ => None,
    }?;
    // A script that is one substitution (`eval "$(ssh-agent -s)"`, `sh -c '$(rm -rf ~)'`):
    // what it runs is only known at run time, but the substitution's own command runs first,
    // in the carrier's shell, and is what is carried (single quotes hid it from the line).
    // A trap's or an alias's body is read whole: its substitution's output runs as a command
    // when the trap fires or the alias is called (`trap "$(curl ..)" EXIT`).
    if matches!(name, "trap" | "alias") {
        return Some(carried);
    }
    Some(match substitution_inside(&carried.script) {
        Some(inside) => Carried {
            script: inside.to_string(),
            runs: carried.runs,
        },
        None => carried,
    })
}

/// The command inside a script that is one substitution from end to end.
fn substitution_inside(script: &str) -> Option<&str> {
    let s = script.trim();
    if !crate::guard::shell::is_single_substitution(s) {
        return None;
    }
    s.strip_prefix("$(")
        .and_then(|r| r.strip_suffix(')'))
        .or_else(|| s.strip_prefix('`').and_then(|r| r.strip_suffix('`')))
}

/// The text of a file written earlier in the line that `cmd` runs: a shell script (`bash
/// x.sh`, `source x.sh`, `./x.sh`), a `package.json`'s scripts (npm), a Makefile's recipes.
fn written_script(cmd: &SimpleCommand, written: &WrittenFiles) -> Option<Carried> {
    if written.is_empty() {
        return None;
    }
    match cmd.name() {
        "npm" | "pnpm" | "yarn" | "bun" => programs::package_scripts(written),
        "make" => programs::makefile_recipes(written),
        _ => shells::script_file(cmd, written),
    }
}

/// Test helpers shared by the families' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A command with `words` as its argv.
    pub fn command(words: &[&str]) -> SimpleCommand {
        SimpleCommand {
            argv: words.iter().map(|w| w.to_string()).collect(),
            ..SimpleCommand::default()
        }
    }

    /// The scripts `words` carries, with no file written before it.
    pub fn scripts(words: &[&str]) -> Vec<Carried> {
        carried(&command(words), &WrittenFiles::default())
    }

    /// The one script `words` carries, which must run in `runs`.
    #[track_caller]
    pub fn script(words: &[&str], runs: Runs) -> String {
        let got = scripts(words);
        assert_eq!(got.len(), 1, "{words:?} carries {got:?}");
        assert_eq!(got[0].runs, runs, "{words:?}");
        got[0].script.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn carried_scripts_run_as_root_only_when_the_account_switched_to_is_root() {
        let words = |line: &str| line.split(' ').map(String::from).collect::<Vec<_>>();
        for root in [
            "su -c id",
            "su - root -c id",
            "runuser -c id",
            "machinectl shell",
            "machinectl shell root@.host /bin/id",
            "setuidgid root id",
            "s6-setuidgid 0 id",
            "chpst -u root id",
            "chpst -u :0 id",
            "chpst -uroot id",
            "chpst -vu root id",
            "gosu root id",
            "setpriv --reuid=0 --regid=0 --init-groups id",
            "systemd-run -t id",
            "sudo-rs id",
        ] {
            assert!(runs_as_root(&words(root)), "{root}");
        }
        for other in [
            "su bob -c id",
            "su - postgres -c id",
            "runuser -l dev -c id",
            "machinectl shell bob@.host",
            "machinectl --uid=bob shell",
            "setuidgid app id",
            "chpst -u www-data id",
            "sg docker id",
            "sg root id",
            "chpst -U root id",
            "runuser -u postgres -- psql",
            "machinectl -M box shell",
            "machinectl shell app@",
            "systemd-run --user id",
            "systemd-run --uid=bob id",
            "machinectl list",
            "env id",
        ] {
            assert!(!runs_as_root(&words(other)), "{other}");
        }
    }

    #[test]
    fn plain_commands_carry_nothing() {
        for words in [
            &["ls", "-la"][..],
            &["rm", "-rf", "build"],
            &["git", "status"],
            &["docker", "run", "img", "rm", "-rf", "/"],
            &["python3", "x.py"],
            &["sh", "x.sh"],
        ] {
            assert!(scripts(words).is_empty(), "{words:?}");
        }
    }

    #[test]
    fn a_script_that_is_one_substitution_carries_the_substitutions_command() {
        assert_eq!(script(&["eval", "$(ssh-agent -s)"], Runs::ThisShell), "ssh-agent -s");
        assert_eq!(script(&["sh", "-c", "`cat x`"], Runs::Child), "cat x");
        assert_eq!(script(&["sh", "-c", "$(rm -rf ~)"], Runs::Child), "rm -rf ~");
        assert_eq!(script(&["eval", "$(a) b"], Runs::ThisShell), "$(a) b");
        // Only starting and ending like a substitution is not being one.
        for (words, inside) in [
            (["sh", "-c", "$(:); rm -rf ~; $(:)"], "$(:); rm -rf ~; $(:)"),
            (["sh", "-c", "`:`; rm -rf ~; `:`"], "`:`; rm -rf ~; `:`"),
            (["sh", "-c", "$(a) && $(b)"], "$(a) && $(b)"),
        ] {
            assert_eq!(script(&words, Runs::Child), inside, "{words:?}");
        }
    }

    #[test]
    fn carried_scripts_come_in_the_walker_order() {
        // A variable naming a command first, then the command's own script.
        let mut cmd = testing::command(&["sh", "-c", "rm -rf /"]);
        cmd.assignments = vec!["PAGER=less".into()];
        let got: Vec<String> = carried(&cmd, &WrittenFiles::default())
            .into_iter()
            .map(|c| c.script)
            .collect();
        assert_eq!(got, ["less", "rm -rf /"]);
    }

    #[test]
    fn shells_are_known_by_name() {
        for sh in ["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "fish", "rbash"] {
            assert!(is_shell(sh), "{sh}");
        }
        assert!(!is_shell("python") && !is_shell("/bin/sh"));
    }
}

//! Wrappers: command words that run the command after them as it is, with some setting
//! changed — privilege (`sudo`, `doas`, `pkexec`, `runuser -u`), the account (`setuidgid`,
//! `gosu`, `su-exec`, `chpst -u`, `setpriv`, `sg GROUP`), the personality (`setarch`,
//! `linux32`), environment (`env A=1`, `env -S 'cmd args'`), priority and scheduling (`nice`, `ionice`, `chrt`, `taskset`, `timeout`,
//! `flock`), tracing and timing (`time`, `strace`, `ltrace`), sessions (`setsid`,
//! `nohup`, `screen -dm`, `systemd-run`), proxies (`torsocks`, `proxychains`), multi-call
//! binaries (`busybox`, `toybox`), shell keywords (`if`, `then`, `!`, ...), and `xargs` /
//! `parallel`, which add arguments read from stdin (their options are [`super::xargs`]'s).
//! Unwrapping removes them, so the rules see the real command word where the wrapper was, in
//! its place in the pipeline. A SysV init script by its path is read as `service NAME`.
//!
//! A root shell (`sudo -s`, `sudo -i`, `pkexec bash`) is not a wrapped command and is kept
//! whole: the privilege rule judges it, and what it reads on stdin is a script
//! ([`super::scripts_fed_on_stdin`]). `runuser -c SCRIPT` carries a script instead
//! ([`super::carried`]).

use super::{is_shell, Carried};
use crate::guard::{basename, is_assignment, options};

/// Python modules that are the package tools of the same name (`python3 -m pip` is `pip`).
const PYTHON_MODULE_PROGRAMS: &[&str] = &["pip", "pip3", "pipx", "poetry", "pdm", "uv", "twine", "conda"];

/// `python3 -m pip ..`, `python -I -m twine ..`: where the module word stands, and the program
/// it is.
fn python_module_program(argv: &[String]) -> Option<(usize, &'static str)> {
    let (at, module) = super::python_module(argv)?;
    let program = PYTHON_MODULE_PROGRAMS.iter().find(|p| **p == module)?;
    Some((at, program))
}

/// Removes leading assignments, shell keywords and wrappers until the real command word.
/// Returns true when `xargs` was unwrapped (more arguments come from stdin at run time).
pub fn unwrap_command(argv: &mut Vec<String>) -> bool {
    unwrap_command_keeping(argv, &mut None)
}

/// [`unwrap_command`], which also hands back the argv as it was (in `original`) when it
/// changed it, and leaves `original` alone when it did not: most commands have no wrapper,
/// and their words are not copied.
pub fn unwrap_command_keeping(argv: &mut Vec<String>, original: &mut Option<Vec<String>>) -> bool {
    let mut xargs = false;
    // Most passes take at least one word off; some swap a program's alias for its words
    // (`rimraf` → `rm -rf`) or split `env -S '..'` into words. As many passes as the words
    // given, and a few more: a fixed 32 let a stack of 33 wrappers hide what they ran. (Words
    // added by `env -S` are unwrapped when that line is read on its own.)
    for _ in 0..argv.len() + 8 {
        let Some(first) = argv.first().cloned() else {
            return xargs;
        };
        let first = first.as_str();
        // `/etc/init.d/ssh stop`: a SysV init script is its service, handled as `service ssh
        // stop` is.
        if let Some(service) = init_script(first) {
            keep(original, argv);
            argv.splice(..1, ["service".to_string(), service]);
            return xargs;
        }
        // `rimraf x`: a program that is another program under a package name (`rm -rf x`).
        if let Some((_, words)) = super::table::KIN.iter().find(|(n, _)| *n == basename(first)) {
            keep(original, argv);
            argv.splice(..1, words.iter().map(|w| w.to_string()));
            continue;
        }
        // `python3 -m pip install ..`: a module that is a command-line program of its own is
        // that program, with the words after it.
        if let Some((at, program)) = python_module_program(argv) {
            keep(original, argv);
            argv.splice(..=at, [program.to_string()]);
            continue;
        }
        let skip = if is_assignment(first) {
            1
        } else {
            match basename(first) {
                "!" | "{" | "}" | "then" | "do" | "else" | "elif" | "if" | "while" | "until" | "nohup" | "builtin" => 1,
                // `coproc NAME { cmd; }`: bash names the coprocess only before a compound
                // command, which the parser leaves as words here; the command runs as given.
                "coproc" if argv.get(2).is_some_and(|w| w == "{" || w == "(") => 2,
                "coproc" => 1,
                // `/usr/bin/time -v -o FILE cmd`, `time -p cmd`.
                "time" => skip_options(argv, &["-o", "-f", "--output", "--format"]),
                // Tracers, profilers and power/priority wrappers run their command as given.
                "strace" | "ltrace" => skip_options(
                    argv,
                    &[
                        "-o",
                        "-e",
                        "-p",
                        "-s",
                        "-u",
                        "-E",
                        "-a",
                        "-b",
                        "-I",
                        "-O",
                        "-P",
                        "-X",
                        "-S",
                        "-U",
                        "--output",
                        "--attach",
                        "--user",
                        "--env",
                        "--string-limit",
                        "--trace",
                        "--signal",
                    ],
                ),
                "caffeinate" => skip_options(argv, &["-t", "-w"]),
                // `systemd-run --on-calendar=.. cmd`: a timer, not a wrapped command; kept
                // whole so its spec judges the schedule.
                "systemd-run"
                    if argv.iter().any(|a| {
                        crate::guard::effects::TIMER_OPTIONS
                            .iter()
                            .any(|o| a.strip_prefix(o).is_some_and(|r| r.is_empty() || r.starts_with('=')))
                    }) =>
                {
                    return xargs
                }
                "systemd-run" => {
                    let i = skip_options(argv, SYSTEMD_RUN_VALUE_OPTIONS);
                    // `systemd-run --shell`: an interactive shell in a service.
                    let shell_flag = |a: &String| {
                        a == "--shell"
                            || (a.starts_with('-')
                                && !a.starts_with("--")
                                && a[1..].chars().take_while(|c| "StPqGrd".contains(*c)).any(|c| c == 'S'))
                    };
                    if i >= argv.len() && argv.iter().any(shell_flag) {
                        keep(original, argv);
                        argv.splice(.., ["sh".to_string()]);
                        continue;
                    }
                    i
                }
                // `screen -dmS NAME cmd args`: a detached session running the command.
                "screen" => {
                    // Bundled flags end with the one taking a value (`-dmS NAME`).
                    let mut i = 1;
                    while let Some(a) = argv.get(i).filter(|a| a.starts_with('-') && a.len() > 1) {
                        // `-L FILE` (older screens name the log file there).
                        let log_file = a == "-L" && argv.get(i + 1).is_some_and(|f| f.contains('/'));
                        let takes =
                            a == "-Logfile" || log_file || a.ends_with(['S', 'c', 'e', 'h', 'p', 't', 'T', 's']);
                        i += if takes { 2 } else { 1 };
                    }
                    i
                }
                // `runuser -u root -- cmd` (`runuser -c SCRIPT` is a nested script; a `-c` after
                // the command is the command's own: `runuser -u postgres -- psql -c ..`).
                // `runuser -u USER [--] CMD ARGS` runs a command; without `-u` it is su's shell
                // form (`runuser -l dev -c 'cmd'`), a carrier kept whole (see `super::carried`).
                "runuser" => {
                    let i = skip_options(argv, RUNUSER_OPTIONS);
                    let command_form = argv[1..i]
                        .iter()
                        .any(|a| a == "-u" || a == "--user" || a.starts_with("--user="));
                    let script = argv[1..i]
                        .iter()
                        .any(|a| a == "-c" || a == "--command" || a.starts_with("--command="));
                    if !command_form || script {
                        return xargs;
                    }
                    i
                }
                // `run0` is systemd's sudo.
                "sudo" | "doas" | "pkexec" | "run0" | "sudo-rs" => {
                    let i = skip_options(argv, ROOT_OPTIONS);
                    // `sudo -s`, `sudo -i`, `pkexec bash`: a root shell, not a wrapped command;
                    // kept whole so the privilege rule sees it (and what it reads on stdin).
                    let bare_shell = argv.len() == i + 1 && is_shell(basename(&argv[i]));
                    if i >= argv.len() || bare_shell {
                        return xargs;
                    }
                    // `sudo -e FILE`, `sudo --edit FILE`: sudoedit, an editor run on FILE as root.
                    if argv[1..i].iter().any(|a| a == "-e" || a == "--edit") {
                        argv.splice(..i, ["sudoedit".to_string()]);
                        return xargs;
                    }
                    i
                }
                // `busybox rm -rf /`: the applet is the command.
                "busybox" | "toybox" => skip_options(argv, &[]),
                "env" => {
                    // `env -S 'rm -rf /'`, `env -S '-C DIR' git ..`: the string is split into
                    // words that stand where it stood, env's own options and assignments among
                    // them, and env is read again.
                    let own = argv.iter().skip(1).take_while(|a| a.starts_with('-')).count();
                    // `--split-string=VALUE` / `-SVALUE`: the value is attached.
                    if let Some(k) = argv[..=own.min(argv.len() - 1)].iter().position(|a| {
                        a.starts_with("--split-string=") || (a.starts_with("-S") && a.len() > 2 && !a.starts_with("--"))
                    }) {
                        let value = argv[k]
                            .strip_prefix("--split-string=")
                            .unwrap_or_else(|| &argv[k][2..])
                            .to_string();
                        keep(original, argv);
                        let rest: Vec<String> = argv.drain(k + 1..).collect();
                        *argv = split_string_in_place(argv, k, &value, rest);
                        continue;
                    }
                    if let Some(k) = argv[..=own.min(argv.len() - 1)]
                        .iter()
                        .position(|a| a == "-S" || a == "--split-string")
                    {
                        if let Some(value) = argv.get(k + 1).cloned() {
                            keep(original, argv);
                            let rest: Vec<String> = argv.drain(k + 2..).collect();
                            *argv = split_string_in_place(argv, k, &value, rest);
                            continue;
                        }
                    }
                    let mut i = skip_options(argv, &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"]);
                    while argv.get(i).is_some_and(|w| is_assignment(w)) {
                        i += 1;
                    }
                    i
                }
                "nice" | "ionice" => skip_options(argv, &["-n", "-c", "-p", "--adjustment"]),
                "setsid" | "unbuffer" | "torsocks" | "proxychains" | "proxychains4" => skip_options(argv, &[]),
                // `taskset -c LIST cmd`: the list is the option's value, no mask follows.
                "taskset"
                    if argv
                        .iter()
                        .skip(1)
                        .take_while(|a| a.starts_with('-'))
                        .any(|a| a == "-c" || a == "--cpu-list") =>
                {
                    skip_options(argv, &["-c", "--cpu-list"])
                }
                // `flock -c 'cmd' FILE` carries a command line (`super::table`).
                "flock" if argv.iter().any(|a| a == "-c" || a == "--command") => return xargs,
                // s6's `s6-applyuidgid -u UID -g GID cmd`: the account in options.
                "s6-applyuidgid" => skip_options(argv, &["-u", "-g", "-G"]),
                // `sg GROUP cmd args`: the words joined, run by `/bin/sh -c`; plain words are the
                // command where `sg` stands (`curl .. | sg docker sh`). `sg GROUP -c 'a; b'` or a
                // word with blanks is a command line, carried (`super::shells::sg`); `sg GROUP`
                // alone, a shell. ast-grep's `sg` (`sg run`, `sg -p ..`) runs nothing.
                "sg" => {
                    let at = if argv.get(1).is_some_and(|a| a == "-") { 2 } else { 1 };
                    let Some(group) = argv.get(at) else {
                        return xargs;
                    };
                    if group.starts_with('-') || super::shells::is_ast_grep_subcommand(group) {
                        return xargs;
                    }
                    let rest = &argv[at + 1..];
                    if rest.is_empty() {
                        keep(original, argv);
                        argv.splice(.., ["sh".to_string()]);
                        continue;
                    }
                    let plain = |w: &String| {
                        !w.is_empty()
                            && !w.contains(|c: char| c.is_whitespace() || "|&;<>()$`\\\"'*?[]{}~#".contains(c))
                    };
                    if rest[0] == "-c" || !rest.iter().all(plain) {
                        return xargs;
                    }
                    at + 1
                }
                // A command run as another account: daemontools', s6's, `gosu` and `su-exec` (an
                // account, then the command), runit's `chpst -u USER`, util-linux's `setpriv
                // --reuid=..`; whether the account is root is `super::runs_as_root`'s call.
                "setuidgid" | "envuidgid" | "s6-setuidgid" | "s6-envuidgid" | "gosu" | "su-exec" => {
                    (skip_options(argv, &[]) + 1).min(argv.len())
                }
                "chpst" => skip_options(argv, CHPST_VALUE_OPTIONS),
                "setpriv" => skip_options(argv, SETPRIV_VALUE_OPTIONS),
                // `setarch [ARCH] [FLAGS] [cmd]`, `linux32 [FLAGS] [cmd]`: another personality,
                // the same command; without one, `/bin/sh`.
                "setarch" | "linux32" | "linux64" | "uname26" | "x86_64" | "i386" => {
                    let mut i = skip_options(argv, &[]);
                    if basename(first) == "setarch" && argv.get(i).is_some_and(|a| is_architecture(a)) {
                        i += 1;
                        while argv.get(i).is_some_and(|a| a.starts_with('-') && a.len() > 1) {
                            i += 1;
                        }
                    }
                    if i >= argv.len() {
                        keep(original, argv);
                        argv.splice(.., ["sh".to_string()]);
                        continue;
                    }
                    i
                }
                "flock" | "taskset" | "chrt" => {
                    // `flock FILE cmd`, `taskset MASK cmd`, `chrt PRIO cmd`: one value first.
                    let i = skip_options(argv, &["-w", "-E", "-c"]);
                    (i + 1).min(argv.len())
                }
                "parallel" => {
                    // `parallel cmd ::: a b` takes its arguments from the line, not stdin: it is
                    // kept whole, and the command lines it builds from them are carried (see
                    // `super::xargs::parallel_arguments`); so are `parallel ::: 'rm -rf /'` and
                    // `echo .. | parallel`, where each input is a command line of its own, and
                    // `parallel --dry-run`, which runs nothing.
                    let marks = argv
                        .iter()
                        .any(|a| matches!(a.as_str(), ":::" | "::::" | ":::+" | "::::+"));
                    let dry = argv.iter().any(|a| a == "--dry-run" || a == "--dryrun");
                    xargs = !marks && !dry;
                    let i = super::xargs::template_start(argv);
                    if marks || dry || argv.get(i).is_none() {
                        return xargs;
                    }
                    i
                }
                // `command -v git`, `command -pV -- git reset --hard`: describes the command
                // word and runs nothing.
                "command"
                    if argv[1..]
                        .iter()
                        .take_while(|a| a.starts_with('-') && *a != "--")
                        .any(|a| !a.starts_with("--") && a.contains(['v', 'V'])) =>
                {
                    return xargs
                }
                "command" | "exec" => skip_options(argv, &["-a"]),
                "stdbuf" => skip_options(argv, &["-i", "-o", "-e"]),
                "xargs" => {
                    xargs = true;
                    super::xargs::template_start(argv)
                }
                "timeout" => {
                    let i = skip_options(argv, &["-s", "-k", "--signal", "--kill-after"]);
                    // The duration.
                    if i < argv.len() {
                        i + 1
                    } else {
                        i
                    }
                }
                _ => return xargs,
            }
        };
        let skip = skip.min(argv.len());
        // A wrapper with nothing after it is the command itself (`env`, `time`).
        if skip == 0 || (skip >= argv.len() && !is_assignment(first)) {
            return xargs;
        }
        keep(original, argv);
        argv.drain(..skip);
    }
    xargs
}

/// The service a SysV init script's path names (`/etc/init.d/ssh`, `/etc/rc.d/init.d/sshd`,
/// BSD's `/etc/rc.d/sshd`, `/usr/local/etc/rc.d/nginx`, OpenRC's `/etc/runlevels/boot/x`).
fn init_script(word: &str) -> Option<String> {
    if !word.starts_with('/') || !word.contains("rc") && !word.contains("init.d") && !word.contains("runlevels") {
        return None;
    }
    // `/etc/init.d//iptables`, `/etc/../etc/init.d/iptables`: the path as it resolves.
    let resolved = crate::guard::normalize(std::path::Path::new(word));
    let path = resolved.to_str()?;
    let openrc_runlevel = || {
        path.strip_prefix("/etc/runlevels/")?
            .split_once('/')
            .map(|(_, name)| name)
    };
    // `/etc/rc0.d/K01halt`: a run level's link to the script, by its order and its name.
    let sysv_link = || {
        let rest = path.strip_prefix("/etc/rc")?;
        let (level, link) = rest.split_once(".d/")?;
        (level.len() == 1).then_some(())?;
        let name = link
            .strip_prefix(['K', 'S'])?
            .trim_start_matches(|c: char| c.is_ascii_digit());
        Some(name)
    };
    [
        "/etc/init.d/",
        "/etc/rc.d/init.d/",
        "/etc/rc.d/",
        "/usr/local/etc/rc.d/",
    ]
    .iter()
    .find_map(|dir| path.strip_prefix(dir))
    .or_else(openrc_runlevel)
    .or_else(sysv_link)
    // A literal name: `/etc/init.d/$(printf iptables)` is computed, and judged so.
    .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c)))
    .map(str::to_string)
}

/// Wrappers that move the command they run to another directory, with the options that say
/// where.
const CHDIR_OPTIONS: &[(&str, &[&str])] = &[
    ("env", &["-C", "--chdir"]),
    ("sudo", &["-D", "--chdir"]),
    ("run0", &["-D", "--chdir"]),
    ("systemd-run", &["-D", "--working-directory"]),
    ("nsenter", &["-w", "--wd"]),
];

/// The directory the wrappers in `words` (the words unwrapped in front of a command) start it
/// in: `env -C / rm -rf home/dev` runs `rm` in `/`, so its relative paths resolve there. The
/// last such option wins; None when no wrapper moves it.
pub fn chdir(words: &[String]) -> Option<&str> {
    let mut options: &[&str] = &[];
    let mut dir = None;
    for (i, w) in words.iter().enumerate() {
        if let Some((_, opts)) = CHDIR_OPTIONS.iter().find(|(n, _)| *n == basename(w)) {
            options = opts;
            continue;
        }
        if options.contains(&w.as_str()) {
            dir = words.get(i + 1).map(String::as_str).or(dir);
        } else if let Some((_, v)) = w
            .split_once('=')
            .filter(|(o, _)| o.starts_with("--") && options.contains(o))
        {
            dir = Some(v);
        } else if let Some(b) = options::bundle(w, |c| options::listed(options, c)).filter(|b| b.value_letter.is_some())
        {
            dir = b.glued.or_else(|| words.get(i + 1).map(String::as_str)).or(dir);
        }
    }
    dir
}

/// Options of `systemd-run` that take a value.
const SYSTEMD_RUN_VALUE_OPTIONS: &[&str] = &[
    "-p",
    "--property",
    "-u",
    "--unit",
    "-E",
    "--setenv",
    "--slice",
    "-M",
    "--machine",
    "-H",
    "--host",
    "--description",
    "--uid",
    "--gid",
    "--nice",
    "-D",
    "--working-directory",
    "--on-active",
    "--on-calendar",
];

/// Options of runit's `chpst` that take a value.
const CHPST_VALUE_OPTIONS: &[&str] = &[
    "-u", "-U", "-b", "-e", "-/", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c", "-r", "-t",
];

/// Options of util-linux's `setpriv` that take a value written apart (`--reuid 0`).
const SETPRIV_VALUE_OPTIONS: &[&str] = &[
    "--ruid",
    "--euid",
    "--reuid",
    "--rgid",
    "--egid",
    "--regid",
    "--groups",
    "--inh-caps",
    "--ambient-caps",
    "--bounding-set",
    "--securebits",
    "--pdeathsig",
    "--selinux-label",
    "--apparmor-profile",
    "--landlock-access",
    "--landlock-rule",
];

/// An architecture `setarch` takes (`x86_64`, `i686`, `aarch64`, `linux32`), or one computed
/// when it runs (`$(arch)`, `` `uname -m` ``).
fn is_architecture(word: &str) -> bool {
    const FAMILIES: &[&str] = &[
        "x86",
        "i386",
        "i486",
        "i586",
        "i686",
        "amd64",
        "arm",
        "aarch64",
        "ppc",
        "powerpc",
        "s390",
        "mips",
        "sparc",
        "riscv",
        "alpha",
        "ia64",
        "parisc",
        "m68k",
        "loongarch",
        "linux32",
        "linux64",
        "uname26",
    ];
    word.starts_with("$(")
        || word.starts_with('`')
        || word.starts_with('$')
        || FAMILIES.iter().any(|f| word.starts_with(f))
}

/// Options of `runuser` that take a value.
const RUNUSER_OPTIONS: &[&str] = &[
    "-u",
    "-g",
    "-G",
    "--user",
    "--group",
    "--supp-group",
    "-s",
    "--shell",
    "-w",
    "--whitelist-environment",
];

/// Options of the root wrappers (`sudo`, `doas`, `pkexec`, `run0`) that take a value.
const ROOT_OPTIONS: &[&str] = &[
    "-R",
    "--chroot",
    "-u",
    "-g",
    "-C",
    "-D",
    "-h",
    "-p",
    "-r",
    "-t",
    "-U",
    "-T",
    "--user",
    "--group",
    "--prompt",
    "--chdir",
    "--setenv",
    "--nice",
    "--property",
    "--description",
    "--slice",
    "--unit",
    "--machine",
    "--background",
];

/// The account a root wrapper (`sudo`, `doas`, `run0`, `pkexec`, `sudo-rs`) is told to run
/// its command as, read from the wrapper's own options only: `sudo -u postgres psql`, `sudo
/// -iu app`, `doas -u app`, `run0 --user=app`, `pkexec --user app`. None when it names none
/// (root, the default); the words after the wrapper's options are the command's (`sudo env -u
/// X sh` names no account).
pub(super) fn root_wrapper_account(argv: &[String]) -> Option<&str> {
    let mut account = None;
    let mut i = 1;
    // The wrapper's options, each value taken with its option (`sudo -p -u -s` prompts with
    // `-u`): the last `-u` wins.
    while let Some(a) = argv.get(i).filter(|a| a.starts_with('-') && a.len() > 1 && *a != "--") {
        if let Some(long) = a.strip_prefix("--") {
            match long.split_once('=') {
                Some(("user", v)) => account = Some(v),
                Some(_) => {}
                None if long == "user" => account = argv.get(i + 1).map(String::as_str),
                None => {}
            }
            i += if long.contains('=') || !ROOT_OPTIONS.contains(&a.as_str()) {
                1
            } else {
                2
            };
            continue;
        }
        // A bundle ends at the first letter that takes a value: glued to it, or the next word.
        let bundle = &a[1..];
        if let Some((k, letter)) = bundle.char_indices().find(|(_, c)| ROOT_VALUE_LETTERS.contains(*c)) {
            let glued = &bundle[k + letter.len_utf8()..];
            let value = if glued.is_empty() {
                i += 1;
                argv.get(i).map(String::as_str)
            } else {
                Some(glued)
            };
            if letter == 'u' {
                account = value;
            }
        }
        i += 1;
    }
    account
}

/// The one-letter options of `sudo`, `doas` and `run0` that take a value (see
/// [`ROOT_OPTIONS`]): they end a bundle (`-iu app`).
const ROOT_VALUE_LETTERS: &str = "ugCDhprtTUR";

/// Where a wrapper sends its own output (see [`wrapper_outputs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WrapperOutput {
    /// A file it writes, whatever the wrapped command is: a write of the command as a redirect
    /// is (`strace -o ~/.bashrc ls` writes `~/.bashrc`).
    File(String),
    /// A command line it runs through the shell and pipes its output into: strace's `-o
    /// '|cmd'` and `-o '!cmd'` (`strace -o '|sh -c ..' ls` runs `sh -c ..`).
    Command(Carried),
}

/// Where the wrappers among `words` (the words [`unwrap_command`] removed) send their own
/// output: `strace -o F`, `ltrace -o F`, `time -o F`, `screen -L F` / `-Logfile F`,
/// `valgrind --log-file=F`, and strace's piped forms `-o '|cmd'`, `-o '!cmd'`.
pub(crate) fn wrapper_outputs(words: &[String]) -> Vec<WrapperOutput> {
    const WRAPPERS: &[&str] = &["strace", "ltrace", "time", "screen", "valgrind"];
    let mut out = Vec::new();
    let mut wrapper = "";
    for (i, w) in words.iter().enumerate() {
        if !w.starts_with('-') {
            // A wrapper's name starts its words; other words are option values or other
            // wrappers' (`strace -e trace=open -o F`).
            if WRAPPERS.contains(&basename(w)) {
                wrapper = basename(w);
            }
            continue;
        }
        let options: &[&str] = match wrapper {
            "strace" | "ltrace" | "time" => &["-o", "--output"],
            "screen" => &["-L", "-Logfile"],
            "valgrind" => &["--log-file", "--xml-file", "--callgrind-out-file", "--massif-out-file"],
            _ => continue,
        };
        let next = || words.get(i + 1).map(String::as_str);
        let value = match w.split_once('=') {
            Some((o, v)) if options.contains(&o) => Some(v),
            None if options.contains(&w.as_str()) => next(),
            // `-o/etc/x` glued, `-fo F` bundled (strace, ltrace, time: `o` takes the value).
            None if wrapper != "screen" && !w.starts_with("--") => match w[1..].find('o') {
                Some(k) if w[1..1 + k].bytes().all(|b| b.is_ascii_alphabetic()) => {
                    let rest = &w[2 + k..];
                    if rest.is_empty() {
                        next()
                    } else {
                        Some(rest)
                    }
                }
                _ => None,
            },
            _ => None,
        };
        // `screen -L` alone turns logging on; a path after it is where (older spelling).
        let Some(value) = value.filter(|f| wrapper != "screen" || w == "-Logfile" || f.contains('/')) else {
            continue;
        };
        let piped = value.strip_prefix(['|', '!']).filter(|_| wrapper == "strace");
        out.push(match piped {
            Some(line) => WrapperOutput::Command(Carried::child(line.trim())),
            None => WrapperOutput::File(value.to_string()),
        });
    }
    out
}

fn keep(original: &mut Option<Vec<String>>, argv: &[String]) {
    if original.is_none() {
        *original = Some(argv.to_vec());
    }
}

/// Index of the first word after the wrapper word and its options; `with_value` lists options
/// that take the next word as their value.
fn skip_options(argv: &[String], with_value: &[&str]) -> usize {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        // `-n10`/`--signal=KILL` carry their value; `-n 10` and `-Eu root` (a bundle ending in
        // a letter that takes a value) take the next word.
        let bundled = || options::bundle(a, |c| options::listed(with_value, c)).is_some_and(|b| b.takes_next());
        if with_value.contains(&a) || bundled() {
            i += 2;
        } else {
            i += 1;
        }
    }
    // `nice -10 cmd` style numeric options are already skipped above.
    i
}

/// `env`'s words with its split string (the option at `k`, its value `value`) replaced by the
/// words the string splits into, followed by `rest`: `env -S '-C /d' git reset` is `env -C /d
/// git reset`.
fn split_string_in_place(argv: &[String], k: usize, value: &str, rest: Vec<String>) -> Vec<String> {
    let mut words: Vec<String> = argv[..k].to_vec();
    words.extend(env_split(value));
    words.extend(rest);
    words
}

/// The words `env -S` splits its string into: at blanks, with single quotes (literal), double
/// quotes and backslashes (escaping the next character) read as env reads them; a `#` that
/// starts a word ends the string.
fn env_split(value: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => words.extend(word.take()),
            '#' if word.is_none() => break,
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                w.extend(chars.by_ref().take_while(|&q| q != '\''));
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        q => w.push(q),
                    }
                }
            }
            '\\' => match chars.next() {
                // `\_` separates words outside quotes; `\c` ends the string.
                Some('_') => words.extend(word.take()),
                Some('c') => break,
                next => word.get_or_insert_with(String::new).extend(next),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(String::from).collect()
    }

    fn unwrapped(line: &str) -> (Vec<String>, bool) {
        let mut argv: Vec<String> = line.split(' ').map(String::from).collect();
        let xargs = unwrap_command(&mut argv);
        (argv, xargs)
    }

    #[test]
    fn wrappers_are_removed_down_to_the_real_command() {
        for line in [
            "FOO=1 command exec setsid rm x",
            "sudo -u root env A=1 nice -n 5 nohup timeout -s KILL 10 rm x",
            "doas rm x",
            "time -p strace -o log -f rm x",
            "systemd-run --unit u -p X=1 rm x",
            "screen -dmS name rm x",
            "runuser -u root -- rm x",
            "busybox rm x",
            "ionice -c 3 chrt 10 taskset -c 0,1 flock /tmp/l stdbuf -o 0 rm x",
            "caffeinate -t 5 torsocks rm x",
            "if ! rm x",
            "env -- rm x",
        ] {
            assert_eq!(unwrapped(line), (vec!["rm".to_string(), "x".into()], false), "{line}");
        }
    }

    #[test]
    fn env_split_string_becomes_words() {
        let mut argv: Vec<String> = ["env", "-S", "rm -rf /"].map(String::from).to_vec();
        unwrap_command(&mut argv);
        assert_eq!(argv, ["rm", "-rf", "/"]);
        let mut argv: Vec<String> = ["env", "--split-string=rm -rf ~", "x"].map(String::from).to_vec();
        unwrap_command(&mut argv);
        assert_eq!(argv, ["rm", "-rf", "~", "x"]);
        // env's own options and assignments in the string; quotes inside it.
        let mut argv: Vec<String> = ["env", "-S", "-C /d A=1", "git", "reset"].map(String::from).to_vec();
        unwrap_command(&mut argv);
        assert_eq!(argv, ["git", "reset"]);
        let mut argv: Vec<String> = ["env", "-S", "sh -c \"cat '~/.ssh/id_rsa'\" # x"]
            .map(String::from)
            .to_vec();
        unwrap_command(&mut argv);
        assert_eq!(argv, ["sh", "-c", "cat '~/.ssh/id_rsa'"]);
        assert_eq!(env_split(r#"a\ b 'c d'"e\"f" # g"#), ["a b", "c de\"f"]);
        assert_eq!(env_split(r"rm\_-rf\_/etc\cx"), ["rm", "-rf", "/etc"]);
    }

    #[test]
    fn xargs_and_parallel_read_arguments_from_stdin() {
        assert_eq!(unwrapped("xargs -n 1 rm -rf"), (vec!["rm".into(), "-rf".into()], true));
        assert_eq!(unwrapped("parallel -j 4 rm"), (vec!["rm".into()], true));
        // Arguments after `:::` are on the line, not read from stdin: parallel builds the
        // command lines itself (a carrier, not a wrapper).
        assert_eq!(
            unwrapped("parallel -j 4 rm ::: a b"),
            (words("parallel -j 4 rm ::: a b"), false)
        );
        assert_eq!(unwrapped("xargs -J % -I{} cp"), (vec!["cp".into()], true));
    }

    #[test]
    fn root_shells_and_bare_wrappers_stay_whole() {
        for line in ["sudo -s", "sudo -i", "pkexec bash", "sudo", "env", "time", "timeout 5"] {
            let want: Vec<String> = line.split(' ').map(String::from).collect();
            assert_eq!(unwrapped(line), (want, false), "{line}");
        }
        // `runuser -c SCRIPT` is a carrier, not a wrapper.
        assert_eq!(unwrapped("runuser -c id u").0[0], "runuser");
    }
}

//! Programs that run a shell command given in an option, a setting, a variable or a file they
//! read: git (`-c core.sshCommand=..`, `config alias.x '!..'`, the `ext::` transport), tar
//! (`--checkpoint-action=exec=`), npm (`pkg set scripts.x=..`, a `package.json` written
//! earlier), make (a Makefile written earlier), editors and debuggers (`vim -c ':!..'`, `gdb -ex
//! 'shell ..'`, `expect -c 'spawn ..'`), GNU sed's `e CMD`, `find -exec`, Maven's `exec:exec`
//! (`-Dexec.executable=sh -Dexec.args=..`), and variables that name a command a program runs
//! (`GIT_SSH_COMMAND=..`, `PAGER=..`, `EDITOR=..`).

use super::text::WrittenFiles;
use super::Carried;
use crate::guard::shell::shell_quote;
use crate::guard::{basename, SimpleCommand};

/// Variables naming a command the program runs (`GIT_SSH_COMMAND='cmd' git fetch`,
/// `PAGER='cmd' git log`).
const RUN_VARS: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "LESSOPEN",
    "PROMPT_COMMAND",
    "FCEDIT",
    // The shell `script`, `screen`, `tmux`, editors' `:shell` and pagers' `!` start.
    "SHELL",
];

/// Whether `cmd` starts `$SHELL` for its user: a terminal multiplexer, an editor or pager with
/// a shell command, or a program the guard knows nothing of.
fn starts_users_shell(cmd: &SimpleCommand) -> bool {
    const STARTS_SHELL: &[&str] = &[
        "script",
        "screen",
        "tmux",
        "byobu",
        "vi",
        "vim",
        "nvim",
        "emacs",
        "nano",
        "less",
        "more",
        "man",
        "mc",
        "ranger",
        "nnn",
        "lf",
        "xterm",
        "su",
        "ssh-agent",
        "env",
    ];
    (!cmd.dynamic_name && STARTS_SHELL.contains(&cmd.name())) || crate::guard::effects::runs_unknown_program(cmd)
}

/// The commands named by the command's assignments (`GIT_SSH_COMMAND='..' git fetch`,
/// and any `*_COMMAND`, `*_CMD`, `*PAGER`, `*EDITOR`, `*ASKPASS`, `*BROWSER`, `*_PROGRAM`
/// variable: `RESTIC_PASSWORD_COMMAND=..`, `CRASHPAGER=..`, `BROWSER=.. xdg-open URL`); a `LESSOPEN='|cmd %s'` pipe mark is dropped.
pub(super) fn run_variables(cmd: &SimpleCommand) -> Vec<Carried> {
    let names_a_command = |n: &str| {
        RUN_VARS.contains(&n)
            || [
                "_COMMAND", "_CMD", "PAGER", "EDITOR", "_SHELL", "_HOOK", "ASKPASS", "BROWSER", "_PROGRAM",
            ]
            .iter()
            .any(|s| n.ends_with(s))
    };
    // `export PAGER='cmd'`, `declare -x ..`, `readonly ..`: the same variables, set for the
    // rest of this shell (a persistent shell's next action included).
    let declared = match cmd.name() {
        "export" | "declare" | "typeset" | "readonly" | "local" => &cmd.argv[1..],
        _ => &[][..],
    };
    let set: Vec<(&str, &str)> = cmd
        .assignments
        .iter()
        .chain(declared.iter().filter(|a| !a.starts_with('-')))
        .filter_map(|a| a.split_once('='))
        .collect();
    let mut out: Vec<Carried> = set
        .iter()
        // `SHELL=x` on a line of its own sets the variable for later programs; in front of a
        // program that starts a shell for its user (a terminal multiplexer, an editor, a
        // pager, one the guard does not know), that program starts it. Package managers and
        // other known programs do not.
        .filter(|(n, v)| {
            *n != "SHELL"
                || (starts_users_shell(cmd) && cmd.assignments.iter().any(|a| a.strip_prefix("SHELL=") == Some(v)))
        })
        .filter(|(n, v)| names_a_command(n) && !v.is_empty() && !super::only_starts_a_command(v))
        .map(|(_, v)| Carried::child(v.trim_start_matches('|')))
        .collect();
    // `BASH_ENV='$(cmd)'`, `PS4='$(cmd)'`: bash expands these values (the file every
    // non-interactive bash reads first, the trace prompt under `set -x`, the prompts): a
    // substitution in them runs each time.
    for (_, v) in set
        .iter()
        .filter(|(n, _)| matches!(*n, "BASH_ENV" | "ENV" | "PS0" | "PS1" | "PS2" | "PS4"))
    {
        if v.contains("$(") || v.contains('`') {
            out.push(Carried::child(format!(": {v}")));
        }
    }
    out.extend(git_config_variables(&set));
    out
}

/// `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='cmd'` and
/// `GIT_CONFIG_PARAMETERS="'core.pager=cmd'"`: settings given to every git run as `-c` gives
/// them, read the same way (see [`git_command_setting`]).
fn git_config_variables(set: &[(&str, &str)]) -> Vec<Carried> {
    let mut settings: Vec<String> = Vec::new();
    for (name, key) in set {
        let Some(n) = name.strip_prefix("GIT_CONFIG_KEY_") else {
            continue;
        };
        let value_name = format!("GIT_CONFIG_VALUE_{n}");
        if let Some((_, value)) = set.iter().find(|(k, _)| *k == value_name) {
            settings.push(format!("{key}={value}"));
        }
    }
    if let Some((_, params)) = set.iter().find(|(k, _)| *k == "GIT_CONFIG_PARAMETERS") {
        settings.extend(params.split("' '").map(|p| p.trim_matches(['\'', ' ']).to_string()));
    }
    settings
        .into_iter()
        .filter_map(|kv| git_command_setting(&["git".to_string(), "-c".to_string(), kv]))
        .map(Carried::child)
        .collect()
}

/// Options whose value is a command line the program runs, by their name: `--password-
/// command='..'`, `--conf-script='..'`, `--exec-hook=..`, `--pager='..'`. Only a value the
/// option is known to hold (`--name=VALUE`, or a separate value that reads as a command line:
/// it has a space) is taken.
pub(super) fn command_options(argv: &[String]) -> Vec<Carried> {
    const ENDINGS: &[&str] = &[
        "command", "cmd", "script", "exec", "hook", "program", "pager", "editor", "shell",
    ];
    // `usermod --shell=/bin/zsh`, `useradd --shell=..`: an account's login shell is recorded,
    // not started.
    let records_login_shell = argv
        .first()
        .is_some_and(|p| super::records_login_shell(crate::guard::basename(p)));
    let named = |o: &str| {
        let o = o.trim_start_matches('-').to_ascii_lowercase();
        o.len() > 2
            && ENDINGS.iter().any(|e| o.ends_with(e))
            && !o.ends_with("-path")
            && !o.starts_with("no-")
            && !(records_login_shell && o == "shell")
    };
    let mut out = Vec::new();
    for (i, a) in argv.iter().enumerate().skip(1) {
        if !a.starts_with("--") {
            continue;
        }
        match a.split_once('=') {
            Some((o, v)) if named(o) && !v.is_empty() => out.push(Carried::child(v)),
            None if named(a) => {
                if let Some(v) = argv.get(i + 1).filter(|v| v.contains(' ') && !v.starts_with('-')) {
                    out.push(Carried::child(v));
                }
            }
            _ => {}
        }
    }
    out
}

/// `git -c core.sshCommand=CMD ..`, `git config alias.x '!CMD'`, `git clone 'ext::sh -c cmd%
/// args'`: the command git runs.
pub(super) fn git(argv: &[String]) -> Option<Carried> {
    git_command_setting(argv)
        .or_else(|| git_alias_call(argv))
        .or_else(|| {
            // The ext transport runs a command (`% ` is a space); words split at unescaped spaces.
            let c = argv.iter().find_map(|a| a.strip_prefix("ext::"))?;
            let words: Vec<String> = c
                .replace("%%", "\u{1}")
                .replace("% ", "\u{0}")
                .split(' ')
                .filter(|w| !w.is_empty())
                .map(|w| shell_quote(&w.replace('\u{0}', " ").replace('\u{1}', "%")))
                .collect();
            Some(words.join(" "))
        })
        .map(Carried::child)
}

/// `git -c alias.wipe='stash clear' wipe`: an alias defined on the command line and called
/// at once is the git command it stands for (`git stash clear`), with the call's words after
/// it; `!` aliases are shell commands (see [`git_command_setting`]).
fn git_alias_call(argv: &[String]) -> Option<String> {
    let mut aliases: Vec<(&str, &str)> = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "-c" {
            let alias = argv.get(i + 1).and_then(|kv| kv.split_once('=')).and_then(|(k, v)| {
                let name = k.get(..6).filter(|p| p.eq_ignore_ascii_case("alias."))?;
                (!v.starts_with('!')).then_some((&k[name.len()..], v))
            });
            aliases.extend(alias);
            i += 2;
        } else if a.starts_with('-') {
            i += if matches!(a, "-C" | "--git-dir" | "--work-tree" | "--namespace") {
                2
            } else {
                1
            };
        } else {
            break;
        }
    }
    let called = argv.get(i)?;
    // An alias that calls itself first is not expanded again (git refuses it).
    let (_, value) = aliases
        .iter()
        .find(|(name, value)| name == called && value.split_whitespace().next() != Some(name))?;
    let mut words: Vec<String> = vec!["git".into()];
    words.extend(argv[1..i].iter().map(|w| shell_quote(w)));
    words.push(value.to_string());
    words.extend(argv[i + 1..].iter().map(|w| shell_quote(w)));
    Some(words.join(" "))
}

/// The shell command a git setting makes git run: `-c KEY=VALUE` or `config [--global] KEY
/// VALUE` where KEY runs a program (`core.sshCommand`, `core.pager`, `core.editor`,
/// `core.fsmonitor`, `diff.external`, ...) or is an alias starting with `!`.
fn git_command_setting(argv: &[String]) -> Option<String> {
    let script = |key: &str, value: &str| -> Option<String> {
        let key = key.to_ascii_lowercase();
        if key.starts_with("alias.") || key == "credential.helper" {
            return value.strip_prefix('!').map(String::from);
        }
        (key == "core.hookspath" || git_setting_runs_program(&key)).then(|| value.to_string())
    };
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "-c" {
            if let Some((k, v)) = argv.get(i + 1).and_then(|kv| kv.split_once('=')) {
                if let Some(s) = script(k, v) {
                    return Some(s);
                }
            }
            i += 2;
        } else if a == "config" {
            let rest: Vec<&String> = argv[i + 1..].iter().filter(|w| !w.starts_with('-')).collect();
            return match rest.as_slice() {
                [k, v, ..] => script(k, v),
                _ => None,
            };
        } else if a == "clone" {
            // `git clone --config core.fsmonitor=CMD URL`: set in the new repository, run by
            // the first command there.
            let rest = &argv[i + 1..];
            return rest.iter().enumerate().find_map(|(k, w)| {
                let kv = match w.as_str() {
                    "-c" | "--config" => rest.get(k + 1).map(String::as_str),
                    _ => w.strip_prefix("--config="),
                }?;
                let (key, value) = kv.split_once('=')?;
                script(key, value)
            });
        } else if a.starts_with('-') {
            i += if matches!(a, "-C" | "--git-dir" | "--work-tree" | "--namespace") {
                2
            } else {
                1
            };
        } else {
            return None;
        }
    }
    None
}

/// Git settings (keys in lower case) whose value is a command line git runs: the one list
/// both the carrier (`git -c KEY=CMD ..`, `git config KEY CMD`) and the rule on settings that
/// run a planted program (`rules::git`) read.
pub(crate) fn git_setting_runs_program(key: &str) -> bool {
    let ends = |suffixes: &[&str]| suffixes.iter().any(|x| key.ends_with(x));
    matches!(
        key,
        "core.fsmonitor"
            | "core.sshcommand"
            | "core.pager"
            | "core.editor"
            | "core.askpass"
            | "sequence.editor"
            | "diff.external"
            | "gpg.program"
            | "gpg.ssh.program"
            | "gpg.x509.program"
            | "uploadpack.packobjectshook"
            | "credential.helper"
    ) || key.starts_with("alias.")
        || key.starts_with("pager.")
        || (key.starts_with("filter.") && ends(&[".clean", ".smudge", ".process"]))
        || (key.starts_with("diff.") && ends(&[".textconv", ".command"]))
        || (key.starts_with("merge.") && key.ends_with(".driver"))
}

/// `tar --checkpoint-action=exec=CMD`, `--to-command=CMD`, `--use-compress-program=CMD`,
/// `-I CMD`.
pub(super) fn tar(argv: &[String]) -> Option<Carried> {
    argv.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--checkpoint-action=exec=")
            .or_else(|| a.strip_prefix("--to-command="))
            .or_else(|| a.strip_prefix("--use-compress-program="))
            .map(String::from)
            .or_else(|| (a == "-I").then(|| argv.get(i + 1).cloned()).flatten())
            .map(Carried::child)
    })
}

/// `tar -czf A --remove-files SRC..`, `zip -m A SRC..`, `rsync --remove-source-files SRC..
/// DEST`: archivers and copiers told to delete what they took move it into the archive or
/// the destination, and are read as that `mv`, so the rules judge where it goes (`tar -cf
/// /dev/null --remove-files ~` destroys the home; `zip -m notes.zip notes.txt` keeps the
/// text in the archive). A `tar -C DIR` before a source puts it under DIR. An archive written
/// to stdout, or a remote destination, is left to the other rules.
pub(super) fn removed_sources(argv: &[String]) -> Option<Carried> {
    let name = basename(argv.first()?);
    let args = &argv[1..];
    let (sources, destination): (Vec<String>, String) = match name {
        // GNU getopt takes any unambiguous prefix of a long option (`--remove-file`, `--rem`).
        "tar" | "gtar" | "bsdtar"
            if args
                .iter()
                .any(|a| a.len() >= 5 && "--remove-files".starts_with(a.as_str())) =>
        {
            let mut dir: Option<&str> = None;
            let mut archive: Option<&str> = None;
            let mut sources = Vec::new();
            let mut k = 0;
            while k < args.len() {
                let a = args[k].as_str();
                // A traditional first word of letters (`czf`) or a bundle (`-czf`): `f` and
                // `C` take the next words, in the order they appear.
                let letters = a
                    .strip_prefix('-')
                    .filter(|l| !l.starts_with('-'))
                    .or_else(|| (k == 0).then_some(a))
                    .filter(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphabetic()));
                if let Some(letters) = letters {
                    let mut next = k + 1;
                    for c in letters.chars() {
                        match c {
                            'C' => dir = args.get(next).map(String::as_str),
                            'f' => archive = args.get(next).map(String::as_str),
                            _ => {}
                        }
                        if matches!(c, 'f' | 'C' | 'T' | 'X' | 'b' | 'L' | 'N' | 'g' | 'H' | 'K' | 'V') {
                            next += 1;
                        }
                    }
                    k = next;
                    continue;
                }
                if let Some(d) = a.strip_prefix("--directory=") {
                    dir = Some(d);
                } else if let Some(f) = a.strip_prefix("--file=") {
                    archive = Some(f);
                } else if matches!(a, "--directory" | "--file") {
                    let value = args.get(k + 1).map(String::as_str);
                    if a == "--file" {
                        archive = value;
                    } else {
                        dir = value;
                    }
                    k += 1;
                } else if !a.starts_with('-') {
                    sources.push(match dir {
                        Some(d) => format!("{}/{a}", d.trim_end_matches('/')),
                        None => a.to_string(),
                    });
                } else if matches!(a, "--exclude" | "--files-from" | "--transform") {
                    k += 1;
                }
                k += 1;
            }
            (sources, archive?.to_string())
        }
        "zip"
            if args
                .iter()
                .any(|a| a == "--move" || (a.starts_with('-') && !a.starts_with("--") && a.contains('m'))) =>
        {
            let mut operands = args.iter().filter(|a| !a.starts_with('-'));
            let archive = operands.next()?.to_string();
            (operands.cloned().collect(), archive)
        }
        "rsync" if args.iter().any(|a| a == "--remove-source-files") => {
            let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
            let (destination, sources) = operands.split_last()?;
            (sources.iter().map(|s| s.to_string()).collect(), destination.to_string())
        }
        _ => return None,
    };
    let remote = |w: &str| w.contains(':') && !w.starts_with('/');
    if sources.is_empty() || destination == "-" || remote(&destination) || sources.iter().any(|s| remote(s)) {
        return None;
    }
    let quoted: Vec<String> = sources.iter().map(|s| shell_quote(s)).collect();
    Some(Carried::child(format!(
        "mv -- {} {}",
        quoted.join(" "),
        shell_quote(&destination)
    )))
}

/// `ansible HOSTS -m MODULE -a ARGS`: an ad-hoc task run on every host of the inventory. The
/// modules that run a command line (`shell`, `command`, `raw`) carry it; the modules that do
/// what one command does are read as that command (`file state=absent` is `rm -rf PATH`,
/// `user state=absent` is `userdel -r`, a package `state=absent` is its removal), so the same
/// rules judge them. Services stopped on the hosts are the effect table's (a remote stop).
/// `mvn exec:exec -Dexec.executable=sh -Dexec.args="-c '..'"`: the program and its arguments
/// Maven's exec plugin runs (its arguments split as a shell splits them).
pub(super) fn maven_exec(argv: &[String]) -> Option<Carried> {
    if !argv.iter().any(|a| a == "exec:exec" || a.ends_with(":exec")) {
        return None;
    }
    let property = |key: &str| {
        argv.iter().enumerate().find_map(|(i, a)| {
            if a == "-D" {
                argv.get(i + 1).and_then(|v| v.strip_prefix(key))
            } else {
                a.strip_prefix("-D").and_then(|d| d.strip_prefix(key))
            }
            .and_then(|v| v.strip_prefix('='))
        })
    };
    let program = property("exec.executable")?;
    let args = property("exec.args").unwrap_or("");
    Some(Carried::child(format!("{} {args}", shell_quote(program))))
}

pub(super) fn ansible(argv: &[String]) -> Option<Carried> {
    let value = |short: &str, long: &str| {
        argv.iter().enumerate().find_map(|(i, a)| {
            if a == short || a == long {
                argv.get(i + 1).map(String::as_str)
            } else {
                a.strip_prefix(long).and_then(|v| v.strip_prefix('='))
            }
        })
    };
    let module = value("-m", "--module-name")?;
    let module = module.rsplit('.').next().unwrap_or(module);
    let args = value("-a", "--args").unwrap_or("");
    let script = match module {
        "shell" | "command" | "raw" => args.to_string(),
        _ => ansible_module_as_command(module, &ansible_params(args))?,
    };
    Some(Carried::remote(script))
}

/// `key=value key2="a b"` parameters of an ad-hoc module.
fn ansible_params(args: &str) -> Vec<(String, String)> {
    super::xargs::split_items(args, None)
        .into_iter()
        .filter_map(|w| w.split_once('=').map(|(k, v)| (k.to_ascii_lowercase(), v.to_string())))
        .collect()
}

/// The one command a module's parameters amount to, when they amount to one.
fn ansible_module_as_command(module: &str, params: &[(String, String)]) -> Option<String> {
    let get = |k: &str| params.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    let state = get("state").unwrap_or("");
    // One shell word, whatever the value holds.
    let quoted = |v: &str| format!("'{}'", v.replace('\'', r"'\''"));
    match module {
        "file" if state == "absent" => {
            let path = get("path").or_else(|| get("dest")).or_else(|| get("name"))?;
            Some(format!("rm -rf {}", quoted(path)))
        }
        "user" if state == "absent" => Some(format!("userdel -r {}", quoted(get("name")?))),
        "apt" | "yum" | "dnf" | "package" | "pip" | "npm" if state == "absent" => {
            let manager = match module {
                "package" => "apt-get",
                "apt" => "apt-get",
                other => other,
            };
            Some(format!("{manager} remove {}", quoted(get("name")?)))
        }
        _ => None,
    }
}

/// `npm pkg set scripts.test="CMD"`: the package script npm runs next.
pub(super) fn npm_pkg_set(argv: &[String]) -> Option<Carried> {
    argv.windows(2)
        .position(|w| w[0] == "pkg" && w[1] == "set")
        .and_then(|k| {
            argv[k + 2..]
                .iter()
                .find_map(|a| a.strip_prefix("scripts.")?.split_once('='))
        })
        .map(|(_, v)| Carried::child(v))
}

/// `echo '{"scripts":{"postinstall":"CMD"}}' > package.json && npm install`: npm runs the
/// package's scripts.
pub(super) fn package_scripts(written: &WrittenFiles) -> Option<Carried> {
    let json: serde_json::Value = serde_json::from_str(written.text("package.json")?).ok()?;
    let scripts = json.get("scripts")?.as_object()?;
    let text: Vec<&str> = scripts.values().filter_map(|v| v.as_str()).collect();
    Some(Carried::child(text.join("\n")))
}

/// `make -f -`, `make --file=/dev/stdin`: make reads its makefile from stdin.
pub(super) fn reads_makefile_on_stdin(cmd: &SimpleCommand) -> bool {
    let stdin = |v: &str| matches!(v, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0");
    matches!(cmd.name(), "make" | "gmake")
        && cmd.argv.iter().enumerate().skip(1).any(|(i, a)| {
            (matches!(a.as_str(), "-f" | "--file" | "--makefile") && cmd.argv.get(i + 1).is_some_and(|v| stdin(v)))
                || a.strip_prefix("--file=")
                    .or_else(|| a.strip_prefix("--makefile="))
                    .or_else(|| a.strip_prefix("-f"))
                    .is_some_and(|v| !v.is_empty() && stdin(v))
        })
}

/// `printf 'all:\n\tCMD\n' > Makefile && make`: make runs the recipe lines.
pub(super) fn makefile_recipes(written: &WrittenFiles) -> Option<Carried> {
    let text = written.text("Makefile").or_else(|| written.text("makefile"))?;
    Some(Carried::child(recipes(text).join("\n")))
}

/// The recipes of makefile text as the shell gets them: the lines that start with a tab and
/// the commands after `target: prerequisites ;`, without their `@`/`-`/`+` marks, and with
/// make's references expanded the way make does before the shell runs them ([`make_expanded`]).
pub(super) fn recipes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let recipe = match line.strip_prefix('\t') {
            Some(r) => r,
            None => match line.split_once(';') {
                Some((rule, r)) if rule.contains(':') && !rule.contains(":=") => r,
                _ => continue,
            },
        };
        let recipe = recipe.trim().trim_start_matches(['@', '-', '+']);
        if !recipe.is_empty() {
            out.push(make_expanded(recipe));
        }
    }
    out
}

/// A recipe line with make's references replaced: `$$` is the shell's `$`, `$(NAME)` and
/// `${NAME}` the variable `$NAME` (make reads the environment, so `$(HOME)` is home), `$(shell
/// CMD)` the substitution `$(CMD)`, and other functions and automatic variables (`$@`, `$*`,
/// `$(wildcard ..)`) a plain word.
fn make_expanded(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' {
            let next = line[i..].find('$').map_or(line.len(), |p| i + p);
            out.push_str(&line[i..next]);
            i = next;
            continue;
        }
        match b.get(i + 1) {
            Some(b'$') => {
                out.push('$');
                i += 2;
            }
            Some(&open @ (b'(' | b'{')) => {
                let close = if open == b'(' { ')' } else { '}' };
                let body_start = i + 2;
                let end = matching(&line[body_start..], open as char, close).map_or(line.len(), |e| body_start + e);
                let body = &line[body_start..end.min(line.len())];
                if let Some(cmd) = body.strip_prefix("shell ") {
                    out.push_str(&format!("$({})", make_expanded(cmd)));
                } else if !body.is_empty() && body.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
                    out.push('$');
                    out.push_str(body);
                } else {
                    out.push_str("target");
                }
                i = end + 1;
            }
            Some(_) => {
                out.push_str("target");
                i += 2;
            }
            None => {
                out.push('$');
                i += 1;
            }
        }
    }
    out
}

/// The index in `text` of the `close` that ends a group whose `open` came just before it.
fn matching(text: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 1usize;
    for (at, c) in text.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(at);
            }
        }
    }
    None
}

/// `vim -c ':!cmd'`, `ex -sc '!cmd'` (options are canonical: `-sc` is `-s -c`), `vim
/// +'silent !cmd'`, `-c '%!cmd'`, `-c 'r !cmd'`: an editor running a shell command.
pub(super) fn vim(argv: &[String]) -> Option<Carried> {
    argv.iter().enumerate().find_map(|(i, a)| {
        let c = if a == "-c" || a == "--cmd" {
            argv.get(i + 1)?.as_str()
        } else {
            a.strip_prefix('+')?
        };
        ex_shell_command(c).map(Carried::child)
    })
}

/// The shell command of an ex command line that runs one: `!cmd`, with a leading `:`,
/// `silent`, a range (`%!cmd` filters the buffer through it) or `r`/`w` (`r !cmd`).
fn ex_shell_command(line: &str) -> Option<&str> {
    let mut c = line.trim_start_matches([':', ' ']);
    for quiet in ["silent!", "silent", "sil!", "sil"] {
        if let Some(rest) = c.strip_prefix(quiet).filter(|r| r.starts_with([' ', '!'])) {
            c = rest.trim_start();
            break;
        }
    }
    let c =
        c.trim_start_matches(|ch: char| ch.is_ascii_digit() || matches!(ch, '%' | ',' | '.' | '$' | '\'' | '<' | '>'));
    let c = ["read", "write", "r", "w"]
        .iter()
        .find_map(|v| c.strip_prefix(v).filter(|r| r.trim_start().starts_with('!')))
        .map_or(c, str::trim_start);
    c.strip_prefix('!').map(str::trim).filter(|c| !c.is_empty())
}

/// `expect -c 'spawn cmd args; ...'`: the spawned command.
pub(super) fn expect(argv: &[String]) -> Option<Carried> {
    argv.windows(2).find_map(|w| {
        let c = (w[0] == "-c").then_some(w[1].as_str())?;
        let spawn = c
            .split([';', '\n'])
            .find_map(|part| part.trim().strip_prefix("spawn "))?;
        Some(Carried::child(spawn))
    })
}

/// GNU sed's `e CMD` command runs CMD (`sed -n '1e rm -rf ~' f`).
pub(super) fn sed(argv: &[String]) -> Option<Carried> {
    let scripts: Vec<&String> = if argv.iter().any(|a| a == "-e" || a == "--expression") {
        argv.windows(2)
            .filter(|w| w[0] == "-e" || w[0] == "--expression")
            .map(|w| &w[1])
            .collect()
    } else {
        argv.iter().skip(1).find(|a| !a.starts_with('-')).into_iter().collect()
    };
    scripts.iter().flat_map(|s| s.split([';', '\n'])).find_map(|part| {
        let cmd = part
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '$' || c == ',');
        // A bare `e` runs each input line as a command: sed is then a shell reading its input
        // (`sudo sed e` is a root shell).
        if cmd.trim() == "e" {
            return Some(Carried::child("sh"));
        }
        cmd.strip_prefix("e ")
            .map(|c| c.trim())
            .filter(|c| !c.is_empty())
            .map(Carried::child)
    })
}

/// TeX run on inline code (`latex '\immediate\write18{cmd}'`, `pdflatex ... \openout\f=FILE
/// \immediate\write\f{TEXT}`): `\write18{CMD}` runs CMD in a shell (with shell escape on,
/// which the line can turn on itself), and a stream opened with `\openout` writes its text to
/// FILE, carried as the `printf` that would do the same.
pub(super) fn tex(argv: &[String]) -> Option<Carried> {
    let code: Vec<&String> = argv[1..].iter().filter(|a| a.contains('\\')).collect();
    if code.is_empty() {
        return None;
    }
    let mut script = Vec::new();
    for text in code {
        for (at, _) in text.match_indices("\\write18{") {
            if let Some(body) = braced(&text[at + "\\write18".len()..]) {
                script.push(body.to_string());
            }
        }
        // `\openout\NAME=FILE` ... `\write\NAME{TEXT}`.
        for (at, _) in text.match_indices("\\openout\\") {
            let rest = &text[at + "\\openout\\".len()..];
            let Some((name, after)) = rest.split_once('=') else {
                continue;
            };
            let file: String = after
                .trim_start()
                .chars()
                .take_while(|c| !c.is_whitespace() && !matches!(c, '\\' | '{' | '}'))
                .collect();
            if file.is_empty() || name.contains(char::is_whitespace) {
                continue;
            }
            let file = if file.contains('.') {
                file
            } else {
                format!("{file}.tex")
            };
            let written: Vec<&str> = text
                .match_indices(&format!("\\write\\{name}{{"))
                .filter_map(|(w, m)| braced(&text[w + m.len() - 1..]))
                .collect();
            script.push(format!(
                "printf '%s\\n' {} > {}",
                shell_quote(&written.join("\n")),
                shell_quote(&file)
            ));
        }
    }
    (!script.is_empty()).then(|| Carried::child(script.join("\n")))
}

/// The text inside the braces that open `text` (`{a{b}c}` → `a{b}c`), or None when they do
/// not close.
fn braced(text: &str) -> Option<&str> {
    let body = text.strip_prefix('{')?;
    let mut depth = 1usize;
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&body[..i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The commands a file finder runs on what it finds: `find .. -exec CMD ARGS ;` (also
/// `-execdir`, `-ok`, `-okdir`) and `fd .. -x CMD ARGS` (also `-X`, `--exec`, `--exec-batch`).
/// The placeholder (`{}`; fd's `{/}`, `{.}`, ..), or the end of the command when fd's has none,
/// stands for a file found: a file under the start path, named by the name test when there is
/// one (`find /etc/systemd/system -name '*.service' -exec rm {} +` runs `rm
/// /etc/systemd/system/*.service`), the start path itself when nothing narrows what is found
/// (`find ~ -maxdepth 0 -exec rm -rf {} ;` runs `rm -rf ~`). Nothing runs when find will not
/// start (an `-exec` without its `;` or `+`: the shell took an unquoted `;`), nor for `-ok`
/// with stdin closed (every question is answered no).
pub(super) fn found_exec(cmd: &SimpleCommand) -> Vec<Carried> {
    let finder = match cmd.argv.first().map(|w| basename(w)) {
        Some("find") => find_reading(&cmd.argv),
        Some("fd" | "fdfind") => fd_reading(&cmd.argv),
        _ => return Vec::new(),
    };
    let Some(finder) = finder else {
        return Vec::new();
    };
    let stdin_closed = cmd.inputs.iter().any(|i| i == "/dev/null");
    let mut out = Vec::new();
    for action in finder.actions.iter().filter(|a| !(a.asks && stdin_closed)) {
        let lines: Vec<String> = finder
            .found
            .iter()
            .map(|file| {
                let mut placed = false;
                let mut words: Vec<String> = action
                    .words
                    .iter()
                    .map(|w| {
                        let replaced = PLACEHOLDERS.iter().fold(w.to_string(), |acc, p| {
                            if acc.contains(p) {
                                placed = true;
                                acc.replace(p, file)
                            } else {
                                acc
                            }
                        });
                        shell_quote(&replaced)
                    })
                    .collect();
                if !placed && action.appends {
                    words.push(shell_quote(file));
                }
                words.join(" ")
            })
            .collect();
        if !lines.is_empty() {
            out.push(Carried::child(lines.join("\n")));
        }
    }
    out
}

/// The placeholders of find (`{}`) and fd (`{}`, `{/}`, `{//}`, `{.}`, `{/.}`), longest first.
const PLACEHOLDERS: &[&str] = &["{//}", "{/.}", "{/}", "{.}", "{}"];

/// What a file finder finds and runs.
struct Finder {
    /// A word for the files found, one per start path.
    found: Vec<String>,
    actions: Vec<FoundAction>,
}

/// One command a finder runs per file found (or per batch).
struct FoundAction {
    words: Vec<String>,
    /// `-ok`/`-okdir`: each run is asked on stdin first.
    asks: bool,
    /// The file goes after the words when they hold no placeholder (fd).
    appends: bool,
}

/// `find ROOTS.. TESTS.. -exec ..`: None when find will not start (an action without its
/// terminator).
fn find_reading(argv: &[String]) -> Option<Finder> {
    let roots: Vec<&String> = argv[1..]
        .iter()
        .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
        .collect();
    let first_action = argv.iter().position(|a| a.starts_with("-exec") || a.starts_with("-ok"));
    // With no test before the action, the first file found is the start path itself.
    let untested = first_action.is_some_and(|k| {
        let mut j = 1 + roots.len();
        while j < k {
            match argv[j].as_str() {
                "-maxdepth" => j += 2,
                "-xdev" | "-mount" | "-depth" | "-follow" | "-L" | "-H" | "-P" => j += 1,
                _ => return false,
            }
        }
        true
    });
    let name = argv
        .windows(2)
        .find(|w| matches!(w[0].as_str(), "-name" | "-iname"))
        .map(|w| w[1].as_str());
    let roots: Vec<&str> = if roots.is_empty() {
        vec!["."]
    } else {
        roots.iter().map(|r| r.as_str()).collect()
    };
    let found = roots
        .iter()
        .map(|r| match name {
            _ if untested && roots.len() == 1 => r.to_string(),
            Some(n) => under(r, n),
            None => under(r, "{}"),
        })
        .collect();
    let mut actions = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let a = argv[i].as_str();
        if matches!(a, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let end = argv[i + 1..].iter().position(|w| w == ";" || w == "+")? + i + 1;
            let words = argv[i + 1..end].to_vec();
            if !words.is_empty() {
                actions.push(FoundAction {
                    words,
                    asks: a.starts_with("-ok"),
                    appends: false,
                });
            }
            i = end;
        }
        i += 1;
    }
    Some(Finder { found, actions })
}

/// Options of fd that take a value.
const FD_VALUE_OPTIONS: &[&str] = &[
    "-e",
    "--extension",
    "-t",
    "--type",
    "-E",
    "--exclude",
    "-d",
    "--max-depth",
    "--min-depth",
    "--exact-depth",
    "-S",
    "--size",
    "--changed-within",
    "--changed-before",
    "-o",
    "--owner",
    "-j",
    "--threads",
    "--max-results",
    "-c",
    "--color",
    "--search-path",
    "--base-directory",
    "--format",
    "--path-separator",
    "--batch-size",
    "--ignore-file",
    "--and",
];

/// `fd [PATTERN] [PATH..] -x CMD ..`: the files found under each path, named by the glob (`-g`),
/// the extension (`-e`) or a plain pattern.
fn fd_reading(argv: &[String]) -> Option<Finder> {
    let mut positional: Vec<&str> = Vec::new();
    let mut actions = Vec::new();
    let mut extension = None;
    let mut glob = false;
    let mut search_paths: Vec<&str> = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        match a {
            "-x" | "--exec" | "-X" | "--exec-batch" => {
                let end = argv[i + 1..]
                    .iter()
                    .position(|w| w == ";")
                    .map_or(argv.len(), |p| p + i + 1);
                actions.push(FoundAction {
                    words: argv[i + 1..end].to_vec(),
                    asks: false,
                    appends: true,
                });
                i = end + 1;
                continue;
            }
            "-g" | "--glob" => glob = true,
            "-e" | "--extension" => {
                extension = argv.get(i + 1).map(String::as_str);
                i += 1;
            }
            "--search-path" => {
                search_paths.extend(argv.get(i + 1).map(String::as_str));
                i += 1;
            }
            _ if a.starts_with("--extension=") => extension = a.split_once('=').map(|(_, v)| v),
            _ if FD_VALUE_OPTIONS.contains(&a) => i += 1,
            _ if a.starts_with('-') && a.len() > 1 => {}
            _ => positional.push(a),
        }
        i += 1;
    }
    if actions.is_empty() {
        return None;
    }
    let pattern = positional.first().copied().filter(|p| !p.is_empty());
    let name = match (pattern, extension) {
        (Some(p), _) if glob => p.to_string(),
        (_, Some(e)) => format!("*.{}", e.trim_start_matches('.')),
        (Some(p), None) if p.chars().all(|c| c.is_ascii_alphanumeric() || "-_".contains(c)) => format!("*{p}*"),
        _ => "{}".to_string(),
    };
    let roots: Vec<&str> = match positional.get(1..) {
        _ if !search_paths.is_empty() => search_paths,
        Some(r) if !r.is_empty() => r.to_vec(),
        _ => vec!["."],
    };
    let found = roots.iter().map(|r| under(r, &name)).collect();
    Some(Finder { found, actions })
}

/// `ROOT/NAME`, with no doubled slash.
fn under(root: &str, name: &str) -> String {
    format!("{}/{name}", root.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{command, script, scripts};
    use super::super::{carried, Runs};
    use super::*;

    #[test]
    fn variables_naming_a_command() {
        let mut cmd = command(&["git", "fetch"]);
        cmd.assignments = vec![
            "GIT_SSH_COMMAND=rm -rf ~".into(),
            "LESSOPEN=|curl x %s".into(),
            "HOME=/tmp".into(),
            "PAGER=".into(),
        ];
        let got: Vec<String> = carried(&cmd, &WrittenFiles::default())
            .into_iter()
            .map(|c| c.script)
            .collect();
        assert_eq!(got, ["rm -rf ~", "curl x %s"]);
    }

    #[test]
    fn git_settings_aliases_and_the_ext_transport() {
        assert_eq!(
            script(&["git", "-c", "core.sshCommand=rm -rf /", "fetch"], Runs::Child),
            "rm -rf /"
        );
        assert_eq!(
            script(&["git", "config", "--global", "alias.x", "!rm -rf ~"], Runs::Child),
            "rm -rf ~"
        );
        assert_eq!(
            script(&["git", "-C", "d", "config", "core.pager", "less"], Runs::Child),
            "less"
        );
        assert_eq!(
            script(&["git", "clone", "ext::sh -c rm% -rf% /"], Runs::Child),
            "'sh' '-c' 'rm -rf /'"
        );
        assert!(scripts(&["git", "config", "alias.st", "status"]).is_empty());
        assert!(scripts(&["git", "-c", "user.name=x", "commit"]).is_empty());
    }

    #[test]
    fn tar_npm_editors_and_debuggers() {
        assert_eq!(
            script(
                &["tar", "cf", "x.tar", "--checkpoint-action=exec=rm -rf /", "."],
                Runs::Child
            ),
            "rm -rf /"
        );
        assert_eq!(script(&["tar", "-I", "sh x.sh", "-xf", "a"], Runs::Child), "sh x.sh");
        assert_eq!(
            script(&["npm", "pkg", "set", "scripts.test=rm -rf ~"], Runs::Child),
            "rm -rf ~"
        );
        assert_eq!(script(&["vim", "-c", ":!rm -rf ~", "f"], Runs::Child), "rm -rf ~");
        assert_eq!(script(&["nvim", "+!id"], Runs::Child), "id");
        assert_eq!(script(&["gdb", "-ex", "shell rm -rf /"], Runs::Child), "rm -rf /");
        assert_eq!(script(&["gdb", "-ex", "!id"], Runs::Child), "id");
        assert_eq!(
            script(&["expect", "-c", "spawn rm -rf ~; expect eof"], Runs::Child),
            "rm -rf ~"
        );
        assert_eq!(script(&["sed", "-n", "1e rm -rf ~", "f"], Runs::Child), "rm -rf ~");
        assert_eq!(script(&["gsed", "-e", "p", "-e", "e id"], Runs::Child), "id");
        assert!(scripts(&["sed", "-i", "s/a/b/", "f"]).is_empty());
        assert!(scripts(&["vim", "-c", ":wq", "f"]).is_empty());
    }

    #[test]
    fn find_exec_with_its_start_path() {
        assert_eq!(
            script(
                &["find", ".", "-name", "*.o", "-exec", "rm", "-f", "{}", ";"],
                Runs::Child
            ),
            "'rm' '-f' './*.o'"
        );
        assert_eq!(
            script(&["find", "/etc", "-type", "f", "-exec", "cat", "{}", "+"], Runs::Child),
            "'cat' '/etc/{}'"
        );
        // No terminator (the shell took the `;`): find will not start.
        assert!(scripts(&["find", ".", "-exec", "rm", "-rf", "{}"]).is_empty());
        // fd: the file goes last when there is no placeholder.
        assert_eq!(
            script(
                &[
                    "fd",
                    ".",
                    "/etc/systemd/system",
                    "-e",
                    "service",
                    "-x",
                    "sudo",
                    "rm",
                    "-f"
                ],
                Runs::Child
            ),
            "'sudo' 'rm' '-f' '/etc/systemd/system/*.service'"
        );
        assert_eq!(
            script(&["fd", "-H", "-g", ".env*", "-x", "cat"], Runs::Child),
            "'cat' './.env*'"
        );
        assert_eq!(
            script(&["fd", "-e", "pyc", "-x", "rm", "{}"], Runs::Child),
            "'rm' './*.pyc'"
        );
        assert!(scripts(&["fd", "-e", "rs"]).is_empty());
        assert_eq!(
            script(
                &["find", "/", "-maxdepth", "0", "-exec", "rm", "-rf", "{}", "+"],
                Runs::Child
            ),
            "'rm' '-rf' '/'"
        );
        assert!(scripts(&["find", ".", "-delete"]).is_empty());
    }

    #[test]
    fn package_scripts_and_makefiles_written_earlier() {
        let mut written = WrittenFiles::default();
        let mut pkg = command(&["echo", r#"{"scripts":{"postinstall":"rm -rf ~"}}"#]);
        pkg.redirects = vec!["package.json".into()];
        written.record(&pkg);
        let mut make = command(&["printf", "all:\\n\trm -rf /\\n"]);
        make.redirects = vec!["./Makefile".into()];
        written.record(&make);
        let run = |words: &[&str]| carried(&command(words), &written);
        assert_eq!(run(&["npm", "install"]), [Carried::child("rm -rf ~")]);
        assert_eq!(run(&["make"]), [Carried::child("rm -rf /")]);
        assert!(carried(&command(&["npm", "install"]), &WrittenFiles::default()).is_empty());
    }
}

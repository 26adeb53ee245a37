//! Carriers as data: which option or position of which program carries a command line, an
//! argv or a makefile. A program that runs what it is handed is one [`Carrier`] entry, not
//! code of its own: `man -P PAGER`, `rsync -e RSH`, `zip -TT CMD`, `ssh -o ProxyCommand=CMD`
//! carry a command line in an option; `poetry run ARGV`, `npx PKG ARGS`, `entr CMD`, `tmux
//! send-keys` (keystrokes typed into a shell) carry one in their remaining words;
//! `launchctl submit -- ARGV`, `kubectl exec POD -- ARGV` after `--`, `docker exec CONTAINER
//! ARGV` after the container; `az vm run-command invoke --scripts CMD` and `aws ssm
//! send-command --parameters commands=[..]` a script a cloud's agent runs on a machine of the
//! account; `make --eval TEXT` a makefile whose recipes run. Where the
//! carried command runs ([`Runs`]) is part of the entry: a pod's or a container's command runs
//! as on another machine.
//!
//! Programs that *are* another program under a package name (`rimraf` is `rm -rf`) are
//! [`KIN`]: the walker reads them as that program (`carriers::unwrap_command`).

use super::{Carried, Runs};
use crate::guard::shell::quote_word;
use crate::guard::{basename, options};

/// Where in its argv a program carries a command.
#[derive(Debug)]
enum Carries {
    /// The value of one of these options is a shell command line (`man -P 'sh -c ..'`).
    OptionScript(&'static [&'static str]),
    /// The value of one of these options is `KEY=VALUE` (or `KEY VALUE`) where KEY, in any
    /// case, is one of these settings and VALUE a command line (`ssh -o ProxyCommand=..`).
    Setting(&'static [&'static str], &'static [&'static str]),
    /// The value of one of these options is makefile text: the recipes of its rules run
    /// (`make --eval='x: ; rm -rf ~' x`).
    OptionMakefile(&'static [&'static str]),
    /// The words after the options (and the subcommand) are an argv (`poetry run python ..`).
    Rest,
    /// The words after the options are run by a shell: one word is a command line (`watch
    /// 'a | b'`), several are read as an argv.
    RestScript,
    /// Each word after the options is a shell command line (`concurrently 'a' 'b'`).
    EachScript,
    /// The words after `--` are an argv (`launchctl submit -l x -- /bin/sh -c ..`).
    AfterDashDash,
    /// The words after the options are keys typed into the program the session runs, a shell:
    /// literal text, with key names (`Enter`, `C-m`) for the keys that end a line.
    Keystrokes,
}

/// One program that carries commands.
#[derive(Debug)]
struct Carrier {
    names: &'static [&'static str],
    /// Words that must come first among the positional words (`run` of `poetry run`).
    sub: &'static [&'static str],
    /// Options that take the next word as their value, before the carried words.
    value_opts: &'static [&'static str],
    /// Positional words between the subcommand and the carried words (`docker exec CONTAINER`).
    skip: usize,
    /// With one of these flags, the carried words are one shell command line instead of an
    /// argv (`entr -s 'cmd'`, `npx -c 'cmd'`).
    script_flags: &'static [&'static str],
    carries: Carries,
    runs: Runs,
}

const NONE: &[&str] = &[];

/// Builds a table entry run on this machine.
const fn carrier(
    names: &'static [&'static str],
    sub: &'static [&'static str],
    value_opts: &'static [&'static str],
    carries: Carries,
) -> Carrier {
    Carrier {
        names,
        sub,
        value_opts,
        skip: 0,
        script_flags: NONE,
        carries,
        runs: Runs::Child,
    }
}

/// Options of `docker exec` (and podman's, nerdctl's) that take a value.
const CONTAINER_EXEC_OPTS: &[&str] = &[
    "-e",
    "--env",
    "--env-file",
    "-u",
    "--user",
    "-w",
    "--workdir",
    "--detach-keys",
];

/// Options of the JavaScript package runners that take a value.
const NPX_OPTS: &[&str] = &[
    "-p",
    "--package",
    "--registry",
    "--cache",
    "--userconfig",
    "--prefix",
    "-w",
    "--workspace",
];
/// Options of the Python project runners that take a value.
const PY_RUN_OPTS: &[&str] = &[
    "--with",
    "--with-requirements",
    "--python",
    "-p",
    "--project",
    "--directory",
    "--package",
    "--env-file",
    "--extra",
    "--group",
    "--index",
    "--index-url",
    "--extra-index-url",
    "--from",
    "-e",
    "--env",
    "--spec",
    "-C",
    "--config-file",
];
/// Options of tmux (before its command) and of `send-keys` that take a value.
const TMUX_OPTS: &[&str] = &["-L", "-S", "-f", "-t", "-N", "-c"];
/// Key names `tmux send-keys` and `xdotool key` take that end a line.
const ENTER_KEYS: &[&str] = &["Enter", "C-m", "C-j", "KPEnter", "Return", "^M", "^J"];

/// The carriers, by program (see the module doc).
/// The options of `unshare` that take a value (its effect spec reads the same words).
pub(crate) const UNSHARE_VALUE_OPTIONS: &[&str] = &[
    "--propagation",
    "--setgroups",
    "-S",
    "--setuid",
    "-G",
    "--setgid",
    "-R",
    "--root",
    "-w",
    "--wd",
];

/// The options of `perf stat`, `perf record` and `perf trace` that take a value.
const PERF_OPTS: &[&str] = &[
    "-e",
    "--event",
    "--expr",
    "-o",
    "--output",
    "-r",
    "--repeat",
    "-p",
    "--pid",
    "-t",
    "--tid",
    "-C",
    "--cpu",
    "-G",
    "--cgroup",
    "-F",
    "--freq",
    "-c",
    "--count",
    "-m",
    "--mmap-pages",
    "--call-graph",
    "--duration",
];

static CARRIERS: &[Carrier] = &[
    // A pager, a remote shell, a test command, a proxy or local command: a command line in an
    // option's value.
    carrier(
        &["man"],
        NONE,
        NONE,
        Carries::OptionScript(&["-P", "--pager", "-H", "--html"]),
    ),
    carrier(
        &["rsync"],
        NONE,
        NONE,
        Carries::OptionScript(&["-e", "--rsh", "--rsync-path"]),
    ),
    carrier(&["zip"], NONE, NONE, Carries::OptionScript(&["-TT", "--unzip-command"])),
    carrier(
        &["ssh", "scp", "sftp", "autossh", "sshfs", "mosh"],
        NONE,
        NONE,
        Carries::Setting(
            &["-o"],
            &["proxycommand", "localcommand", "knownhostscommand", "remotecommand"],
        ),
    ),
    carrier(
        &["make", "gmake"],
        NONE,
        NONE,
        Carries::OptionMakefile(&["--eval", "-E"]),
    ),
    carrier(&["nodemon"], NONE, NONE, Carries::OptionScript(&["-x", "--exec"])),
    // A command run again and again, or on every change: its words.
    carrier(
        &["watch"],
        NONE,
        &["-n", "--interval", "-q", "--equexit"],
        Carries::RestScript,
    ),
    Carrier {
        script_flags: &["-s"],
        ..carrier(&["entr"], NONE, NONE, Carries::Rest)
    },
    // A command run in a network namespace, or in new namespaces of its own: the same files,
    // the same rights (`ip netns exec NAME cmd`, `unshare -m cmd`).
    Carrier {
        skip: 1,
        ..carrier(&["ip"], &["netns", "exec"], NONE, Carries::Rest)
    },
    carrier(&["unshare"], NONE, UNSHARE_VALUE_OPTIONS, Carries::Rest),
    // `flock -c 'cmd' FILE`: a command line run while the lock is held (`flock FILE cmd` is a
    // wrapper).
    carrier(&["flock"], NONE, NONE, Carries::OptionScript(&["-c", "--command"])),
    // Profilers and benchmark runners: the command they measure runs as given.
    carrier(&["valgrind"], NONE, NONE, Carries::Rest),
    carrier(&["perf"], &["stat"], PERF_OPTS, Carries::Rest),
    carrier(&["perf"], &["record"], PERF_OPTS, Carries::Rest),
    carrier(&["perf"], &["trace"], PERF_OPTS, Carries::Rest),
    carrier(
        &["hyperfine"],
        NONE,
        &[
            "-w",
            "--warmup",
            "-m",
            "--min-runs",
            "-M",
            "--max-runs",
            "-r",
            "--runs",
            "-s",
            "--setup",
            "-p",
            "--prepare",
            "-c",
            "--cleanup",
            "-P",
            "--parameter-scan",
            "-D",
            "--parameter-step-size",
            "-L",
            "--parameter-list",
            "-S",
            "--shell",
            "--style",
            "--sort",
            "-u",
            "--time-unit",
            "--export-asciidoc",
            "--export-csv",
            "--export-json",
            "--export-markdown",
            "--export-orgmode",
            "--output",
            "--input",
            "-n",
            "--command-name",
        ],
        Carries::EachScript,
    ),
    carrier(
        &["hyperfine"],
        NONE,
        NONE,
        Carries::OptionScript(&["-s", "--setup", "-p", "--prepare", "-c", "--cleanup"]),
    ),
    carrier(
        &["concurrently"],
        NONE,
        &["-n", "--names", "-c", "--prefix-colors", "-p", "--prefix"],
        Carries::EachScript,
    ),
    carrier(
        &["shx", "cross-env", "cross-env-shell", "dotenv", "env-cmd"],
        NONE,
        &["-f", "-e", "-c", "-v"],
        Carries::Rest,
    ),
    // A project's environment or a package's program, run by name.
    carrier(
        &["poetry", "pipenv", "pdm", "hatch", "rye", "pixi"],
        &["run"],
        PY_RUN_OPTS,
        Carries::Rest,
    ),
    carrier(&["uv"], &["run"], PY_RUN_OPTS, Carries::Rest),
    carrier(&["uv"], &["tool", "run"], PY_RUN_OPTS, Carries::Rest),
    carrier(&["uvx"], NONE, PY_RUN_OPTS, Carries::Rest),
    carrier(&["pipx"], &["run"], PY_RUN_OPTS, Carries::Rest),
    carrier(
        &["conda", "mamba", "micromamba"],
        &["run"],
        &["-n", "--name", "-p", "--prefix", "--cwd"],
        Carries::Rest,
    ),
    Carrier {
        script_flags: &["-c", "--call", "--shell-mode"],
        ..carrier(&["npx", "bunx", "pnpx"], NONE, NPX_OPTS, Carries::Rest)
    },
    Carrier {
        script_flags: &["-c", "--call", "--shell-mode"],
        ..carrier(&["npm"], &["exec"], NPX_OPTS, Carries::Rest)
    },
    Carrier {
        script_flags: &["-c", "--shell-mode"],
        ..carrier(&["pnpm"], &["dlx"], NPX_OPTS, Carries::Rest)
    },
    carrier(&["pnpm", "yarn"], &["exec"], NPX_OPTS, Carries::Rest),
    carrier(&["yarn"], &["dlx"], NPX_OPTS, Carries::Rest),
    carrier(&["bun"], &["x"], NPX_OPTS, Carries::Rest),
    carrier(&["dotnet"], &["tool", "run"], NONE, Carries::Rest),
    carrier(&["bundle"], &["exec"], NONE, Carries::Rest),
    carrier(&["stack", "cabal"], &["exec"], NONE, Carries::Rest),
    carrier(&["devbox"], &["run"], &["-c", "--config", "-e", "--env"], Carries::Rest),
    carrier(
        &["toolbox"],
        &["run"],
        &["-c", "--container", "-d", "--distro", "-r", "--release"],
        Carries::Rest,
    ),
    // A command queued for a daemon to run: its words joined into a shell command line.
    carrier(
        &["pueue"],
        &["add"],
        &[
            "-w",
            "--working-directory",
            "-g",
            "--group",
            "-l",
            "--label",
            "-a",
            "--after",
            "-d",
            "--delay",
            "-o",
            "--priority",
        ],
        Carries::RestScript,
    ),
    // A job handed to a service manager.
    carrier(
        &["launchctl"],
        &["submit"],
        &["-l", "-p", "-o", "-e"],
        Carries::AfterDashDash,
    ),
    // Keys typed into the shell a terminal session runs.
    carrier(&["tmux"], &["send-keys"], TMUX_OPTS, Carries::Keystrokes),
    carrier(&["tmux"], &["send"], TMUX_OPTS, Carries::Keystrokes),
    // A command run inside a running container: the service's own files, secrets and data,
    // as on another machine (`docker exec db env`, `docker exec db dropdb app`).
    Carrier {
        skip: 1,
        runs: Runs::Remote,
        ..carrier(
            &["docker", "podman", "nerdctl"],
            &["exec"],
            CONTAINER_EXEC_OPTS,
            Carries::Rest,
        )
    },
    Carrier {
        skip: 1,
        runs: Runs::Remote,
        ..carrier(
            &["docker", "podman", "nerdctl"],
            &["container", "exec"],
            CONTAINER_EXEC_OPTS,
            Carries::Rest,
        )
    },
    // A script a cloud's agent runs on a machine of the account (`az vm run-command invoke
    // --scripts CMD`, `aws ssm send-command --parameters 'commands=["CMD"]'`): on another
    // machine, as its root.
    Carrier {
        runs: Runs::Remote,
        ..carrier(&["az"], NONE, NONE, Carries::OptionScript(&["--scripts", "--script"]))
    },
    Carrier {
        runs: Runs::Remote,
        ..carrier(&["aws"], NONE, NONE, Carries::Setting(&["--parameters"], &["commands"]))
    },
    // A command run inside a running pod: on another machine.
    Carrier {
        runs: Runs::Remote,
        ..carrier(
            &["kubectl", "oc"],
            &["exec"],
            &[
                "-n",
                "--namespace",
                "-c",
                "--container",
                "--context",
                "--kubeconfig",
                "-f",
                "--filename",
            ],
            Carries::AfterDashDash,
        )
    },
];

/// Programs that are another program under a package name: the words they stand for.
pub(super) const KIN: &[(&str, &[&str])] = &[
    ("rimraf", &["rm", "-rf"]),
    ("premove", &["rm", "-rf"]),
    ("del-cli", &["rm", "-rf"]),
    ("rm-cli", &["rm", "-rf"]),
    ("mkdirp", &["mkdir", "-p"]),
    ("ncp", &["cp", "-r"]),
    ("cpy", &["cp"]),
];

/// Whether `argv` hands its words on to a command it runs (`npx rimraf x`, `poetry run ..`,
/// `parallel rm ::: a`): its words are that command's, judged when it is, not the carrier's.
pub(crate) fn hands_on_words(argv: &[String]) -> bool {
    let Some(name) = argv.first().map(|w| basename(w)) else {
        return false;
    };
    let finds_and_runs = matches!(name, "fd" | "fdfind")
        && argv
            .iter()
            .any(|a| matches!(a.as_str(), "-x" | "-X" | "--exec" | "--exec-batch"));
    name == "parallel"
        || finds_and_runs
        || carriers_named(name).iter().any(|c| {
            !matches!(
                c.carries,
                Carries::OptionScript(_) | Carries::Setting(..) | Carries::OptionMakefile(_)
            ) && c.rest(&argv[1..]).is_some()
        })
}

/// The scripts the table says `argv` carries.
pub(super) fn carried(argv: &[String]) -> Vec<Carried> {
    let Some(name) = argv.first().map(|w| basename(w)) else {
        return Vec::new();
    };
    carriers_named(name).iter().filter_map(|c| c.read(&argv[1..])).collect()
}

/// The table's entries for the program called `name`, in table order, through an index built
/// on first use: every command of every line asks.
fn carriers_named(name: &str) -> &'static [&'static Carrier] {
    static INDEX: std::sync::LazyLock<std::collections::HashMap<&'static str, Vec<&'static Carrier>>> =
        std::sync::LazyLock::new(|| {
            let mut index: std::collections::HashMap<&'static str, Vec<&'static Carrier>> =
                std::collections::HashMap::new();
            for carrier in CARRIERS {
                for name in carrier.names {
                    let entries = index.entry(*name).or_default();
                    if !entries.iter().any(|c| std::ptr::eq(*c, carrier)) {
                        entries.push(carrier);
                    }
                }
            }
            index
        });
    INDEX.get(name).map_or(&[], Vec::as_slice)
}

impl Carrier {
    /// What this entry finds in `args` (the argv without the program word).
    fn read(&self, args: &[String]) -> Option<Carried> {
        let script = match self.carries {
            Carries::OptionScript(opts) => option_values(args, opts).into_iter().next()?,
            Carries::Setting(opts, keys) => option_values(args, opts).into_iter().find_map(|v| setting(&v, keys))?,
            Carries::OptionMakefile(opts) => {
                let recipes: Vec<String> = option_values(args, opts)
                    .iter()
                    .flat_map(|m| super::programs::recipes(m))
                    .collect();
                (!recipes.is_empty()).then(|| recipes.join("\n"))?
            }
            Carries::AfterDashDash => {
                let k = args.iter().position(|a| a == "--")?;
                self.sub_at(&args[..k])?;
                argv_script(&args[k + 1..])?
            }
            _ => {
                let rest = self.rest(args)?;
                let script_mode = args[..args.len() - rest.len()]
                    .iter()
                    .any(|a| self.script_flags.iter().any(|f| a == f));
                match self.carries {
                    Carries::RestScript if rest.len() == 1 => rest[0].clone(),
                    Carries::EachScript => rest.join("\n"),
                    Carries::Keystrokes => keystrokes(rest)?,
                    _ if script_mode => rest.join("\n"),
                    _ => argv_script(rest)?,
                }
            }
        };
        let script = script.trim();
        (!script.is_empty()).then(|| Carried {
            script: script.to_string(),
            runs: self.runs,
        })
    }

    /// The index after the subcommand words among `args`, when they are there (after the
    /// options that take a value).
    fn sub_at(&self, args: &[String]) -> Option<usize> {
        let mut i = 0;
        let mut matched = 0;
        while matched < self.sub.len() {
            let a = args.get(i)?;
            if a.starts_with('-') && a.len() > 1 {
                i += if self.value_opts.contains(&a.as_str()) { 2 } else { 1 };
                continue;
            }
            if a != self.sub[matched] {
                return None;
            }
            matched += 1;
            i += 1;
        }
        Some(i)
    }

    /// The carried words: after the subcommand, the options and the positional words to skip
    /// (a `--` ends the options).
    fn rest<'a>(&self, args: &'a [String]) -> Option<&'a [String]> {
        let mut i = self.sub_at(args)?;
        let mut skip = self.skip;
        while let Some(a) = args.get(i) {
            if a == "--" {
                i += 1;
                break;
            }
            if a.starts_with('-') && a.len() > 1 {
                let takes_next = self.value_opts.contains(&a.as_str())
                    || options::bundle(a, |c| options::listed(self.value_opts, c)).is_some_and(|b| b.takes_next());
                i += if takes_next { 2 } else { 1 };
                continue;
            }
            // `cross-env A=1 B=2 cmd`: assignments before the command.
            if crate::guard::is_assignment(a) && matches!(self.carries, Carries::Rest) {
                i += 1;
                continue;
            }
            if skip == 0 {
                break;
            }
            skip -= 1;
            i += 1;
        }
        args.get(i..).filter(|r| !r.is_empty())
    }
}

/// Every value of the options `opts` in `args`: `-P VALUE`, `--pager=VALUE`, `-PVALUE` for a
/// one-letter option (not for `-TT`), and the value of a bundle that ends in the letter.
fn option_values(args: &[String], opts: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if a == "--" {
            break;
        }
        if opts.contains(&a.as_str()) {
            out.extend(args.get(i + 1).cloned());
            continue;
        }
        if let Some((_, v)) = a
            .split_once('=')
            .filter(|(o, _)| o.starts_with("--") && opts.contains(o))
        {
            out.push(v.to_string());
            continue;
        }
        let letters = |c: char| options::listed(opts, c);
        if let Some(b) = options::bundle(a, letters).filter(|b| b.value_letter.is_some()) {
            match b.glued {
                Some(v) => out.push(v.to_string()),
                None => out.extend(args.get(i + 1).cloned()),
            }
        }
    }
    out
}

/// `ProxyCommand=CMD`, `ProxyCommand CMD`: the command of a setting named in `keys`.
fn setting(value: &str, keys: &[&str]) -> Option<String> {
    // `{"commands":["a","b"]}`: the setting as a JSON object.
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(value.trim()) {
        let (_, v) = map
            .iter()
            .find(|(k, _)| keys.iter().any(|key| k.eq_ignore_ascii_case(key)))?;
        return json_lines(v);
    }
    let (key, command) = value
        .split_once('=')
        .or_else(|| value.split_once(char::is_whitespace))?;
    keys.iter()
        .any(|k| key.trim().eq_ignore_ascii_case(k))
        .then(|| {
            // `commands=["a","b"]`: a JSON list of command lines, run in turn.
            serde_json::from_str::<serde_json::Value>(command.trim())
                .ok()
                .and_then(|v| json_lines(&v))
                .unwrap_or_else(|| command.trim().to_string())
        })
        .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case("none"))
}

/// A JSON string or list of strings as command lines, one per line.
fn json_lines(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(items) => Some(
            items
                .iter()
                .filter_map(serde_json::Value::as_str)
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// An argv as a command line: its words quoted.
fn argv_script(words: &[String]) -> Option<String> {
    (!words.is_empty()).then(|| words.iter().map(|w| quote_word(w)).collect::<Vec<_>>().join(" "))
}

/// The text typed by `tmux send-keys` keys: literal words as they are, a key that ends a line
/// as a newline, other key names (`C-c`, `Escape`) as nothing. None when nothing is typed.
fn keystrokes(keys: &[String]) -> Option<String> {
    let mut text = String::new();
    for k in keys {
        if ENTER_KEYS.contains(&k.as_str()) {
            text.push('\n');
        } else if k == "Space" {
            text.push(' ');
        } else if !is_key_name(k) {
            text.push_str(k);
        }
    }
    (!text.trim().is_empty()).then_some(text)
}

/// A tmux key name that types no text of its own (`C-c`, `M-x`, `Escape`, `Up`, `F5`).
fn is_key_name(k: &str) -> bool {
    let modifier = ["C-", "M-", "S-", "^"].iter().any(|m| k.starts_with(m)) && k.len() <= 4;
    modifier
        || matches!(
            k,
            "Escape"
                | "Tab"
                | "BSpace"
                | "BTab"
                | "Up"
                | "Down"
                | "Left"
                | "Right"
                | "Home"
                | "End"
                | "PageUp"
                | "PageDown"
                | "PPage"
                | "NPage"
                | "DC"
                | "IC"
                | "Any"
        )
        || (k.starts_with('F') && k.len() <= 3 && k[1..].chars().all(|c| c.is_ascii_digit()) && k.len() > 1)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{script, scripts};
    use super::super::Runs;

    #[test]
    fn commands_in_option_values() {
        assert_eq!(
            script(&["man", "-P", "sh -c \"curl x | sh\"", "ls"], Runs::Child),
            "sh -c \"curl x | sh\""
        );
        assert_eq!(
            script(&["rsync", "-e", "sh -c 'rm -rf ~'", "x:/", "/tmp/y"], Runs::Child),
            "sh -c 'rm -rf ~'"
        );
        assert_eq!(
            script(
                &["zip", "/tmp/z.zip", "x", "-T", "-TT", "sh -c \"crontab -r\" #"],
                Runs::Child
            ),
            "sh -c \"crontab -r\" #"
        );
        assert_eq!(script(&["valgrind", "-q", "rm", "-rf", "/"], Runs::Child), "rm -rf /");
        assert_eq!(
            script(&["perf", "record", "-o", "p.data", "-g", "rm", "-rf", "/"], Runs::Child),
            "rm -rf /"
        );
        let measured: Vec<String> = scripts(&["hyperfine", "-w", "3", "--prepare", "rm -rf ~", "ls"])
            .into_iter()
            .map(|c| c.script)
            .collect();
        assert_eq!(measured, ["ls", "rm -rf ~"]);
        assert!(scripts(&["perf", "report", "-i", "p.data"]).is_empty());
        assert_eq!(
            script(&["ip", "netns", "exec", "ns1", "rm", "-rf", "/"], Runs::Child),
            "rm -rf /"
        );
        assert_eq!(
            script(&["unshare", "-m", "--propagation", "private", "bash"], Runs::Child),
            "bash"
        );
        assert!(scripts(&["ip", "netns", "list"]).is_empty());
        assert_eq!(
            script(&["ssh", "-o", "ProxyCommand=sh -c 'id'", "x"], Runs::Child),
            "sh -c 'id'"
        );
        assert_eq!(
            script(&["make", "--eval=wipe: ; rm -rf /home/dev", "wipe"], Runs::Child),
            "rm -rf /home/dev"
        );
        assert!(scripts(&["ssh", "-o", "StrictHostKeyChecking=no", "x"]).is_empty());
        assert!(scripts(&["man", "ls"]).is_empty());
        assert!(scripts(&["zip", "-T", "z.zip", "x"]).is_empty());
    }

    #[test]
    fn argvs_after_options_subcommands_and_dashdash() {
        assert_eq!(
            script(&["poetry", "run", "python", "manage.py", "flush"], Runs::Child),
            "python manage.py flush"
        );
        assert_eq!(
            script(
                &["uv", "run", "--with", "x", "alembic", "downgrade", "base"],
                Runs::Child
            ),
            "alembic downgrade base"
        );
        assert_eq!(
            script(&["npx", "--yes", "rimraf", "/home/dev"], Runs::Child),
            "rimraf /home/dev"
        );
        assert_eq!(script(&["pnpm", "dlx", "rimraf", "../x"], Runs::Child), "rimraf ../x");
        assert_eq!(script(&["npx", "-c", "rm -rf ~"], Runs::Child), "rm -rf ~");
        assert_eq!(
            script(&["entr", "-n", "psql", "-c", "DROP SCHEMA public"], Runs::Child),
            "psql -c 'DROP SCHEMA public'"
        );
        assert_eq!(
            script(&["watch", "-n", "1", "redis-cli FLUSHALL"], Runs::Child),
            "redis-cli FLUSHALL"
        );
        assert_eq!(
            script(
                &["launchctl", "submit", "-l", "x", "--", "/bin/sh", "-c", "id"],
                Runs::Child
            ),
            "/bin/sh -c id"
        );
        assert_eq!(
            script(
                &[
                    "kubectl",
                    "exec",
                    "-n",
                    "prod",
                    "deploy/api",
                    "--",
                    "sh",
                    "-c",
                    "printenv"
                ],
                Runs::Remote
            ),
            "sh -c printenv"
        );
        // A running container's command, past its options and the container's name.
        assert_eq!(
            script(&["docker", "exec", "-u", "root", "-it", "db", "printenv"], Runs::Remote),
            "printenv"
        );
        assert_eq!(
            script(
                &[
                    "podman",
                    "container",
                    "exec",
                    "-w",
                    "/srv",
                    "api",
                    "cat",
                    "/run/secrets/k"
                ],
                Runs::Remote
            ),
            "cat /run/secrets/k"
        );
        assert_eq!(
            script(
                &[
                    "tmux",
                    "send-keys",
                    "-t",
                    "dev:0",
                    "git push --force origin main",
                    "Enter"
                ],
                Runs::Child
            ),
            "git push --force origin main"
        );
        for quiet in [
            &["poetry", "install"][..],
            &["npm", "test"],
            &["launchctl", "list"],
            &["kubectl", "get", "pods"],
            &["tmux", "send-keys", "-t", "x", "C-c"],
            &["uv", "sync"],
        ] {
            assert!(scripts(quiet).is_empty(), "{quiet:?}");
        }
    }
}

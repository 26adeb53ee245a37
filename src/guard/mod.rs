//! May it act? The guard judges every action before it runs: the constitutional pre-check of
//! commands (rules by category), the task's tool policy, and its runtime limits.
//!
//! The guard never runs anything and never touches the file system beyond resolving paths: it
//! reads the action and answers with a [`Verdict`]. What a warn or block means for a task is
//! [`policy`]'s call.
//!
//! Shell text is parsed with tree-sitter-bash ([`shell`]): every command node becomes a
//! [`SimpleCommand`] with quotes resolved and wrappers unwrapped, and the rules ([`rules`], one
//! file per category) judge those commands. Input that does not parse fails closed.
//! File-tool inputs (`write_file`, `edit_file`, `delete_file`, `move_file`) go to the
//! test-tampering rules; `write_file` over an existing test file reads that file to compare
//! assertions (the guard's one read).

pub mod cli;
pub mod limits;
pub mod policy;
pub mod rules;
pub mod shell;
pub mod verdict;

use std::path::{Component, Path, PathBuf};

pub use verdict::{Category, Recommendation, Risk, Verdict, Violation};

/// What the guard knows about where the action would run.
#[derive(Debug, Clone, Copy)]
pub struct GuardContext<'a> {
    pub workspace: &'a Path,
}

/// One simple command after parsing: its argv with quotes resolved and wrappers unwrapped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    /// The argv; `argv[0]` is the command word as written (use [`SimpleCommand::name`]).
    pub argv: Vec<String>,
    /// Text fed to stdin by a here-document (`<<EOF`) or here-string (`<<<`).
    pub stdin_text: Option<String>,
    /// The directory the command runs in, lexically resolved (None when unknown, e.g. after
    /// `cd "$DIR"`).
    pub cwd: Option<PathBuf>,
    /// More arguments come from stdin at run time (the command was unwrapped from `xargs`).
    pub args_from_stdin: bool,
    /// The command word is not literal (`$cmd`, `$(..)`, `r$IFS`): what runs is decided at
    /// run time.
    pub dynamic_name: bool,
    /// The command word as written, when it was not literal but the parser could resolve it
    /// (`c=rm; $c`, `$(echo rm)`); `argv[0]` then holds the resolved word.
    pub name_as_written: Option<String>,
    /// Targets of output redirections (`> file`, `>> file`, `&> file`).
    pub redirects: Vec<String>,
    /// The subset of [`SimpleCommand::redirects`] opened for appending (`>> file`).
    pub appends: Vec<String>,
    /// Files redirected to stdin (`< file`).
    pub inputs: Vec<String>,
    /// `NAME=value` assignments removed while unwrapping (`X=1 cmd`, `env X=1 cmd`).
    pub assignments: Vec<String>,
    /// The command runs inside a command or process substitution: its output is captured by
    /// the outer command instead of being printed.
    pub captured: bool,
}

impl SimpleCommand {
    /// Basename of the command word (`/bin/rm` → `rm`); empty for an empty command.
    pub fn name(&self) -> &str {
        self.argv.first().map(|w| basename(w)).unwrap_or("")
    }

    /// The argv joined with spaces, for messages.
    pub fn display(&self) -> String {
        self.argv
            .iter()
            .map(|a| {
                if a.is_empty() || a.contains(char::is_whitespace) {
                    format!("'{a}'")
                } else {
                    a.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Commands joined by `|`: each one's stdout feeds the next one's stdin.
pub type Pipeline = Vec<SimpleCommand>;

/// Why a command line could not be fully parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot parse the command: {0}; check that quotes, `$(` and backticks are balanced")]
pub struct ShellParseError(pub String);

/// The result of parsing a command line: every pipeline found (including the ones inside
/// substitutions and `sh -c`), plus the first parse error when the text was not well formed.
/// On error the pipelines hold what could be parsed, so rules still see it.
#[derive(Debug, Clone, Default)]
pub struct ParsedShell {
    pub pipelines: Vec<Pipeline>,
    pub error: Option<ShellParseError>,
    /// The error is clearly malformed input (unbalanced quotes or `$(`), not a construct the
    /// grammar misses: the guard blocks it instead of warning.
    pub clear_error: bool,
}

/// The verdict on one shell command line.
pub fn check_command(command: &str, ctx: &GuardContext<'_>) -> Verdict {
    check_command_in(command, ctx, None)
}

/// Like [`check_command`], with the command starting in `cwd` (workspace-relative) instead of
/// the workspace root.
pub fn check_command_in(command: &str, ctx: &GuardContext<'_>, cwd: Option<&str>) -> Verdict {
    // A relative workspace is taken relative to the current directory, so absolute targets
    // inside it are recognised.
    let workspace = if ctx.workspace.is_absolute() {
        normalize(ctx.workspace)
    } else {
        normalize(&std::env::current_dir().unwrap_or_default().join(ctx.workspace))
    };
    let ctx = &GuardContext { workspace: &workspace };
    let start = match cwd {
        Some(dir) if !dir.is_empty() => normalize(&workspace.join(dir)),
        _ => workspace.clone(),
    };
    let parsed = parse_shell(command, Some(start));
    let mut violations = Vec::new();
    if let Some(err) = &parsed.error {
        violations.push(rules::unparseable(command, &err.0, parsed.clear_error));
    }
    for pipeline in &parsed.pipelines {
        violations.extend(rules::check_pipeline(pipeline, ctx));
    }
    rules::check_text(command, &mut violations);
    rules::check_line(&parsed.pipelines, &mut violations);
    dedup(&mut violations);
    let alternative = rules::alternative_for(&violations);
    Verdict::from_violations(violations, alternative)
}

/// The verdict on one tool call: the commands inside it (bash, verify command_succeeds) and,
/// for file tools, the paths they touch.
///
/// File tools are checked for test tampering only: keeping them inside the workspace is the
/// tools' own job (they answer PERMISSION_DENIED for paths that lead out).
pub fn check_action(tool: &str, input: &serde_json::Value, ctx: &GuardContext<'_>) -> Verdict {
    let text = |key: &str| input.get(key).and_then(|v| v.as_str());
    match tool {
        "bash" => match text("command") {
            Some(cmd) => check_command_in(cmd, ctx, text("cwd")),
            None => Verdict::allow(),
        },
        "verify" if text("type") == Some("command_succeeds") => match text("target") {
            Some(cmd) => check_command(cmd, ctx),
            None => Verdict::allow(),
        },
        "write_file" | "edit_file" | "delete_file" | "move_file" => {
            let violations = rules::test_tampering::check_file_tool(tool, input, ctx);
            let alternative = rules::alternative_for(&violations);
            Verdict::from_violations(violations, alternative)
        }
        "read_file" | "list_dir" | "verify" => Verdict::allow(),
        // A tool the guard does not know is a tool it cannot judge: it does not run.
        unknown => Verdict::from_violations(
            vec![Violation {
                category: Category::Parse,
                rule: "tool.unknown".into(),
                severity: Risk::High,
                matched: unknown.to_string(),
                description: format!("`{unknown}` is not a tool the guard knows, so it cannot be judged"),
                recommendation: Recommendation::Block,
            }],
            Some(format!(
                "use one of the registered tools: {}",
                crate::tools::registry()
                    .iter()
                    .map(|t| t.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        ),
    }
}

/// Drops repeated violations (same rule, same matched text), keeping the first.
fn dedup(violations: &mut Vec<Violation>) {
    let mut seen = std::collections::HashSet::new();
    violations.retain(|v| seen.insert((v.rule.clone(), v.matched.clone(), v.recommendation)));
}

/// The last path component of a command word (`/usr/bin/psql` → `psql`).
pub fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Lexically normalizes a path: removes `.`, resolves `..` against the previous component.
/// Never touches the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    // `..` above the root of a relative path stays visible.
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

pub use shell::parse_shell;

pub(crate) fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Removes leading assignments, shell keywords and wrappers until the real command word.
/// Returns true when `xargs` was unwrapped (more arguments come from stdin at run time).
pub fn unwrap_command(argv: &mut Vec<String>) -> bool {
    let mut xargs = false;
    for _ in 0..32 {
        let Some(first) = argv.first().cloned() else {
            return xargs;
        };
        let first = first.as_str();
        let skip = if is_assignment(first) {
            1
        } else {
            match basename(first) {
                "!" | "{" | "}" | "then" | "do" | "else" | "elif" | "if" | "while" | "until" | "nohup" | "builtin" => 1,
                // `/usr/bin/time -v -o FILE cmd`, `time -p cmd`.
                "time" => skip_options(argv, &["-o", "-f", "--output", "--format"]),
                // Tracers, profilers and power/priority wrappers run their command as given.
                "strace" | "ltrace" => skip_options(
                    argv,
                    &[
                        "-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-X", "-S", "-U",
                    ],
                ),
                "caffeinate" => skip_options(argv, &["-t", "-w"]),
                "systemd-run" => skip_options(
                    argv,
                    &[
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
                    ],
                ),
                // `screen -dmS NAME cmd args`: a detached session running the command.
                "screen" => {
                    // Bundled flags end with the one taking a value (`-dmS NAME`).
                    let mut i = 1;
                    while let Some(a) = argv.get(i).filter(|a| a.starts_with('-') && a.len() > 1) {
                        let takes = a == "-Logfile" || a.ends_with(['S', 'c', 'e', 'h', 'p', 't', 'T', 's']);
                        i += if takes { 2 } else { 1 };
                    }
                    i
                }
                // `runuser -u root -- cmd` (`runuser -c SCRIPT` is a nested script).
                "runuser" if !argv.iter().any(|a| a == "-c" || a == "--command") => {
                    skip_options(argv, &["-u", "-g", "-G", "--user", "--group", "--supp-group"])
                }
                "sudo" | "doas" | "pkexec" => {
                    let i = skip_options(
                        argv,
                        &[
                            "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group", "--prompt",
                        ],
                    );
                    // `sudo -s`, `sudo -i`, `pkexec bash`: a root shell, not a wrapped command;
                    // kept whole so the privilege rule sees it (and what it reads on stdin).
                    let bare_shell = argv.len() == i + 1 && shell::is_shell(basename(&argv[i]));
                    if i >= argv.len() || bare_shell {
                        return xargs;
                    }
                    i
                }
                // `busybox rm -rf /`: the applet is the command.
                "busybox" | "toybox" => skip_options(argv, &[]),
                "env" => {
                    // `env -S 'rm -rf /'`: the string is split into the command's words.
                    let own = argv.iter().skip(1).take_while(|a| a.starts_with('-')).count();
                    // `--split-string=VALUE` / `-SVALUE`: the value is attached.
                    if let Some(k) = argv[..=own.min(argv.len() - 1)].iter().position(|a| {
                        a.starts_with("--split-string=") || (a.starts_with("-S") && a.len() > 2 && !a.starts_with("--"))
                    }) {
                        let value = argv[k]
                            .strip_prefix("--split-string=")
                            .unwrap_or_else(|| &argv[k][2..])
                            .to_string();
                        let mut words: Vec<String> = value.split_whitespace().map(String::from).collect();
                        words.extend(argv.drain(k + 1..));
                        *argv = words;
                        continue;
                    }
                    if let Some(k) = argv[..=own.min(argv.len() - 1)]
                        .iter()
                        .position(|a| a == "-S" || a == "--split-string")
                    {
                        if let Some(value) = argv.get(k + 1).cloned() {
                            let mut words: Vec<String> = value.split_whitespace().map(String::from).collect();
                            words.extend(argv.drain(k + 2..));
                            *argv = words;
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
                "watch" => skip_options(argv, &["-n", "-d", "--interval"]),
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
                "flock" | "taskset" | "chrt" => {
                    // `flock FILE cmd`, `taskset MASK cmd`, `chrt PRIO cmd`: one value first.
                    let i = skip_options(argv, &["-w", "-E", "-c"]);
                    (i + 1).min(argv.len())
                }
                "parallel" => {
                    xargs = true;
                    let i = skip_options(argv, &["-j", "-S", "--jobs", "-n", "-N", "-d", "--delimiter"]);
                    // `parallel cmd ::: a b` runs `cmd a`, `cmd b`: the inputs stay as arguments.
                    argv.retain(|a| a != ":::" && a != "::::" && a != ":::+");
                    i
                }
                "command" | "exec" => skip_options(argv, &["-a"]),
                "stdbuf" => skip_options(argv, &["-i", "-o", "-e"]),
                "xargs" => {
                    xargs = true;
                    skip_options(
                        argv,
                        &[
                            "-I",
                            "-n",
                            "-P",
                            "-d",
                            "-L",
                            "-s",
                            "-E",
                            "-a",
                            "--max-args",
                            "--delimiter",
                        ],
                    )
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
        argv.drain(..skip);
    }
    xargs
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
        // `-n10`/`--signal=KILL` carry their value; `-n 10` takes the next word.
        if with_value.contains(&a) {
            i += 2;
        } else {
            i += 1;
        }
    }
    // `nice -10 cmd` style numeric options are already skipped above.
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(normalize(Path::new("/ws/a/../../etc")), PathBuf::from("/etc"));
        assert_eq!(normalize(Path::new("/ws/./b/")), PathBuf::from("/ws/b"));
    }

    #[test]
    fn wrappers_are_unwrapped() {
        let mut argv: Vec<String> = ["FOO=1", "command", "exec", "setsid", "rm", "x"]
            .map(String::from)
            .to_vec();
        unwrap_command(&mut argv);
        assert_eq!(argv, ["rm", "x"]);
    }
}

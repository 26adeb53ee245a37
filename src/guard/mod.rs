//! May it act? The guard judges every action before it runs: the constitutional pre-check of
//! commands (rules by category), the task's tool policy, and its runtime limits.
//!
//! The guard never runs anything and never touches the file system beyond resolving paths: it
//! reads the action and answers with a [`Verdict`]. What a warn or block means for a task is
//! [`policy`]'s call.
//!
//! Shell text is parsed with tree-sitter-bash ([`shell`]): every command node becomes a
//! [`SimpleCommand`] with quotes resolved and wrappers unwrapped, and the rules ([`rules`], one
//! file per category) judge those commands. Input that does not parse fails closed. What a
//! command carries (the command behind `sudo`, the script of `sh -c`, `find -exec`, `python
//! -c`, `docker run -v ~:/d ..`) is the `carriers` module's knowledge, which the walker asks;
//! where a path argument points (root, home, system, temp, workspace) is [`targets`]'s, which
//! the rules share.
//! File-tool inputs (`write_file`, `edit_file`, `delete_file`, `move_file`) go to the
//! test-tampering rules; `write_file` over an existing test file reads that file to compare
//! assertions (the guard's one read).

pub(crate) mod ascii;
pub(crate) mod budget;
pub(crate) mod carriers;
pub mod cli;
pub mod effects;
pub mod limits;
pub(crate) mod needles;
pub(crate) mod options;
pub mod policy;
pub(crate) mod regexes;
pub mod rules;
pub mod shell;
pub mod targets;
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
    /// The words as written before unwrapping, kept when they hold an `xargs` or `parallel`
    /// ([`SimpleCommand::args_from_stdin`]): its options decide what runs once its input is
    /// known (`echo / | xargs -I{} rm -rf {}`).
    pub unwrapped_from: Option<Vec<String>>,
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
    /// The command runs with another user's rights: a privilege wrapper (`sudo`, `doas`,
    /// `pkexec`, `run0`, `runuser`) was unwrapped in front of it.
    pub as_root: bool,
    /// The command runs as an account other than root and the caller's: a wrapper that
    /// switches accounts was unwrapped in front of it (`sudo -u nobody`, `gosu app`).
    pub(crate) other_account: bool,
    /// A privilege wrapper told to read its password on stdin was unwrapped in front of the
    /// command (`sudo -S`, `sudo --stdin`): the first line fed to the command is that password.
    pub(crate) wrapper_reads_password: bool,
    /// The command is part of a script another command carries (`sh -c '..'`, `find -exec`,
    /// `foo --shell=/bin/sh`), not a line of its own: nothing typed reaches it.
    pub(crate) carried: bool,
    /// What the inline program the command hands an interpreter does (`python -c ..`), read
    /// once by the walker for the carriers and the effect rules; None when it runs none.
    pub(crate) inline: Option<carriers::code::Reading>,
    /// A copy of a stage upstream of a carrier, put in front of the pipelines of the script
    /// it carries (`curl .. | sh -c 'bash -s'`: `bash -s` reads what `curl` prints). Rules
    /// that read what flows into a command see it; it is judged where it stands, not here.
    pub(crate) upstream_copy: bool,
    /// The command is run once per line fed to a loop and its output replaces the file the
    /// line names (`find ~ | while read f; do : > "$f"; done`): every listed file is emptied.
    pub(crate) overwrites_fed_files: bool,
    /// The body of the shell function the command word calls, when the line defined one by
    /// that name earlier (`pytest() { echo ok; }; pytest`): the program itself does not run.
    pub(crate) function_body: Option<String>,
    /// Words whose `$` is a literal character, quoted or escaped (`'hK8$wq3Zr'`, `pa\$s`), not
    /// an expansion: the argv keeps no quotes, so without this a password holding `$` reads as
    /// a variable.
    pub(crate) literal_dollar_words: Vec<String>,
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

/// The most commands one pipeline may hold, counting those of scripts it carries (`sh -c
/// '..'`), for the guard to read it; a longer one is blocked (`parse.too_large`).
pub const MAX_PIPELINE_STAGES: usize = 128;

/// The verdict on one shell command line.
pub fn check_command(command: &str, ctx: &GuardContext<'_>) -> Verdict {
    check_command_in(command, ctx, None)
}

/// Like [`check_command`], with the command starting in `cwd` (workspace-relative) instead of
/// the workspace root.
pub fn check_command_in(command: &str, ctx: &GuardContext<'_>, cwd: Option<&str>) -> Verdict {
    let _nesting = budget::Nesting::enter();
    // A relative workspace is taken relative to the current directory, so absolute targets
    // inside it are recognised.
    let workspace = if ctx.workspace.is_absolute() {
        normalized(ctx.workspace)
    } else {
        std::borrow::Cow::Owned(normalize(
            &std::env::current_dir().unwrap_or_default().join(ctx.workspace),
        ))
    };
    let ctx = &GuardContext { workspace: &workspace };
    let start = match cwd {
        Some(dir) if !dir.is_empty() => normalize(&workspace.join(dir)),
        _ => workspace.to_path_buf(),
    };
    let parsed = parse_shell(command, Some(start));
    let mut violations = Vec::new();
    if let Some(err) = &parsed.error {
        violations.push(rules::unparseable(command, &err.0, parsed.clear_error));
    }
    // Rules compare a pipeline's stages with each other: a hostile pipeline of thousands costs
    // seconds. None of that length is read.
    let longest = parsed.pipelines.iter().map(Vec::len).max().unwrap_or(0);
    if longest > MAX_PIPELINE_STAGES {
        let beyond = format!("pipes {longest} commands into one another (at most {MAX_PIPELINE_STAGES} are read)");
        violations.push(rules::too_large(command, &beyond));
        let alternative = rules::alternative_for(&violations);
        return Verdict::from_violations(violations, alternative);
    }
    for pipeline in &parsed.pipelines {
        violations.extend(rules::check_pipeline(pipeline, ctx));
    }
    rules::check_text(command, &mut violations);
    rules::check_line(&parsed.pipelines, ctx, &mut violations);
    // A parse stopped for time, here or in a line this one carries, left text unread.
    if budget::parse_time_ran_out() && !violations.iter().any(|v| v.rule == rules::TOO_LARGE) {
        let beyond = format!(
            "takes the shell parser longer than {} ms to read",
            budget::MAX_PARSE_TIME.as_millis()
        );
        violations.push(rules::too_large(command, &beyond));
    }
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
        // A transaction is judged by what it holds: each step and each check as a call of its
        // own, the strongest verdict winning (the pipeline also judges each step again as it
        // runs). A step that is itself a transaction cannot be judged here: no nesting.
        "transaction" => {
            let calls = |key: &str| input.get(key).and_then(|v| v.as_array()).cloned().unwrap_or_default();
            let mut violations = Vec::new();
            let mut alternative = None;
            for step in calls("steps") {
                let tool = step.get("tool").and_then(|t| t.as_str()).unwrap_or_default();
                let verdict = if tool == "transaction" {
                    Verdict::from_violations(
                        vec![Violation {
                            category: Category::Parse,
                            rule: "tool.nested_transaction".into(),
                            severity: Risk::High,
                            matched: tool.to_string(),
                            description: "a transaction cannot be a step of another transaction".into(),
                            recommendation: Recommendation::Block,
                        }],
                        None,
                    )
                } else {
                    check_action(tool, step.get("input").unwrap_or(&serde_json::Value::Null), ctx)
                };
                alternative = alternative.or(verdict.alternative);
                violations.extend(verdict.violations);
            }
            for check in calls("verify") {
                let command = match check.get("command") {
                    Some(serde_json::Value::String(c)) => Some(c.as_str()),
                    Some(c) => c.get("run").and_then(|r| r.as_str()),
                    None if check.get("type").and_then(|t| t.as_str()) == Some("command_succeeds") => {
                        check.get("target").and_then(|t| t.as_str())
                    }
                    None => None,
                };
                if let Some(command) = command {
                    let verdict = check_command(command, ctx);
                    alternative = alternative.or(verdict.alternative);
                    violations.extend(verdict.violations);
                }
            }
            dedup(&mut violations);
            Verdict::from_violations(violations, alternative)
        }
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
    // Asked for every command by every rule: a plain byte scan, not a `rsplit` iterator.
    match word.bytes().rposition(|b| b == b'/') {
        Some(slash) => &word[slash + 1..],
        None => word,
    }
}

/// A program's name without its version (`python3.11`, `lua5.4`, `tclsh8.6`, `node18`,
/// `zsh-5.9` are `python`, `lua`, `tclsh`, `node`, `zsh`): a versioned interpreter or shell is
/// still that interpreter or shell. A name that is all digits is left as it is.
pub(crate) fn unversioned(name: &str) -> &str {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let base = base.strip_suffix('-').unwrap_or(base);
    if base.is_empty() {
        name
    } else {
        base
    }
}

/// Lexically normalizes a path: removes `.`, resolves `..` against the previous component,
/// and reads `/proc/PID/root` (any process's view of `/`) as `/`.
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
            // `/proc/PID/root` is that process's view of `/`: for the guard, `/` itself
            // (`/proc/1/root/etc/shadow` is `/etc/shadow`).
            Component::Normal(name) if name == "root" && in_proc_entry(&out) => out = PathBuf::from("/"),
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Whether `path` is `/proc/X`: one process's (or `self`'s) entry.
fn in_proc_entry(path: &Path) -> bool {
    let mut parts = path.components();
    matches!(
        (parts.next(), parts.next(), parts.next(), parts.next()),
        (Some(Component::RootDir), Some(Component::Normal(p)), Some(Component::Normal(_)), None) if p == "proc"
    )
}

/// `path` lexically normalized ([`normalize`]), borrowed when it is already spelled in its
/// normal form (no `.`, `..` or empty components, no trailing `/`, no `/proc/PID/root`): the workspace is, on
/// every call, and copying it was a measurable part of judging a command.
pub(crate) fn normalized(path: &Path) -> std::borrow::Cow<'_, Path> {
    let bytes = path.as_os_str().as_encoded_bytes();
    let parts = bytes.strip_prefix(b"/").unwrap_or(bytes);
    let spelled_normal = bytes.is_empty()
        || bytes == b"/"
        || (parts.split(|b| *b == b'/').all(|p| !matches!(p, b"" | b"." | b".."))
            && !(bytes.starts_with(b"/proc/") && bytes.windows(6).any(|w| w == b"/root/" || w.ends_with(b"/root"))));
    if spelled_normal {
        std::borrow::Cow::Borrowed(path)
    } else {
        std::borrow::Cow::Owned(normalize(path))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_root_normalizes_to_the_root() {
        assert_eq!(
            normalize(Path::new("/proc/self/../1/root/etc/shadow")),
            Path::new("/etc/shadow")
        );
        assert_eq!(normalized(Path::new("/proc/self/root/home")), Path::new("/home"));
        assert_eq!(normalized(Path::new("/proc/1/root")), Path::new("/"));
        // Not a process's root: kept as written.
        assert_eq!(normalized(Path::new("/proc/1/status")), Path::new("/proc/1/status"));
        assert_eq!(
            normalized(Path::new("/srv/proc/1/root/x")),
            Path::new("/srv/proc/1/root/x")
        );
    }

    #[test]
    fn basename_is_the_last_component() {
        for (word, base) in [
            ("/usr/bin/psql", "psql"),
            ("rm", "rm"),
            ("dir/", ""),
            ("/", ""),
            ("", ""),
            ("é/ü", "ü"),
        ] {
            assert_eq!(basename(word), base, "{word}");
            assert_eq!(basename(word), word.rsplit('/').next().unwrap_or(word), "{word}");
        }
    }

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(normalize(Path::new("/ws/a/../../etc")), PathBuf::from("/etc"));
        assert_eq!(normalize(Path::new("/ws/./b/")), PathBuf::from("/ws/b"));
    }

    #[test]
    fn normalized_borrows_only_what_is_already_normal() {
        for path in [
            "/",
            "/ws",
            "/work/medin-ws/task-1",
            "ws/a",
            "/ws/",
            "/ws//a",
            "/ws/./a",
            "/ws/..",
            "./a",
            "",
            "a/../..",
        ] {
            let path = Path::new(path);
            let got = normalized(path);
            assert_eq!(got.as_os_str(), normalize(path).as_os_str(), "{path:?}");
            let borrowed = matches!(got, std::borrow::Cow::Borrowed(_));
            assert_eq!(borrowed, path.as_os_str() == normalize(path).as_os_str(), "{path:?}");
        }
    }
}

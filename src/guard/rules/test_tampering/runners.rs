//! The test run itself: which commands run tests ([`runs_tests`]), text that only claims
//! success ([`only_claims_success`]), and the ways a run is faked or bent without touching a
//! test file — the runner's name rebound to something that prints a pass (`alias pytest='echo
//! 42 passed'`, `npm pkg set scripts.test="exit 0"`), a CI workflow switched off, and expected
//! outputs rewritten from the actual ones by the tool itself (`UPDATE_GOLDEN=1 go test`,
//! `vitest -u`, `cargo insta accept`).

use super::{CI_WEAKENED, EXPECTATIONS_REGENERATED, SHADOWED_RUNNER};
use crate::guard::rules::project::launched;
use crate::guard::rules::{block, warn};
use crate::guard::verdict::{Category, Risk, Violation};
use crate::guard::{basename, SimpleCommand};

/// Programs that are test runners by name.
pub(crate) const RUNNERS: &[&str] = &[
    "pytest",
    "py.test",
    "jest",
    "vitest",
    "mocha",
    "jasmine",
    "ava",
    "tap",
    "karma",
    "phpunit",
    "pest",
    "rspec",
    "cucumber",
    "cucumber-js",
    "behave",
    "nosetests",
    "nose2",
    "unittest",
    "tox",
    "nox",
    "ctest",
    "gotestsum",
    "cargo-nextest",
    "busted",
    "prove",
    "bats",
    "tape",
    "uvu",
    "trial",
    "wdio",
    "testcafe",
    "codeceptjs",
];

/// Build tools and package managers that run tests with a subcommand (`go test`, `npm run
/// test:unit`, `./gradlew check`).
const TEST_SUBCOMMAND_TOOLS: &[&str] = &[
    "go",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "dotnet",
    "mix",
    "swift",
    "rake",
    "rails",
    "sbt",
    "lein",
    "stack",
    "cabal",
    "dune",
    "flutter",
    "dart",
    "bazel",
    "nx",
    "ng",
    "zig",
    "mvn",
    "mvnw",
    "gradle",
    "gradlew",
    "make",
    "just",
    "task",
    "turbo",
    "lerna",
    "playwright",
    "cypress",
    "ctest",
];

/// Whether `argv` runs tests: a runner (`pytest`, `npx jest`, `python -m pytest`), a tool's
/// test subcommand (`go test`, `cargo nextest run`, `npm test`, `make check`), or a script
/// named for them (`./run_tests.sh`).
pub fn runs_tests(argv: &[String]) -> bool {
    let words = launched(argv);
    let Some(first) = words.first() else {
        return false;
    };
    let name = basename(first);
    if RUNNERS.contains(&name) {
        return true;
    }
    let stem = name.split('.').next().unwrap_or(name);
    if first.contains('/') && crate::guard::ascii::contains_lowercase(stem, "test") {
        return true;
    }
    if !TEST_SUBCOMMAND_TOOLS.contains(&name) {
        return false;
    }
    words[1..]
        .iter()
        .filter(|w| !w.starts_with('-'))
        .take(2)
        .any(|s| test_subcommand(s))
}

/// A subcommand word that runs tests: `test`, `test:unit`, `t`, `check`, `verify`, `spec`,
/// `nextest`, `llvm-cov`, `tarpaulin`, `insta`, `e2e`; cypress's `run`.
fn test_subcommand(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    w.starts_with("test")
        || w.ends_with(":test")
        || w.ends_with("-test")
        || w.starts_with("spec")
        || w.starts_with("e2e")
        || matches!(
            w.as_str(),
            "t" | "check" | "verify" | "nextest" | "llvm-cov" | "tarpaulin" | "insta" | "coverage"
        )
}

/// Whether `script` (shell text) does nothing but print and succeed: every command is `echo`,
/// `printf`, `true`, `:` or `exit 0`. A runner replaced by such text reports a pass without
/// running anything.
pub fn only_claims_success(script: &str) -> bool {
    let commands = split_commands(script);
    !commands.is_empty()
        && commands.iter().all(|c| {
            let mut words = c.split_whitespace();
            match words.next() {
                Some("echo" | "printf" | "true" | ":" | "/bin/true" | "/usr/bin/true") => true,
                Some("exit" | "return") => matches!(words.next(), None | Some("0")),
                _ => false,
            }
        })
}

/// The commands of a short shell text, split at newlines, `;`, `&&`, `||`, `|` and `&`
/// outside quotes; comments and a shebang dropped.
fn split_commands(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = script.chars().peekable();
    let push = |cur: &mut String, out: &mut Vec<String>| {
        let c = cur.trim();
        if !c.is_empty() && !c.starts_with('#') {
            out.push(c.to_string());
        }
        cur.clear();
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), _) if c == q => {
                quote = None;
                cur.push(c);
            }
            (Some(_), _) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.push(c);
            }
            (None, '\n' | ';' | '|' | '&') => {
                if matches!(chars.peek(), Some('|' | '&')) {
                    chars.next();
                }
                push(&mut cur, &mut out);
            }
            (None, _) => cur.push(c),
        }
    }
    push(&mut cur, &mut out);
    out
}

/// Names whose rebinding shadows a test run: the runners, and the tools whose subcommands run
/// tests.
fn runs_tests_by_name(name: &str) -> bool {
    RUNNERS.contains(&name) || TEST_SUBCOMMAND_TOOLS.contains(&name)
}

/// A package script that runs the project's checks: `test`, `test:unit`, `unit-test`,
/// `coverage`, `check`, `verify`, `ci`, `e2e`, `spec`.
fn check_script(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.contains("test") || matches!(k.as_str(), "coverage" | "check" | "verify" | "ci" | "spec") || k.starts_with("e2e")
}

/// The test runner's name bound to something that only prints a pass: `alias pytest='echo ..'`,
/// a shell function by the runner's name called to run the tests,
/// `npm pkg set scripts.test="exit 0"`, `npm set-script test "echo ok"`.
pub(super) fn shadowed(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let name = cmd.name();
    let mut push = |what: String| {
        out.push(block(Category::TestTampering, SHADOWED_RUNNER, Risk::High, cmd, what));
    };
    // `pytest() { echo '5 passed'; }; pytest`, `cargo() { echo 'test result: ok'; }; cargo
    // test`: the run calls a function by the runner's name, not the runner.
    if let Some(body) = cmd.function_body.as_deref() {
        if runs_tests(&cmd.argv) && only_claims_success(body.trim().trim_end_matches(';')) {
            push(format!(
                "runs `{}`, which a shell function defined on this line answers with `{}` instead of running a test",
                cmd.argv.join(" "),
                body.trim()
            ));
        }
        return;
    }
    if name == "alias" {
        for (n, v) in cmd.argv[1..].iter().filter_map(|a| a.split_once('=')) {
            if runs_tests_by_name(n) && only_claims_success(v) {
                push(format!(
                    "rebinds `{n}` to `{v}`, which prints a pass without running a test"
                ));
                return;
            }
        }
        return;
    }
    if !matches!(name, "npm" | "pnpm" | "yarn" | "bun") {
        return;
    }
    let args = &cmd.argv[1..];
    let set = args.windows(2).position(|w| w[0] == "pkg" && w[1] == "set");
    let mut scripts: Vec<(&str, &str)> = set
        .map(|k| {
            args[k + 2..]
                .iter()
                .filter_map(|a| a.strip_prefix("scripts.")?.split_once('='))
                .collect()
        })
        .unwrap_or_default();
    if let Some(k) = args.iter().position(|a| a == "set-script") {
        if let (Some(key), Some(value)) = (args.get(k + 1), args.get(k + 2)) {
            scripts.push((key, value));
        }
    }
    if let Some((key, value)) = scripts
        .into_iter()
        .find(|(k, v)| check_script(k) && only_claims_success(v))
    {
        push(format!(
            "sets the package's `{key}` script to `{value}`, which prints a pass without running a test"
        ));
    }
}

/// `gh workflow disable ci.yml`: the repository's CI workflow switched off, so its checks no
/// longer run on the agent's changes.
pub(super) fn workflow_disabled(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    if cmd.name() != "gh" {
        return;
    }
    let words: Vec<&str> = cmd.argv[1..]
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .take(2)
        .collect();
    if words == ["workflow", "disable"] {
        out.push(block(
            Category::TestTampering,
            CI_WEAKENED,
            Risk::High,
            cmd,
            "switches off a CI workflow: its checks no longer run on these changes",
        ));
    }
}

/// Environment settings that make a test run rewrite its expected outputs: both an action
/// (update, accept, bless, ...) and what it rewrites (golden, snapshot, ...) in the name, or
/// one of the tools' own switches.
fn regenerates_by_setting(assignment: &str, runs_tests: bool) -> bool {
    let Some((name, value)) = assignment.split_once('=') else {
        return false;
    };
    let value = value.trim_matches(|c| c == '"' || c == '\'').to_ascii_lowercase();
    if matches!(value.as_str(), "" | "0" | "false" | "no" | "off" | "never") {
        return false;
    }
    let n = name.to_ascii_uppercase();
    let action = [
        "UPDATE",
        "ACCEPT",
        "BLESS",
        "REGEN",
        "OVERWRITE",
        "RECORD",
        "FORCE_PASS",
    ]
    .iter()
    .any(|a| n.contains(a));
    let object = ["GOLDEN", "SNAPSHOT", "EXPECT", "BASELINE", "INSTA", "APPROV", "FIXTURE"]
        .iter()
        .any(|o| n.contains(o));
    (action && object) || (runs_tests && matches!(n.as_str(), "BLESS" | "TRYBUILD" | "UPDATE"))
}

/// Options of a test run that rewrite expected outputs from the actual ones.
fn regenerates_by_option(tool: &str, option: &str) -> bool {
    let o = option.split('=').next().unwrap_or(option).to_ascii_lowercase();
    matches!(
        o.as_str(),
        "--update"
            | "-update"
            | "--updatesnapshot"
            | "--update-snapshots"
            | "--update-snapshot"
            | "--snapshot-update"
            | "--update-goldens"
            | "--update-golden"
            | "-update-golden"
            | "--bless"
            | "--accept"
            | "--force-regen"
            | "--regen"
    ) || (option == "-u" && matches!(tool, "jest" | "vitest" | "bun" | "ava" | "playwright" | "deno"))
}

/// A test run told to rewrite its expected outputs (golden files, snapshots) from what the
/// code now produces: whatever the code does becomes what the tests expect. Warned: it is
/// also how a deliberate change of output is recorded.
pub(super) fn expectations_regenerated(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let words = launched(&cmd.argv);
    let tool = words.first().map(|w| basename(w)).unwrap_or("");
    let insta = tool == "cargo"
        && words.get(1).is_some_and(|w| w == "insta")
        && words
            .iter()
            .skip(2)
            .any(|w| matches!(w.as_str(), "accept" | "review" | "--accept" | "--review"));
    let runs = runs_tests(&cmd.argv);
    let setting = cmd.assignments.iter().any(|a| regenerates_by_setting(a, runs));
    let option = runs && words.iter().skip(1).any(|w| regenerates_by_option(tool, w));
    if insta || option || setting {
        out.push(warn(
            Category::TestTampering,
            EXPECTATIONS_REGENERATED,
            cmd,
            "rewrites the tests' expected outputs (golden files, snapshots) from what the code produces now",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn test_runs_are_recognised() {
        for line in [
            "pytest -q",
            "npx vitest run",
            "python -m pytest tests",
            "go test ./...",
            "cargo nextest run",
            "npm run test:unit",
            "./gradlew check",
            "./scripts/run_tests.sh",
            "bundle exec rspec",
        ] {
            assert!(runs_tests(&argv(line)), "{line}");
        }
        for line in [
            "npm run build",
            "go build ./...",
            "cargo build",
            "python app.py",
            "make",
            "ls tests",
        ] {
            assert!(!runs_tests(&argv(line)), "{line}");
        }
    }

    #[test]
    fn claims_of_success_are_told_from_work() {
        for s in [
            "exit 0",
            "true",
            "echo ok && exit 0",
            "#!/bin/sh\necho \"Tests: 1 passed; 0 failed\"\nexit 0",
            ":",
        ] {
            assert!(only_claims_success(s), "{s}");
        }
        for s in [
            "",
            "exit 1",
            "pytest -q",
            "echo start; pytest",
            "python -m pytest",
            "vitest run",
        ] {
            assert!(!only_claims_success(s), "{s}");
        }
    }
}

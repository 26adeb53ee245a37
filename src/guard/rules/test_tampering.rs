//! Test tampering: an agent whose work is judged by tests can forge the verdict instead of
//! earning it. Applies to shell commands and to the file tools (`write_file`, `edit_file`,
//! `delete_file`, `move_file`). The principles, each decided in one place:
//!
//! - **Tests deleted or hidden**: test files deleted (`rm`, `git rm`, `delete_file`, `find
//!   tests -delete` unless what find matches cannot be a test source, such as `*.py[co]`),
//!   emptied (`> tests/t.py`, `truncate -s 0`), or renamed so the runner no longer collects
//!   them (`mv tests/test_a.py tests/_test_a.py.bak`, a changed extension).
//! - **Tests weakened through any editor** ([`edits`]): `sed -i`, `perl -pi`, `ruby -pi`,
//!   `vim -c '%s/..'`, `ex`/`ed` scripts, `awk -i inplace`, `sd`, `yq -i`, run directly or by
//!   `find -exec`/`xargs`, and text appended with a redirect: skip markers added, tests
//!   renamed out of collection, assertions rewritten, lines deleted, the collection emptied
//!   (`items.clear()` in a conftest hook), the framework's report rewritten (`report.outcome =
//!   "passed"` in a conftest hook, `unittest.TestCase.run` replaced, also in
//!   `sitecustomize.py`) are blocked; a time limit raised is warned; an import
//!   fixed or an assertion renamed to another spelling of the same check passes. CI
//!   configuration edited so failures pass (`allow_failure: true`, `continue-on-error: true`,
//!   `|| true`) and `gh workflow disable` are blocked.
//! - **Shadowed runners** ([`runners`]): the test runner's name rebound to something that only
//!   prints a pass (an alias, a shell function called in the runner's place, the package's
//!   `test` script, a script named for the tests whose
//!   body is `echo`/`exit 0`); writes into the runner's own location (`node_modules/.bin`,
//!   `.venv/bin`, `vendor/bin`) are the effect model's (`judge::written`).
//! - **Forged results**: a test or coverage report (`junit.xml`, `coverage.xml`, `lcov.info`,
//!   `test-results/`) written by anything but a test run: the effect model's, by place.
//! - **Expected outputs overwritten by actual ones**: a copy of an actual output over an
//!   expected (golden, approved, snapshot) file is blocked; a program's output redirected
//!   there, or a test run told to rewrite its snapshots (`UPDATE_GOLDEN=1 go test`, `vitest
//!   -u`, `cargo insta accept`) is warned.
//!
//! The file tools compare a test file's old and new text: assertions removed or made trivial
//! and skip markers added are blocked, a rewritten assertion warned.

use std::path::Path;

use super::{block, violation, warn};
use crate::guard::carriers::printed_text;
use crate::guard::verdict::{Category, Recommendation, Risk, Violation};
use crate::guard::{basename, GuardContext, SimpleCommand};

pub const DELETE_TEST: &str = "test_tampering.delete_test";
pub const WEAKEN_ASSERTIONS: &str = "test_tampering.weaken_assertions";
pub const SKIP_MARKER: &str = "test_tampering.skip_marker";
pub const CHANGE_ASSERTION: &str = "test_tampering.change_assertion";
pub const SHADOWED_RUNNER: &str = "test_tampering.shadowed_runner";
pub const FORGED_RESULT: &str = "test_tampering.forged_result";
pub const CI_WEAKENED: &str = "test_tampering.ci_weakened";
pub const EXPECTED_FROM_ACTUAL: &str = "test_tampering.expected_from_actual";
pub const EXPECTATIONS_REGENERATED: &str = "test_tampering.expectations_regenerated";
pub const RELAXED_LIMIT: &str = "test_tampering.relaxed_limit";

pub mod edits;
pub mod runners;

pub use runners::{only_claims_success, runs_tests};

/// Whether a path names a test file or a test directory.
pub fn is_test_path(path: &str) -> bool {
    let p = path.trim_end_matches('/');
    let name = basename(p);
    let dirs = p
        .split('/')
        .any(|c| matches!(c, "tests" | "test" | "__tests__" | "spec" | "specs" | "testing"));
    let file = name.starts_with("test_")
        || name.ends_with("_test.py")
        || name.ends_with("_test.go")
        || name.ends_with("_test.rs")
        || name.ends_with("_spec.rb")
        || name.ends_with("Test.java")
        || name.ends_with("Tests.java")
        || name.ends_with("Test.kt")
        || name.ends_with("Tests.cs")
        || [".test.", ".spec."].iter().any(|m| name.contains(m))
        || name == "conftest.py";
    file || dirs
}

const SKIP_MARKERS: &[&str] = &[
    "#[ignore",
    "@pytest.mark.skip",
    "pytestmark = pytest.mark.skip",
    "collect_ignore",
    "@pytest.mark.xfail",
    "@unittest.skip",
    "pytest.skip(",
    "unittest.skip(",
    "it.skip(",
    "test.skip(",
    "describe.skip(",
    "xit(",
    "xdescribe(",
    "xtest(",
    "t.Skip(",
    "t.SkipNow(",
    "@Disabled",
    "@Ignore",
    "[Ignore",
    "[Fact(Skip",
    "skip(\"",
    "this.skip()",
    "it.todo(",
    "pending(",
];

const ASSERTIONS: &[&str] = &[
    "assert",
    "expect(",
    "should",
    "require.",
    "t.Error",
    "t.Fatal",
    "assertEquals",
    "assertThat",
    "#[should_panic",
    "check(",
    "verify(",
];

fn count(text: &str, needles: &[&str]) -> usize {
    needles.iter().map(|n| text.matches(n).count()).sum()
}

/// Trivially true assertions that replace real ones.
fn trivial_assertions(text: &str) -> bool {
    let sq: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    [
        "assert!(true)",
        "expect(true).toBe(true)",
        "assert1==1",
        "assert_eq!(1,1)",
        "assertTrue(True)",
        "assertTrue(true)",
        "assert(true)",
    ]
    .iter()
    .any(|p| sq.contains(p))
        || text.lines().any(|l| l.trim() == "assert True")
}

/// Rules for a shell command: test files deleted, emptied or renamed away; tests weakened by
/// an editor; runners shadowed; expected outputs overwritten.
pub fn check_command(cmd: &SimpleCommand, _ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let before = out.len();
    deleted_or_hidden(cmd, out);
    if out.len() > before {
        return;
    }
    written_into(cmd, out);
    if out.len() > before {
        return;
    }
    edited_in_place(cmd, out);
    found_and_edited(cmd, out);
    runners::shadowed(cmd, out);
    runners::workflow_disabled(cmd, out);
    runners::expectations_regenerated(cmd, out);
    expected_overwritten(cmd, out);
}

/// Test files deleted (`rm`, `git rm`, `find -delete`), emptied (`truncate`, `cp /dev/null`)
/// or renamed out of the suite (`mv`).
fn deleted_or_hidden(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let t = Category::TestTampering;
    let name = cmd.name();
    let operands = || cmd.argv.iter().skip(1).filter(|a| !a.starts_with('-'));
    let git_rm = name == "git" && cmd.argv.get(1).is_some_and(|s| s == "rm");
    if matches!(name, "rm" | "unlink" | "shred") || git_rm {
        if let Some(p) = operands().find(|a| {
            is_test_path(a)
                && !a.contains("node_modules")
                && !a.contains("__pycache__")
                && !a.ends_with(".pyc")
                && !a.contains("/tmp/")
                && !a.starts_with("/tmp")
        }) {
            out.push(block(
                t,
                DELETE_TEST,
                Risk::High,
                cmd,
                format!("deletes the test file(s) `{p}`"),
            ));
            return;
        }
    }
    if name == "find" {
        let deletes = cmd.argv.iter().enumerate().any(|(i, a)| {
            a == "-delete"
                || (a.starts_with("-exec") || a.starts_with("-ok"))
                    && cmd
                        .argv
                        .get(i + 1)
                        .is_some_and(|w| matches!(basename(w), "rm" | "unlink" | "shred"))
        });
        let root = cmd
            .argv
            .iter()
            .skip(1)
            .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
            .find(|a| is_test_path(a));
        if let (true, true, Some(p)) = (deletes, finds_test_sources(&cmd.argv), root) {
            out.push(block(
                t,
                DELETE_TEST,
                Risk::High,
                cmd,
                format!("find deletes test files under `{p}`"),
            ));
            return;
        }
    }
    if name == "truncate" || (name == "cp" && cmd.argv.get(1).is_some_and(|a| a == "/dev/null")) {
        if let Some(p) = operands()
            .skip(usize::from(name == "cp"))
            .find(|a| is_test_path(a) && !a.starts_with("/dev/"))
        {
            out.push(block(
                t,
                DELETE_TEST,
                Risk::High,
                cmd,
                format!("empties the test file `{p}`"),
            ));
            return;
        }
    }
    if name == "mv" {
        let ops: Vec<&String> = operands().collect();
        // `mv tests/test_a.py tests/_test_a.py.bak`: still under tests/, but no longer a test file.
        let ext = |p: &str| basename(p).rsplit_once('.').map(|(_, e)| e.to_string());
        let hidden = ops.len() == 2 && is_test_file(ops[0]) && {
            let dest = basename(ops[1].trim_end_matches('/'));
            // `tests/test_a.py.disabled`: named like a test, but not a source file any more.
            dest.contains('.') && (!is_test_file(dest) || ext(dest) != ext(ops[0]))
        };
        if hidden {
            out.push(block(
                t,
                DELETE_TEST,
                Risk::High,
                cmd,
                format!("renames `{}` so the test runner no longer collects it", ops[0]),
            ));
            return;
        }
        if ops.len() >= 2 && ops[..ops.len() - 1].iter().any(|a| is_test_path(a)) && !is_test_path(ops[ops.len() - 1]) {
            out.push(block(
                t,
                DELETE_TEST,
                Risk::High,
                cmd,
                "moves test files out of the test suite",
            ));
        }
    }
}

/// Whether what `find` matches can be a test source: no name test (everything under the root),
/// or a `-name`/`-iname` pattern for source files. `*.py[co]`, `*.log`, `__pycache__`,
/// `node_modules` are debris, not tests.
fn finds_test_sources(argv: &[String]) -> bool {
    const DEBRIS: &[&str] = &[
        "pyc", "pyo", "class", "o", "log", "tmp", "orig", "rej", "bak", "swp", "cache", "coverage", "lcov", "out",
    ];
    const DEBRIS_DIRS: &[&str] = &[
        "__pycache__",
        ".pytest_cache",
        "node_modules",
        "coverage",
        ".cache",
        "cache",
        "tmp",
        ".mypy_cache",
        "htmlcov",
        ".nyc_output",
        "build",
        "dist",
        "target",
        "out",
    ];
    let names: Vec<&str> = argv
        .windows(2)
        .filter(|w| matches!(w[0].as_str(), "-name" | "-iname"))
        .map(|w| w[1].as_str())
        .collect();
    if names.is_empty() {
        // `find tests -path '*/cache/*' -delete`: the junk named elsewhere.
        return !argv.iter().any(|a| {
            ["cache", "node_modules", "coverage", ".pyc"]
                .iter()
                .any(|j| a.contains(j))
        });
    }
    names.iter().any(|n| {
        let lower = n.to_ascii_lowercase();
        if DEBRIS_DIRS.contains(&lower.as_str()) {
            return false;
        }
        match lower.rsplit_once('.') {
            // `*.py[co]` is `*.pyc` and `*.pyo`.
            Some((_, ext)) => expand_class(ext).iter().any(|e| !DEBRIS.contains(&e.as_str())),
            None => true,
        }
    })
}

/// A glob word with its `[..]` classes expanded (`py[co]` → `pyc`, `pyo`); at most one class.
fn expand_class(word: &str) -> Vec<String> {
    match (word.find('['), word.find(']')) {
        (Some(a), Some(b)) if a < b => word[a + 1..b]
            .chars()
            .map(|c| format!("{}{c}{}", &word[..a], &word[b + 1..]))
            .collect(),
        _ => vec![word.to_string()],
    }
}

/// Text written into a file by a redirect: a skip marker or an emptied collection in a test
/// file, failures made to pass in CI; a test file emptied or overwritten with one word; a
/// script named for the tests (or a runner) replaced by one that only prints a pass.
fn written_into(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let t = Category::TestTampering;
    let name = cmd.name();
    let written = || printed_text(cmd).or_else(|| cmd.stdin_text.clone()).unwrap_or_default();
    for r in &cmd.redirects {
        if let Some(f) = edits::judge_text(r, &written()) {
            out.push(finding(cmd, f));
            return;
        }
    }
    if let Some(r) = cmd.redirects.iter().find(|r| is_test_path(r)) {
        let empty = cmd.argv.is_empty()
            || matches!(name, ":" | "true")
            || (name == "cat" && cmd.argv.get(1).is_some_and(|a| a == "/dev/null") && cmd.argv.len() == 2);
        // Emptying a test file (by its name) deletes its tests; other files under tests/
        // (fixtures, outputs) keep the warning below.
        if empty && !cmd.appends.contains(r) && is_test_file(r) {
            out.push(violation(
                t,
                DELETE_TEST,
                Recommendation::Block,
                Risk::High,
                &format!("{} > {r}", cmd.display()),
                format!("empties the test file `{r}`"),
            ));
            return;
        }
        // A fixture written with text is a new fixture; a test file overwritten with one
        // word, or anything emptied, loses what it held.
        let emptied =
            cmd.argv.is_empty() || (matches!(name, "echo" | "printf" | ":" | "true") && written().trim().is_empty());
        if cmd.appends.contains(r) || !(is_test_file(r) || emptied) {
            // Appending (a new test, a fixture line) removes nothing.
        } else if cmd.argv.is_empty()
            || (matches!(name, "echo" | "printf" | "true" | ":" | "cat")
                && cmd.argv.len() <= 2
                && cmd.stdin_text.is_none())
        {
            out.push(warn(t, DELETE_TEST, cmd, format!("overwrites the test file `{r}`")));
            return;
        }
    }
    // `echo 'exit 0' > run_tests.sh`, `cat > bin/rspec <<EOF echo ok EOF`: the test runner
    // replaced by one that only prints a pass.
    if let Some(r) = cmd.redirects.iter().find(|r| {
        let b = basename(r).to_ascii_lowercase();
        let stem = b.split('.').next().unwrap_or(&b);
        (b.contains("test") && (b.ends_with(".sh") || !b.contains('.'))) || runners::RUNNERS.contains(&stem)
    }) {
        if only_claims_success(&written()) {
            out.push(block(
                t,
                DELETE_TEST,
                Risk::High,
                cmd,
                format!("replaces the test runner `{r}` with one that only prints a pass"),
            ));
        }
    }
}

/// A finding of [`edits`] as a violation on `cmd`.
fn finding(cmd: &SimpleCommand, f: edits::Finding) -> Violation {
    let risk = if f.recommendation == Recommendation::Block {
        Risk::High
    } else {
        Risk::Medium
    };
    violation(
        Category::TestTampering,
        f.rule,
        f.recommendation,
        risk,
        &cmd.display(),
        f.what,
    )
}

/// The strongest finding of an in-place edit on the files it names. An edit whose files come
/// from stdin (`.. | xargs sed -i ..`) is judged as if on a test file, but only what would be
/// blocked there counts: a script that rewrites assertions only matters in tests.
fn edited_in_place(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    let Some(edit) = edits::read(cmd) else {
        return;
    };
    let stand_in = edit.files.is_empty() && cmd.args_from_stdin;
    let files: Vec<&str> = if stand_in {
        vec!["tests/test_from_stdin"]
    } else {
        edit.files.clone()
    };
    let strongest = files
        .iter()
        .flat_map(|f| edit.changes.iter().filter_map(move |c| edits::judge(f, c)))
        .filter(|f| !stand_in || f.recommendation == Recommendation::Block)
        .max_by_key(|f| f.recommendation);
    if let Some(f) = strongest {
        out.push(finding(cmd, f));
    }
}

/// `find tests -name 'test_*.py' -exec sed -i 's/assert /# assert /' {} +`: the edit runs on
/// every file find matches, which `{}` stands for. Judged with a stand-in path built from the
/// root and the name pattern, when those say the files are tests.
fn found_and_edited(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    if cmd.name() != "find" {
        return;
    }
    let roots: Vec<&str> = cmd.argv[1..]
        .iter()
        .map(String::as_str)
        .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
        .collect();
    let name = cmd
        .argv
        .windows(2)
        .find(|w| matches!(w[0].as_str(), "-name" | "-iname"))
        .map(|w| w[1].as_str());
    let root = roots.first().copied().unwrap_or(".");
    let path = edits::stand_in(root, name);
    if !is_test_path(&path) {
        return;
    }
    let mut i = 0;
    while i < cmd.argv.len() {
        if matches!(cmd.argv[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let words: Vec<String> = cmd.argv[i + 1..]
                .iter()
                .take_while(|w| *w != ";" && *w != "+")
                .map(|w| w.replace("{}", &path))
                .collect();
            i += words.len();
            let exec = SimpleCommand {
                argv: words,
                ..SimpleCommand::default()
            };
            if !exec.argv.is_empty() {
                let before = out.len();
                edited_in_place(&exec, out);
                if let Some(v) = out.get_mut(before..).and_then(|v| v.first_mut()) {
                    v.matched = crate::guard::rules::cut(&cmd.display(), 200);
                }
            }
        }
        i += 1;
    }
}

/// `cp target/out/actual.json tests/golden/expected.json`, `mv x.received.txt x.approved.txt`,
/// `cat out/actual.json > tests/golden/expected.json`: an actual output copied over what the
/// test expects, so it passes whatever the code does (blocked). A program's output redirected
/// into an expected file regenerates it (warned).
fn expected_overwritten(cmd: &SimpleCommand, out: &mut Vec<Violation>) {
    use crate::guard::effects::holds_expected;
    let name = cmd.name();
    let copies = matches!(name, "cp" | "mv" | "ln" | "install" | "rsync" | "ditto");
    if !copies && cmd.redirects.is_empty() {
        return;
    }
    let positional: Vec<&str> = cmd
        .argv
        .iter()
        .skip(1)
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let into_expected = |p: &str| holds_expected(p) && !p.starts_with('/') && !p.starts_with('$');
    if copies {
        if let Some((dest, sources)) = positional.split_last() {
            if into_expected(dest) && sources.iter().any(|s| actual_output(s)) {
                out.push(block(
                    Category::TestTampering,
                    EXPECTED_FROM_ACTUAL,
                    Risk::High,
                    cmd,
                    format!(
                        "copies actual output over `{dest}`, what the test expects: it passes whatever the code does"
                    ),
                ));
            }
        }
        return;
    }
    let Some(dest) = cmd
        .redirects
        .iter()
        .find(|r| into_expected(r) && !cmd.appends.contains(r))
    else {
        return;
    };
    if matches!(name, "echo" | "printf") || (name == "cat" && positional.is_empty()) || cmd.argv.is_empty() {
        // Text written by hand: a new expectation, judged like any fixture.
        return;
    }
    if name == "cat" && positional.iter().any(|s| actual_output(s)) {
        out.push(block(
            Category::TestTampering,
            EXPECTED_FROM_ACTUAL,
            Risk::High,
            cmd,
            format!("copies actual output over `{dest}`, what the test expects: it passes whatever the code does"),
        ));
    } else if !is_reader(name) {
        out.push(warn(
            Category::TestTampering,
            EXPECTATIONS_REGENERATED,
            cmd,
            format!("writes a program's output over `{dest}`, what the test expects"),
        ));
    }
}

/// A file a program wrote as its actual output, not a copy of an expectation: its words say
/// so (`actual_output.json` even beside the golden files), and its name does not say
/// expected unless it ends as an actual one does (`x.snap.new`, `x.received.txt`).
fn actual_output(path: &str) -> bool {
    use crate::guard::effects::{holds_actual, holds_expected};
    let file = basename(path.trim_end_matches('/'));
    let last = file.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    holds_actual(path) && (!holds_expected(file) || matches!(last.as_str(), "new" | "actual" | "received" | "out"))
}

/// Programs that only reformat what they read (`jq . expected.json > expected.json` is still a
/// copy): judged like `cat`.
fn is_reader(name: &str) -> bool {
    matches!(name, "cat" | "jq" | "sort" | "head" | "tail" | "tr" | "cut" | "grep")
}

/// Whether a file name (not its directory) says it is a test file.
fn is_test_file(path: &str) -> bool {
    let name = basename(path.trim_end_matches('/'));
    is_test_path(name) && !name.is_empty()
}

/// Rules for the file tools' inputs. `write_file` over an existing test file compares with
/// its current content (the one file read the guard does).
pub fn check_file_tool(tool: &str, input: &serde_json::Value, ctx: &GuardContext<'_>) -> Vec<Violation> {
    let s = |k: &str| input.get(k).and_then(|v| v.as_str()).unwrap_or("");
    let t = Category::TestTampering;
    let mut out = Vec::new();
    let path = if tool == "move_file" { s("from") } else { s("path") };
    if !is_test_path(path) {
        return out;
    }
    let mk = |rule: &str, rec: Recommendation, what: String| violation(t, rule, rec, Risk::High, path, what);
    match tool {
        "delete_file" => out.push(mk(
            DELETE_TEST,
            Recommendation::Block,
            format!("deletes the test file `{path}`"),
        )),
        "move_file" if !is_test_path(s("to")) => out.push(mk(
            DELETE_TEST,
            Recommendation::Block,
            format!("moves the test file `{path}` out of the test suite"),
        )),
        "edit_file" => compare(s("old_string"), s("new_string"), path, &mut out),
        "write_file" => {
            let full = ctx.workspace.join(path);
            if full.starts_with(ctx.workspace) && Path::new(&full).is_file() {
                if let Ok(old) = std::fs::read_to_string(&full) {
                    compare(&old, s("content"), path, &mut out);
                }
            }
        }
        _ => {}
    }
    out
}

fn compare(old: &str, new: &str, path: &str, out: &mut Vec<Violation>) {
    let t = Category::TestTampering;
    let added_skips = count(new, SKIP_MARKERS) > count(old, SKIP_MARKERS);
    if added_skips {
        out.push(violation(
            t,
            SKIP_MARKER,
            Recommendation::Block,
            Risk::High,
            path,
            format!("adds a skip/ignore marker to `{path}`"),
        ));
        return;
    }
    let (before, after) = (count(old, ASSERTIONS), count(new, ASSERTIONS));
    if after < before {
        out.push(violation(
            t,
            WEAKEN_ASSERTIONS,
            Recommendation::Block,
            Risk::High,
            path,
            format!("removes assertions from `{path}` ({before} → {after})"),
        ));
    } else if trivial_assertions(new) && !trivial_assertions(old) {
        out.push(violation(
            t,
            WEAKEN_ASSERTIONS,
            Recommendation::Block,
            Risk::High,
            path,
            format!("replaces assertions in `{path}` with ones that always pass"),
        ));
    } else if let Some(line) = changed_assertion(old, new) {
        // Rewriting what an assertion expects may be a legitimate test update, or making the
        // test match wrong output: a warning here, denied inside TDD loops.
        out.push(violation(
            t,
            CHANGE_ASSERTION,
            Recommendation::Warn,
            Risk::Medium,
            line.trim(),
            format!("changes an assertion in `{path}`; in a TDD loop, fix the code, not the expected value"),
        ));
    }
}

/// An assertion line of `old` that `new` no longer has (it was rewritten, not just moved).
fn changed_assertion<'a>(old: &'a str, new: &str) -> Option<&'a str> {
    let kept: std::collections::HashSet<&str> = new.lines().map(str::trim).collect();
    old.lines().find(|l| {
        let t = l.trim();
        !t.is_empty() && ASSERTIONS.iter().any(|a| t.contains(a)) && !kept.contains(t)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths_are_recognised() {
        for p in [
            "tests/foo.rs",
            "src/test_x.py",
            "a/b_test.go",
            "web/app.spec.ts",
            "__tests__/x.js",
            "conftest.py",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in ["src/lib.rs", "README.md", "latest.txt", "contest.py"] {
            assert!(!is_test_path(p), "{p}");
        }
    }
}

//! Test tampering, for TDD loops: deleting test files (`rm`, `git rm`, `delete_file`,
//! truncation), weakening assertions (an edit that removes `assert`/`expect` lines, `sed -i`
//! deleting them), and adding skip/ignore markers (`#[ignore]`, `@pytest.mark.skip`,
//! `it.skip(`, `t.Skip(`, `@Disabled`). Applies to shell commands and to the file tools
//! (`write_file`, `edit_file`, `delete_file`, `move_file`).
//!
//! In shell commands also: `find tests -delete`, emptying a test file (`> tests/t.py`,
//! `truncate -s 0`), renaming one so the runner no longer collects it
//! (`mv tests/test_a.py tests/_test_a.py.bak`), `sed -i`/`perl -pi` scripts that rename test
//! functions or remove `#[test]` (in any file: Rust keeps unit tests in `src/`), and skip
//! markers written into a test file by a redirect (`pytestmark = pytest.mark.skip`,
//! `collect_ignore`), a test runner overwritten with `exit 0`, renames that change a test
//! file's extension (`.py.disabled`). Renaming an assertion method
//! (`s/assertEquals/assertEqual/`) and appending to a test file are ordinary work.

use std::path::Path;

use super::{block, violation, warn};
use crate::guard::carriers::printed_text;
use crate::guard::verdict::{Category, Recommendation, Risk, Violation};
use crate::guard::{basename, GuardContext, SimpleCommand};

pub const DELETE_TEST: &str = "test_tampering.delete_test";
pub const WEAKEN_ASSERTIONS: &str = "test_tampering.weaken_assertions";
pub const SKIP_MARKER: &str = "test_tampering.skip_marker";
pub const CHANGE_ASSERTION: &str = "test_tampering.change_assertion";

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

/// Rules for a shell command: deleting or truncating test files, `sed -i` on them.
pub fn check_command(cmd: &SimpleCommand, _ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
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
        // Caches and build output found under tests/ are not tests.
        let junk = cmd.argv.iter().any(|a| {
            ["cache", ".pyc", ".log", ".tmp", ".orig", "node_modules", "coverage"]
                .iter()
                .any(|j| a.contains(j))
        });
        let root = cmd
            .argv
            .iter()
            .skip(1)
            .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
            .find(|a| is_test_path(a));
        if let (true, false, Some(p)) = (deletes, junk, root) {
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
            return;
        }
    }
    if let Some(r) = cmd.redirects.iter().find(|r| is_test_path(r)) {
        // Skip markers written into a test file (`printf 'pytestmark = pytest.mark.skip' >> t.py`).
        let written = printed_text(cmd).or_else(|| cmd.stdin_text.clone()).unwrap_or_default();
        if count(&written, SKIP_MARKERS) > 0 {
            out.push(block(
                t,
                SKIP_MARKER,
                Risk::High,
                cmd,
                format!("writes a skip/ignore marker into `{r}`"),
            ));
            return;
        }
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
        if cmd.appends.contains(r) {
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
    // `echo 'exit 0' > run_tests.sh`: the test runner replaced by one that always passes.
    if let Some(r) = cmd.redirects.iter().find(|r| {
        let b = basename(r).to_ascii_lowercase();
        b.contains("test") && (b.ends_with(".sh") || !b.contains('.'))
    }) {
        let written = printed_text(cmd).unwrap_or_default();
        let body: Vec<&str> = written
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("#!"))
            .collect();
        if !body.is_empty() && body.iter().all(|l| matches!(*l, "exit 0" | "true" | ":" | "exit")) {
            out.push(block(
                t,
                DELETE_TEST,
                Risk::High,
                cmd,
                format!("replaces the test runner `{r}` with one that always passes"),
            ));
            return;
        }
    }
    // `sed -i SCRIPT FILES`, `perl -pi -e SCRIPT FILES`: an in-place edit.
    let in_place = if name == "sed" && cmd.argv.iter().any(|a| a.starts_with("-i") || a == "--in-place") {
        let ops: Vec<&String> = operands().collect();
        let script = cmd
            .argv
            .iter()
            .position(|a| a == "-e" || a == "--expression")
            .and_then(|i| cmd.argv.get(i + 1))
            .or(ops.first().copied());
        script.map(|s| (s.as_str(), ops.into_iter().filter(|o| *o != s).collect::<Vec<_>>()))
    } else if name == "perl"
        && cmd
            .argv
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
    {
        let e = cmd.argv.iter().position(|a| a.starts_with('-') && a.ends_with('e'));
        e.and_then(|i| cmd.argv.get(i + 1)).map(|s| {
            let files: Vec<&String> = cmd.argv[e.unwrap_or(0) + 2..]
                .iter()
                .filter(|a| !a.starts_with('-'))
                .collect();
            (s.as_str(), files)
        })
    } else {
        None
    };
    if let Some((script, files)) = in_place {
        // Renaming test functions or removing test attributes hides tests in any file.
        let hides = [
            "def test",
            "fn test",
            "func Test",
            "#[test]",
            "#\\[test\\]",
            "@Test",
            "#[cfg(test)]",
            "#\\[cfg(test)\\]",
        ]
        .iter()
        .any(|m| script.contains(m));
        if hides && !files.is_empty() {
            out.push(block(
                t,
                WEAKEN_ASSERTIONS,
                Risk::High,
                cmd,
                "renames test functions or removes test attributes in place",
            ));
            return;
        }
        if let Some(p) = files.iter().find(|a| is_test_path(a)) {
            if assertion_rename(script) {
                return;
            }
            let weakens = script.contains("assert")
                || script.contains("expect")
                || script.ends_with('d')
                || script.contains("skip")
                || script.contains("ignore");
            if weakens {
                out.push(block(
                    t,
                    WEAKEN_ASSERTIONS,
                    Risk::High,
                    cmd,
                    format!("edits assertions or skip markers in `{p}` in place"),
                ));
            } else {
                out.push(warn(
                    t,
                    WEAKEN_ASSERTIONS,
                    cmd,
                    format!("edits the test file `{p}` in place"),
                ));
            }
        }
    }
}

/// `s/assertEquals/assertEqual/g`: one assertion method renamed to another (a deprecated
/// alias replaced); every assertion stays and checks the same thing.
fn assertion_rename(script: &str) -> bool {
    let Some(body) = script.strip_prefix('s') else {
        return false;
    };
    let Some(sep) = body.chars().next().filter(|c| !c.is_alphanumeric() && *c != '\\') else {
        return false;
    };
    let parts: Vec<&str> = body[sep.len_utf8()..].split(sep).collect();
    let ident = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    let assertion = |w: &str| {
        let lower = w.to_ascii_lowercase();
        lower.contains("assert") || lower.contains("expect")
    };
    parts.len() == 3
        && parts[2].chars().all(|c| c == 'g')
        && ident(parts[0])
        && ident(parts[1])
        && assertion(parts[0])
        && assertion(parts[1])
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

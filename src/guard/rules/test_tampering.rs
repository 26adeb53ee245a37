//! Test tampering, for TDD loops: deleting test files (`rm`, `git rm`, `delete_file`,
//! truncation), weakening assertions (an edit that removes `assert`/`expect` lines, `sed -i`
//! deleting them), and adding skip/ignore markers (`#[ignore]`, `@pytest.mark.skip`,
//! `it.skip(`, `t.Skip(`, `@Disabled`). Applies to shell commands and to the file tools
//! (`write_file`, `edit_file`, `delete_file`, `move_file`).

use std::path::Path;

use super::{block, violation, warn};
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
    if name == "mv" {
        let ops: Vec<&String> = operands().collect();
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
        if cmd.argv.is_empty()
            || (matches!(name, "echo" | "printf" | "true" | ":" | "cat")
                && cmd.argv.len() <= 2
                && cmd.stdin_text.is_none())
        {
            out.push(warn(t, DELETE_TEST, cmd, format!("overwrites the test file `{r}`")));
            return;
        }
    }
    if name == "sed" && cmd.argv.iter().any(|a| a.starts_with("-i") || a == "--in-place") {
        if let Some(p) = operands().skip(1).find(|a| is_test_path(a)) {
            let script = operands().next().map(String::as_str).unwrap_or("");
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

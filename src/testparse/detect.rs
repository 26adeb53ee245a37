//! Which runner printed this? Strong, runner-specific markers are checked first (a JUnit
//! document, jest's JSON, test2json events, nextest's `Summary`, node's `ℹ tests`, pytest's
//! session banner, jest's `Test Suites:`, unittest's `Ran N tests`), then weaker ones (libtest
//! `test result:`, go package lines, TAP test points, pytest's bare `-q` summary, compiler
//! errors). `None` when nothing is recognised.

use super::{gotest, jest, node, Framework};

/// Detect the framework from ANSI-stripped output.
pub fn detect(out: &str) -> Option<Framework> {
    let trimmed = out.trim_start();
    let lines: Vec<&str> = out.lines().collect();
    let any = |f: &dyn Fn(&str) -> bool| lines.iter().any(|l| f(l));
    if trimmed.starts_with("<?xml") || trimmed.starts_with("<testsuite") || out.contains("<testsuites") {
        return Some(Framework::Junit);
    }
    if jest::json_start(out).is_some() {
        return Some(Framework::Jest);
    }
    if gotest::is_json(out) {
        return Some(Framework::Go);
    }
    if out.contains("Nextest run ID")
        || any(&|l| {
            l.starts_with("error: command `") && l.contains("--no-run --message-format json-render-diagnostics")
        })
        || any(&|l| l.trim_start().starts_with("Summary [") && l.contains(" run: "))
    {
        return Some(Framework::Nextest);
    }
    if any(&|l| l.starts_with("ℹ tests "))
        || (node::is_tap(out) && any(&|l| l.trim_start().starts_with("duration_ms")))
        || (any(&|l| l.starts_with("TAP version")) && any(&|l| l.starts_with("# suites ")))
    {
        return Some(Framework::Node);
    }
    if any(&|l| l.starts_with("==") && l.contains(" test session starts ")) {
        return Some(Framework::Pytest);
    }
    if any(&|l| l.starts_with("Test Suites:")) || any(&|l| l.starts_with("No tests found, exiting with code")) {
        return Some(Framework::Jest);
    }
    if any(&|l| l.starts_with("Ran ") && (l.contains(" tests in ") || l.contains(" test in "))) {
        return Some(Framework::Unittest);
    }
    if any(&|l| l.starts_with("test result: "))
        || any(&|l| l.starts_with("running ") && (l.ends_with(" tests") || l.ends_with(" test")))
    {
        return Some(Framework::Libtest);
    }
    if any(&|l| l.starts_with("=== RUN ") || l.starts_with("--- FAIL: ") || is_go_package_line(l)) {
        return Some(Framework::Go);
    }
    if any(&|l| l.starts_with("TAP version")) || any(&|l| is_tap_point(l)) {
        return Some(Framework::Tap);
    }
    if any(&|l| is_pytest_short_summary(l)) {
        return Some(Framework::Pytest);
    }
    if any(&|l| l.starts_with("error: could not compile `") || l.starts_with("error[E")) {
        return Some(Framework::Libtest);
    }
    None
}

fn is_go_package_line(l: &str) -> bool {
    let mut parts = l.split('\t');
    let head = parts.next().unwrap_or("").trim();
    let pkg = parts.next();
    matches!(head, "ok" | "FAIL" | "?") && pkg.is_some_and(|p| !p.trim().is_empty())
}

fn is_tap_point(l: &str) -> bool {
    let rest = l.strip_prefix("not ok ").or_else(|| l.strip_prefix("ok "));
    rest.is_some_and(|r| r.chars().next().is_some_and(|c| c.is_ascii_digit()))
}

/// pytest `-q`'s last line: `3 failed, 2 passed in 0.12s` / `no tests ran in 0.01s`.
fn is_pytest_short_summary(l: &str) -> bool {
    let t = l.trim().trim_matches('=').trim();
    let Some((items, time)) = t.rsplit_once(" in ") else {
        return false;
    };
    let secs = time.split_whitespace().next().unwrap_or("");
    if !secs.starts_with(|c: char| c.is_ascii_digit()) || !(secs.ends_with('s') || time.contains(" second")) {
        return false;
    }
    items == "no tests ran"
        || items.split(", ").all(|it| {
            it.split_once(' ').is_some_and(|(n, w)| {
                n.parse::<u64>().is_ok()
                    && matches!(
                        w,
                        "passed"
                            | "failed"
                            | "error"
                            | "errors"
                            | "skipped"
                            | "xfailed"
                            | "xpassed"
                            | "deselected"
                            | "warning"
                            | "warnings"
                    )
            })
        })
}

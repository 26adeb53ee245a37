//! JUnit XML reports (nextest `--profile` JUnit, pytest `--junitxml`, jest-junit, and the
//! many other producers of `<testsuites>/<testsuite>/<testcase>`).
//!
//! Counting is per `<testcase>`: a `<failure>` or `<error>` child → failed, `<skipped>` →
//! skipped, otherwise passed (the suites' `tests=`/`failures=` attributes are not trusted:
//! producers disagree on them). The failure name is the testcase's `name` attribute (trimmed).
//! Text outside the XML (e.g. a runner's console output before it) is ignored. Truncated XML
//! (an element left open) has no summary, so the truncation rule of [`super`] applies.

use super::{split_location, xml, Failure, Parsed};

/// Parse a JUnit XML document (possibly preceded by other text).
pub fn parse(out: &str) -> Parsed {
    let mut p = Parsed::default();
    let start = out
        .find("<?xml")
        .or_else(|| out.find("<testsuites"))
        .or_else(|| out.find("<testsuite"));
    let Some(start) = start else {
        return p;
    };
    let doc = xml::parse(&out[start..]);
    let mut cases = Vec::new();
    for r in &doc.roots {
        collect_cases(r, &mut cases);
    }
    if doc
        .roots
        .iter()
        .any(|r| r.name == "testsuites" || r.name == "testsuite")
    {
        p.recognised = true;
    }
    for c in &cases {
        let failure = c.children.iter().find(|ch| ch.name == "failure" || ch.name == "error");
        if let Some(fe) = failure {
            p.per_test.failed += 1;
            p.failures.push(failure_from(c, fe));
        } else if c.children.iter().any(|ch| ch.name == "skipped") {
            p.per_test.skipped += 1;
        } else {
            p.per_test.passed += 1;
        }
    }
    if doc.complete {
        p.summary = Some(p.per_test);
    }
    p
}

fn collect_cases<'a>(e: &'a xml::Element, out: &mut Vec<&'a xml::Element>) {
    if e.name == "testcase" {
        out.push(e);
        return;
    }
    for c in &e.children {
        collect_cases(c, out);
    }
}

fn failure_from(case: &xml::Element, fe: &xml::Element) -> Failure {
    let text = fe.text.trim_matches('\n').to_string();
    let lines: Vec<&str> = text.lines().collect();
    let panic = (0..lines.len()).find_map(|k| super::libtest::panic_at(&lines, k));
    let message = match (fe.attr("message"), &panic) {
        // Rust: the attribute only says where it panicked; the text has the message.
        (_, Some((_, _, msg))) if !msg.is_empty() => msg.clone(),
        (Some(m), _) if !m.trim().is_empty() => m.to_string(),
        _ => lines
            .iter()
            .find(|l| !l.trim().is_empty())
            .unwrap_or(&"")
            .trim()
            .to_string(),
    };
    let mut file = case.attr("file").map(str::to_string);
    let mut line = case.attr("line").and_then(|l| l.parse().ok());
    if file.is_none() {
        if let Some((f, l)) = location_in(&text) {
            file = Some(f);
            line = Some(l);
        }
    }
    Failure {
        name: case.attr("name").unwrap_or("").trim().to_string(),
        file,
        line,
        message,
        stack: (!text.is_empty()).then_some(text),
    }
}

/// A `path:line` in a failure's text: `panicked at src/lib.rs:25:9:`, pytest's
/// `tests/test_x.py:13: AssertionError`, or a JS frame `(/abs/x.test.js:6:19)`.
fn location_in(text: &str) -> Option<(String, u32)> {
    for l in text.lines() {
        let l = l.trim();
        if let Some((_, after)) = l.split_once("panicked at ") {
            if let Some(loc) = split_location(after) {
                return Some(loc);
            }
        }
        if let Some((loc, _)) = l.split_once(": ") {
            if !loc.contains(' ') {
                if let Some(found) = split_location(loc) {
                    return Some(found);
                }
            }
        }
        if l.starts_with("at ") && !l.contains("node_modules") && !l.contains("node:") {
            let loc = l
                .rsplit_once('(')
                .map(|(_, r)| r)
                .unwrap_or(&l[3..])
                .trim_end_matches(')');
            if let Some(found) = split_location(loc) {
                return Some(found);
            }
        }
    }
    None
}

//! jest: the default text reporter (`PASS`/`FAIL file`, `● suite › test` failure blocks,
//! `● Test suite failed to run`, the `Tests: …, N total` line, `No tests found`) and
//! `jest --json` (possibly preceded by other output).
//!
//! Trust: the last column-0 `Tests:` line (console output is indented, so a test printing one
//! is not believed). Counting: todo → skipped. Names are `describe › … › test`, as jest prints
//! them (JSON: `ancestorTitles` + `title` joined the same way). A suite that failed to run is a
//! failure named by its file; it does not change jest's own counts.

use std::collections::HashSet;

use serde_json::Value;

use super::{split_location, Counts, Failure, Parsed};

/// Parse jest output, text or `--json` (ANSI already stripped).
pub fn parse(out: &str) -> Parsed {
    match json_start(out) {
        Some(k) => parse_json(&out[k..]),
        None => parse_text(out),
    }
}

/// Where jest's `--json` object starts, if the output holds one.
pub fn json_start(out: &str) -> Option<usize> {
    let k = out.find("{\"num")?;
    let v: Result<Value, _> = serde_json::Deserializer::from_str(&out[k..])
        .into_iter::<Value>()
        .next()?;
    v.ok().filter(|v| v.get("numTotalTests").is_some()).map(|_| k)
}

fn parse_json(s: &str) -> Parsed {
    let mut p = Parsed::default();
    let Some(Ok(v)) = serde_json::Deserializer::from_str(s).into_iter::<Value>().next() else {
        return p;
    };
    p.recognised = true;
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    p.summary = Some(Counts {
        passed: n("numPassedTests"),
        failed: n("numFailedTests"),
        skipped: n("numPendingTests").saturating_add(n("numTodoTests")),
    });
    p.announced = Some(n("numTotalTests"));
    let empty = Vec::new();
    for suite in v.get("testResults").and_then(Value::as_array).unwrap_or(&empty) {
        let file = suite.get("name").and_then(Value::as_str).unwrap_or("").to_string();
        let asserts = suite
            .get("assertionResults")
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        let mut any_failed = false;
        for a in asserts {
            if a.get("status").and_then(Value::as_str) != Some("failed") {
                continue;
            }
            any_failed = true;
            let mut parts: Vec<String> = a
                .get("ancestorTitles")
                .and_then(Value::as_array)
                .unwrap_or(&empty)
                .iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect();
            parts.push(a.get("title").and_then(Value::as_str).unwrap_or("").to_string());
            let msgs: Vec<&str> = a
                .get("failureMessages")
                .and_then(Value::as_array)
                .unwrap_or(&empty)
                .iter()
                .filter_map(Value::as_str)
                .collect();
            let mut f = from_error_text(&parts.join(" › "), &msgs.join("\n"));
            if f.file.is_none() && !file.is_empty() {
                f.file = Some(file.clone());
            }
            p.failures.push(f);
        }
        let msg = suite.get("message").and_then(Value::as_str).unwrap_or("");
        if !any_failed && suite.get("status").and_then(Value::as_str) == Some("failed") && !msg.is_empty() {
            // `● Test suite failed to run` then the indented error.
            let body: Vec<&str> = msg.lines().filter(|l| !l.trim_start().starts_with("● ")).collect();
            let indent = body
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| l.len() - l.trim_start().len())
                .min()
                .unwrap_or(0);
            let body: Vec<&str> = body.iter().map(|l| l.get(indent..).unwrap_or(l.trim_start())).collect();
            let mut f = from_error_text(&file, body.join("\n").trim_matches('\n'));
            f.file = Some(file.clone());
            p.failures.push(f);
        }
    }
    p
}

/// Split an error text into message and `at …` stack; the first frame outside node_modules
/// gives the location.
fn from_error_text(name: &str, text: &str) -> Failure {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.trim_start().starts_with("at "));
    let message_lines: Vec<&str> = lines[..at.unwrap_or(lines.len())]
        .iter()
        .copied()
        .take_while(|l| !is_code_frame(l))
        .collect();
    let stack: Vec<&str> = lines
        .iter()
        .skip(at.unwrap_or(lines.len()))
        .map(|l| l.trim())
        .filter(|l| l.starts_with("at "))
        .collect();
    let loc = stack.iter().find_map(|l| frame_location(l));
    Failure {
        name: name.to_string(),
        file: loc.as_ref().map(|(f, _)| f.clone()),
        line: loc.map(|(_, l)| l),
        message: message_lines.join("\n").trim().to_string(),
        stack: (!stack.is_empty()).then(|| stack.join("\n")),
    }
}

fn frame_location(l: &str) -> Option<(String, u32)> {
    let loc = l
        .rsplit_once('(')
        .map(|(_, r)| r)
        .unwrap_or(l.trim_start_matches("at "));
    let loc = loc.trim_end_matches(')');
    if loc.contains("node_modules") || loc.starts_with("node:") || loc == "<anonymous>" {
        return None;
    }
    split_location(loc)
}

/// `    > 6 |     expect(…)` or `      4 |   });` or `        |   ^`.
fn is_code_frame(l: &str) -> bool {
    let t = l.trim_start().trim_start_matches('>').trim_start();
    let digits = t.trim_start_matches(|c: char| c.is_ascii_digit());
    digits.trim_start().starts_with('|') && (digits.len() < t.len() || t.starts_with('|'))
}

fn parse_text(out: &str) -> Parsed {
    let lines: Vec<&str> = out.lines().collect();
    let mut p = Parsed::default();
    let mut current_file = String::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut i = 0;
    while i < lines.len() {
        let raw = lines[i];
        let t = raw.trim_end();
        if let Some(rest) = t.strip_prefix("Tests:") {
            if let Some(c) = tests_line(rest) {
                p.recognised = true;
                p.summary = Some(c.0);
                p.announced = Some(c.1);
            }
        } else if t.starts_with("No tests found") {
            p.recognised = true;
            p.summary = Some(Counts::default());
            p.announced = Some(0);
        } else if let Some(f) = t.strip_prefix("FAIL ").or_else(|| t.strip_prefix("PASS ")) {
            p.recognised = true;
            current_file = f.trim().to_string();
        } else if t.starts_with("Test Suites:") {
            p.recognised = true;
        } else if let Some(head) = raw.strip_prefix("  ● ") {
            let head = head.trim();
            let mut j = i + 1;
            let mut body = Vec::new();
            while j < lines.len() {
                let l = lines[j];
                if l.starts_with("  ● ") || (!l.trim().is_empty() && !l.starts_with(' ')) {
                    break;
                }
                body.push(l.get(4..).unwrap_or("").trim_end());
                j += 1;
            }
            if head != "Console" {
                let name = if head == "Test suite failed to run" {
                    current_file.clone()
                } else {
                    head.to_string()
                };
                let mut f = from_error_text(&name, body.join("\n").trim_matches('\n'));
                if f.file.is_none() && !current_file.is_empty() {
                    f.file = Some(current_file.clone());
                }
                if seen.insert(name) {
                    p.failures.push(f);
                }
            }
            i = j;
            continue;
        } else {
            let s = t.trim_start();
            if s.starts_with("✓ ") {
                p.per_test.passed += 1;
            } else if s.starts_with("✕ ") {
                p.per_test.failed += 1;
            } else if s.starts_with("○ ") || s.starts_with("✎ ") {
                p.per_test.skipped += 1;
            }
        }
        i += 1;
    }
    p
}

/// `       2 failed, 1 skipped, 1 todo, 3 passed, 7 total` → counts and total.
fn tests_line(rest: &str) -> Option<(Counts, u64)> {
    let total = super::count_before(rest, "total")?;
    let get = |w: &str| super::count_before(rest, w).unwrap_or(0);
    Some((
        Counts {
            passed: get("passed"),
            failed: get("failed"),
            skipped: get("skipped").saturating_add(get("todo")),
        },
        total,
    ))
}

//! node's built-in test runner (`node --test`). Its TAP reporter (the default when stdout is not
//! a terminal on node 20) goes to [`super::tap`]; this file parses the spec reporter:
//! `✔ name (1.2ms)`, `✖ name (3ms)` with the error and stack indented below, `﹣ name # SKIP`,
//! `# TODO`, suites as `▶ name`, the `ℹ tests N` / `ℹ pass N` … trailer and the
//! `✖ failing tests:` section (which gives each failure's `test at file:line:col`).
//!
//! Trust: the trailer (last value of each key) over per-test lines; suites are not tests.
//! A `✖` line with a directive is a failing todo (node 20 prints `# <todo reason>`), counted as
//! skipped, not a failure. Tests node 20 filtered out with `--test-name-pattern`
//! (`﹣ name # test name does not match pattern`) are not counted (its trailer has them as
//! skipped).
//! Names are the test's own name (not prefixed with its suites), as node prints them.

use std::collections::{HashMap, HashSet};

use super::{split_location, Counts, Failure, Parsed};

/// Parse node test-runner output (spec or TAP; ANSI already stripped).
pub fn parse(out: &str) -> Parsed {
    if is_tap(out) {
        return super::tap::parse(out);
    }
    parse_spec(out)
}

/// Whether node's output is TAP rather than spec.
pub fn is_tap(out: &str) -> bool {
    out.lines().any(|l| l.starts_with("TAP version")) || out.lines().any(|l| l.starts_with("# Subtest: "))
}

const PASS: char = '✔';
const FAIL: char = '✖';
const SKIP: char = '﹣';
const SUITE: char = '▶';
const INFO: char = 'ℹ';

fn parse_spec(out: &str) -> Parsed {
    let lines: Vec<&str> = out.lines().collect();
    let mut p = Parsed::default();
    let mut suites: HashSet<(usize, String)> = HashSet::new();
    let mut trailer: HashMap<String, u64> = HashMap::new();
    let mut locations: HashMap<String, (String, u32)> = HashMap::new();
    let mut failing_section = false;
    let mut pending_loc: Option<(String, u32)> = None;
    let mut filtered = 0u64;
    let mut i = 0;
    while i < lines.len() {
        let raw = lines[i];
        let indent = raw.len() - raw.trim_start().len();
        let t = raw.trim();
        let mut chars = t.chars();
        let first = chars.next();
        let rest = chars.as_str().trim_start();
        if failing_section {
            if let Some(loc) = t.strip_prefix("test at ").or_else(|| t.strip_prefix("suite at ")) {
                pending_loc = split_location(loc);
            } else if first == Some(FAIL) {
                let name = strip_duration(rest).0;
                if let Some(loc) = pending_loc.take() {
                    locations.insert(name.clone(), loc);
                }
                // node 22 prints the error only here, not under the test's first line.
                let (body, j) = indented_body(&lines, i, indent);
                let detail = failure_from(&name, &body);
                if let Some(f) = p.failures.iter_mut().find(|f| f.name == name && f.message.is_empty()) {
                    f.message = detail.message;
                    if f.stack.is_none() {
                        f.stack = detail.stack;
                    }
                    if f.file.is_none() {
                        f.file = detail.file;
                        f.line = detail.line;
                    }
                }
                i = j.max(i + 1);
                continue;
            }
            i += 1;
            continue;
        }
        match first {
            Some(INFO) => {
                if let Some((k, v)) = rest.split_once(' ') {
                    if let Ok(v) = v.trim().parse::<u64>() {
                        p.recognised = true;
                        trailer.insert(k.to_string(), v);
                    }
                }
            }
            Some(SUITE) => {
                p.recognised = true;
                suites.insert((indent, strip_duration(rest).0));
            }
            Some(FAIL) if rest.trim_end_matches(':') == "failing tests" => {
                failing_section = true;
            }
            Some(c @ (PASS | FAIL | SKIP)) => {
                let (name, directive) = strip_duration(rest);
                if suites.contains(&(indent, name.clone())) {
                    i += 1;
                    continue;
                }
                p.recognised = true;
                let dir = directive.to_ascii_uppercase();
                if c == SKIP && format!("SKIP {dir}") == super::tap::FILTERED {
                    filtered += 1;
                } else if c == SKIP
                    || dir.starts_with("SKIP")
                    || dir.starts_with("TODO")
                    || (c == FAIL && !dir.is_empty())
                {
                    // A failing test with a directive is a todo: node 20 prints a todo's reason
                    // (`✖ name (1ms) # not done`) instead of `# TODO`.
                    p.per_test.skipped += 1;
                } else if c == PASS {
                    p.per_test.passed += 1;
                } else {
                    p.per_test.failed += 1;
                    let (body, j) = indented_body(&lines, i, indent);
                    p.failures.push(failure_from(&name, &body));
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    for f in &mut p.failures {
        if let Some((file, line)) = locations.get(&f.name) {
            f.file = Some(file.clone());
            f.line = Some(*line);
        }
    }
    if let (Some(&pass), Some(&fail)) = (trailer.get("pass"), trailer.get("fail")) {
        let get = |k: &str| trailer.get(k).copied().unwrap_or(0);
        p.summary = Some(Counts {
            passed: pass,
            failed: fail.saturating_add(get("cancelled")),
            skipped: get("skipped").saturating_sub(filtered).saturating_add(get("todo")),
        });
        p.announced = trailer.get("tests").copied();
    }
    p
}

/// The lines indented deeper than line `i` (at `indent`) that follow it, de-indented, and the
/// index of the first line after them.
fn indented_body<'a>(lines: &[&'a str], i: usize, indent: usize) -> (Vec<&'a str>, usize) {
    let mut j = i + 1;
    let mut body = Vec::new();
    while j < lines.len() {
        let l = lines[j];
        let ind = l.len() - l.trim_start().len();
        if !l.trim().is_empty() && ind <= indent {
            break;
        }
        body.push(l.get(indent + 2..).unwrap_or("").trim_end());
        j += 1;
    }
    (body, j)
}

/// `adds (1.75ms) # SKIP reason` → ("adds", "SKIP reason").
fn strip_duration(s: &str) -> (String, String) {
    let (head, directive) = match s.rfind(" # ") {
        Some(k) => (&s[..k], s[k + 3..].trim()),
        None => (s, ""),
    };
    let head = head.trim_end();
    let name = match head.rfind(" (") {
        Some(k) if head.ends_with("ms)") || head.ends_with("s)") => &head[..k],
        _ => head,
    };
    (name.to_string(), directive.to_string())
}

fn failure_from(name: &str, body: &[&str]) -> Failure {
    let at = body.iter().position(|l| l.trim_start().starts_with("at "));
    let msg_lines = &body[..at.unwrap_or(body.len())];
    let message = msg_lines.join("\n").trim().to_string();
    let stack_lines: Vec<&str> = body
        .iter()
        .skip(at.unwrap_or(body.len()))
        .map(|l| l.trim())
        .take_while(|l| l.starts_with("at "))
        .collect();
    let first_user_frame = stack_lines.iter().find_map(|l| {
        let loc = l
            .rsplit_once('(')
            .map(|(_, r)| r)
            .unwrap_or(l.trim_start_matches("at "));
        let loc = loc.trim_end_matches(['{', ' ']).trim_end_matches(')');
        if loc.starts_with("node:") {
            None
        } else {
            split_location(loc)
        }
    });
    Failure {
        name: name.to_string(),
        file: first_user_frame.as_ref().map(|(f, _)| f.clone()),
        line: first_user_frame.map(|(_, l)| l),
        message,
        stack: (!stack_lines.is_empty()).then(|| stack_lines.join("\n")),
    }
}

//! cargo-nextest's human output (`cargo nextest run`): `Starting N tests across M binaries`,
//! one status line per test (`PASS [ 0.01s] (1/8) binary-id test::name`, `FAIL`, `TIMEOUT`,
//! `SIGSEGV`…, `SKIP`), the captured `stdout ───`/`stderr ───` of failures, and the final
//! `Summary [ 0.07s] 8 tests run: 5 passed, 3 failed, 1 skipped` followed by the failing tests
//! again. Compile errors are cargo's (see [`super::libtest`]).
//!
//! Trust: the `Summary` line over status lines (status lines after it are the repeated list and
//! are not counted again). Counting: timed out → failed; skipped → skipped; `not run` (after a
//! fail-fast stop) is not counted. Names are the test name without the binary id, as libtest
//! prints them (`tests::fails_eq`).

use std::collections::HashSet;

use super::{libtest, Counts, Failure, Parsed};

/// Parse nextest human output (ANSI already stripped).
pub fn parse(out: &str) -> Parsed {
    let lines: Vec<&str> = out.lines().collect();
    let mut p = Parsed::default();
    let mut after_summary = false;
    let mut seen: HashSet<String> = HashSet::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if let Some(rest) = t.strip_prefix("Starting ") {
            if let Some(n) = super::count_before(rest, "tests").or_else(|| super::count_before(rest, "test")) {
                p.recognised = true;
                p.announced = Some(n);
            }
        } else if t.starts_with("Summary [") {
            if let Some(c) = summary_counts(t) {
                p.recognised = true;
                p.summary = Some(c);
                after_summary = true;
            }
        } else if let Some((status, name)) = status_line(t) {
            p.recognised = true;
            if after_summary {
                i += 1;
                continue;
            }
            match status {
                "PASS" | "LEAK" => p.per_test.passed += 1,
                "SKIP" => p.per_test.skipped += 1,
                "SLOW" | "TRY" | "RETRY" | "START" | "FLAKY" => {}
                _ => {
                    p.per_test.failed += 1;
                    let mut j = i + 1;
                    let mut body: Vec<&str> = Vec::new();
                    while j < lines.len() {
                        let l = lines[j].trim();
                        if status_line(l).is_some() || l.starts_with("────") || l.starts_with("Summary [") {
                            break;
                        }
                        body.push(dedent(lines[j], 4).trim_end());
                        j += 1;
                    }
                    if seen.insert(name.clone()) {
                        p.failures.push(failure_from(&name, &body));
                    }
                    i = j;
                    continue;
                }
            }
        }
        i += 1;
    }
    // Builds happen before the run starts; later compiler lines are a test's own output.
    let first_run = lines
        .iter()
        .position(|l| l.trim_start().starts_with("Starting "))
        .unwrap_or(lines.len());
    if let Some(b) = libtest::cargo_build_error(&lines[..first_run]) {
        p.recognised = true;
        p.build_error = Some(b);
    }
    p
}

/// `FAIL [   0.017s] (1/8) lt tests::fails_eq` → ("FAIL", "tests::fails_eq").
fn status_line(t: &str) -> Option<(&str, String)> {
    let (status, rest) = t.split_once(' ')?;
    if status.is_empty() || !status.chars().all(|c| c.is_ascii_uppercase()) {
        return None;
    }
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('[')?;
    let (time, rest) = rest.split_once(']')?;
    if !time.trim().ends_with('s') {
        return None;
    }
    let mut rest = rest.trim_start();
    if rest.starts_with('(') {
        rest = rest.split_once(')')?.1.trim_start();
    }
    let (_binary, name) = rest.split_once(' ')?;
    let name = name.trim();
    (!name.is_empty()).then(|| (status, name.to_string()))
}

/// `Summary [   0.077s] 8 tests run: 5 passed, 3 failed, 1 skipped`.
fn summary_counts(t: &str) -> Option<Counts> {
    let (_, counts) = t.split_once(" run: ")?;
    let get = |w: &str| super::count_before(counts, w).unwrap_or(0);
    Some(Counts {
        passed: super::count_before(counts, "passed")?,
        failed: get("failed").saturating_add(get("timed")),
        skipped: get("skipped"),
    })
}

fn failure_from(name: &str, body: &[&str]) -> Failure {
    let found = (0..body.len()).find_map(|k| libtest::panic_at(body, k));
    let (file, line, message) = match found {
        Some((_, loc, msg)) => (loc.as_ref().map(|(f, _)| f.clone()), loc.map(|(_, l)| l), msg),
        None => no_panic_message(body),
    };
    let stderr = stderr_of(body);
    Failure {
        name: name.to_string(),
        file,
        line,
        message,
        stack: stderr,
    }
}

/// The captured stderr (`stderr ───` section) of a failure, when not empty.
fn stderr_of(body: &[&str]) -> Option<String> {
    body.iter()
        .position(|l| l.trim_start().starts_with("stderr ───"))
        .map(|k| body[k + 1..].join("\n").trim_matches('\n').to_string())
        .filter(|s| !s.is_empty())
}

/// A failure without a panic (`#[should_panic]` that did not panic, a test returning `Err`):
/// libtest's own `---- NAME stdout ----` block inside the captured stdout when there is one,
/// else the captured stderr (`Error: …`), else everything captured.
fn no_panic_message(body: &[&str]) -> (Option<String>, Option<u32>, String) {
    let block_start = body.iter().position(|l| {
        let t = l.trim();
        t.starts_with("---- ") && (t.ends_with(" stdout ----") || t.ends_with(" stderr ----"))
    });
    let message = match block_start {
        Some(k) => {
            let rest = &body[k + 1..];
            let end = rest
                .iter()
                .position(|l| {
                    let t = l.trim();
                    t == "failures:" || t.starts_with("---- ") || t.starts_with("stderr ───")
                })
                .unwrap_or(rest.len());
            rest[..end].join("\n").trim().to_string()
        }
        None => stderr_of(body).unwrap_or_else(|| body.join("\n").trim().to_string()),
    };
    let loc = body
        .iter()
        .find_map(|l| l.trim().strip_prefix("note: test did not panic as expected at "))
        .and_then(super::split_location);
    (loc.as_ref().map(|(f, _)| f.clone()), loc.map(|(_, l)| l), message)
}

/// `l` without up to `n` leading spaces.
fn dedent(l: &str, n: usize) -> &str {
    let spaces = l.len() - l.trim_start_matches(' ').len();
    &l[spaces.min(n)..]
}

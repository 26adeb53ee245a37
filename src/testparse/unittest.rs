//! Python's `unittest` (`python -m unittest`, default and `-v`): `FAIL:`/`ERROR:` blocks with
//! their tracebacks, subtests, and the final `Ran N tests in Xs` + `OK`/`FAILED (...)`/
//! `NO TESTS RAN` pair.
//!
//! Trust: the last `Ran N tests` line that is directly followed by a status line is the
//! summary (a test may print a fake one earlier). Counting: failures + errors + unexpected
//! successes → failed (each failing subtest counts, as unittest counts them); skipped +
//! expected failures → skipped; passed: see `counts_from` (errors of `setUpClass`,
//! `tearDownModule` & co. count as failed but are not among the `Ran N` tests). Names are
//! the dotted test id (`module.Class.test_method`), with subtest parameters appended
//! (`module.Class.test_sub (i=1)`).

use super::{Counts, Failure, Parsed};

/// Parse unittest output (ANSI already stripped).
pub fn parse(out: &str) -> Parsed {
    let lines: Vec<&str> = out.lines().collect();
    let mut p = Parsed::default();
    let mut summary: Option<(u64, StatusLine)> = None;
    let mut dots_passed = 0u64;
    // Progress marks end at the first FAIL/ERROR block, else at the (last) `Ran N` line; a `---`
    // rule or `Ran N` line before that may be a test's own print.
    let marks_end = (0..lines.len())
        .find(|&k| is_rule(lines[k].trim_end(), '=') && lines.get(k + 1).and_then(|h| block_head(h)).is_some())
        .or_else(|| lines.iter().rposition(|l| ran_count(l.trim_end()).is_some()))
        .unwrap_or(lines.len());
    // FAIL/ERROR blocks of tests (not of `setUpClass` & co., which `Ran N` does not count).
    let mut failing_tests: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_end();
        if let Some(n) = ran_count(t) {
            let status = lines[i + 1..].iter().map(|l| l.trim()).find(|l| !l.is_empty());
            if let Some(st) = status.and_then(status_line) {
                p.recognised = true;
                summary = Some((n, st));
            }
            i += 1;
            continue;
        }
        if is_rule(t, '=') {
            if let Some((kind, rest)) = lines.get(i + 1).and_then(|h| block_head(h)) {
                p.recognised = true;
                if kind == "UNEXPECTED SUCCESS" {
                    // A header alone: the `---` rule after it is the summary's.
                    p.failures.push(Failure {
                        name: test_name(rest),
                        file: None,
                        line: None,
                        message: "unexpected success".to_string(),
                        stack: None,
                    });
                    i += 2;
                    continue;
                }
                // A docstring's first line may follow the header, before the `---` rule.
                let mut j = i + 2;
                if let Some(k) = (j..lines.len().min(j + 3)).find(|&k| is_rule(lines[k].trim_end(), '-')) {
                    j = k + 1;
                }
                let start = j;
                while j < lines.len() && !is_rule(lines[j].trim_end(), '=') && !is_rule(lines[j].trim_end(), '-') {
                    j += 1;
                }
                let mut name = test_name(rest);
                if let Some(module) = name.strip_prefix("unittest.loader._FailedTest.") {
                    // A module that could not be imported: like a collection error.
                    name = module.to_string();
                    p.interrupted = true;
                }
                if !is_fixture(&name) {
                    failing_tests.push(name.clone());
                }
                p.failures.push(failure_from(&name, &lines[start..j]));
                i = j;
                continue;
            }
        }
        if i < marks_end {
            // Default mode's progress characters (a test's prints may split their line).
            let run: String = t.chars().take_while(|c| ".FEsxu".contains(*c)).collect();
            dots_passed += run.chars().filter(|c| *c == '.').count() as u64;
        }
        per_test_line(t, &mut p.per_test);
        i += 1;
    }
    if let Some((ran, st)) = summary {
        p.summary = Some(counts_from(
            ran,
            &st,
            &failing_tests,
            !p.failures.is_empty(),
            p.per_test.passed.max(dots_passed),
        ));
    }
    p
}

/// The counts of `FAILED (failures=2, errors=1, skipped=1, expected failures=1)`.
struct StatusLine {
    failures: u64,
    errors: u64,
    skipped: u64,
    expected_failures: u64,
    unexpected_successes: u64,
}

/// `OK`, `OK (skipped=1)`, `FAILED (failures=2, errors=1)`, `NO TESTS RAN`.
fn status_line(s: &str) -> Option<StatusLine> {
    let rest = if let Some(r) = s.strip_prefix("NO TESTS RAN") {
        r
    } else if let Some(r) = s.strip_prefix("OK").or_else(|| s.strip_prefix("FAILED")) {
        if !(r.is_empty() || r.starts_with(' ')) {
            return None;
        }
        r
    } else {
        return None;
    };
    let inner = rest.trim().trim_start_matches('(').trim_end_matches(')');
    let get = |key: &str| -> u64 {
        inner
            .split(',')
            .filter_map(|kv| kv.trim().split_once('='))
            .find(|(k, _)| *k == key)
            .and_then(|(_, v)| v.trim().parse().ok())
            .unwrap_or(0)
    };
    Some(StatusLine {
        failures: get("failures"),
        errors: get("errors"),
        skipped: get("skipped"),
        expected_failures: get("expected failures"),
        unexpected_successes: get("unexpected successes"),
    })
}

/// Counts from `Ran N` and the status line. Python 3.11 and 3.13 count skipped tests in
/// `Ran N`; 3.12 counts only those skipped at run time (`skipTest`), not `@skip`-decorated
/// ones. Subtest failures are counted per subtest but `Ran N` per test. So passed is
/// N − distinct failing tests − expected failures − unexpected successes − the skips that
/// `Ran N` includes: somewhere between none and all of them, whichever the printed pass marks
/// (`.` or `... ok`) come closest to (all of them when there are no marks).
fn counts_from(ran: u64, st: &StatusLine, failing_tests: &[String], any_block: bool, passed_marks: u64) -> Counts {
    let failed = st
        .failures
        .saturating_add(st.errors)
        .saturating_add(st.unexpected_successes);
    let skipped = st.skipped.saturating_add(st.expected_failures);
    let mut distinct: Vec<&str> = failing_tests
        .iter()
        .map(|n| n.split(" (").next().unwrap_or(n))
        .collect();
    distinct.sort_unstable();
    distinct.dedup();
    let distinct_failed = if !any_block {
        st.failures.saturating_add(st.errors)
    } else {
        distinct.len() as u64
    };
    let base = ran
        .saturating_sub(distinct_failed)
        .saturating_sub(st.expected_failures)
        .saturating_sub(st.unexpected_successes);
    let if_skips_counted = base.saturating_sub(st.skipped);
    // Python 3.12 leaves the tests skipped before they started (`@skip`) out of `Ran N` but
    // counts those that called `skipTest`: the pass marks say how many skips `Ran N` has.
    let passed = passed_marks.clamp(if_skips_counted, base);
    Counts {
        passed,
        failed,
        skipped,
    }
}

/// A class or module fixture's error (`setUpClass (mod.C)` → `mod.C.setUpClass`): not a test.
fn is_fixture(name: &str) -> bool {
    let head = name.split(" (").next().unwrap_or(name);
    let last = head.rsplit('.').next().unwrap_or(head);
    matches!(last, "setUpClass" | "tearDownClass" | "setUpModule" | "tearDownModule")
}

fn is_rule(t: &str, ch: char) -> bool {
    t.len() >= 20 && t.chars().all(|c| c == ch)
}

/// `Ran 7 tests in 0.001s` → 7.
fn ran_count(t: &str) -> Option<u64> {
    let rest = t.strip_prefix("Ran ")?;
    let (n, rest) = rest.split_once(' ')?;
    if rest.starts_with("test in ") || rest.starts_with("tests in ") {
        n.parse().ok()
    } else {
        None
    }
}

/// `FAIL: test_x (mod.Class.test_x)` → ("FAIL", "test_x (mod.Class.test_x)").
fn block_head(h: &str) -> Option<(&str, &str)> {
    let h = h.trim_end();
    for kind in ["FAIL", "ERROR", "UNEXPECTED SUCCESS"] {
        if let Some(rest) = h.strip_prefix(kind).and_then(|r| r.strip_prefix(": ")) {
            return Some((kind, rest));
        }
    }
    None
}

/// `test_x (mod.Class.test_x)` → `mod.Class.test_x`; `test_x (mod.Class)` → `mod.Class.test_x`;
/// a trailing subtest description `(i=1)` is kept.
fn test_name(head: &str) -> String {
    let Some((method, rest)) = head.split_once(" (") else {
        return head.to_string();
    };
    let Some((id, tail)) = rest.split_once(')') else {
        return head.to_string();
    };
    let full = if id.ends_with(&format!(".{method}")) || id == method {
        id.to_string()
    } else {
        format!("{id}.{method}")
    };
    let tail = tail.trim();
    if tail.is_empty() {
        full
    } else {
        format!("{full} {tail}")
    }
}

fn failure_from(name: &str, body: &[&str]) -> Failure {
    let last_frame = body.iter().rposition(|l| l.trim_start().starts_with("File \""));
    let (file, line) = last_frame
        .and_then(|k| {
            let l = body[k].trim_start().strip_prefix("File \"")?;
            let (f, rest) = l.split_once('"')?;
            let n = count_after(rest, "line")?;
            Some((Some(f.to_string()), Some(n)))
        })
        .unwrap_or((None, None));
    let msg_start = match last_frame {
        Some(k) => {
            let mut m = k + 1;
            while m < body.len() && body[m].starts_with(' ') {
                m += 1;
            }
            m
        }
        None => 0,
    };
    let message = body.get(msg_start..).unwrap_or(&[]).join("\n").trim().to_string();
    let stack = body.join("\n").trim_matches('\n').to_string();
    Failure {
        name: name.to_string(),
        file,
        line,
        message,
        stack: (!stack.is_empty()).then_some(stack),
    }
}

/// `, line 12, in test_error` with word `line` → 12.
fn count_after(s: &str, word: &str) -> Option<u32> {
    let toks: Vec<&str> = s
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .collect();
    toks.windows(2).find(|w| w[0] == word).and_then(|w| w[1].parse().ok())
}

/// `-v` lines: `test_a (mod.C.test_a) ... ok` (for truncated output only).
fn per_test_line(t: &str, c: &mut Counts) {
    let Some((_, verdict)) = t.rsplit_once(" ... ") else {
        return;
    };
    match verdict.trim() {
        "ok" => c.passed += 1,
        "FAIL" | "ERROR" | "unexpected success" => c.failed += 1,
        "expected failure" => c.skipped += 1,
        v if v.starts_with("skipped") => c.skipped += 1,
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: &str = "----------------------------------------------------------------------";

    #[test]
    fn skips_count_in_ran_unless_the_pass_marks_say_otherwise() {
        // No progress marks: Python 3.11/3.13 semantics (skips are in `Ran N`).
        let p = parse(&format!("{RULE}\nRan 3 tests in 0.000s\n\nOK (skipped=1)\n"));
        assert_eq!(
            p.summary,
            Some(Counts {
                passed: 2,
                failed: 0,
                skipped: 1
            })
        );
        // Python 3.12: `..s` but `Ran 2`.
        let p = parse(&format!("..s\n{RULE}\nRan 2 tests in 0.000s\n\nOK (skipped=1)\n"));
        assert_eq!(
            p.summary,
            Some(Counts {
                passed: 2,
                failed: 0,
                skipped: 1
            })
        );
    }

    #[test]
    fn names_are_dotted_ids_in_both_header_styles() {
        assert_eq!(test_name("test_x (m.C.test_x)"), "m.C.test_x");
        assert_eq!(test_name("test_x (m.C)"), "m.C.test_x");
        assert_eq!(test_name("test_s (m.C.test_s) (i=1)"), "m.C.test_s (i=1)");
    }
}

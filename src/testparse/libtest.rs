//! libtest, Rust's built-in test harness, as printed by `cargo test`: one section per test binary
//! (`running N tests` … `test result: …`), doc tests, ignored and filtered tests, panics with
//! their messages and backtraces, and compile errors (`error: could not compile`).
//!
//! Trust: a binary's `test result:` line is believed only when its passed + failed + ignored +
//! measured equals that binary's `running N tests` (a test can print a fake result line); the
//! last believable one wins. A `running N tests` line opens a new binary only once the current
//! one is done (its believable result line, or cargo's `Running …`/`Doc-tests …`/`error: test
//! failed` between binaries): with `--nocapture` a test may print one. Failing names come from
//! the binary's final `failures:` list when present, else from `test NAME ... FAILED` lines.
//! Output whose head was cut off (a `tail`) still counts the first binary from its
//! `test result:` line. A test binary that crashed (cargo's `process didn't exit successfully`)
//! adds a failure named `<crash>` with cargo's message.

use std::collections::HashMap;

use super::{split_location, Counts, Failure, Parsed};

#[derive(Default)]
struct Section {
    announced: u64,
    /// cargo said this binary is done (`error: test failed`, the next `Running …`) even if its
    /// result line is missing (a crash).
    closed: bool,
    per_test: Counts,
    summary: Option<Counts>,
    failed_lines: Vec<String>,
    failure_list: Option<Vec<String>>,
}

/// Parse `cargo test` output (ANSI already stripped).
pub fn parse(out: &str) -> Parsed {
    let lines: Vec<&str> = out.lines().collect();
    let mut p = Parsed::default();
    let mut sections: Vec<Section> = Vec::new();
    let mut blocks: HashMap<String, String> = HashMap::new();
    let mut panics: HashMap<String, (Option<Location>, String)> = HashMap::new();
    let mut pending: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim_end();
        if is_cargo_boundary(t) {
            if let Some(sec) = sections.last_mut() {
                sec.closed = true;
            }
        }
        let open = sections.last().is_some_and(|s| s.summary.is_none() && !s.closed);
        if let Some(n) = running_count(t).filter(|_| !open) {
            p.recognised = true;
            sections.push(Section {
                announced: n,
                ..Section::default()
            });
            pending = None;
            i += 1;
            continue;
        }
        if let Some(rest) = t.strip_prefix("test result: ") {
            p.recognised = true;
            if let (true, Some((counts, measured))) = (sections.is_empty(), result_counts(rest)) {
                // The output's head was cut (`… | tail`): this binary's header is gone, so its
                // result line is all there is to go on.
                sections.push(Section {
                    announced: counts.total().saturating_add(measured),
                    ..Section::default()
                });
            }
            if let (Some(sec), Some(c)) = (sections.last_mut(), result_counts(rest)) {
                let (counts, measured) = c;
                if counts.total().saturating_add(measured) == sec.announced {
                    sec.summary = Some(Counts {
                        passed: counts.passed.saturating_add(measured),
                        ..counts
                    });
                }
            }
            i += 1;
            continue;
        }
        if let Some((name, result)) = test_line(t) {
            if let Some(sec) = sections.last_mut() {
                match classify(result) {
                    Some(r) => record(sec, &name, r),
                    None => pending = Some(name),
                }
            }
            i += 1;
            continue;
        }
        // `cargo test -q` (terse): progress marks `..i.F 5/12` and `NAME --- FAILED`.
        if let Some(name) = t
            .strip_suffix(" --- FAILED")
            .filter(|n| !n.is_empty() && !n.contains(' '))
        {
            if let Some(sec) = sections.last_mut() {
                sec.per_test.failed += 1;
                sec.failed_lines.push(name.to_string());
            }
            i += 1;
            continue;
        }
        if let Some(sec) = sections.last_mut().filter(|_| is_terse_progress(t)) {
            for c in t.chars().take_while(|c| !c.is_whitespace()) {
                match c {
                    '.' => sec.per_test.passed += 1,
                    'i' => sec.per_test.skipped += 1,
                    _ => {}
                }
            }
            i += 1;
            continue;
        }
        if let (Some(name), Some(r)) = (pending.as_ref(), classify(t.trim())) {
            if let Some(sec) = sections.last_mut() {
                let name = name.clone();
                record(sec, &name, r);
            }
            pending = None;
            i += 1;
            continue;
        }
        if t == "failures:" {
            // Either the start of the output blocks, or the final list of names.
            let mut names = Vec::new();
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim().is_empty() {
                j += 1;
            }
            while j < lines.len() && lines[j].starts_with("    ") && !lines[j].trim().is_empty() {
                names.push(lines[j].trim().to_string());
                j += 1;
            }
            if !names.is_empty() {
                if let Some(sec) = sections.last_mut() {
                    sec.failure_list = Some(names);
                }
                i = j;
                continue;
            }
            i += 1;
            continue;
        }
        if let Some(name) = block_header(t) {
            let mut body = Vec::new();
            let mut j = i + 1;
            while j < lines.len() {
                let l = lines[j].trim_end();
                if block_header(l).is_some() || l == "failures:" || l.starts_with("test result: ") {
                    break;
                }
                body.push(lines[j]);
                j += 1;
            }
            let entry = blocks.entry(name).or_default();
            entry.push_str(body.join("\n").trim_matches('\n'));
            entry.push('\n');
            i = j;
            continue;
        }
        if let Some((thread, loc, msg)) = panic_at(&lines, i) {
            panics.entry(thread).or_insert((loc, msg));
        }
        i += 1;
    }

    // A test binary that died (signal, abort) leaves its section without a result line; cargo
    // says which and why.
    for l in &lines {
        if let Some(rest) = l.trim_start().strip_prefix("process didn't exit successfully: ") {
            p.recognised = true;
            p.failures.push(Failure {
                name: "<crash>".to_string(),
                file: None,
                line: None,
                message: format!("process didn't exit successfully: {rest}"),
                stack: None,
            });
        }
    }
    // cargo builds every test target before running any: a compile error after the first
    // `running N tests` was printed by a test (e.g. one that runs cargo itself).
    let first_run = lines
        .iter()
        .position(|l| running_count(l.trim_end()).is_some())
        .unwrap_or(lines.len());
    if let Some(b) = cargo_build_error(&lines[..first_run]) {
        p.recognised = true;
        p.build_error = Some(b);
    }

    let mut all_complete = !sections.is_empty();
    let mut summary = Counts::default();
    let mut announced = 0u64;
    for sec in &sections {
        p.per_test.add(sec.per_test);
        announced = announced.saturating_add(sec.announced);
        match sec.summary {
            Some(c) => summary.add(c),
            None => all_complete = false,
        }
        let names = sec.failure_list.clone().unwrap_or_else(|| sec.failed_lines.clone());
        for name in names {
            p.failures
                .push(failure_for(&name, blocks.get(&name), panics.get(&name)));
        }
    }
    if all_complete {
        p.summary = Some(summary);
    }
    if !sections.is_empty() {
        p.announced = Some(announced);
    }
    p
}

/// `..i.` or `..i. 4/5` (failures are printed on their own `NAME --- FAILED` lines).
fn is_terse_progress(t: &str) -> bool {
    let (marks, count) = t.split_once(' ').unwrap_or((t, ""));
    !marks.is_empty()
        && marks.chars().all(|c| c == '.' || c == 'i')
        && (count.is_empty()
            || count
                .split_once('/')
                .is_some_and(|(a, b)| a.parse::<u64>().is_ok() && b.parse::<u64>().is_ok()))
}

#[derive(Clone, Copy)]
enum Outcome {
    Ok,
    Failed,
    Ignored,
}

fn classify(result: &str) -> Option<Outcome> {
    let r = result.trim();
    if r == "ok" || r.starts_with("ok ") {
        Some(Outcome::Ok)
    } else if r == "FAILED" || r.starts_with("FAILED ") {
        Some(Outcome::Failed)
    } else if r == "ignored" || r.starts_with("ignored,") {
        Some(Outcome::Ignored)
    } else {
        None
    }
}

fn record(sec: &mut Section, name: &str, r: Outcome) {
    match r {
        Outcome::Ok => sec.per_test.passed += 1,
        Outcome::Ignored => sec.per_test.skipped += 1,
        Outcome::Failed => {
            sec.per_test.failed += 1;
            sec.failed_lines.push(name.to_string());
        }
    }
}

/// A line cargo prints between test binaries: `Running unittests src/lib.rs (target/…)`,
/// `Doc-tests NAME`, `error: test failed, to rerun pass …`, `process didn't exit successfully`.
/// Until one of these (or the binary's believable `test result:`), a `running N tests` line is
/// a test's own output (`--nocapture`), not a new binary.
fn is_cargo_boundary(t: &str) -> bool {
    let l = t.trim_start();
    (l.starts_with("Running ") && l.ends_with(')') && l.contains(" ("))
        || l.starts_with("Doc-tests ")
        || l.starts_with("error: test failed, to rerun pass ")
        || l.starts_with("error: doctest failed, to rerun pass ")
        || l.starts_with("process didn't exit successfully: ")
}

/// `running 5 tests` → 5.
fn running_count(t: &str) -> Option<u64> {
    let rest = t.strip_prefix("running ")?;
    let (n, word) = rest.split_once(' ')?;
    if word == "tests" || word == "test" {
        n.parse().ok()
    } else {
        None
    }
}

/// `ok. 2 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s`
fn result_counts(rest: &str) -> Option<(Counts, u64)> {
    let get = |w: &str| super::count_before(rest, w);
    Some((
        Counts {
            passed: get("passed")?,
            failed: get("failed")?,
            skipped: get("ignored")?,
        },
        get("measured").unwrap_or(0),
    ))
}

/// `test NAME ... RESULT` → (NAME, RESULT); a ` - should panic` suffix is dropped from NAME.
fn test_line(t: &str) -> Option<(String, &str)> {
    let rest = t.strip_prefix("test ")?;
    let (name, result) = rest
        .split_once(" ... ")
        .or_else(|| rest.strip_suffix(" ...").map(|n| (n, "")))?;
    let name = name.strip_suffix(" - should panic").unwrap_or(name);
    if name.is_empty() {
        return None;
    }
    Some((name.to_string(), result))
}

/// `---- NAME stdout ----` → NAME.
fn block_header(t: &str) -> Option<String> {
    let inner = t.strip_prefix("---- ")?.strip_suffix(" ----")?;
    let name = inner
        .strip_suffix(" stdout")
        .or_else(|| inner.strip_suffix(" stderr"))?;
    Some(name.to_string())
}

/// A source location: file and line.
pub(crate) type Location = (String, u32);

/// `thread 'NAME' (123) panicked at src/lib.rs:25:9:` followed by the message lines; also the
/// pre-1.73 form `thread 'NAME' panicked at 'msg', src/lib.rs:25:9`.
pub(crate) fn panic_at(lines: &[&str], i: usize) -> Option<(String, Option<Location>, String)> {
    let t = lines[i].trim();
    let rest = t.strip_prefix("thread '")?;
    let (thread, rest) = rest.split_once('\'')?;
    let (_, after) = rest.split_once("panicked at ")?;
    if let Some(old) = after.strip_prefix('\'') {
        // Old format: 'msg', file:line:col
        let (msg, loc) = old.rsplit_once("', ")?;
        return Some((thread.to_string(), split_location(loc), msg.to_string()));
    }
    let loc = split_location(after);
    let mut msg = Vec::new();
    for l in lines.iter().skip(i + 1) {
        let lt = l.trim_end();
        if lt.starts_with("note: ") || lt.starts_with("stack backtrace:") || lt.starts_with("test ") {
            break;
        }
        if lt.starts_with("thread '") {
            break;
        }
        msg.push(lt);
    }
    while msg.last().is_some_and(|l| l.trim().is_empty()) {
        msg.pop();
    }
    Some((thread.to_string(), loc, msg.join("\n")))
}

fn failure_for(name: &str, block: Option<&String>, panic: Option<&(Option<Location>, String)>) -> Failure {
    let mut file = None;
    let mut line = None;
    let mut message = String::new();
    let mut stack = None;
    if let Some(b) = block {
        let bl: Vec<&str> = b.lines().collect();
        let found = (0..bl.len()).find_map(|k| panic_at(&bl, k).map(|x| (k, x)));
        if let Some((_, (_, loc, msg))) = found {
            if let Some((f, l)) = loc {
                file = Some(f);
                line = Some(l);
            }
            message = msg;
        } else {
            message = b.trim().to_string();
            // `#[should_panic]` that did not panic: `note: test did not panic as expected at
            // src/lib.rs:50:8`; with `--nocapture` the panic itself was printed before the block.
            let loc = bl
                .iter()
                .find_map(|l| l.trim().strip_prefix("note: test did not panic as expected at "))
                .and_then(split_location)
                .or_else(|| panic.and_then(|(loc, _)| loc.clone()));
            if let Some((f, l)) = loc {
                file = Some(f);
                line = Some(l);
            }
        }
        if let Some(k) = bl.iter().position(|l| l.trim_start().starts_with("stack backtrace:")) {
            stack = Some(bl[k..].join("\n"));
        }
    } else if let Some((loc, msg)) = panic {
        if let Some((f, l)) = loc {
            file = Some(f.clone());
            line = Some(*l);
        }
        message = msg.clone();
    }
    // Doc tests: `src/lib.rs - add (line 7)` points at the doc comment, not the generated file.
    if let Some((f, rest)) = name.split_once(" - ") {
        if let Some(n) = rest.rsplit_once("(line ").and_then(|(_, n)| n.strip_suffix(')')) {
            if let Ok(n) = n.trim().parse::<u32>() {
                file = Some(f.to_string());
                line = Some(n);
            }
        }
    }
    Failure {
        name: name.to_string(),
        file,
        line,
        message,
        stack,
    }
}

/// A cargo build failure: cargo's own `error: could not compile` line, with the compiler's
/// diagnostics from the first `error` line before it.
pub(crate) fn cargo_build_error(lines: &[&str]) -> Option<Failure> {
    let end = lines.iter().position(|l| l.starts_with("error: could not compile `"))?;
    Some(build_failure(lines, end))
}

fn build_failure(lines: &[&str], end: usize) -> Failure {
    let start = lines[..end]
        .iter()
        .position(|l| {
            l.starts_with("error[") || (l.starts_with("error:") && !l.starts_with("error: could not compile"))
        })
        .unwrap_or(end);
    let mut msg: Vec<&str> = lines[start..=end]
        .iter()
        .copied()
        .filter(|l| !l.trim_start().starts_with("Compiling ") && !l.starts_with("warning: build failed"))
        .collect();
    while msg.last().is_some_and(|l| l.trim().is_empty()) {
        msg.pop();
    }
    let loc = lines[start..end]
        .iter()
        .find_map(|l| l.trim_start().strip_prefix("--> "))
        .and_then(split_location);
    Failure {
        name: "<build>".to_string(),
        file: loc.as_ref().map(|(f, _)| f.clone()),
        line: loc.map(|(_, l)| l),
        message: msg.join("\n"),
        stack: None,
    }
}

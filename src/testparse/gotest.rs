//! `go test`: default output, `-v` (`=== RUN`, `--- PASS/FAIL/SKIP: Name (0.00s)`, subtests
//! `Parent/sub`), `-json` (test2json events), package lines (`ok`, `FAIL`, `?  [no test
//! files]`, `[no tests to run]`), build failures (`FAIL pkg [build failed]`, JSON
//! `build-output`/`build-fail`/`FailedBuild`) and panics.
//!
//! Counting: every test and subtest with a verdict counts (a parent that fails because a
//! subtest failed is a failure too, as go reports it). Trust: a verdict is believed only for a
//! test go announced with `=== RUN` (or a JSON `run` event) — a test can print a fake
//! `--- PASS:` line, and test2json turns it into a `pass` event; a top-level `=== RUN` while
//! another top-level test of the package runs (not paused by `t.Parallel`) is such a print
//! too. Output is `-v` only when every `--- FAIL` was announced by a `=== RUN`. Without `-v` go prints no
//! passing tests at all: there a passing package (`ok pkg`) counts as ONE passed test, and
//! failed counts are the `--- FAIL` lines. The run is complete when go printed a package
//! result line.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{split_location, Failure, Parsed};

/// Parse `go test` output, text or `-json` (ANSI already stripped).
pub fn parse(out: &str) -> Parsed {
    if is_json(out) {
        parse_json(out)
    } else {
        parse_text(out)
    }
}

/// Whether the output is `go test -json` (test2json events).
pub fn is_json(out: &str) -> bool {
    out.lines().any(|l| {
        let l = l.trim();
        l.starts_with('{')
            && l.contains("\"Action\"")
            && serde_json::from_str::<Value>(l).is_ok_and(|v| v.get("Action").is_some_and(Value::is_string))
    })
}

/// Top-level tests run one at a time unless they pause (`t.Parallel`): a top-level `=== RUN`
/// (or JSON `run` event) while another top-level test of the same package is running and not
/// paused was printed by that test.
#[derive(Default)]
struct TopLevel {
    running: HashMap<String, String>,
}

impl TopLevel {
    /// Whether a `run` of `name` in `pkg` is believable (and note it as running).
    fn accept_run(&mut self, pkg: &str, name: &str) -> bool {
        if name.contains('/') {
            return true;
        }
        if self.running.contains_key(pkg) {
            return false;
        }
        self.running.insert(pkg.to_string(), name.to_string());
        true
    }

    /// `name` paused or got its verdict: no longer the one running.
    fn stop(&mut self, pkg: &str, name: &str) {
        if self.running.get(pkg).is_some_and(|r| r == name) {
            self.running.remove(pkg);
        }
    }
}

#[derive(Default)]
struct State {
    ran: HashSet<String>,
    verdicts: Vec<(String, char)>,
    output: HashMap<String, Vec<String>>,
    package_done: bool,
}

fn parse_text(out: &str) -> Parsed {
    let lines: Vec<&str> = out.lines().collect();
    let mut p = Parsed::default();
    let mut st = State::default();
    // `-v` announces every test with `=== RUN` before its verdict; without `-v` a failing test
    // has no `=== RUN` (one a test printed itself does not make the output verbose).
    let verbose = {
        let mut announced: HashSet<&str> = HashSet::new();
        let mut any_run = false;
        let mut unannounced_fail = false;
        for l in &lines {
            let s = l.trim();
            if let Some(n) = s.strip_prefix("=== RUN") {
                any_run = true;
                announced.insert(n.trim());
            } else if let Some(('F', n)) = verdict_line(s) {
                unannounced_fail |= !announced.contains(n.as_str());
            }
        }
        any_run && !unannounced_fail
    };
    let mut top = TopLevel::default();
    // Without -v, the package is only known at its result line: one key for all.
    let pkg = "";
    let mut current: Option<String> = None;
    let mut last_failed: Option<String> = None;
    // Without -v, everything between a `--- FAIL` and its package's `FAIL` line is the failing
    // test binary's output: a package line in there was printed by a test.
    let mut in_failing_output = false;
    // A failed example prints `got:`/`want:` unindented after its `--- FAIL: ExampleX`.
    let mut example: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let raw = lines[i];
        let t = raw.trim_end();
        let s = t.trim_start();
        if s.starts_with("=== ") || s.starts_with("--- ") || package_line(t).is_some() {
            example = None;
        }
        if let Some(rest) = ["=== RUN", "=== CONT", "=== NAME"]
            .iter()
            .find_map(|k| s.strip_prefix(k))
        {
            p.recognised = true;
            let name = rest.trim().to_string();
            if s.starts_with("=== RUN") {
                if top.accept_run(pkg, &name) {
                    st.ran.insert(name.clone());
                    current = Some(name);
                }
            } else {
                current = Some(name);
            }
        } else if let Some(name) = s.strip_prefix("=== PAUSE") {
            top.stop(pkg, name.trim());
        } else if let Some((verdict, name)) = verdict_line(s) {
            p.recognised = true;
            let believed = if verbose {
                st.ran.contains(&name)
            } else {
                verdict == 'F'
            };
            if believed {
                top.stop(pkg, &name);
                st.verdicts.push((name.clone(), verdict));
                if verdict == 'F' {
                    if name.starts_with("Example") {
                        example = Some(name.clone());
                    }
                    last_failed = Some(name.clone());
                    in_failing_output = !verbose;
                    if !verbose {
                        current = Some(name);
                    }
                }
            }
        } else if let Some(pkg) = package_line(t).filter(|l| !(in_failing_output && matches!(l, PkgLine::Ok { .. }))) {
            p.recognised = true;
            in_failing_output = false;
            st.package_done = true;
            current = None;
            top = TopLevel::default();
            match pkg {
                PkgLine::Ok { no_tests } => {
                    if !verbose && !no_tests {
                        p.per_test.passed += 1;
                    }
                }
                PkgLine::BuildFailed(pkg) => {
                    p.build_error = Some(build_failure(&pkg, &lines[..i]));
                }
                PkgLine::Fail | PkgLine::NoFiles => {}
            }
        } else if t.starts_with("panic: ") {
            // The panic and its goroutine trace belong to the failing (or running) test.
            let mut j = i + 1;
            while j < lines.len() && package_line(lines[j].trim_end()).is_none() {
                j += 1;
            }
            let target = if verbose {
                current.clone().or(last_failed.clone())
            } else {
                last_failed.clone()
            };
            // A panic in a test that has no verdict (e.g. `panic: test timed out`): go kills the
            // binary, so that test failed.
            if let Some(name) = target
                .as_ref()
                .filter(|n| verbose && !st.verdicts.iter().any(|(v, _)| v == *n))
            {
                st.verdicts.push((name.clone(), 'F'));
            }
            if let Some(name) = target {
                let o = st.output.entry(name).or_default();
                o.push(format!("\u{0}{}", lines[i..j].join("\n")));
            }
            i = j;
            continue;
        } else if raw.starts_with(' ') || raw.starts_with('\t') {
            if let Some(name) = &current {
                st.output.entry(name.clone()).or_default().push(s.to_string());
            }
        } else if let Some(name) = example.as_ref().filter(|_| t != "FAIL" && t != "PASS") {
            st.output.entry(name.clone()).or_default().push(s.to_string());
        }
        i += 1;
    }
    finish_state(&mut p, &st);
    if st.package_done {
        p.summary = Some(p.per_test);
    }
    p
}

fn finish_state(p: &mut Parsed, st: &State) {
    for (name, v) in &st.verdicts {
        match v {
            'P' => p.per_test.passed += 1,
            'S' => p.per_test.skipped += 1,
            _ => {
                p.per_test.failed += 1;
                p.failures.push(failure_from(name, st.output.get(name)));
            }
        }
    }
}

/// `--- FAIL: TestX (0.00s)` → ('F', "TestX").
fn verdict_line(s: &str) -> Option<(char, String)> {
    let rest = s.strip_prefix("--- ")?;
    let (kind, rest) = rest.split_once(": ")?;
    let v = match kind {
        "PASS" => 'P',
        "FAIL" => 'F',
        "SKIP" => 'S',
        _ => return None,
    };
    let name = rest.rsplit_once(" (").map(|(n, _)| n).unwrap_or(rest).trim();
    (!name.is_empty()).then(|| (v, name.to_string()))
}

enum PkgLine {
    Ok { no_tests: bool },
    Fail,
    BuildFailed(String),
    NoFiles,
}

/// `ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.01s`, `FAIL\tpkg [build failed]`, `?   \tpkg\t[no test files]`.
fn package_line(t: &str) -> Option<PkgLine> {
    let mut parts = t.split_whitespace();
    let head = parts.next()?;
    if !(t.contains('\t') || head == "ok" || head == "?") {
        return None;
    }
    let pkg = parts.next()?.to_string();
    let rest: Vec<&str> = parts.collect();
    let rest = rest.join(" ");
    match head {
        "ok" => {
            let timed = rest.starts_with('(') || rest.split_whitespace().next().is_some_and(|x| x.ends_with('s'));
            let _ = pkg;
            timed.then(|| PkgLine::Ok {
                no_tests: rest.contains("[no tests to run]"),
            })
        }
        "?" if rest.contains("[no test files]") => Some(PkgLine::NoFiles),
        "FAIL" if rest.contains("[build failed]") || rest.contains("[setup failed]") => Some(PkgLine::BuildFailed(pkg)),
        "FAIL" if rest.is_empty() || rest.split_whitespace().next().is_some_and(|x| x.ends_with('s')) => {
            Some(PkgLine::Fail)
        }
        _ => None,
    }
}

/// The compiler's lines for `pkg`: from `# pkg` down to the `FAIL pkg [build failed]` line.
fn build_failure(pkg: &str, before: &[&str]) -> Failure {
    let start = before
        .iter()
        .rposition(|l| l.starts_with("# ") && l[2..].split_whitespace().next() == Some(pkg));
    let msg: Vec<&str> = match start {
        Some(k) => before[k + 1..]
            .iter()
            .copied()
            .take_while(|l| !l.starts_with("FAIL") && !l.starts_with("ok "))
            .collect(),
        None => before.iter().rev().take(20).rev().copied().collect(),
    };
    build_error_from(pkg, &msg.join("\n"))
}

fn build_error_from(pkg: &str, text: &str) -> Failure {
    let loc = text.lines().find_map(|l| {
        let (loc, _) = l.split_once(": ")?;
        split_location(loc).filter(|(f, _)| f.ends_with(".go"))
    });
    Failure {
        name: pkg.to_string(),
        file: loc.as_ref().map(|(f, _)| f.clone()),
        line: loc.map(|(_, l)| l),
        message: text.trim().to_string(),
        stack: None,
    }
}

fn failure_from(name: &str, output: Option<&Vec<String>>) -> Failure {
    let mut f = Failure {
        name: name.to_string(),
        file: None,
        line: None,
        message: String::new(),
        stack: None,
    };
    let Some(out) = output else {
        return f;
    };
    let mut msg = Vec::new();
    for o in out {
        if let Some(panic) = o.strip_prefix('\u{0}') {
            let (first, rest) = panic.split_once('\n').unwrap_or((panic, ""));
            msg.push(first.to_string());
            f.stack = Some(rest.trim_matches('\n').to_string());
            if f.file.is_none() {
                f.file_line_from_stack(rest);
            }
            continue;
        }
        let line = o.trim();
        if line.starts_with("=== ") || line.starts_with("--- ") || line.is_empty() {
            continue;
        }
        match line
            .split_once(": ")
            .and_then(|(loc, m)| split_location(loc).filter(|(f, _)| f.ends_with(".go")).map(|l| (l, m)))
        {
            Some(((file, n), m)) => {
                if f.file.is_none() {
                    f.file = Some(file);
                    f.line = Some(n);
                }
                msg.push(m.to_string());
            }
            None => msg.push(line.to_string()),
        }
    }
    f.message = msg.join("\n");
    f
}

impl Failure {
    /// Location of the first goroutine frame in a `_test.go` file, else the first outside the
    /// Go installation.
    fn file_line_from_stack(&mut self, stack: &str) {
        let frames: Vec<(String, u32)> = stack
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with('/'))
            .filter_map(|l| split_location(l.split_whitespace().next().unwrap_or(l)))
            .collect();
        let in_goroot = |f: &str| {
            f.contains("/src/runtime/")
                || f.contains("/src/testing/")
                || f.contains("/lib/go")
                || f.contains("/local/go/")
                || f.contains("/go-1.")
        };
        let pick = frames
            .iter()
            .find(|(f, _)| f.ends_with("_test.go"))
            .or_else(|| frames.iter().find(|(f, _)| !in_goroot(f)));
        if let Some((file, n)) = pick {
            self.file = Some(file.clone());
            self.line = Some(*n);
        }
    }
}

fn parse_json(out: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut st = State::default();
    let mut top = TopLevel::default();
    let mut build_text: HashMap<String, String> = HashMap::new();
    let mut failed_builds: Vec<String> = Vec::new();
    let mut plain: Vec<&str> = Vec::new();
    for l in out.lines() {
        let Ok(v) = serde_json::from_str::<Value>(l.trim()) else {
            plain.push(l);
            continue;
        };
        let Some(action) = v.get("Action").and_then(Value::as_str) else {
            continue;
        };
        p.recognised = true;
        let pkg = v
            .get("Package")
            .or_else(|| v.get("ImportPath"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let test = v.get("Test").and_then(Value::as_str).map(str::to_string);
        let output = v.get("Output").and_then(Value::as_str).unwrap_or("");
        if let Some(fb) = v.get("FailedBuild").and_then(Value::as_str) {
            if !failed_builds.iter().any(|x| x == fb) {
                failed_builds.push(fb.to_string());
            }
        }
        match (action, test) {
            ("build-output", _) => build_text.entry(pkg).or_default().push_str(output),
            ("build-fail", _) if !failed_builds.contains(&pkg) => failed_builds.push(pkg),
            ("run", Some(t)) if top.accept_run(&pkg, &t) => {
                st.ran.insert(t);
            }
            ("pause", Some(t)) => top.stop(&pkg, &t),
            ("output", Some(t)) => {
                let o = st.output.entry(t).or_default();
                if output.starts_with("panic: ") || o.last().is_some_and(|x| x.starts_with('\u{0}')) {
                    // Keep a panic and its trace together, as the text parser does.
                    match o.last_mut().filter(|x| x.starts_with('\u{0}')) {
                        Some(last) => last.push_str(output),
                        None => o.push(format!("\u{0}{output}")),
                    }
                } else {
                    o.push(output.trim_end().to_string());
                }
            }
            ("pass" | "fail" | "skip", Some(t)) if st.ran.contains(&t) => {
                let v = match action {
                    "pass" => 'P',
                    "fail" => 'F',
                    _ => 'S',
                };
                top.stop(&pkg, &t);
                st.verdicts.push((t, v));
            }
            ("pass" | "fail" | "skip", None) => st.package_done = true,
            _ => {}
        }
    }
    finish_state(&mut p, &st);
    // go before 1.24 prints build failures as plain text even with -json.
    let plain_text = plain.join("\n");
    for l in &plain {
        if let Some(PkgLine::BuildFailed(pkg)) = package_line(l.trim_end()) {
            p.recognised = true;
            let k = plain.iter().position(|x| x == l).unwrap_or(0);
            p.build_error = Some(build_failure(&pkg, &plain[..k]));
        }
    }
    if let Some(pkg) = failed_builds.first() {
        let text = build_text.get(pkg).cloned().unwrap_or_else(|| plain_text.clone());
        p.build_error = Some(build_error_from(pkg, &text));
    }
    if st.package_done {
        p.summary = Some(p.per_test);
    }
    p
}

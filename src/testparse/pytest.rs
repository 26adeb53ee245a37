//! pytest, any verbosity: `-q`, default, `-v`, `-rA`; failures and errors blocks, the short
//! test summary, collection errors (`Interrupted: … during collection` → `error`) and the final
//! `N failed, M passed … in Xs` line (`no tests ran` → `no_tests`).
//!
//! Trust: counts come from the LAST final-summary line (a test's captured output, shown by
//! `-rA`, may contain a fake one earlier); failing names come from the short test summary
//! (`FAILED node::id - msg`, only after its `short test summary info` header), else from the
//! `____ name ____` block headers; an `ERROR id` entry takes its message from the ERRORS block
//! (`ERROR at setup/teardown of …`), a `FAILED id` one from the FAILURES block. Only the last
//! final-summary line ends the FAILURES blocks (a test's captured stdout may print one). Block
//! formats: `--tb=long/short` (`E` lines, `path:N:` location), `--tb=native` (the last
//! `File "…", line N` frame, made relative to `rootdir`), `--tb=line/no` (summary message only).
//! Counting: xpassed → passed, error → failed, xfailed → skipped; deselected are not counted.

use std::collections::HashMap;

use super::{Counts, Failure, Parsed};

const WORDS: [&str; 13] = [
    "passed",
    "failed",
    "error",
    "errors",
    "skipped",
    "xfailed",
    "xpassed",
    "deselected",
    "warning",
    "warnings",
    "rerun",
    "reruns",
    "subtests",
];

/// Parse pytest output (ANSI already stripped).
pub fn parse(out: &str) -> Parsed {
    let lines: Vec<&str> = out.lines().collect();
    let mut p = Parsed::default();
    let mut in_short_summary = false;
    let mut short: Vec<(bool, String, String)> = Vec::new();
    // (section is ERRORS, header, body); `current` is the block lines are appended to.
    let mut blocks: Vec<(bool, String, Vec<&str>)> = Vec::new();
    let mut current: Option<usize> = None;
    let mut in_blocks = false;
    let mut in_errors = false;
    let mut rootdir: Option<&str> = None;
    // A test's captured output (shown inside FAILURES) may print a fake final summary line:
    // only the last one in the output ends the blocks.
    let last_summary = lines
        .iter()
        .rposition(|l| final_summary(banner(l.trim_end()).unwrap_or(l.trim_end())).is_some());
    for (idx, line) in lines.iter().enumerate() {
        let t = line.trim_end();
        if rootdir.is_none() {
            rootdir = t
                .strip_prefix("rootdir: ")
                .map(|r| r.split(',').next().unwrap_or(r).trim());
        }
        if in_blocks && last_summary.is_some_and(|k| idx < k) && banner(t).is_some_and(|b| final_summary(b).is_some()) {
            if let Some((_, _, body)) = current.and_then(|k| blocks.get_mut(k)) {
                body.push(line);
            }
            continue;
        }
        if t.starts_with("!!!") && (t.contains("Interrupted:") || t.contains("KeyboardInterrupt")) {
            p.interrupted = true;
            continue;
        }
        if let Some(title) = banner(t) {
            in_short_summary = title == "short test summary info";
            in_blocks = title == "FAILURES" || title == "ERRORS";
            in_errors = title == "ERRORS";
            current = None;
            if title.contains("test session starts") {
                p.recognised = true;
            }
            if let Some(c) = final_summary(title) {
                p.recognised = true;
                p.summary = Some(c);
            }
            if title.starts_with("Interrupted:") || title.contains("KeyboardInterrupt") {
                p.interrupted = true;
            }
            continue;
        }
        if let Some(c) = final_summary(t) {
            // `-q` prints the final line without the `===` banner.
            p.recognised = true;
            p.summary = Some(c);
            in_short_summary = false;
            continue;
        }
        if let Some(n) = t.strip_prefix("collected ") {
            p.recognised = true;
            let n: Option<u64> = n.split_whitespace().next().and_then(|x| x.parse().ok());
            let deselected = super::count_before(t, "deselected").unwrap_or(0);
            p.announced = n.map(|n| n.saturating_sub(deselected));
            continue;
        }
        if in_short_summary {
            for kind in ["FAILED ", "ERROR "] {
                if let Some(rest) = t.strip_prefix(kind) {
                    let (id, msg) = split_summary_entry(rest);
                    short.push((kind == "ERROR ", id.trim().to_string(), msg.to_string()));
                }
            }
            continue;
        }
        if in_blocks {
            if let Some(h) = block_header(t) {
                blocks.push((in_errors, h, Vec::new()));
                current = Some(blocks.len() - 1);
                continue;
            }
            if let Some((_, _, body)) = current.and_then(|k| blocks.get_mut(k)) {
                body.push(line);
            }
            continue;
        }
        per_test_line(t, &mut p.per_test);
    }

    // An `ERROR id` entry is described by its `ERROR at setup/teardown of …` block, a `FAILED`
    // one by its FAILURES block (a test can have both: failed, then its teardown errored).
    let mut by_key: HashMap<(bool, String), usize> = HashMap::new();
    for (i, (err, h, _)) in blocks.iter().enumerate() {
        by_key.entry((*err, block_key(h))).or_insert(i);
    }
    let root = rootdir.filter(|r| r.starts_with('/'));
    if !short.is_empty() {
        p.recognised = true;
        for (is_error, id, msg) in &short {
            let key = node_key(id);
            let block = by_key.get(&(*is_error, key)).map(|&i| &blocks[i].2);
            p.failures.push(failure_from(id, block, msg, root));
        }
    } else {
        for (_, h, body) in &blocks {
            p.failures.push(failure_from(&block_key(h), Some(body), "", root));
        }
    }
    p
}

/// `tests/t.py::test_x[a - b] - AssertionError: …` → (node id, message): the first ` - ` that
/// is not inside the parameter brackets.
fn split_summary_entry(rest: &str) -> (&str, &str) {
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ' ' if depth <= 0 && rest[i..].starts_with(" - ") => return (&rest[..i], &rest[i + 3..]),
            _ => {}
        }
    }
    (rest, "")
}

/// `===== title =====` → title.
fn banner(t: &str) -> Option<&str> {
    let inner = t
        .strip_prefix("==")?
        .trim_start_matches('=')
        .strip_suffix("==")?
        .trim_end_matches('=');
    Some(inner.trim())
}

/// `4 failed, 5 passed, 1 skipped, 1 xfailed, 1 error in 0.05s` (or `no tests ran in 0.00s`).
fn final_summary(t: &str) -> Option<Counts> {
    let t = t.trim();
    let (items, time) = t.rsplit_once(" in ")?;
    // `0.05s`, `61.23s (0:01:01)`, or pytest < 5's `0.05 seconds`.
    let mut words = time.split_whitespace();
    let first = words.next().unwrap_or("");
    let is_num = |x: &str| !x.is_empty() && x.chars().all(|c| c.is_ascii_digit() || c == '.');
    let time_ok = (first.ends_with('s') && is_num(first.trim_end_matches('s')))
        || (is_num(first) && words.next().is_some_and(|w| w.starts_with("second")));
    if !time_ok {
        return None;
    }
    if items == "no tests ran" {
        return Some(Counts::default());
    }
    let mut c = Counts::default();
    let mut any = false;
    for item in items.split(", ") {
        let (n, word) = item.trim().split_once(' ')?;
        let n: u64 = n.parse().ok()?;
        if !WORDS.contains(&word) {
            return None;
        }
        any = true;
        match word {
            "passed" | "xpassed" => c.passed = c.passed.saturating_add(n),
            "failed" | "error" | "errors" => c.failed = c.failed.saturating_add(n),
            "skipped" | "xfailed" => c.skipped = c.skipped.saturating_add(n),
            _ => {}
        }
    }
    any.then_some(c)
}

/// `-v` lines (`path::test PASSED [ 8%]`) and progress lines (`path.py .FF.s [ 50%]`, `-q`:
/// `..F [100%]`). Only lines ending in pytest's `[ NN%]` progress tail are believed.
fn per_test_line(t: &str, c: &mut Counts) {
    let body = match t.rfind(" [") {
        Some(k) if t.ends_with("%]") => t[..k].trim_end(),
        _ => return,
    };
    if let Some((id, rest)) = body.split_once(' ').filter(|(id, _)| id.contains("::")) {
        let _ = id;
        match rest.split_whitespace().next() {
            Some("PASSED") | Some("XPASS") => c.passed += 1,
            Some("FAILED") | Some("ERROR") => c.failed += 1,
            Some("SKIPPED") | Some("XFAIL") => c.skipped += 1,
            _ => {}
        }
        return;
    }
    let marks = match body.split_once(' ') {
        Some((file, marks)) if file.ends_with(".py") => marks.trim(),
        Some(_) => return,
        None => body,
    };
    if marks.is_empty() || !marks.chars().all(|ch| ".FEsxX".contains(ch)) {
        return;
    }
    for ch in marks.chars() {
        match ch {
            '.' | 'X' => c.passed += 1,
            'F' | 'E' => c.failed += 1,
            _ => c.skipped += 1,
        }
    }
}

/// `____ test_name ____` → test_name.
fn block_header(t: &str) -> Option<String> {
    let inner = t
        .strip_prefix("___")?
        .trim_start_matches('_')
        .strip_suffix("___")?
        .trim_end_matches('_');
    let inner = inner.trim();
    (!inner.is_empty()).then(|| inner.to_string())
}

/// Block header → the key shared with node ids: `ERROR at setup of test_x` → `test_x`,
/// `ERROR collecting tests/a.py` → `tests/a.py`, `TestThing.test_m` stays.
fn block_key(h: &str) -> String {
    for prefix in [
        "ERROR at setup of ",
        "ERROR at teardown of ",
        "ERROR at call of ",
        "ERROR collecting ",
    ] {
        if let Some(rest) = h.strip_prefix(prefix) {
            return rest.trim().to_string();
        }
    }
    h.to_string()
}

/// `tests/test_math.py::TestThing::test_m` → `TestThing.test_m`; a bare path stays a path;
/// parameters are kept as they are (`test_ids[p::q]`).
fn node_key(id: &str) -> String {
    let (head, params) = match id.find('[') {
        Some(k) => id.split_at(k),
        None => (id, ""),
    };
    match head.split_once("::") {
        Some((_, rest)) => format!("{}{params}", rest.replace("::", ".")),
        None => id.to_string(),
    }
}

/// `path` relative to pytest's `rootdir` when it is under it (`--tb=native` and `--tb=line`
/// print absolute paths).
fn relative(path: String, root: Option<&str>) -> String {
    root.and_then(|r| path.strip_prefix(r))
        .and_then(|rest| rest.strip_prefix('/'))
        .map(str::to_string)
        .unwrap_or(path)
}

/// `--tb=native`: the last `File "…", line N, in f` frame, and the exception lines after it.
fn native_traceback(body: &[&str]) -> Option<(String, u32, String)> {
    let k = body.iter().rposition(|l| l.trim_start().starts_with("File \""))?;
    let frame = body[k].trim_start().strip_prefix("File \"")?;
    let (file, rest) = frame.split_once("\", line ")?;
    let n: u32 = rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
    let msg: Vec<&str> = body[k + 1..]
        .iter()
        .skip_while(|l| l.starts_with(' ') || l.is_empty())
        .take_while(|l| !l.starts_with("----"))
        .map(|l| l.trim_end())
        .collect();
    Some((file.to_string(), n, msg.join("\n").trim().to_string()))
}

fn failure_from(name: &str, block: Option<&Vec<&str>>, short_msg: &str, root: Option<&str>) -> Failure {
    let mut file = None;
    let mut line = None;
    let mut message = String::new();
    let mut stack = None;
    if let Some(body) = block {
        let e_lines: Vec<&str> = body
            .iter()
            .filter_map(|l| l.strip_prefix('E').filter(|r| r.is_empty() || r.starts_with(' ')))
            .collect();
        let indent = e_lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start().len())
            .min()
            .unwrap_or(0);
        let e_lines: Vec<&str> = e_lines
            .iter()
            .map(|l| l.get(indent..).unwrap_or("").trim_end())
            .collect();
        message = e_lines.join("\n").trim().to_string();
        let native = body
            .iter()
            .any(|l| l.starts_with("Traceback (most recent call last):"))
            .then(|| native_traceback(body))
            .flatten();
        if let Some((f, n, msg)) = native.filter(|_| message.is_empty()) {
            file = Some(relative(f, root));
            line = Some(n);
            message = msg;
        }
        for l in body.iter().rev().filter(|_| line.is_none()) {
            if let Some((loc, _)) = l
                .split_once(": ")
                .or_else(|| l.trim_end().strip_suffix(':').map(|x| (x, "")))
            {
                if !loc.contains(' ') {
                    if let Some((f, n)) = super::split_location(loc) {
                        file = Some(relative(f, root));
                        line = Some(n);
                        break;
                    }
                }
            }
        }
        let text = body.join("\n");
        let text = text.trim_matches('\n');
        if !text.is_empty() {
            stack = Some(text.to_string());
        }
    }
    if message.is_empty() {
        message = short_msg.to_string();
    }
    if file.is_none() {
        if let Some((path, _)) = name.split_once("::") {
            file = Some(path.to_string());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_entries_split_after_the_parameters() {
        assert_eq!(
            split_summary_entry("t.py::test_x[a - b] - Err: x - y"),
            ("t.py::test_x[a - b]", "Err: x - y")
        );
        assert_eq!(split_summary_entry("t.py::test_y"), ("t.py::test_y", ""));
    }

    #[test]
    fn final_summary_lines() {
        let c = final_summary("4 failed, 5 passed, 1 skipped, 1 xfailed, 1 error in 0.05s").unwrap();
        assert_eq!((c.passed, c.failed, c.skipped), (5, 5, 2));
        assert_eq!(final_summary("no tests ran in 0.00s"), Some(Counts::default()));
        assert_eq!(final_summary("we came in 2nd"), None);
        assert!(final_summary("1 failed, 2 passed in 0.12 seconds").is_some());
        assert!(final_summary("3 passed in 61.23s (0:01:01)").is_some());
        assert_eq!(final_summary("3 apples in 0.1s"), None);
    }
}

//! TAP (Test Anything Protocol) versions 12–14, including nested subtests (4-space indented),
//! YAML diagnostic blocks (`---` … `...`), `# SKIP`/`# TODO` directives, `Bail out!`, and the
//! `# tests/# pass/# fail/...` trailer that `node --test --test-reporter=tap` prints.
//!
//! Only leaf test points are counted (a parent point summarises its children; node's suites
//! are parents). Trust: node's trailer when present (last value of each key at top level);
//! otherwise the plan `1..N`: the output is complete only when N top-level points were seen.
//! `# SKIP` → skipped; `# TODO` → skipped (a failing TODO is not a failure). Tests node 20
//! filtered out with `--test-name-pattern` (`# SKIP test name does not match pattern`) are not
//! counted, though its trailer counts them as skipped.

use super::{split_location, Counts, Failure, Parsed};

struct Point {
    depth: usize,
    ok: bool,
    desc: String,
    directive: Option<String>,
    diag: Vec<String>,
    yaml: Vec<String>,
}

/// Parse TAP output (ANSI already stripped).
pub fn parse(out: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut points: Vec<Point> = Vec::new();
    let mut leaf: Vec<bool> = Vec::new();
    let mut child_seen: Vec<bool> = vec![false; 2];
    let mut in_yaml: Option<usize> = None;
    let mut plan: Option<u64> = None;
    let mut top_points = 0u64;
    let mut trailer: [Option<u64>; 6] = [None; 6];
    const KEYS: [&str; 6] = ["tests", "pass", "fail", "cancelled", "skipped", "todo"];
    for raw in out.lines() {
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        let t = raw.trim();
        if let Some(yaml_indent) = in_yaml {
            if t == "..." && indent <= yaml_indent + 2 {
                in_yaml = None;
            } else if let Some(pt) = points.last_mut() {
                pt.yaml
                    .push(raw.get(yaml_indent.min(raw.len())..).unwrap_or("").to_string());
            }
            continue;
        }
        if t == "---" {
            if points.last().is_some_and(|pt| indent >= pt.depth * 4) {
                in_yaml = Some(indent);
            }
            continue;
        }
        let depth = indent / 4;
        if let Some(pt) = test_point(t, depth) {
            p.recognised = true;
            if child_seen.len() < depth + 2 {
                child_seen.resize(depth + 2, false);
            }
            let is_leaf = !child_seen[depth + 1];
            child_seen[depth + 1] = false;
            child_seen[depth] = true;
            if depth == 0 {
                top_points += 1;
            }
            points.push(pt);
            leaf.push(is_leaf);
            continue;
        }
        if depth == 0 {
            if let Some(n) = t
                .strip_prefix("1..")
                .and_then(|r| r.split_whitespace().next())
                .and_then(|n| n.parse().ok())
            {
                p.recognised = true;
                plan = Some(n);
                continue;
            }
            if t.starts_with("Bail out!") {
                p.recognised = true;
                p.interrupted = true;
                continue;
            }
            if let Some(rest) = t.strip_prefix("# ") {
                if let Some((k, v)) = rest.split_once(' ') {
                    if let (Some(idx), Ok(v)) = (KEYS.iter().position(|x| *x == k), v.trim().parse::<u64>()) {
                        trailer[idx] = Some(v);
                        continue;
                    }
                }
            }
        }
        if let Some(c) = t.strip_prefix('#') {
            if let Some(pt) = points.last_mut() {
                if pt.depth == depth {
                    pt.diag.push(c.trim_start().to_string());
                }
            }
        }
    }

    let mut filtered = 0u64;
    for (pt, is_leaf) in points.iter().zip(&leaf) {
        if !is_leaf {
            continue;
        }
        let dir = pt.directive.as_deref().map(|d| d.to_ascii_uppercase());
        if dir.as_deref() == Some(FILTERED) {
            // node 20's `--test-name-pattern` reports tests it filtered out as skipped.
            filtered += 1;
            continue;
        }
        let is_skip = dir.as_deref().is_some_and(|d| d.starts_with("SKIP"));
        let is_todo = dir.as_deref().is_some_and(|d| d.starts_with("TODO"));
        if is_skip || (is_todo && !pt.ok) {
            p.per_test.skipped += 1;
        } else if pt.ok {
            p.per_test.passed += 1;
        } else {
            p.per_test.failed += 1;
            p.failures.push(failure_from(pt));
        }
    }
    if let [Some(_), Some(pass), Some(fail), cancelled, skipped, todo] = trailer {
        p.summary = Some(Counts {
            passed: pass,
            failed: fail.saturating_add(cancelled.unwrap_or(0)),
            skipped: skipped
                .unwrap_or(0)
                .saturating_sub(filtered)
                .saturating_add(todo.unwrap_or(0)),
        });
        p.announced = trailer[0];
    } else if let Some(n) = plan {
        p.announced = Some(n);
        if top_points == n {
            p.summary = Some(p.per_test);
        }
    }
    p
}

/// The directive node 20 gives a test that `--test-name-pattern` filtered out (upper-cased).
pub(crate) const FILTERED: &str = "SKIP TEST NAME DOES NOT MATCH PATTERN";

/// `not ok 2 - desc # TODO reason` → Point.
fn test_point(t: &str, depth: usize) -> Option<Point> {
    let (ok, rest) = if let Some(r) = t.strip_prefix("not ok") {
        (false, r)
    } else if let Some(r) = t.strip_prefix("ok") {
        (true, r)
    } else {
        return None;
    };
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let rest = rest.trim_start();
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start();
    let rest = rest
        .strip_prefix("- ")
        .unwrap_or(rest.strip_prefix('-').unwrap_or(rest));
    let (desc, directive) = split_directive(rest);
    Some(Point {
        depth,
        ok,
        desc: desc.trim().to_string(),
        directive,
        diag: Vec::new(),
        yaml: Vec::new(),
    })
}

/// Split `desc # SKIP reason` at an unescaped `#` followed by SKIP/TODO.
fn split_directive(s: &str) -> (String, Option<String>) {
    let bytes = s.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'#' && (i == 0 || bytes[i - 1] != b'\\') {
            let d = s[i + 1..].trim();
            let up = d.to_ascii_uppercase();
            if up.starts_with("SKIP") || up.starts_with("TODO") {
                return (s[..i].trim_end().replace("\\#", "#"), Some(d.to_string()));
            }
        }
    }
    (s.replace("\\#", "#"), None)
}

fn failure_from(pt: &Point) -> Failure {
    let mut f = Failure {
        name: pt.desc.clone(),
        file: None,
        line: None,
        message: String::new(),
        stack: None,
    };
    if !pt.yaml.is_empty() {
        let get = |key: &str| yaml_value(&pt.yaml, key);
        if let Some(loc) = get("location").or_else(|| get("at")) {
            if let Some((file, line)) = split_location(&loc) {
                f.file = Some(file);
                f.line = Some(line);
            }
        }
        if let Some(m) = get("error").or_else(|| get("message")) {
            f.message = m;
        }
        f.stack = get("stack");
    }
    if f.message.is_empty() && !pt.diag.is_empty() {
        // Test::More: `Failed test 'x'` / `at t/basic.t line 4.` / got/expected lines.
        f.message = pt.diag.join("\n");
        for d in &pt.diag {
            if let Some(rest) = d.trim().strip_prefix("at ") {
                if let Some((file, line)) = rest.trim_end_matches('.').rsplit_once(" line ") {
                    if let Ok(n) = line.trim().parse() {
                        f.file = Some(file.to_string());
                        f.line = Some(n);
                    }
                }
            }
        }
    }
    f
}

/// A top-level key of a YAML diagnostic block: `key: 'value'`, `key: value` or a `|-` block.
fn yaml_value(yaml: &[String], key: &str) -> Option<String> {
    let base = yaml.iter().map(|l| l.len() - l.trim_start().len()).min().unwrap_or(0);
    let k = yaml.iter().position(|l| {
        l.len() - l.trim_start().len() == base && l.trim_start().strip_prefix(key).is_some_and(|r| r.starts_with(':'))
    })?;
    let v = yaml[k].trim_start()[key.len() + 1..].trim();
    if v.starts_with('|') || v.starts_with('>') || v.is_empty() {
        let mut out = Vec::new();
        for l in &yaml[k + 1..] {
            let ind = l.len() - l.trim_start().len();
            if !l.trim().is_empty() && ind <= base {
                break;
            }
            out.push(l.get(base + 2..).unwrap_or("").to_string());
        }
        while out.last().is_some_and(|l| l.trim().is_empty()) {
            out.pop();
        }
        return Some(out.join("\n"));
    }
    let v = v
        .strip_prefix('\'')
        .and_then(|x| x.strip_suffix('\''))
        .map(|x| x.replace("''", "'"))
        .unwrap_or_else(|| {
            v.strip_prefix('"')
                .and_then(|x| x.strip_suffix('"'))
                .unwrap_or(v)
                .to_string()
        });
    Some(v)
}

//! The error signature of a test run, for a TDD loop that must tell "the same failure again"
//! from "a new failure": SHA-256 (hex) over a version tag and, for each failing test in name
//! order, its name, its message with volatile parts removed (paths, `line:col`, `line N`, hex
//! addresses, timestamps, durations, thread/goroutine ids, temp names) and the top five function
//! names of its stack.

use std::sync::LazyLock;

use regex::Regex;
use sha2::{Digest, Sha256};

use super::TestReport;

/// Bump when the normalisation changes, so old and new signatures never compare equal.
const VERSION: &str = "medin-error-signature-v1";

struct Rule {
    re: Regex,
    with: &'static str,
}

fn rule(pattern: &str, with: &'static str) -> Option<Rule> {
    Regex::new(pattern).ok().map(|re| Rule { re, with })
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    [
        // Timestamps before durations and line numbers, which they contain.
        rule(
            r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?",
            "<time>",
        ),
        rule(r"\b\d{2}:\d{2}:\d{2}(\.\d+)?\b", "<time>"),
        // Paths: anything with a slash or backslash and no spaces, e.g. /a/b.rs, src\x.py, ./t.js.
        rule(r#"[^\s'"`()\[\]{}<>,:;=]*[/\\][^\s'"`()\[\]{}<>,:;=]*"#, "<path>"),
        // Temp names outside paths (`rustdoctestAbC12`, `tmpk3j4`, `pytest-of-root`).
        rule(r"(?i)\b(tmp|temp|rustdoctest|pytest-of-)[A-Za-z0-9_.\-]*", "<tmp>"),
        rule(r"\b0x[0-9a-fA-F]+\b", "<addr>"),
        rule(r"\(\d+\)", "(<id>)"),
        rule(r"\bgoroutine \d+\b", "goroutine <id>"),
        rule(r"(?i)\b\d+(\.\d+)?\s?(ns|µs|us|ms|s|sec|secs|seconds|m|min)\b", "<dur>"),
        rule(r":\d+(:\d+)?\b", ":<n>"),
        rule(r"\bline \d+\b", "line <n>"),
        rule(r"\+0x<addr>|\+<addr>", ""),
        rule(r"[ \t]+", " "),
    ]
    .into_iter()
    .flatten()
    .collect()
});

/// Remove the volatile parts of a failure message.
pub fn normalize_message(msg: &str) -> String {
    let mut s = msg.to_string();
    for r in RULES.iter() {
        s = r.re.replace_all(&s, r.with).into_owned();
    }
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first five function names of a stack trace (Rust, Python, JS, Go, JVM-style).
pub fn top_functions(stack: &str) -> Vec<String> {
    let go = stack.contains("goroutine ");
    let mut out = Vec::new();
    for l in stack.lines() {
        if out.len() == 5 {
            break;
        }
        if let Some(f) = function_name(l.trim(), go) {
            out.push(f);
        }
    }
    out
}

fn function_name(l: &str, go: bool) -> Option<String> {
    // Python: File "x.py", line 3, in test_x
    if l.starts_with("File \"") {
        return l.rsplit_once(", in ").map(|(_, f)| f.trim().to_string());
    }
    // pytest: `def test_x(n):` source lines and `path.py:12: in helper` frame lines.
    if let Some(rest) = l.strip_prefix("def ").or_else(|| l.strip_prefix("async def ")) {
        return rest.split_once('(').map(|(f, _)| f.trim().to_string());
    }
    if let Some((loc, f)) = l.split_once(": in ") {
        if !loc.contains(' ') {
            return Some(f.trim().to_string());
        }
    }
    // JS / JVM: at Object.fn (file:1:2)
    if let Some(rest) = l.strip_prefix("at ") {
        let rest = rest.strip_prefix("async ").unwrap_or(rest);
        let name = match rest.split_once(" (") {
            Some((f, _)) => f,
            None if rest.contains('(') => rest.split('(').next().unwrap_or(rest),
            None => return None,
        };
        return Some(name.trim().to_string());
    }
    // Rust backtrace: `  4: lt::tests::fails_eq`
    if let Some((n, f)) = l.split_once(": ") {
        if n.trim().parse::<u32>().is_ok() {
            let f = f.trim();
            let f = match f.rfind("::h") {
                Some(k) if f.len() - k == 19 => &f[..k],
                _ => f,
            };
            return Some(f.to_string());
        }
    }
    // Go: pkg.Func(0xc000...) / created by ...
    if go && !l.starts_with('/') && !l.starts_with("created by") && !l.starts_with("goroutine ") && l.ends_with(')') {
        if let Some((f, _)) = l.split_once('(') {
            if !f.is_empty() && !f.contains(' ') {
                return Some(f.to_string());
            }
        }
    }
    None
}

/// SHA-256 (hex) over the version tag and the sorted failing tests' names, normalised
/// messages and top stack functions. Equal for the same failures at different paths, line
/// numbers, addresses or durations; different for a different message or failing test.
pub fn error_signature(report: &TestReport) -> String {
    let mut items: Vec<String> = report
        .failures
        .iter()
        .map(|f| {
            let funcs = f.stack.as_deref().map(top_functions).unwrap_or_default();
            format!(
                "{}\u{1f}{}\u{1f}{}",
                f.name,
                normalize_message(&f.message),
                funcs.join("\u{1e}")
            )
        })
        .collect();
    items.sort();
    items.dedup();
    let mut h = Sha256::new();
    h.update(VERSION.as_bytes());
    h.update([0u8]);
    h.update(format!("{:?}", report.status).as_bytes());
    for it in &items {
        h.update([0u8]);
        h.update(it.as_bytes());
    }
    hex::encode(h.finalize())
}

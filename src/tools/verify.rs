//! The verify tool: check an expected outcome for real.
//!
//! - `file_exists`: `target` is a workspace path that must exist;
//! - `file_contains`: the file `target` must match the regex `expected` (multi-line mode:
//!   `^` and `$` match at line boundaries);
//! - `command_succeeds`: `target` is a command run through the sandbox; exit 0 passes;
//! - `git_status`: `git status --porcelain` in the directory `target` must equal `expected`
//!   (empty or absent = clean). Lines are compared without trailing whitespace and in sorted
//!   order, so the order a person writes them in does not matter.
//!
//! A check that does not hold is `VERIFICATION_FAILED` with `expected` and `actual` in `data`.

use std::path::Path;
use std::time::Instant;

use serde_json::{json, Value};

use super::args::Args;
use super::bash::{last_line, run_confined, sandbox_config};
use super::files::{confine, evidence, path_error};
use super::{ErrorCode, EvidenceKind, Receipt, ToolContext};
use crate::tools::receipt::sha256_tagged;

pub(crate) fn run(ctx: &ToolContext, a: &Args) -> Receipt {
    let started = Instant::now();
    let kind = a.str("type").unwrap_or_default();
    let target = a.str("target").unwrap_or_default();
    let expected = a.str("expected");
    let source = format!("{kind} {target}");
    let outcome = match kind {
        "file_exists" => cached(ctx, kind, target, expected, || file_exists(ctx, target)),
        "file_contains" => cached(ctx, kind, target, expected, || file_contains(ctx, target, expected)),
        "command_succeeds" => command_succeeds(ctx, target, a.u64("timeout_ms")),
        "git_status" => git_status(ctx, target, expected, a.u64("timeout_ms")),
        other => Err(Receipt::error(
            ErrorCode::InvalidInput,
            format!("unknown verify type `{other}`; use file_exists, file_contains, command_succeeds or git_status"),
        )),
    };
    let check = match outcome {
        Ok(c) => c,
        Err(r) => return r,
    };
    let data = json!({
        "type": kind, "target": target, "passed": check.passed,
        "expected": check.expected, "actual": check.actual, "details": check.details,
    });
    let ev = evidence(EvidenceKind::Verify, &source, check.hash, started);
    if check.passed {
        Receipt::success(data).with_evidence(ev)
    } else {
        let mut r = Receipt::error(ErrorCode::VerificationFailed, check.message).with_context(json!({
            "expected": check.expected, "actual": check.actual,
        }));
        r.data = data;
        r.with_evidence(ev)
    }
}

/// What one check found (kept in the attempt's validation cache for file checks).
#[derive(Debug, Clone)]
pub(crate) struct Check {
    passed: bool,
    expected: Value,
    actual: Value,
    message: String,
    details: Value,
    hash: Option<String>,
}

/// A file check through the attempt's validation cache: while the file (and every folder on
/// its way) keeps its stamp and no action moved the cache's epoch on, a repeat within the
/// cache's time returns the earlier finding without looking again (see
/// [`crate::validate::cache`]). Commands are never cached: their run is itself an action.
fn cached(
    ctx: &ToolContext,
    kind: &str,
    target: &str,
    expected: Option<&str>,
    check: impl FnOnce() -> Result<Check, Receipt>,
) -> Result<Check, Receipt> {
    let Some(cache) = &ctx.checks else {
        return check();
    };
    let rel = confine(ctx)?.resolve(target, true).map_err(path_error)?.rel;
    let key = format!("{kind}\0{rel}\0{}", expected.unwrap_or_default());
    let before = cache.state_of_path(&ctx.workspace, &rel);
    if let Some(state) = &before {
        if let Some(hit) = cache.verify.get(&key, state, cache.ttl()) {
            return Ok(hit);
        }
    }
    let found = check()?;
    if let Some(state) = before {
        if cache.state_of_path(&ctx.workspace, &rel).as_ref() == Some(&state) {
            cache.verify.put(key, state, found.clone(), cache.ttl());
        }
    }
    Ok(found)
}

fn file_exists(ctx: &ToolContext, target: &str) -> Result<Check, Receipt> {
    let conf = confine(ctx)?;
    let r = conf.resolve(target, true).map_err(path_error)?;
    let meta = std::fs::metadata(&r.abs).ok();
    let actual = match &meta {
        Some(m) if m.is_dir() => "exists (directory)",
        Some(_) => "exists",
        None => "missing",
    };
    Ok(Check {
        passed: meta.is_some(),
        expected: json!("exists"),
        actual: json!(actual),
        message: format!("`{}` does not exist", r.rel),
        details: Value::Null,
        hash: None,
    })
}

fn file_contains(ctx: &ToolContext, target: &str, expected: Option<&str>) -> Result<Check, Receipt> {
    let Some(pattern) = expected else {
        return Err(Receipt::error(
            ErrorCode::InvalidInput,
            "verify file_contains needs `expected`: the regex the file must match",
        ));
    };
    let re = crate::spec::pattern::compile(pattern)
        .map_err(|e| Receipt::error(ErrorCode::InvalidInput, format!("`expected` is not a valid regex: {e}")))?;
    let conf = confine(ctx)?;
    let r = conf.resolve(target, true).map_err(path_error)?;
    let bytes = match super::files::read_existing(ctx, &r) {
        Ok(b) => b,
        // Not a file the tools read (a FIFO, device, directory): bad input, as for read_file.
        Err(receipt) if receipt.error_code() == Some(ErrorCode::InvalidInput) => return Err(receipt),
        Err(receipt) => {
            let e = receipt.errors.first().map(|e| e.message.clone()).unwrap_or_default();
            return Ok(Check {
                passed: false,
                expected: json!(pattern),
                actual: json!(format!("cannot read `{}`: {e}", r.rel)),
                message: format!("`{}` cannot be read ({e}), so it does not contain /{pattern}/", r.rel),
                details: Value::Null,
                hash: None,
            });
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let found = re.find(&text).map(|m| m.as_str().to_string());
    let excerpt: String = text.chars().take(2000).collect();
    Ok(Check {
        passed: found.is_some(),
        expected: json!(pattern),
        actual: json!(excerpt),
        message: format!("`{}` does not match /{pattern}/", r.rel),
        details: json!({ "match": found }),
        hash: Some(sha256_tagged(&bytes)),
    })
}

fn command_succeeds(ctx: &ToolContext, command: &str, timeout_ms: Option<u64>) -> Result<Check, Receipt> {
    let cfg = sandbox_config(ctx, timeout_ms);
    let o = run_confined(&cfg, command, None)?;
    let actual = if o.timed_out {
        format!("timed out after {} ms", cfg.timeout.as_millis())
    } else {
        match o.exit {
            crate::sandbox::ExitKind::Code(c) => format!("exit code {c}"),
            crate::sandbox::ExitKind::Signal(s) => format!("killed by signal {s}"),
        }
    };
    Ok(Check {
        passed: o.success(),
        expected: json!("exit code 0"),
        message: format!("`{command}` did not succeed ({actual}): {}", last_line(&o)),
        actual: json!(actual),
        details: json!({ "stdout": o.stdout.text, "stderr": o.stderr.text, "duration_ms": o.duration_ms }),
        hash: Some(o.stdout.sha256),
    })
}

fn normalize_porcelain(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    lines.sort();
    lines
}

fn git_status(
    ctx: &ToolContext,
    target: &str,
    expected: Option<&str>,
    timeout_ms: Option<u64>,
) -> Result<Check, Receipt> {
    let conf = confine(ctx)?;
    let dir = conf
        .resolve(if target.is_empty() { "." } else { target }, true)
        .map_err(path_error)?;
    if !dir.abs.is_dir() {
        return Err(Receipt::error(
            ErrorCode::NotFound,
            format!("`{}` is not a directory in the workspace", dir.rel),
        ));
    }
    let cfg = sandbox_config(ctx, timeout_ms);
    let o = run_confined(&cfg, "git status --porcelain", Some(Path::new(&dir.rel)))?;
    if !o.success() {
        let mut r = Receipt::error(
            ErrorCode::ToolExecutionFailed,
            format!("`git status --porcelain` failed in `{}`: {}", dir.rel, last_line(&o)),
        );
        r.data = json!({ "stdout": o.stdout.text, "stderr": o.stderr.text });
        return Err(r);
    }
    let want = normalize_porcelain(expected.unwrap_or(""));
    let got = normalize_porcelain(&o.stdout.text);
    let describe = |v: &[String]| {
        if v.is_empty() {
            "clean".to_string()
        } else {
            v.join("\n")
        }
    };
    Ok(Check {
        passed: want == got,
        expected: json!(describe(&want)),
        actual: json!(describe(&got)),
        message: format!(
            "git status in `{}` is {} but {} was expected",
            dir.rel,
            if got.is_empty() {
                "clean".to_string()
            } else {
                format!("{:?}", got)
            },
            if want.is_empty() {
                "clean".to_string()
            } else {
                format!("{:?}", want)
            },
        ),
        details: Value::Null,
        hash: Some(o.stdout.sha256),
    })
}

//! The bash tool: one shell command through [`crate::sandbox::run_shell`], turned into a receipt.
//!
//! Non-zero exit → `TOOL_EXECUTION_FAILED` (exit code and last stderr line in the message);
//! timeout → `TIMEOUT`; another limit hit (memory, CPU, processes, file size) →
//! `TOOL_EXECUTION_FAILED` with the limit named in the message and in `data.limit`; a git
//! merge/pull/rebase/cherry-pick/revert/stash pop|apply whose output
//! reports a conflict → `CONFLICT` with recovery steps. The full command outcome is in `data`
//! either way. Truncated output is a warning that carries the SHA-256 of the full stream.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::args::Args;
use super::files::{confine, path_error};
use super::receipt::now_millis;
use super::{ErrorCode, Evidence, EvidenceKind, Receipt, ToolContext};
use crate::sandbox::{self, CommandOutcome, ExitKind, SandboxConfig, SandboxError};

/// The sandbox configuration for a tool call: the context's, rooted at the tool workspace,
/// with the call's own `timeout_ms` when it gives one — never past the task's deadline
/// ([`ToolContext::deadline`]): an agent may shorten its command's time, not outlive the task.
pub(crate) fn sandbox_config(ctx: &ToolContext, timeout_ms: Option<u64>) -> SandboxConfig {
    let mut cfg = ctx.sandbox.clone();
    cfg.workspace = ctx.workspace.clone();
    if let Some(ms) = timeout_ms {
        cfg.timeout = Duration::from_millis(ms);
    }
    if let Some(deadline) = ctx.deadline {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        cfg.timeout = cfg.timeout.min(left.max(Duration::from_millis(1)));
    }
    cfg
}

/// Runs `command` in the sandbox (cwd already confined); maps sandbox failures to receipts.
pub(crate) fn run_confined(cfg: &SandboxConfig, command: &str, cwd: Option<&Path>) -> Result<CommandOutcome, Receipt> {
    sandbox::run_shell(cfg, command, cwd).map_err(sandbox_receipt)
}

/// The receipt of a command the sandbox could not run.
fn sandbox_receipt(e: SandboxError) -> Receipt {
    match e {
        SandboxError::OutsideWorkspace(_) => Receipt::error(ErrorCode::PermissionDenied, e.to_string()),
        other => Receipt::error(
            ErrorCode::ToolExecutionFailed,
            format!("the sandbox could not run the command: {other}"),
        ),
    }
}

pub(crate) fn run(ctx: &ToolContext, a: &Args) -> Receipt {
    let command = a.str("command").unwrap_or_default();
    if command.trim().is_empty() {
        return Receipt::error(
            ErrorCode::InvalidInput,
            "key `command` of `bash` is empty; send a shell command such as {\"command\": \"ls\"}",
        );
    }
    let cwd = match a.str("cwd") {
        None => None,
        Some(c) => {
            let conf = match confine(ctx) {
                Ok(c) => c,
                Err(e) => return e,
            };
            match conf.resolve(c, true) {
                Ok(r) if r.abs.is_dir() => Some(r.rel),
                Ok(r) => {
                    return Receipt::error(
                        ErrorCode::NotFound,
                        format!("working directory `{}` does not exist or is not a directory", r.rel),
                    )
                    .with_next(&["list_dir"])
                }
                Err(e) => return path_error(e),
            }
        }
    };
    let cfg = sandbox_config(ctx, a.u64("timeout_ms"));
    let ran = match (a.bool("session"), &cfg.attempt) {
        (true, _) if cfg.container.is_some() => Err(Receipt::error(
            ErrorCode::InvalidInput,
            "`session: true` is not available in a container task yet; run the command without it (chain steps with `&&`)",
        )),
        (true, Some(attempt)) => attempt
            .session(&cfg, command, cwd.as_deref().map(Path::new))
            .map_err(sandbox_receipt),
        (true, None) => Err(Receipt::error(
            ErrorCode::InvalidInput,
            "`session: true` needs an attempt (a task run); run the command without it",
        )),
        (false, _) => run_confined(&cfg, command, cwd.as_deref().map(Path::new)),
    };
    let outcome = match ran {
        Ok(o) => o,
        Err(r) => return r,
    };
    let mut receipt = receipt_for(command, &cfg, &outcome);
    if a.bool("session") {
        if let Some(data) = receipt.data.as_object_mut() {
            data.insert("session".into(), json!(true));
        }
    }
    receipt
}

fn outcome_data(o: &CommandOutcome) -> serde_json::Value {
    let (code, signal) = match o.exit {
        ExitKind::Code(c) => (Some(c), None),
        ExitKind::Signal(s) => (None, Some(s)),
    };
    json!({
        "exit_code": code, "signal": signal,
        "stdout": o.stdout.text, "stderr": o.stderr.text,
        "truncated": o.stdout.truncated || o.stderr.truncated,
        "stdout_sha256": o.stdout.sha256, "stderr_sha256": o.stderr.sha256,
        "stdout_bytes": o.stdout.total_bytes, "stderr_bytes": o.stderr.total_bytes,
        "duration_ms": o.duration_ms, "timed_out": o.timed_out,
        "limit": o.limit, "isolation": o.isolation, "usage": o.usage,
    })
}

/// The last non-empty line of stderr (or stdout when stderr is empty), shortened.
pub(crate) fn last_line(o: &CommandOutcome) -> String {
    let pick = |t: &str| t.lines().rev().find(|l| !l.trim().is_empty()).map(str::to_string);
    let line = pick(&o.stderr.text)
        .or_else(|| pick(&o.stdout.text))
        .unwrap_or_default();
    if line.chars().count() > 200 {
        let s: String = line.chars().take(200).collect();
        format!("{s}...")
    } else {
        line
    }
}

/// Builds the receipt for one finished command.
fn receipt_for(command: &str, cfg: &SandboxConfig, o: &CommandOutcome) -> Receipt {
    let git = is_git_command(command);
    let ev = Evidence {
        kind: if git { EvidenceKind::Git } else { EvidenceKind::Command },
        source: command.to_string(),
        timestamp: now_millis(),
        hash: Some(o.stdout.sha256.clone()),
        duration_ms: o.duration_ms,
    };
    let mut r = if o.timed_out {
        Receipt::error(
            ErrorCode::Timeout,
            format!(
                "command timed out after {} ms and its whole process tree was killed",
                cfg.timeout.as_millis()
            ),
        )
        .with_next(&[
            &format!(
                "retry with a larger timeout_ms (e.g. {})",
                cfg.timeout.as_millis().saturating_mul(2)
            ),
            "run a shorter command (split the work, or limit it with flags)",
        ])
    } else if let Some(sub) = conflict_subcommand(command).filter(|_| shows_conflict(o)) {
        let abort = match sub.as_str() {
            "pull" | "merge" => "git merge --abort",
            "rebase" => "git rebase --abort",
            "cherry-pick" => "git cherry-pick --abort",
            "revert" => "git revert --abort",
            _ => "git checkout -- <files> (stash pop/apply keeps the stash on conflict)",
        };
        Receipt::error(ErrorCode::Conflict, format!("git {sub} stopped on a conflict: {}", last_line(o)))
            .with_next(&[
                "git status",
                "resolve the conflict markers (<<<<<<<, =======, >>>>>>>) in the listed files, then git add them and continue",
                abort,
            ])
    } else {
        match o.exit {
            _ if o.limit.is_some() && !o.success() => {
                let limit = o.limit.unwrap_or(sandbox::LimitHit::Timeout);
                let how = match o.exit {
                    ExitKind::Code(c) => format!("exited with code {c}"),
                    ExitKind::Signal(s) => format!("was killed by signal {s}"),
                };
                Receipt::error(
                    ErrorCode::ToolExecutionFailed,
                    format!("{limit}: {}; the command {how}: {}", limit.describe(), last_line(o)),
                )
                .with_next(&["do less work per command (smaller input, fewer processes), or raise the task's limits"])
            }
            ExitKind::Code(0) => Receipt::success(serde_json::Value::Null),
            ExitKind::Code(c) => Receipt::error(
                ErrorCode::ToolExecutionFailed,
                format!("command exited with code {c}: {}", last_line(o)),
            ),
            ExitKind::Signal(s) => Receipt::error(
                ErrorCode::ToolExecutionFailed,
                format!("command was killed by signal {s}: {}", last_line(o)),
            ),
        }
    };
    r.data = outcome_data(o);
    if let (Some(limit), true) = (o.limit, o.success()) {
        // The command survived the limit (e.g. a fork that failed was handled), but it hit it.
        r.warnings
            .push(format!("{limit}: {} (the command still exited 0)", limit.describe()));
    }
    for (name, s) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        if s.truncated {
            r.warnings.push(format!(
                "{name} was truncated: kept {} of {} bytes; the full {name} has {}",
                s.text.len(),
                s.total_bytes,
                s.sha256
            ));
        }
    }
    r.with_evidence(ev)
}

/// Shell words of `command`, split on whitespace and control operators (a rough lexer for
/// classification only; the guard does the real parsing).
fn words(command: &str) -> Vec<Vec<String>> {
    let mut segments = vec![Vec::new()];
    let mut cur = String::new();
    let flush = |cur: &mut String, seg: &mut Vec<String>| {
        if !cur.is_empty() {
            seg.push(cur.trim_matches(|c| c == '\'' || c == '"').to_string());
            cur.clear();
        }
    };
    for ch in command.chars() {
        match ch {
            ';' | '&' | '|' | '(' | ')' | '\n' => {
                let last = segments.len() - 1;
                flush(&mut cur, &mut segments[last]);
                segments.push(Vec::new());
            }
            c if c.is_whitespace() => {
                let last = segments.len() - 1;
                flush(&mut cur, &mut segments[last]);
            }
            c => cur.push(c),
        }
    }
    let last = segments.len() - 1;
    flush(&mut cur, &mut segments[last]);
    segments.retain(|s| !s.is_empty());
    segments
}

fn is_git_word(w: &str) -> bool {
    w == "git" || w.ends_with("/git")
}

/// The command word of a segment, skipping leading `VAR=value` assignments.
fn command_word(seg: &[String]) -> Option<(usize, &str)> {
    seg.iter()
        .enumerate()
        .find(|(_, w)| !(w.contains('=') && !w.starts_with('=') && !w.starts_with('-')))
        .map(|(i, w)| (i, w.as_str()))
}

/// Whether the command's first command word is `git`.
pub(crate) fn is_git_command(command: &str) -> bool {
    words(command)
        .first()
        .and_then(|seg| command_word(seg))
        .is_some_and(|(_, w)| is_git_word(w))
}

/// The git subcommand that can stop on a conflict, if the command runs one.
fn conflict_subcommand(command: &str) -> Option<String> {
    for seg in words(command) {
        let Some((i, w)) = command_word(&seg) else {
            continue;
        };
        if !is_git_word(w) {
            continue;
        }
        let mut rest = seg[i + 1..].iter();
        while let Some(t) = rest.next() {
            if matches!(t.as_str(), "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace") {
                rest.next();
                continue;
            }
            if t.starts_with('-') {
                continue;
            }
            match t.as_str() {
                "merge" | "pull" | "rebase" | "cherry-pick" | "revert" => return Some(t.clone()),
                "stash" => {
                    let action = rest.find(|x| !x.starts_with('-'));
                    if let Some(a) = action.filter(|a| *a == "pop" || *a == "apply") {
                        return Some(format!("stash {a}"));
                    }
                }
                _ => {}
            }
            break;
        }
    }
    None
}

fn shows_conflict(o: &CommandOutcome) -> bool {
    let hit =
        |t: &str| t.contains("CONFLICT (") || t.contains("Automatic merge failed") || t.contains("Merge conflict in");
    hit(&o.stdout.text) || hit(&o.stderr.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_classification() {
        assert!(is_git_command("git status"));
        assert!(is_git_command("GIT_PAGER=cat git log"));
        assert!(!is_git_command("echo git"));
        assert_eq!(
            conflict_subcommand("git -C repo merge feature").as_deref(),
            Some("merge")
        );
        assert_eq!(
            conflict_subcommand("cd r && git stash pop").as_deref(),
            Some("stash pop")
        );
        assert_eq!(
            conflict_subcommand("git -c a=b cherry-pick abc").as_deref(),
            Some("cherry-pick")
        );
        assert_eq!(conflict_subcommand("git status; echo merge"), None);
        assert_eq!(conflict_subcommand("git stash list"), None);
    }
}

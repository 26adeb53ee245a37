//! bash and verify tools with real processes and real git repositories.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::pipeline::Cleared;
use crate::tools::{self, ActionInput, ErrorCode, EvidenceKind, Receipt, ReceiptStatus, ToolContext};
use serde_json::{json, Value};

use super::call;

fn ctx(dir: &Path) -> ToolContext {
    let mut c = super::context(dir, Duration::from_secs(20));
    for (k, v) in [
        ("GIT_AUTHOR_NAME", "t"),
        ("GIT_AUTHOR_EMAIL", "t@example.com"),
        ("GIT_COMMITTER_NAME", "t"),
        ("GIT_COMMITTER_EMAIL", "t@example.com"),
    ] {
        c.sandbox.env.push((k.into(), v.into()));
    }
    c
}

fn bash(ctx: &ToolContext, command: &str) -> Receipt {
    call(ctx, "bash", json!({ "command": command }))
}

#[test]
fn bash_success_data_and_evidence() {
    let ws = tempfile::tempdir().unwrap();
    let c = ctx(ws.path());
    let r = bash(&c, "echo out; echo err >&2");
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    assert_eq!(r.data["exit_code"], 0);
    assert_eq!(r.data["signal"], Value::Null);
    assert_eq!(r.data["stdout"], "out\n");
    assert_eq!(r.data["stderr"], "err\n");
    assert_eq!(r.data["stdout_bytes"], 4);
    assert_eq!(r.data["truncated"], false);
    assert!(r.data["stdout_sha256"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(r.receipts[0].kind, EvidenceKind::Command);
    assert_eq!(r.receipts[0].source, "echo out; echo err >&2");
}

#[test]
fn bash_shorthand_string_and_cwd() {
    let ws = tempfile::tempdir().unwrap();
    fs::create_dir(ws.path().join("sub")).unwrap();
    let c = ctx(ws.path());
    let r = tools::call(&c, &Cleared::for_test("bash", &ActionInput::Json(json!("echo short"))));
    assert_eq!(r.data["stdout"], "short\n", "{r:?}");
    let r = call(&c, "bash", json!({"command": "basename \"$PWD\"", "cwd": "sub"}));
    assert_eq!(r.data["stdout"], "sub\n");
    let r = call(&c, "bash", json!({"command": "true", "cwd": "nope"}));
    assert_eq!(r.error_code(), Some(ErrorCode::NotFound));
}

#[test]
fn bash_nonzero_exit_is_tool_execution_failed_with_last_stderr_line() {
    let ws = tempfile::tempdir().unwrap();
    let r = bash(&ctx(ws.path()), "echo first >&2; echo 'the real reason' >&2; exit 7");
    assert_eq!(r.error_code(), Some(ErrorCode::ToolExecutionFailed));
    let msg = &r.errors[0].message;
    assert!(msg.contains("code 7") && msg.contains("the real reason"), "{msg}");
    assert_eq!(r.data["exit_code"], 7);
}

#[test]
fn bash_timeout_is_timeout_with_next_actions() {
    let ws = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let r = call(
        &ctx(ws.path()),
        "bash",
        json!({"command": "sleep 5", "timeout_ms": 200}),
    );
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(r.error_code(), Some(ErrorCode::Timeout), "{r:?}");
    assert!(
        r.next_actions.iter().any(|a| a.contains("timeout_ms")),
        "{:?}",
        r.next_actions
    );
    assert!(r.next_actions.iter().any(|a| a.contains("shorter")));
    assert_eq!(r.data["timed_out"], true);
}

#[test]
fn bash_truncated_output_warns_with_hash() {
    let ws = tempfile::tempdir().unwrap();
    let mut c = ctx(ws.path());
    c.sandbox.output_cap = 1000;
    let r = bash(&c, "head -c 5000 /dev/zero | tr '\\0' x");
    assert_eq!(r.status, ReceiptStatus::Success);
    assert_eq!(r.data["truncated"], true);
    assert_eq!(r.data["stdout_bytes"], 5000);
    assert_eq!(r.data["stdout"].as_str().unwrap().len(), 1000);
    let hash = r.data["stdout_sha256"].as_str().unwrap();
    assert!(
        r.warnings.iter().any(|w| w.contains("truncated") && w.contains(hash)),
        "{:?}",
        r.warnings
    );
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repo where `feature` and `main` both change line 1 of f.txt.
fn conflicting_repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    fs::write(dir.join("f.txt"), "base\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "base"]);
    git(dir, &["checkout", "-qb", "feature"]);
    fs::write(dir.join("f.txt"), "feature\n").unwrap();
    git(dir, &["commit", "-qam", "feature"]);
    git(dir, &["checkout", "-q", "main"]);
    fs::write(dir.join("f.txt"), "main\n").unwrap();
    git(dir, &["commit", "-qam", "main"]);
}

#[test]
fn git_merge_conflict_is_conflict_with_recovery_steps() {
    let ws = tempfile::tempdir().unwrap();
    conflicting_repo(ws.path());
    let c = ctx(ws.path());
    let r = bash(&c, "git merge feature");
    assert_eq!(r.error_code(), Some(ErrorCode::Conflict), "{r:?}");
    assert_eq!(r.receipts[0].kind, EvidenceKind::Git);
    assert_eq!(r.next_actions[0], "git status");
    assert!(r.next_actions.iter().any(|a| a == "git merge --abort"));
    assert!(r.next_actions.iter().any(|a| a.contains("markers")));

    // verify git_status sees the unmerged file, then a clean tree after the abort.
    let r = call(&c, "verify", json!({"type": "git_status", "target": "."}));
    assert_eq!(r.error_code(), Some(ErrorCode::VerificationFailed), "{r:?}");
    assert_eq!(r.data["actual"], "UU f.txt");
    assert_eq!(r.data["expected"], "clean");
    let r = call(
        &c,
        "verify",
        json!({"type": "git_status", "target": ".", "expected": "UU f.txt\n"}),
    );
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    let r = bash(&c, "git merge --abort");
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    let r = call(&c, "verify", json!({"type": "git_status", "target": "."}));
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    assert_eq!(r.data["passed"], true);
}

#[test]
fn failing_git_command_without_conflict_is_execution_failure() {
    let ws = tempfile::tempdir().unwrap();
    conflicting_repo(ws.path());
    let r = bash(&ctx(ws.path()), "git merge no-such-branch");
    assert_eq!(r.error_code(), Some(ErrorCode::ToolExecutionFailed), "{r:?}");
}

#[test]
fn git_status_outside_a_repo_does_not_find_an_enclosing_one() {
    // The workspace lives inside a git repository; git must not report that one.
    let outer = tempfile::tempdir().unwrap();
    git(outer.path(), &["init", "-q"]);
    let ws = outer.path().join("ws");
    fs::create_dir(&ws).unwrap();
    let r = call(&ctx(&ws), "verify", json!({"type": "git_status", "target": "."}));
    assert_eq!(r.error_code(), Some(ErrorCode::ToolExecutionFailed), "{r:?}");
    assert!(
        r.errors[0].message.contains("not a git repository"),
        "{}",
        r.errors[0].message
    );
}

#[test]
fn verify_file_checks() {
    let ws = tempfile::tempdir().unwrap();
    fs::write(ws.path().join("hello.txt"), "hello world\n").unwrap();
    let c = ctx(ws.path());
    let ok = call(&c, "verify", json!({"type": "file_exists", "target": "hello.txt"}));
    assert_eq!(ok.status, ReceiptStatus::Success);
    assert_eq!(ok.receipts[0].kind, EvidenceKind::Verify);
    let r = call(&c, "verify", json!({"type": "file_exists", "target": "nope.txt"}));
    assert_eq!(r.error_code(), Some(ErrorCode::VerificationFailed));
    assert_eq!(r.data["expected"], "exists");
    assert_eq!(r.data["actual"], "missing");
    let r = call(
        &c,
        "verify",
        json!({"type": "file_contains", "target": "hello.txt", "expected": "^hello w.rld$"}),
    );
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    let r = call(
        &c,
        "verify",
        json!({"type": "file_contains", "target": "hello.txt", "expected": "bye"}),
    );
    assert_eq!(r.error_code(), Some(ErrorCode::VerificationFailed));
    assert_eq!(r.data["expected"], "bye");
    assert_eq!(r.data["actual"], "hello world\n");
    let r = call(
        &c,
        "verify",
        json!({"type": "file_contains", "target": "hello.txt", "expected": "("}),
    );
    assert_eq!(r.error_code(), Some(ErrorCode::InvalidInput));
    let r = call(&c, "verify", json!({"type": "file_contains", "target": "hello.txt"}));
    assert_eq!(r.error_code(), Some(ErrorCode::InvalidInput));
}

#[test]
fn verify_command_succeeds_runs_in_the_sandbox() {
    let ws = tempfile::tempdir().unwrap();
    fs::write(ws.path().join("x"), "1").unwrap();
    let c = ctx(ws.path());
    let r = call(&c, "verify", json!({"type": "command_succeeds", "target": "test -f x"}));
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    let r = call(&c, "verify", json!({"type": "command_succeeds", "target": "test -f y"}));
    assert_eq!(r.error_code(), Some(ErrorCode::VerificationFailed));
    assert_eq!(r.data["actual"], "exit code 1");
    let r = call(
        &c,
        "verify",
        json!({"type": "command_succeeds", "target": "sleep 5", "timeout_ms": 150}),
    );
    assert_eq!(r.error_code(), Some(ErrorCode::VerificationFailed));
    assert!(r.data["actual"].as_str().unwrap().contains("timed out"));
}

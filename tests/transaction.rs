//! The `transaction` tool end to end through the pipeline: plan → approve → checkpoint →
//! execute → verify → commit or roll back, each step a receipt (issue 14, point 5).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use medin::internal::agent::Action;
use medin::internal::pipeline::checkpoint::CheckpointLimits;
use medin::internal::pipeline::{Origin, Pipeline};
use medin::internal::tools::{ActionInput, ErrorCode};
use serde_json::{json, Value};

fn transaction(input: Value) -> Action {
    Action {
        id: "t1".into(),
        tool: "transaction".into(),
        input: ActionInput::Json(input),
    }
}

fn write(ws: &Path, rel: &str, text: &str) {
    let p = ws.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn read(ws: &Path, rel: &str) -> String {
    std::fs::read_to_string(ws.join(rel)).unwrap()
}

/// (tool, data.transaction) of every record, in order.
fn trail(pipe: &Pipeline) -> Vec<(String, Value)> {
    pipe.actions_since(0)
        .into_iter()
        .map(|a| {
            (
                a.tool.clone(),
                a.receipt.data.get("transaction").cloned().unwrap_or(Value::Null),
            )
        })
        .collect()
}

#[test]
fn a_transaction_whose_checks_pass_commits_with_a_receipt_per_step() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    write(ws, "greet.py", "print('hi')\n");
    let mut pipe = Pipeline::standalone(ws);
    // This test's own checkpoint folder: other tests of this binary take theirs at once.
    let checkpoints = tempfile::tempdir().unwrap();
    pipe.set_checkpoint_dir(checkpoints.path().to_path_buf());
    let passed = pipe
        .pass(
            Origin::Agent,
            &transaction(json!({
                "description": "rename the greeting",
                "steps": [
                    { "tool": "edit_file", "input": { "path": "greet.py", "old_string": "hi", "new_string": "hello" } },
                    { "tool": "write_file", "input": { "path": "docs/CHANGES.md", "content": "greeting renamed\n" } }
                ],
                "verify": [
                    { "file_contains": { "path": "greet.py", "pattern": "hello" } },
                    { "type": "file_exists", "target": "docs/CHANGES.md" }
                ]
            })),
        )
        .unwrap();
    let r = &passed.receipt;
    assert!(!r.is_error(), "{r:?}");
    assert_eq!(r.data["state"], "committed");
    assert_eq!(r.data["committed"], true);
    assert_eq!(r.data["verified"], true);
    assert_eq!(r.data["executed"], 2);
    assert_eq!(read(ws, "greet.py"), "print('hello')\n");
    assert_eq!(read(ws, "docs/CHANGES.md"), "greeting renamed\n");
    let seen = trail(&pipe);
    let tools: Vec<&str> = seen.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        tools,
        [
            "medin.transaction",
            "medin.transaction",
            "edit_file",
            "write_file",
            "verify",
            "verify",
            "transaction"
        ]
    );
    assert_eq!(seen[0].1, json!({ "id": "txn-1", "phase": "plan" }));
    assert_eq!(seen[1].1, json!({ "id": "txn-1", "phase": "checkpoint" }));
    assert_eq!(seen[2].1, json!({ "id": "txn-1", "step": 1 }));
    assert_eq!(seen[3].1, json!({ "id": "txn-1", "step": 2 }));
    assert_eq!(seen[4].1, json!({ "id": "txn-1", "check": 1 }));
    // The plan shows what each step would touch, before anything ran.
    let plan = &pipe.actions_since(0)[0].receipt;
    let targets: Vec<&str> = plan.would_affect.iter().map(|w| w.target.as_str()).collect();
    assert_eq!(targets, ["greet.py", "docs/CHANGES.md"]);
    assert_eq!(plan.data["decision"], "allow");
    // The checkpoint's copy goes with the transaction.
    let leftovers: Vec<_> = std::fs::read_dir(checkpoints.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_failed_verification_rolls_the_workspace_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    write(ws, "config.toml", "level = 1\n");
    write(ws, "keep/old.txt", "old\n");
    std::fs::set_permissions(ws.join("config.toml"), std::fs::Permissions::from_mode(0o640)).unwrap();
    let pipe = Pipeline::standalone(ws);
    let passed = pipe
        .pass(
            Origin::Agent,
            &transaction(json!({
                "description": "bump the level",
                "steps": [
                    { "tool": "write_file", "input": { "path": "config.toml", "content": "level = 2\n" } },
                    { "tool": "delete_file", "input": { "path": "keep", "recursive": true } },
                    { "tool": "write_file", "input": { "path": "new/made.txt", "content": "new\n" } },
                    { "tool": "bash", "input": { "command": "chmod 600 config.toml && touch created-by-bash" } }
                ],
                "verify": [ { "file_contains": { "path": "config.toml", "pattern": "level = 3" } } ]
            })),
        )
        .unwrap();
    let r = &passed.receipt;
    assert_eq!(r.error_code(), Some(ErrorCode::VerificationFailed), "{r:?}");
    assert_eq!(r.data["state"], "rolled_back");
    assert_eq!(r.data["rolled_back"], true);
    assert_eq!(r.data["verified"], false);
    assert!(r.errors[0].message.contains("level = 3"), "{}", r.errors[0].message);
    assert_eq!(read(ws, "config.toml"), "level = 1\n");
    assert_eq!(
        std::fs::metadata(ws.join("config.toml")).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(read(ws, "keep/old.txt"), "old\n");
    assert!(!ws.join("new").exists(), "created folders vanish");
    assert!(!ws.join("created-by-bash").exists(), "files a command created vanish");
    let seen = trail(&pipe);
    let rollback = seen
        .iter()
        .position(|(_, l)| l.get("phase") == Some(&json!("rollback")))
        .expect("the rollback is receipted");
    assert_eq!(seen.last().unwrap().0, "transaction");
    assert_eq!(rollback, seen.len() - 2, "{seen:?}");
    assert_eq!(pipe.actions_since(0)[rollback].receipt.data["complete"], true);
}

#[test]
fn a_failed_step_stops_the_plan_and_rolls_back() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    write(ws, "a.txt", "alpha\n");
    let pipe = Pipeline::standalone(ws);
    let passed = pipe
        .pass(
            Origin::Agent,
            &transaction(json!({
                "description": "two edits",
                "steps": [
                    { "tool": "write_file", "input": { "path": "a.txt", "content": "beta\n" } },
                    { "tool": "edit_file", "input": { "path": "a.txt", "old_string": "not there", "new_string": "x" } },
                    { "tool": "write_file", "input": { "path": "never.txt", "content": "x" } }
                ],
                "verify": [ { "file_exists": "a.txt" } ]
            })),
        )
        .unwrap();
    let r = &passed.receipt;
    assert_eq!(r.error_code(), Some(ErrorCode::NotFound), "{r:?}");
    assert_eq!(r.data["state"], "rolled_back");
    assert_eq!(r.data["executed"], 2);
    assert_eq!(r.data["verified"], Value::Null, "no verification after a failed step");
    assert!(r.errors[0].message.contains("step 2"), "{}", r.errors[0].message);
    assert_eq!(read(ws, "a.txt"), "alpha\n");
    assert!(!ws.join("never.txt").exists());
    let tools: Vec<String> = trail(&pipe).into_iter().map(|(t, _)| t).collect();
    assert!(!tools.contains(&"verify".to_string()), "{tools:?}");
}

#[test]
fn rollback_on_failure_false_keeps_what_the_steps_did() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let pipe = Pipeline::standalone(ws);
    let passed = pipe
        .pass(
            Origin::Agent,
            &transaction(json!({
                "description": "keep it",
                "steps": [ { "tool": "write_file", "input": { "path": "a.txt", "content": "x\n" } } ],
                "verify": [ { "file_exists": "b.txt" } ],
                "rollback_on_failure": false
            })),
        )
        .unwrap();
    assert_eq!(passed.receipt.data["state"], "failed");
    assert_eq!(passed.receipt.data["rolled_back"], false);
    assert_eq!(read(ws, "a.txt"), "x\n");
}

#[test]
fn a_step_the_guard_blocks_rejects_the_plan_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    write(ws, "a.txt", "alpha\n");
    let pipe = Pipeline::standalone(ws);
    let passed = pipe
        .pass(
            Origin::Agent,
            &transaction(json!({
                "description": "clean up",
                "steps": [
                    { "tool": "write_file", "input": { "path": "a.txt", "content": "changed\n" } },
                    { "tool": "bash", "input": { "command": "rm -rf /" } }
                ],
                "verify": [ { "file_exists": "a.txt" } ]
            })),
        )
        .unwrap();
    let r = &passed.receipt;
    assert_eq!(r.error_code(), Some(ErrorCode::PermissionDenied), "{r:?}");
    assert_eq!(r.data["state"], "rejected");
    assert_eq!(r.data["approved"], false);
    assert!(r.errors[0].message.contains("step 2"), "{}", r.errors[0].message);
    assert_eq!(read(ws, "a.txt"), "alpha\n", "nothing changed");
    let records = pipe.actions_since(0);
    let tools: Vec<&str> = records.iter().map(|a| a.tool.as_str()).collect();
    assert_eq!(
        tools,
        ["medin.transaction", "transaction"],
        "only the plan and the refusal"
    );
    assert_eq!(records[0].receipt.data["steps"][1]["decision"], "deny");
    assert_eq!(records[1].decision, "deny");
    assert!(!records[1].ran);
}

#[test]
fn a_nested_transaction_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let pipe = Pipeline::standalone(ws);
    let inner = json!({ "description": "inner", "steps": [ { "tool": "write_file", "input": { "path": "x", "content": "" } } ], "verify": [ { "file_exists": "x" } ] });
    let passed = pipe
        .pass(
            Origin::Agent,
            &transaction(json!({
                "description": "outer",
                "steps": [
                    { "tool": "write_file", "input": { "path": "a.txt", "content": "x" } },
                    { "tool": "transaction", "input": inner }
                ],
                "verify": [ { "file_exists": "a.txt" } ]
            })),
        )
        .unwrap();
    let r = &passed.receipt;
    assert_eq!(r.error_code(), Some(ErrorCode::InvalidInput), "{r:?}");
    assert!(r.errors[0].message.contains("no nesting"), "{}", r.errors[0].message);
    assert!(!ws.join("a.txt").exists());
    assert!(!ws.join("x").exists());
}

#[test]
fn a_step_that_plants_a_link_out_is_rolled_back_without_writing_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    write(&ws, "conf/app.cfg", "mode = safe\n");
    write(&ws, "conf/sub/more.cfg", "x = 1\n");
    let pipe = Pipeline::standalone(&ws);
    let command = format!("rm -r conf && ln -s {} conf", outside.display());
    let passed = pipe
        .pass(
            Origin::Agent,
            &transaction(json!({
                "description": "swap the config folder for a link",
                "steps": [ { "tool": "bash", "input": { "command": command } } ],
                "verify": [ { "file_contains": { "path": "conf/app.cfg", "pattern": "mode = fast" } } ]
            })),
        )
        .unwrap();
    let r = &passed.receipt;
    assert_eq!(r.data["state"], "rolled_back", "{r:?}");
    assert_eq!(r.data["steps"][0]["status"], "success", "the link was planted: {r:?}");
    assert_eq!(r.data["rollback"]["paths"]["removed"], json!(["conf"]));
    let meta = std::fs::symlink_metadata(ws.join("conf")).unwrap();
    assert!(
        meta.is_dir() && !meta.file_type().is_symlink(),
        "the folder is back, not the link"
    );
    assert_eq!(read(&ws, "conf/app.cfg"), "mode = safe\n");
    assert_eq!(read(&ws, "conf/sub/more.cfg"), "x = 1\n");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "nothing was written outside"
    );
}

#[test]
fn a_fifo_in_the_workspace_does_not_hang_the_checkpoint_and_is_put_back() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().to_path_buf();
    write(&ws, "a.txt", "alpha\n");
    let fifo = std::ffi::CString::new(ws.join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let (tx, rx) = mpsc::channel();
    let ws2 = ws.clone();
    std::thread::spawn(move || {
        let pipe = Pipeline::standalone(&ws2);
        let passed = pipe.pass(
            Origin::Agent,
            &transaction(json!({
                "description": "remove the pipe, then fail",
                "steps": [
                    { "tool": "delete_file", "input": { "path": "pipe" } },
                    { "tool": "write_file", "input": { "path": "a.txt", "content": "beta\n" } }
                ],
                "verify": [ { "file_exists": "missing" } ]
            })),
        );
        let _ = tx.send(passed.map(|p| p.receipt));
    });
    let receipt = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the transaction does not hang on a FIFO")
        .unwrap();
    assert_eq!(receipt.data["state"], "rolled_back", "{receipt:?}");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(ws.join("pipe"))
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(read(&ws, "a.txt"), "alpha\n");
}

#[test]
fn a_workspace_past_the_checkpoint_bound_is_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    write(ws, "big.bin", &"x".repeat(4096));
    let mut pipe = Pipeline::standalone(ws);
    pipe.set_checkpoint_limits(CheckpointLimits {
        max_bytes: 1024,
        max_entries: 100,
    });
    let passed = pipe
        .pass(
            Origin::Agent,
            &transaction(json!({
                "description": "too big to checkpoint",
                "steps": [ { "tool": "write_file", "input": { "path": "a.txt", "content": "x" } } ],
                "verify": [ { "file_exists": "a.txt" } ]
            })),
        )
        .unwrap();
    let r = &passed.receipt;
    assert_eq!(r.data["state"], "rejected", "{r:?}");
    assert_eq!(r.data["checkpointed"], false);
    assert!(r.errors[0].message.contains("1024"), "{}", r.errors[0].message);
    assert!(!ws.join("a.txt").exists(), "no step ran");
}

#[test]
fn a_dry_run_shows_the_plan_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let pipe = Pipeline::standalone(ws);
    let passed = pipe
        .pass(
            Origin::Agent,
            &transaction(json!({
                "description": "just look",
                "steps": [ { "tool": "write_file", "input": { "path": "a.txt", "content": "x" } } ],
                "verify": [ { "file_exists": "a.txt" } ],
                "dry_run": true
            })),
        )
        .unwrap();
    let r = &passed.receipt;
    assert_eq!(r.data["state"], "planned", "{r:?}");
    assert_eq!(r.would_affect[0].target, "a.txt");
    assert_eq!(r.would_affect[0].action, "create");
    assert!(!ws.join("a.txt").exists());
}

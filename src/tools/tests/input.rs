//! Tool input handling: raw text, schema violations, unknown tools, and no panics on junk.

use std::path::Path;

use crate::pipeline::Cleared;
use crate::sandbox::SandboxConfig;
use crate::tools::{self, ActionInput, ErrorCode, ReceiptStatus, ToolContext};
use serde_json::json;

fn ctx(dir: &Path) -> ToolContext {
    ToolContext {
        workspace: dir.to_path_buf(),
        sandbox: SandboxConfig::new(dir),
        dry_run: false,
        deadline: None,
        checks: None,
    }
}

#[test]
fn raw_text_is_invalid_input_with_a_hint() {
    let ws = tempfile::tempdir().unwrap();
    let r = tools::call(
        &ctx(ws.path()),
        &Cleared::for_test("read_file", &ActionInput::Raw("{path: hello.txt".into())),
    );
    assert_eq!(r.error_code(), Some(ErrorCode::InvalidInput));
    let m = &r.errors[0].message;
    assert!(m.starts_with("input is not valid JSON: "), "{m}");
    assert!(m.contains("send an object such as {\"path\": \"...\"}"), "{m}");
    // Raw text that is JSON after all is accepted.
    std::fs::write(ws.path().join("a"), "A").unwrap();
    let r = tools::call(
        &ctx(ws.path()),
        &Cleared::for_test("read_file", &ActionInput::Raw("{\"path\": \"a\"}".into())),
    );
    assert_eq!(r.data["content"], "A", "{r:?}");
}

#[test]
fn schema_violations_name_the_key() {
    let ws = tempfile::tempdir().unwrap();
    let c = ctx(ws.path());
    let cases = [
        ("write_file", json!({"path": "a"}), "`content`"),
        ("write_file", json!({"path": 3, "content": "x"}), "`path`"),
        ("read_file", json!({"path": "a", "limt": 3}), "did you mean `limit`"),
        ("read_file", json!({"path": "a", "limit": 0}), "`limit`"),
        ("read_file", json!({"path": "a", "offset": -1}), "`offset`"),
        ("bash", json!({"command": "ls", "timeout_ms": "5s"}), "`timeout_ms`"),
        (
            "edit_file",
            json!({"path": "a", "old_string": "", "new_string": "b"}),
            "`old_string`",
        ),
        ("verify", json!({"type": "file_exist", "target": "a"}), "file_exists"),
        ("delete_file", json!({"path": "a", "recursive": "yes"}), "`recursive`"),
        ("move_file", json!(["a", "b"]), "JSON object"),
        ("write_file", json!(null), "JSON object"),
    ];
    for (tool, input, needle) in cases {
        let r = tools::call(&c, &Cleared::for_test(tool, &ActionInput::Json(input.clone())));
        assert_eq!(r.error_code(), Some(ErrorCode::InvalidInput), "{tool} {input}: {r:?}");
        assert!(
            r.errors[0].message.contains(needle),
            "{tool} {input}: {}",
            r.errors[0].message
        );
    }
}

#[test]
fn unknown_tool_suggests_the_nearest() {
    let ws = tempfile::tempdir().unwrap();
    let r = tools::call(
        &ctx(ws.path()),
        &Cleared::for_test("read_fiel", &ActionInput::Json(json!({"path": "a"}))),
    );
    assert_eq!(r.error_code(), Some(ErrorCode::ToolNotFound));
    assert!(
        r.errors[0].message.contains("did you mean `read_file`"),
        "{}",
        r.errors[0].message
    );
    assert!(r.errors[0].message.contains("write_file"));
    assert_eq!(r.errors[0].context["nearest"], "read_file");
}

#[test]
fn list_dir_accepts_no_input() {
    let ws = tempfile::tempdir().unwrap();
    let r = tools::call(
        &ctx(ws.path()),
        &Cleared::for_test("list_dir", &ActionInput::Json(json!(null))),
    );
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
}

#[test]
fn junk_never_panics() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("f"), "x").unwrap();
    let c = ctx(ws.path());
    let junk = [
        json!({"path": "\u{0}"}),
        json!({"path": ""}),
        json!({"path": "f/.."}),
        json!({"path": "f/x"}),
        json!({"path": "."}),
        json!({"path": "f", "content": "y", "old_string": "x", "new_string": "z"}),
        json!({"from": "f", "to": "f"}),
        json!({"from": "f", "to": "f/inside"}),
        json!({"command": "", "type": "git_status", "target": ""}),
        json!({"path": "f", "offset": u64::MAX, "limit": u64::MAX}),
        json!(42),
        json!("f"),
    ];
    for t in tools::registry() {
        for j in &junk {
            let r = tools::call(&c, &Cleared::for_test(t.name, &ActionInput::Json(j.clone())));
            assert!(
                r.status == ReceiptStatus::Success || !r.errors.is_empty(),
                "{} {j}: {r:?}",
                t.name
            );
            // `call` turns a panic into an "internal error" receipt: none may happen.
            assert!(
                !r.errors.iter().any(|e| e.message.contains("internal error")),
                "{} {j}: {r:?}",
                t.name
            );
            let _ = tools::would_affect(&c, t.name, &ActionInput::Json(j.clone()));
        }
        let r = tools::call(
            &c,
            &Cleared::for_test(t.name, &ActionInput::Raw("\u{0}\u{ffff}".into())),
        );
        assert_eq!(r.error_code(), Some(ErrorCode::InvalidInput));
    }
    // A huge timeout must not overflow; a fifo must not hang the file tools.
    let r = tools::call(
        &c,
        &Cleared::for_test(
            "bash",
            &ActionInput::Json(json!({"command": "mkfifo p", "timeout_ms": u64::MAX})),
        ),
    );
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    for (tool, input) in [
        ("read_file", json!({"path": "p"})),
        ("write_file", json!({"path": "p", "content": "x"})),
        ("edit_file", json!({"path": "p", "old_string": "a", "new_string": "b"})),
        (
            "verify",
            json!({"type": "file_contains", "target": "p", "expected": "x"}),
        ),
    ] {
        let r = tools::call(&c, &Cleared::for_test(tool, &ActionInput::Json(input)));
        assert_eq!(r.error_code(), Some(ErrorCode::InvalidInput), "{tool}: {r:?}");
    }
    // The workspace itself is never removed by junk.
    assert!(ws.path().exists());
}

#[test]
fn paths_below_a_fixed_root_are_rebased_for_the_guard_and_others_are_left_as_written() {
    use crate::sandbox::FixedPath;
    use crate::tools::rebase_paths;
    let root = FixedPath::parse("/app").unwrap();
    let r = |tool: &str, input: serde_json::Value| rebase_paths(tool, input, Some(&root));
    assert_eq!(
        r("write_file", json!({"path": "/app/tests/a.py", "content": "x"})),
        json!({"path": "tests/a.py", "content": "x"})
    );
    assert_eq!(r("list_dir", json!({"path": "/app"})), json!({"path": "."}));
    assert_eq!(
        r("move_file", json!({"from": "/app/a", "to": "/app/b/c"})),
        json!({"from": "a", "to": "b/c"})
    );
    assert_eq!(
        r("bash", json!({"command": "cat /app/a", "cwd": "/app/sub"})),
        json!({"command": "cat /app/a", "cwd": "sub"})
    );
    assert_eq!(
        r("verify", json!({"type": "file_exists", "target": "/app/a"})),
        json!({"type": "file_exists", "target": "a"})
    );
    // A command is never rewritten; nor is what climbs or lies outside the root.
    let kept = [
        ("verify", json!({"type": "command_succeeds", "target": "/app/run.sh"})),
        ("read_file", json!({"path": "/app/../etc/shadow"})),
        ("read_file", json!({"path": "/etc/passwd"})),
        ("read_file", json!({"path": "/apple/x"})),
        ("read_file", json!({"path": "tests/a.py"})),
    ];
    for (tool, input) in kept {
        assert_eq!(r(tool, input.clone()), input);
    }
    // Without a root nothing changes.
    let input = json!({"path": "/app/a"});
    assert_eq!(rebase_paths("read_file", input.clone(), None), input);
}

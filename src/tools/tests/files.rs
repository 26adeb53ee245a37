//! File tools on real files in temp workspaces: happy paths, errors, confinement, dry runs.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

use crate::tools::receipt::sha256_tagged;
use crate::tools::{self, ActionInput, ErrorCode, EvidenceKind, Receipt, ReceiptStatus, ToolContext};
use serde_json::{json, Value};

use super::call;

fn ctx(dir: &Path) -> ToolContext {
    super::context(dir, Duration::from_secs(10))
}

fn code(r: &Receipt) -> Option<ErrorCode> {
    r.error_code()
}

/// Every file under `dir` with its bytes (symlinks as their target), for byte-identity checks.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(dir).follow_links(false).sort_by_file_name() {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned();
        let ft = e.file_type();
        let content = if ft.is_symlink() {
            fs::read_link(e.path()).unwrap().to_string_lossy().as_bytes().to_vec()
        } else if ft.is_file() {
            fs::read(e.path()).unwrap()
        } else {
            b"<dir>".to_vec()
        };
        out.insert(rel, content);
    }
    out
}

#[test]
fn write_then_read_with_evidence_and_next_actions() {
    let ws = tempfile::tempdir().unwrap();
    let c = ctx(ws.path());
    let r = call(
        &c,
        "write_file",
        json!({"path": "a/b/hello.txt", "content": "one\ntwo\nthree\n"}),
    );
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    assert_eq!(r.data["created"], true);
    let hash = sha256_tagged(b"one\ntwo\nthree\n");
    assert_eq!(r.receipts[0].kind, EvidenceKind::FileWrite);
    assert_eq!(r.receipts[0].source, "a/b/hello.txt");
    assert_eq!(r.receipts[0].hash.as_deref(), Some(hash.as_str()));
    assert_eq!(r.next_actions, ["verify"]);
    assert_eq!(
        fs::read_to_string(ws.path().join("a/b/hello.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );

    let r = call(&c, "read_file", json!({"path": "a/b/hello.txt"}));
    assert_eq!(r.data["content"], "one\ntwo\nthree\n");
    assert_eq!(r.data["total_lines"], 3);
    assert_eq!(r.data["encoding"], "utf-8");
    assert_eq!(r.receipts[0].kind, EvidenceKind::FileRead);
    assert_eq!(r.receipts[0].hash.as_deref(), Some(hash.as_str()));

    let r = call(
        &c,
        "read_file",
        json!({"path": "a/b/hello.txt", "offset": 1, "limit": 1}),
    );
    assert_eq!(r.data["content"], "two\n");
    assert_eq!(r.data["more"], true);

    // Overwrite reports created=false; empty content works.
    let r = call(&c, "write_file", json!({"path": "a/b/hello.txt", "content": ""}));
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    assert_eq!(r.data["created"], false);
    assert_eq!(fs::read(ws.path().join("a/b/hello.txt")).unwrap(), b"");
}

#[test]
fn read_file_errors_and_binary() {
    let ws = tempfile::tempdir().unwrap();
    let c = ctx(ws.path());
    let r = call(&c, "read_file", json!({"path": "missing.txt"}));
    assert_eq!(code(&r), Some(ErrorCode::NotFound));
    fs::create_dir(ws.path().join("d")).unwrap();
    let r = call(&c, "read_file", json!({"path": "d"}));
    assert_eq!(code(&r), Some(ErrorCode::InvalidInput));
    fs::write(ws.path().join("bin"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let r = call(&c, "read_file", json!({"path": "bin"}));
    assert_eq!(r.status, ReceiptStatus::Success);
    assert_eq!(r.data["encoding"], "base64");
    assert_eq!(r.data["content"], "//4AQQ==");
    assert!(!r.warnings.is_empty());
}

#[test]
fn write_file_onto_a_directory_is_invalid() {
    let ws = tempfile::tempdir().unwrap();
    fs::create_dir(ws.path().join("d")).unwrap();
    let r = call(&ctx(ws.path()), "write_file", json!({"path": "d", "content": "x"}));
    assert_eq!(code(&r), Some(ErrorCode::InvalidInput));
}

#[test]
fn edit_file_once_missing_ambiguous_and_replace_all() {
    let ws = tempfile::tempdir().unwrap();
    let c = ctx(ws.path());
    fs::write(ws.path().join("f.txt"), "alpha beta\nbeta gamma\n").unwrap();
    let r = call(
        &c,
        "edit_file",
        json!({"path": "f.txt", "old_string": "alpha", "new_string": "ALPHA"}),
    );
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    assert_eq!(
        fs::read_to_string(ws.path().join("f.txt")).unwrap(),
        "ALPHA beta\nbeta gamma\n"
    );
    assert_eq!(
        r.receipts.last().unwrap().hash.as_deref(),
        Some(sha256_tagged(b"ALPHA beta\nbeta gamma\n").as_str())
    );

    let r = call(
        &c,
        "edit_file",
        json!({"path": "f.txt", "old_string": "delta", "new_string": "x"}),
    );
    assert_eq!(code(&r), Some(ErrorCode::NotFound));

    let r = call(
        &c,
        "edit_file",
        json!({"path": "f.txt", "old_string": "beta", "new_string": "B"}),
    );
    assert_eq!(code(&r), Some(ErrorCode::Conflict));
    assert_eq!(r.errors[0].context["occurrences"], 2);
    assert_eq!(r.errors[0].context["lines"], json!([1, 2]));
    assert_eq!(
        fs::read_to_string(ws.path().join("f.txt")).unwrap(),
        "ALPHA beta\nbeta gamma\n"
    );

    let r = call(
        &c,
        "edit_file",
        json!({"path": "f.txt", "old_string": "beta", "new_string": "B", "replace_all": true}),
    );
    assert_eq!(r.data["replacements"], 2);
    assert_eq!(
        fs::read_to_string(ws.path().join("f.txt")).unwrap(),
        "ALPHA B\nB gamma\n"
    );

    let r = call(
        &c,
        "edit_file",
        json!({"path": "nope.txt", "old_string": "a", "new_string": "b"}),
    );
    assert_eq!(code(&r), Some(ErrorCode::NotFound));
}

#[test]
fn list_dir_sorted_with_types_and_sizes() {
    let ws = tempfile::tempdir().unwrap();
    let c = ctx(ws.path());
    fs::create_dir_all(ws.path().join("src/inner")).unwrap();
    fs::write(ws.path().join("b.txt"), "12345").unwrap();
    fs::write(ws.path().join("a.txt"), "1").unwrap();
    fs::write(ws.path().join("src/inner/deep.rs"), "").unwrap();
    symlink("a.txt", ws.path().join("link")).unwrap();
    let r = call(&c, "list_dir", json!({}));
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    let entries = r.data["entries"].as_array().unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(names, ["a.txt", "b.txt", "link", "src"]);
    assert_eq!(entries[1]["size"], 5);
    assert_eq!(entries[1]["type"], "file");
    assert_eq!(entries[2]["type"], "symlink");
    assert_eq!(entries[3]["type"], "dir");

    let r = call(&c, "list_dir", json!({"path": "src", "recursive": true}));
    let names: Vec<&str> = r.data["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["src/inner", "src/inner/deep.rs"]);

    assert_eq!(
        code(&call(&c, "list_dir", json!({"path": "a.txt"}))),
        Some(ErrorCode::InvalidInput)
    );
    assert_eq!(
        code(&call(&c, "list_dir", json!({"path": "zzz"}))),
        Some(ErrorCode::NotFound)
    );
}

#[test]
fn delete_file_and_directories() {
    let ws = tempfile::tempdir().unwrap();
    let c = ctx(ws.path());
    fs::create_dir_all(ws.path().join("d/e")).unwrap();
    fs::write(ws.path().join("d/e/f"), "x").unwrap();
    fs::write(ws.path().join("g"), "gg").unwrap();
    let r = call(&c, "delete_file", json!({"path": "g"}));
    assert_eq!(r.status, ReceiptStatus::Success);
    assert_eq!(r.receipts[0].kind, EvidenceKind::FileDelete);
    assert_eq!(r.receipts[0].hash.as_deref(), Some(sha256_tagged(b"gg").as_str()));
    assert!(!ws.path().join("g").exists());
    assert_eq!(
        code(&call(&c, "delete_file", json!({"path": "g"}))),
        Some(ErrorCode::NotFound)
    );
    let r = call(&c, "delete_file", json!({"path": "d"}));
    assert_eq!(code(&r), Some(ErrorCode::InvalidInput));
    assert!(ws.path().join("d/e/f").exists());
    let r = call(&c, "delete_file", json!({"path": "d", "recursive": true}));
    assert_eq!(r.status, ReceiptStatus::Success);
    assert!(!ws.path().join("d").exists());
    assert_eq!(
        code(&call(&c, "delete_file", json!({"path": ".", "recursive": true}))),
        Some(ErrorCode::PermissionDenied)
    );
    assert!(ws.path().exists());
}

#[test]
fn delete_a_symlink_pointing_outside_removes_only_the_link() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("keep"), "k").unwrap();
    symlink(outside.path().join("keep"), ws.path().join("l")).unwrap();
    let r = call(&ctx(ws.path()), "delete_file", json!({"path": "l"}));
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    assert!(fs::symlink_metadata(ws.path().join("l")).is_err());
    assert_eq!(fs::read_to_string(outside.path().join("keep")).unwrap(), "k");
}

#[test]
fn move_file_rename_conflict_and_overwrite() {
    let ws = tempfile::tempdir().unwrap();
    let c = ctx(ws.path());
    fs::write(ws.path().join("a"), "A").unwrap();
    fs::write(ws.path().join("b"), "B").unwrap();
    let r = call(&c, "move_file", json!({"from": "a", "to": "b"}));
    assert_eq!(code(&r), Some(ErrorCode::Conflict));
    assert_eq!(fs::read_to_string(ws.path().join("b")).unwrap(), "B");
    let r = call(&c, "move_file", json!({"from": "a", "to": "b", "overwrite": true}));
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    assert_eq!(fs::read_to_string(ws.path().join("b")).unwrap(), "A");
    assert!(!ws.path().join("a").exists());
    let r = call(&c, "move_file", json!({"from": "b", "to": "new/dir/c"}));
    assert_eq!(r.status, ReceiptStatus::Success, "{r:?}");
    assert_eq!(r.receipts[0].kind, EvidenceKind::FileMove);
    assert_eq!(fs::read_to_string(ws.path().join("new/dir/c")).unwrap(), "A");
    assert_eq!(
        code(&call(&c, "move_file", json!({"from": "zz", "to": "y"}))),
        Some(ErrorCode::NotFound)
    );
}

#[test]
fn every_escape_is_permission_denied() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret"), "s").unwrap();
    fs::create_dir(ws.path().join("a")).unwrap();
    symlink(outside.path(), ws.path().join("outdir")).unwrap();
    symlink(outside.path().join("secret"), ws.path().join("outfile")).unwrap();
    symlink(outside.path().join("not-yet"), ws.path().join("dangling")).unwrap();
    symlink("../..", ws.path().join("a/up")).unwrap();
    let c = ctx(ws.path());
    let before_out = snapshot(outside.path());
    let abs = outside.path().join("secret").to_string_lossy().into_owned();
    let cases: Vec<(&str, Value)> = vec![
        ("read_file", json!({"path": abs})),
        ("read_file", json!({"path": "../x"})),
        ("read_file", json!({"path": "a/../../x"})),
        ("read_file", json!({"path": "outdir/secret"})),
        ("read_file", json!({"path": "outfile"})),
        ("read_file", json!({"path": "a/up/etc/passwd"})),
        ("write_file", json!({"path": "outdir/new", "content": "x"})),
        ("write_file", json!({"path": "outfile", "content": "x"})),
        ("write_file", json!({"path": "dangling", "content": "x"})),
        ("write_file", json!({"path": "/tmp/medin-escape", "content": "x"})),
        (
            "edit_file",
            json!({"path": "outfile", "old_string": "s", "new_string": "t"}),
        ),
        ("list_dir", json!({"path": "outdir"})),
        ("list_dir", json!({"path": ".."})),
        ("delete_file", json!({"path": "outdir/secret"})),
        ("delete_file", json!({"path": "../x"})),
        ("move_file", json!({"from": "outdir/secret", "to": "stolen"})),
        ("move_file", json!({"from": "a", "to": "outdir/a"})),
        ("verify", json!({"type": "file_exists", "target": "outdir/secret"})),
        (
            "verify",
            json!({"type": "file_contains", "target": "outfile", "expected": "s"}),
        ),
        ("bash", json!({"command": "pwd", "cwd": "outdir"})),
        ("bash", json!({"command": "pwd", "cwd": "../"})),
    ];
    for (tool, input) in cases {
        let r = call(&c, tool, input.clone());
        assert_eq!(code(&r), Some(ErrorCode::PermissionDenied), "{tool} {input}: {r:?}");
        let mut dry = input.clone();
        dry["dry_run"] = json!(true);
        let r = call(&c, tool, dry);
        assert_eq!(code(&r), Some(ErrorCode::PermissionDenied), "dry {tool} {input}: {r:?}");
    }
    assert_eq!(snapshot(outside.path()), before_out);
    assert!(!Path::new("/tmp/medin-escape").exists());
    assert!(!outside.path().join("not-yet").exists());
}

#[test]
fn symlinks_inside_the_workspace_are_fine() {
    let ws = tempfile::tempdir().unwrap();
    fs::create_dir(ws.path().join("real")).unwrap();
    fs::write(ws.path().join("real/f"), "inside").unwrap();
    symlink("real", ws.path().join("alias")).unwrap();
    symlink(ws.path().join("real/f"), ws.path().join("abs-inside")).unwrap();
    let c = ctx(ws.path());
    let r = call(&c, "read_file", json!({"path": "alias/f"}));
    assert_eq!(r.data["content"], "inside");
    assert_eq!(r.receipts[0].source, "real/f");
    let r = call(&c, "read_file", json!({"path": "abs-inside"}));
    assert_eq!(r.data["content"], "inside", "{r:?}");
}

/// (type, target, action) of one `would_affect` entry.
type Target<'a> = (&'a str, &'a str, &'a str);

#[test]
fn dry_runs_change_nothing_and_report_targets() {
    let ws = tempfile::tempdir().unwrap();
    fs::create_dir(ws.path().join("d")).unwrap();
    fs::write(ws.path().join("d/f.txt"), "hello world\n").unwrap();
    fs::write(ws.path().join("g.txt"), "g\n").unwrap();
    let before = snapshot(ws.path());
    let mut c = ctx(ws.path());
    c.dry_run = true;
    let cases: Vec<(&str, Value, Vec<Target>)> = vec![
        (
            "write_file",
            json!({"path": "new/n.txt", "content": "x"}),
            vec![("file", "new/n.txt", "create")],
        ),
        (
            "write_file",
            json!({"path": "g.txt", "content": "x"}),
            vec![("file", "g.txt", "modify")],
        ),
        (
            "edit_file",
            json!({"path": "d/f.txt", "old_string": "hello", "new_string": "bye"}),
            vec![("file", "d/f.txt", "modify")],
        ),
        (
            "delete_file",
            json!({"path": "d", "recursive": true}),
            vec![("file", "d", "delete")],
        ),
        (
            "move_file",
            json!({"from": "g.txt", "to": "h.txt"}),
            vec![("file", "g.txt", "delete"), ("file", "h.txt", "create")],
        ),
        ("read_file", json!({"path": "g.txt"}), vec![("file", "g.txt", "read")]),
        ("list_dir", json!({}), vec![("file", ".", "read")]),
        (
            "bash",
            json!({"command": "rm -rf d"}),
            vec![("command", "rm -rf d", "execute")],
        ),
        (
            "bash",
            json!({"command": "git init"}),
            vec![("git", "git init", "execute")],
        ),
        (
            "verify",
            json!({"type": "command_succeeds", "target": "touch z"}),
            vec![("command", "touch z", "execute")],
        ),
    ];
    for (tool, input, want) in cases {
        let r = call(&c, tool, input.clone());
        assert_eq!(r.status, ReceiptStatus::DryRun, "{tool} {input}: {r:?}");
        let got: Vec<Target> = r
            .would_affect
            .iter()
            .map(|w| (w.kind.as_str(), w.target.as_str(), w.action.as_str()))
            .collect();
        assert_eq!(got, want, "{tool} {input}");
        // The same targets from would_affect(), with the context's dry_run off.
        let live = ctx(ws.path());
        let wa = tools::would_affect(&live, tool, &ActionInput::Json(input.clone()));
        assert_eq!(wa, r.would_affect, "{tool}");
    }
    // Input-level dry_run works with a live context too.
    let live = ctx(ws.path());
    let r = call(&live, "delete_file", json!({"path": "g.txt", "dry_run": true}));
    assert_eq!(r.status, ReceiptStatus::DryRun);
    assert_eq!(snapshot(ws.path()), before);
}

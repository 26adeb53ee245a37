//! Red-team tests of the `transaction` tool: an agent that has read its source and wants the
//! harness to act outside the workspace during a checkpoint or a rollback, to dodge a limit
//! through a transaction, or to make a rolled-back transaction look exact when it is not.
//! Each test is one attack; those the code stops are kept as regression tests, the ones that
//! still get through are `#[ignore = "finding: …"]` (see the red-team report).

mod support;

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use medin::internal::agent::Action;
use medin::internal::pipeline::checkpoint::{Checkpoint, CheckpointLimits};
use medin::internal::pipeline::{Origin, Pipeline};
use medin::internal::tools::{ActionInput, ErrorCode, Receipt};
use medin::Outcome;
use serde_json::{json, Value};

fn transaction(input: Value) -> Action {
    Action {
        id: "t1".into(),
        tool: "transaction".into(),
        input: ActionInput::Json(input),
    }
}

fn run(ws: &Path, input: Value) -> Receipt {
    Pipeline::standalone(ws)
        .pass(Origin::Agent, &transaction(input))
        .expect("no harness error")
        .receipt
}

fn write(ws: &Path, rel: &str, text: &str) {
    let p = ws.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Every entry below `root` (no link followed) with its kind, link target or content: equal
/// listings mean an exact rollback.
fn listing(root: &Path) -> Vec<(Vec<u8>, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            let rel = path.strip_prefix(root).unwrap().as_os_str().as_bytes().to_vec();
            let t = e.file_type().unwrap();
            let what = if t.is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if t.is_dir() {
                stack.push(path.clone());
                "dir".to_string()
            } else if t.is_fifo() {
                "fifo".to_string()
            } else if t.is_socket() {
                "socket".to_string()
            } else {
                format!("file {:?}", std::fs::read(&path).unwrap())
            };
            out.push((rel, what));
        }
    }
    out.sort();
    out
}

/// (a) A leftover process swaps a folder for a link out, back and forth, while the rollback
/// works. Whatever the race gives — settled, or unsettled after its rounds — the harness never
/// writes through the link, and once the racer stops a restore is exact.
#[test]
fn a_racer_swapping_a_folder_for_a_link_out_during_the_restore_writes_nothing_outside() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    write(&ws, "conf/app.cfg", "mode = safe\n");
    write(&ws, "conf/deep/more.cfg", "x = 1\n");
    write(&ws, "top.txt", "top\n");
    let before = listing(&ws);
    let cp = Checkpoint::take(&ws, &dir.path().join("cp"), CheckpointLimits::default()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let racer = {
        let (ws, outside, stop) = (ws.clone(), outside.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let conf = ws.join("conf");
            while !stop.load(Ordering::Relaxed) {
                let _ = std::fs::remove_dir_all(&conf);
                let _ = std::fs::remove_file(&conf);
                let _ = std::os::unix::fs::symlink(&outside, &conf);
                std::thread::yield_now();
                let _ = std::fs::remove_file(&conf);
                let _ = std::fs::create_dir(&conf);
                let _ = std::fs::remove_file(ws.join("top.txt"));
                let _ = std::os::unix::fs::symlink(outside.join("top.txt"), ws.join("top.txt"));
            }
        })
    };
    // Settled or not, each restore answers (no panic, no hang).
    let answers: Vec<bool> = (0..20).map(|_| cp.restore(&ws).is_ok()).collect();
    stop.store(true, Ordering::Relaxed);
    racer.join().unwrap();
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "the restore wrote through a link out"
    );
    cp.restore(&ws)
        .unwrap_or_else(|e| panic!("settles once the racer is gone ({answers:?}): {e}"));
    assert_eq!(listing(&ws), before);
}

/// (c) A step replaces a FIFO by a UNIX socket: both are "special" to the walk, but the rollback
/// must put the FIFO back, not call the socket a FIFO and report an exact rollback.
#[test]
fn a_fifo_a_step_swaps_for_a_socket_is_put_back_as_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    write(ws, "a.txt", "alpha\n");
    let fifo = std::ffi::CString::new(ws.join("pipe").as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let before = listing(ws);
    let r = run(
        ws,
        json!({
            "description": "swap the pipe for a socket, then fail",
            "steps": [ { "tool": "bash", "input": { "command":
                "rm pipe && python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"pipe\")' && test -S pipe" } } ],
            "verify": [ { "file_exists": "missing" } ]
        }),
    );
    assert_eq!(r.data["steps"][0]["status"], "success", "the socket was planted: {r:?}");
    assert_eq!(r.data["state"], "rolled_back", "{r:?}");
    assert!(
        std::fs::symlink_metadata(ws.join("pipe"))
            .unwrap()
            .file_type()
            .is_fifo(),
        "the rollback said complete but left a socket where the FIFO was"
    );
    assert_eq!(listing(ws), before);
}

/// (a, d) What a step may make in the workspace before failing: names with newlines and
/// spaces, a folder next to files whose names sort between it and its children (`gen`,
/// `gen.txt`, `gen-1`, `gen/x`), a chain of folders deeper than any checkpoint follows,
/// a wide folder, hard links and links out. The rollback puts back exactly what was there.
#[test]
fn odd_names_deep_and_wide_trees_and_links_made_by_a_step_are_rolled_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    write(&ws, "keep/a.txt", "a\n");
    write(&ws, "line\nbreak.txt", "newline\n");
    write(&ws, "b.txt", "b\n");
    let before = listing(&ws);
    let command = format!(
        "set -e
        printf x > 'keep/new
name'
        for p in a b c d e; do mkdir -p $p; echo > $p/x; echo > $p.txt; echo > $p-1; done
        d=keep; for i in $(seq 1 200); do d=$d/d; done; mkdir -p $d; echo deep > $d/f
        mkdir keep/wide; (cd keep/wide && seq 1 3000 | xargs touch)
        ln b.txt keep/hard
        rm 'line
break.txt' && ln -s {out} 'line
break.txt'
        ln -s {out} keep/out",
        out = outside.display()
    );
    let r = run(
        &ws,
        json!({
            "description": "make a mess, then fail",
            "steps": [ { "tool": "bash", "input": { "command": command } } ],
            "verify": [ { "file_exists": "never" } ]
        }),
    );
    assert_eq!(r.data["steps"][0]["status"], "success", "{r:?}");
    assert_eq!(r.data["state"], "rolled_back", "{r:?}");
    assert_eq!(r.data["rollback"]["complete"], true, "{r:?}");
    assert_eq!(listing(&ws), before);
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}

/// (a) A file a step names with bytes that are not UTF-8 is an entry like any other: the
/// rollback must remove it. The walk shows names lossily (`\u{FFFD}`), so the removal by that
/// name finds nothing, every round sees it again, and the rollback fails (`rollback_failed`,
/// the task stopped) — a step can break any rollback with one `touch $'\xff'`.
#[test]
fn a_file_a_step_names_with_invalid_utf8_is_removed_by_the_rollback() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    write(ws, "a.txt", "alpha\n");
    let before = listing(ws);
    let r = run(
        ws,
        json!({
            "description": "an unnameable file, then fail",
            "steps": [ { "tool": "bash", "input": { "command": "touch \"$(printf 'bad\\377name')\" && echo beta > a.txt" } } ],
            "verify": [ { "file_exists": "never" } ]
        }),
    );
    assert_eq!(r.data["steps"][0]["status"], "success", "{r:?}");
    assert_eq!(r.data["state"], "rolled_back", "{r:?}");
    assert_eq!(listing(ws), before);
}

/// (b) The plan's bounds and its parser: more than 32 steps, a step of a tool spelled another
/// way (`Bash`), and a step hidden in a check's place are refused before anything runs.
#[test]
fn plans_past_their_bounds_or_with_unknown_spellings_run_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    let step = json!({ "tool": "write_file", "input": { "path": "a.txt", "content": "x" } });
    let many: Vec<Value> = (0..33).map(|_| step.clone()).collect();
    let inputs = [
        json!({ "description": "33 steps", "steps": many, "verify": [ { "file_exists": "a.txt" } ] }),
        json!({ "description": "Bash", "steps": [ step.clone(), { "tool": "Bash", "input": { "command": "touch b.txt" } } ], "verify": [ { "file_exists": "a.txt" } ] }),
        json!({ "description": "a step as a check", "steps": [ step.clone() ], "verify": [ { "tool": "bash", "input": { "command": "touch b.txt" } } ] }),
        json!({ "description": "a command check with a stdout condition", "steps": [ step ], "verify": [ { "command": { "run": "touch b.txt", "stdout": "x" } } ] }),
    ];
    for input in inputs {
        let what = input["description"].clone();
        let r = run(ws, input);
        assert!(r.is_error(), "{what}: {r:?}");
        assert!(
            matches!(r.error_code(), Some(ErrorCode::InvalidInput | ErrorCode::ToolNotFound)),
            "{what}: {r:?}"
        );
        assert_eq!(r.data["checkpointed"], false, "{what}");
        assert!(
            !ws.join("a.txt").exists() && !ws.join("b.txt").exists(),
            "{what}: something ran"
        );
    }
}

/// The receipts of a run, in order.
fn receipts(run_dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(run_dir.join("receipts.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (b) The loop detector (`max_repeats`) counts identical calls in a row. Wrapped in a
/// transaction, the same call alternated with its step's own turn, so a looping agent that
/// sent the same transaction again and again was never stopped for it.
#[test]
fn the_same_transaction_sent_again_and_again_is_stopped_as_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let txn = r#"
  - transaction:
      description: append a line
      steps: [ { tool: bash, input: { command: "echo x >> log.txt" } } ]
      verify: [ { file_exists: log.txt } ]"#;
    let spec = format!(
        "description: a looping agent\nlimits: {{ timeout: 60s, max_turns: 40, max_repeats: 2 }}\nprompt: loop\nsolution:{}\n  - final: {{ result: success, message: done }}\nexpect: {{ outcome: stopped }}\n",
        txn.repeat(5)
    );
    let result = support::run_task(dir.path(), "adversarial", &spec);
    assert_eq!(result.outcome, Some(Outcome::Stopped), "{:?}", result.verdict);
    let last = receipts(&result.run_dir)
        .into_iter()
        .rev()
        .find(|r| r["tool"] == "transaction")
        .expect("a transaction receipt");
    let transactions = receipts(&result.run_dir)
        .iter()
        .filter(|r| r["tool"] == "transaction")
        .count();
    assert!(transactions <= 3, "{transactions} identical transactions ran: {last}");
}

/// (b) `max_turns` bounds the agent's tool calls. A transaction's checks are `verify` calls —
/// `command_succeeds` runs any command the guard lets through — yet they take no turn: with
/// `max_turns: 2`, one transaction of one step runs sixteen more commands whose effects are
/// committed.
#[test]
fn a_transactions_command_checks_are_not_free_turns() {
    let dir = tempfile::tempdir().unwrap();
    let checks: String = (0..16)
        .map(|i| format!("\n        - {{ command: \"echo {i} >> work.txt\" }}"))
        .collect();
    let spec = format!(
        "description: work done in checks\nlimits: {{ timeout: 60s, max_turns: 2 }}\nprompt: work\nsolution:\n  - transaction:\n      description: checks that work\n      steps: [ {{ tool: write_file, input: {{ path: a.txt, content: x }} }} ]\n      verify:{checks}\n  - final: {{ result: success, message: done }}\nexpect: {{ outcome: success }}\n"
    );
    let result = support::run_task(dir.path(), "adversarial", &spec);
    let ran = receipts(&result.run_dir)
        .iter()
        .filter(|r| r["tool"] == "verify" && r["receipt"]["status"] == "success")
        .count();
    assert!(
        ran <= 1,
        "max_turns 2, yet {ran} commands ran as checks (turns counted: {})",
        result.metrics.turns
    );
}

//! Files changed by the agent's `bash` commands count toward `max_files` / `max_changes`
//! (issue 14, point 6): the pipeline snapshots the workspace before and after each command, so
//! writing with `sed -i`, a loop or `touch -d` instead of `write_file` dodges no limit, and the
//! command's receipt lists what changed (`data.changed`).

use std::path::Path;

use medin::internal::runner::TrialVerdict;
use medin::internal::spec::Outcome;

mod support;

fn receipts(run_dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(run_dir.join("receipts.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("every receipt line is whole JSON"))
        .collect()
}

#[test]
fn thirty_files_written_by_one_command_break_max_files_5_and_the_task_stops() {
    let dir = tempfile::tempdir().unwrap();
    let result = support::run_task(
        dir.path(),
        "adversarial",
        r#"
description: thirty files from one loop under max_files 5
limits: { timeout: 30s, max_files: 5 }
solution:
  - bash: "for i in $(seq 1 30); do echo $i > f$i.txt; done"
  - write_file: { path: after.txt, content: never }
  - final: { result: success }
expect:
  outcome: stopped
  receipts: [ { tool: bash, error: PERMISSION_DENIED, message: "File limit exceeded: 30 > 5" } ]
  files: { after.txt: { absent: true } }
"#,
    );
    assert_eq!(result.verdict, TrialVerdict::Passed, "{:?}", result.failure_message());
    assert_eq!(result.outcome, Some(Outcome::Stopped));
    let lines = receipts(&result.run_dir);
    assert_eq!(lines.len(), 1, "nothing runs after the limit: {lines:#?}");
    let bash = &lines[0];
    assert_eq!(bash["limit"], "File limit exceeded: 30 > 5");
    let receipt = &bash["receipt"];
    assert_eq!(receipt["errors"][0]["context"]["limit"], "files", "{receipt:#}");
    let changed = &receipt["data"]["changed"];
    assert_eq!(changed["created"], 30, "{changed:#}");
    assert_eq!(changed["paths"].as_array().unwrap().len(), 30);
    assert_eq!(changed["complete"], true);
    // What the command itself did stays in the receipt.
    assert_eq!(receipt["data"]["exit_code"], 0);
}

#[test]
fn sed_in_place_edits_count_as_changes() {
    let dir = tempfile::tempdir().unwrap();
    support::write(&dir.path().join("ws/a.txt"), "one\n");
    support::write(&dir.path().join("ws/b.txt"), "one\n");
    let result = support::run_task(
        dir.path(),
        "adversarial",
        r#"
description: three sed -i edits under max_changes 2
workspace: ../ws
limits: { timeout: 30s, max_changes: 2 }
solution:
  - bash: sed -i s/one/two/ a.txt
  - bash: sed -i s/one/two/ b.txt
  - bash: sed -i s/two/three/ a.txt
  - final: { result: success }
expect:
  outcome: stopped
  receipts:
    - { tool: bash, status: success, data: { changed: { modified: 1, created: 0 } } }
    - { tool: bash, error: PERMISSION_DENIED, message: "Change limit exceeded: 3 > 2" }
"#,
    );
    assert_eq!(result.verdict, TrialVerdict::Passed, "{:?}", result.failure_message());
    let lines = receipts(&result.run_dir);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    let paths = &lines[0]["receipt"]["data"]["changed"]["paths"][0];
    assert_eq!(paths["path"], "a.txt");
    assert_eq!(paths["change"], "modify");
    assert!(
        paths["sha256"].as_str().is_some_and(|h| h.starts_with("sha256:")),
        "{paths}"
    );
}

#[test]
fn an_mtime_forged_back_with_touch_does_not_hide_the_change() {
    let dir = tempfile::tempdir().unwrap();
    support::write(&dir.path().join("ws/keep.txt"), "aaaa\n");
    let result = support::run_task(
        dir.path(),
        "adversarial",
        r#"
description: the forger rewrites in place, same size, and puts the old mtime back
workspace: ../ws
limits: { timeout: 30s, max_changes: 0 }
solution:
  - bash: "touch -r keep.txt \"$TMPDIR/stamp\" && printf 'bbbb\\n' | dd of=keep.txt conv=notrunc status=none && touch -r \"$TMPDIR/stamp\" keep.txt"
  - final: { result: success }
expect:
  outcome: stopped
  receipts: [ { tool: bash, error: PERMISSION_DENIED, message: "Change limit exceeded: 1 > 0" } ]
"#,
    );
    assert_eq!(result.verdict, TrialVerdict::Passed, "{:?}", result.failure_message());
}

#[test]
fn commands_that_change_nothing_count_nothing_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    support::write(&dir.path().join("ws/a.txt"), "a\n");
    let result = support::run_task(
        dir.path(),
        "golden",
        r#"
description: reads and git bookkeeping under max_files 0
workspace: ../ws
limits: { timeout: 30s, max_files: 0, max_changes: 0 }
solution:
  - bash: cat a.txt && ls -la
  - bash: mkdir -p .git/objects __pycache__ && echo x > .git/objects/o && echo y > __pycache__/m.pyc
  - final: { result: success }
expect:
  outcome: success
  validate: [ { file_exists: a.txt } ]
  receipts:
    - { tool: bash, data: { changed: { created: 0, modified: 0, removed: 0, complete: true } } }
"#,
    );
    assert_eq!(result.verdict, TrialVerdict::Passed, "{:?}", result.failure_message());
}

/// One agent command through a pipeline of its own, the receipt's `data.changed` returned.
fn agent_bash(pipe: &medin::internal::pipeline::Pipeline, command: &str) -> serde_json::Value {
    let action = medin::Action {
        id: String::new(),
        tool: "bash".into(),
        input: medin::ActionInput::Json(serde_json::json!({ "command": command })),
    };
    let passed = pipe
        .pass(medin::internal::pipeline::Origin::Agent, &action)
        .expect("the pipeline runs the command");
    passed.receipt.data["changed"].clone()
}

#[test]
fn a_write_file_between_two_commands_is_counted_once_by_the_file_tool() {
    let dir = tempfile::tempdir().unwrap();
    let result = support::run_task(
        dir.path(),
        "golden",
        r#"
description: a command, a file tool's write, a command; three changes would break max_changes 2
limits: { timeout: 30s, max_changes: 2 }
solution:
  - bash: echo a > a.txt
  - write_file: { path: b.txt, content: "b\n" }
  - bash: cat a.txt b.txt
  - final: { result: success }
expect:
  outcome: success
  validate: [ { file_exists: b.txt } ]
  receipts:
    - { tool: bash, data: { changed: { created: 1, since: command_start } } }
    - { tool: write_file, status: success }
    - { tool: bash, data: { changed: { created: 0, modified: 0, since: command_start } } }
"#,
    );
    assert_eq!(result.verdict, TrialVerdict::Passed, "{:?}", result.failure_message());
    assert_eq!(result.outcome, Some(Outcome::Success));
}

#[test]
fn commands_back_to_back_start_from_the_previous_snapshot_and_a_file_tool_write_breaks_the_chain() {
    let ws = tempfile::tempdir().unwrap();
    let pipe = medin::internal::pipeline::Pipeline::standalone(ws.path());
    let first = agent_bash(&pipe, "echo one > one.txt");
    assert_eq!(first["since"], "command_start", "{first:#}");
    assert_eq!(first["created"], 1, "{first:#}");
    let second = agent_bash(&pipe, "echo two > two.txt");
    assert_eq!(second["since"], "previous_command", "{second:#}");
    assert_eq!(second["created"], 1, "{second:#}");
    assert_eq!(second["paths"][0]["path"], "two.txt", "{second:#}");
    // A file tool's write moves the epoch: the next command walks afresh and does not count it.
    let write = medin::Action {
        id: String::new(),
        tool: "write_file".into(),
        input: medin::ActionInput::Json(serde_json::json!({ "path": "three.txt", "content": "3\n" })),
    };
    let passed = pipe.pass(medin::internal::pipeline::Origin::Agent, &write).unwrap();
    assert_eq!(
        passed.receipt.status,
        medin::ReceiptStatus::Success,
        "{:?}",
        passed.receipt
    );
    let third = agent_bash(&pipe, "cat three.txt");
    assert_eq!(third["since"], "command_start", "{third:#}");
    assert_eq!(third["created"], 0, "the file tool's write counted twice: {third:#}");
    assert_eq!(third["modified"], 0, "{third:#}");
}

#[test]
fn a_background_writer_between_two_commands_is_counted_at_the_next_command() {
    let ws = tempfile::tempdir().unwrap();
    support::write(&ws.path().join("kept.txt"), "old\n");
    let pipe = medin::internal::pipeline::Pipeline::standalone(ws.path());
    let first = agent_bash(&pipe, "true");
    assert_eq!(first["created"], 0, "{first:#}");
    // A process outside the pipeline (as one the agent left running would) writes between
    // the two commands; no action passes the pipeline meanwhile.
    let writer = std::process::Command::new("sh")
        .arg("-c")
        .arg("sleep 0.1; echo late > late.txt; echo new > kept.txt")
        .current_dir(ws.path())
        .status()
        .unwrap();
    assert!(writer.success());
    let second = agent_bash(&pipe, "true");
    assert_eq!(second["since"], "previous_command", "{second:#}");
    assert_eq!(second["created"], 1, "{second:#}");
    assert_eq!(second["modified"], 1, "{second:#}");
    let paths: Vec<_> = second["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap().to_string(),
                p["change"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        paths,
        [
            ("kept.txt".into(), "modify".into()),
            ("late.txt".into(), "create".into())
        ]
    );
}

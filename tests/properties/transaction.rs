//! Reference 000, properties 22–26 (the MCP tool wrapper), for the `transaction` tool: random
//! plans of file writes and deletes with a verification that passes or fails.
//!
//! - 22, plan before execution: the plan's record (with every step's `would_affect`) comes
//!   before any step's receipt;
//! - 23, approval required: the plan carries the policy's decision, and no step runs without
//!   an approving one;
//! - 24, execution in the planned order: step receipts follow the plan's order, each linked
//!   to its place;
//! - 25, verification after execution: every check's receipt comes after the last step's;
//! - 26, rollback on failure: a failed step or check leaves the workspace exactly as the
//!   checkpoint found it, and the failure is reported; otherwise it is the planned post-state.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use medin::internal::agent::Action;
use medin::internal::pipeline::{Origin, Pipeline};
use medin::internal::tools::ActionInput;
use proptest::prelude::*;
use serde_json::{json, Value};

const PATHS: &[&str] = &["a.txt", "b/c.txt", "b/d.txt", "e/f/g.txt"];

#[derive(Debug, Clone)]
enum Op {
    Write(usize, String),
    Delete(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..PATHS.len(), "[a-z]{0,12}").prop_map(|(p, c)| Op::Write(p, c)),
        (0..PATHS.len()).prop_map(Op::Delete),
    ]
}

/// Every entry below `root`: path → (kind, mode, content).
fn tree(root: &Path) -> BTreeMap<String, (String, u32, String)> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(root).min_depth(1).sort_by_file_name() {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let meta = std::fs::symlink_metadata(e.path()).unwrap();
        let mode = meta.permissions().mode() & 0o7777;
        let (kind, content) = if meta.is_dir() {
            ("dir", String::new())
        } else {
            ("file", std::fs::read_to_string(e.path()).unwrap())
        };
        out.insert(rel, (kind.to_string(), mode, content));
    }
    out
}

/// The files the plan leaves when every step succeeds, or `None` when a step fails (a delete
/// of a file that is not there).
fn post_state(initial: &BTreeMap<String, String>, ops: &[Op]) -> Option<BTreeMap<String, String>> {
    let mut files = initial.clone();
    for op in ops {
        match op {
            Op::Write(p, c) => {
                files.insert(PATHS[*p].to_string(), c.clone());
            }
            Op::Delete(p) => {
                files.remove(PATHS[*p])?;
            }
        }
    }
    Some(files)
}

proptest! {
    // 48 cases: each runs a real transaction (checkpoint, steps, restore) in a temp dir.
    #![proptest_config(crate::cases(48))]

    #[test]
    fn p22_p26_a_transaction_is_planned_approved_run_in_order_verified_and_rolled_back_on_failure(
        initial in proptest::collection::btree_map(0..PATHS.len(), "[a-z]{0,8}", 0..4),
        ops in proptest::collection::vec(op(), 1..6),
        verification_passes in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let initial: BTreeMap<String, String> = initial.into_iter().map(|(p, c)| (PATHS[p].to_string(), c)).collect();
        for (rel, content) in &initial {
            let p = ws.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, content).unwrap();
        }
        let before = tree(ws);
        let steps: Vec<Value> = ops
            .iter()
            .map(|op| match op {
                Op::Write(p, c) => json!({ "tool": "write_file", "input": { "path": PATHS[*p], "content": c } }),
                Op::Delete(p) => json!({ "tool": "delete_file", "input": { "path": PATHS[*p] } }),
            })
            .collect();
        let check = if verification_passes { json!({ "file_exists": "." }) } else { json!({ "file_exists": "never-there" }) };
        let pipe = Pipeline::standalone(ws);
        let action = Action {
            id: "p".into(),
            tool: "transaction".into(),
            input: ActionInput::Json(json!({ "description": "random plan", "steps": steps, "verify": [check] })),
        };
        let receipt = pipe.pass(Origin::Agent, &action).unwrap().receipt;
        let records = pipe.actions_since(0);
        let link = |i: usize| records[i].receipt.data.get("transaction").cloned().unwrap_or(Value::Null);

        // 22: the plan is recorded first, with what every step would touch.
        prop_assert_eq!(link(0), json!({ "id": "txn-1", "phase": "plan" }));
        prop_assert_eq!(records[0].receipt.would_affect.len(), ops.len());
        // 23: approved by the policy before anything ran.
        prop_assert_eq!(&records[0].receipt.data["decision"], "allow");
        prop_assert_eq!(&receipt.data["approved"], true);
        // 24: steps in the planned order, each linked to its place.
        let steps_seen: Vec<u64> = (0..records.len()).filter_map(|i| link(i).get("step").and_then(Value::as_u64)).collect();
        let expected: Vec<u64> = (1..=steps_seen.len() as u64).collect();
        prop_assert_eq!(&steps_seen, &expected);
        for (i, n) in steps_seen.iter().enumerate() {
            let rec = records.iter().find(|r| r.receipt.data["transaction"]["step"] == json!(n)).unwrap();
            prop_assert_eq!(&rec.tool, if matches!(ops[i], Op::Write(..)) { "write_file" } else { "delete_file" });
        }
        // 25: checks only after the last step.
        let last_step = (0..records.len()).filter(|&i| link(i).get("step").is_some()).max();
        let first_check = (0..records.len()).find(|&i| link(i).get("check").is_some());
        if let (Some(s), Some(c)) = (last_step, first_check) {
            prop_assert!(s < c);
        }
        // 26: the post-state, or exactly the checkpoint, and the failure said.
        let after = tree(ws);
        match post_state(&initial, &ops) {
            Some(post) if verification_passes => {
                prop_assert_eq!(&receipt.data["state"], "committed");
                let files: BTreeMap<String, String> = after
                    .into_iter()
                    .filter(|(_, (k, _, _))| k == "file")
                    .map(|(p, (_, _, c))| (p, c))
                    .collect();
                prop_assert_eq!(files, post);
            }
            _ => {
                prop_assert!(receipt.is_error());
                prop_assert_eq!(&receipt.data["state"], "rolled_back");
                prop_assert_eq!(after, before);
            }
        }
    }
}

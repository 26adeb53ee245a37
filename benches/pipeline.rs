//! Cost of the one action path (`Pipeline::pass`: tool policy → guard on the canonical input →
//! policy decision → limits before → tool in the sandbox → limits after and the workspace
//! invariant → receipt and record) against doing the same thing without a harness: a
//! `write_file` call against `std::fs::write`, and a `bash` call (`true`, isolation `process`)
//! against `sh -c true` spawned with `std::process::Command` — what a user who ran the
//! agent's commands directly would pay.
//!
//! Measured on the 2-core development machine (load ~1.5), criterion medians: `write_file`
//! through the pipeline 292 us against `std::fs::write` 161 us (+131 us: tool policy, the
//! guard on the canonical input, limits, a link-free write beneath the workspace, its SHA-256,
//! the receipt); `bash true` (isolation `process`) 1.39 ms against `sh -c true` 0.92 ms
//! (+0.47 ms, 1.5x: the guard's parse, the confined spawn with its guardian and rlimits, the
//! workspace-root permission check, the receipt). Under load (~2, other builds running) the
//! same bench gave 309 us / 191 us and 2.78 ms / 0.93 ms.
//!
//! Run: `cargo bench --bench pipeline`. The receipts are kept in memory (a standalone pipeline),
//! so the figures leave out the append and flush of `receipts.jsonl` (one `write` + `fsync`-free
//! flush per action in a real attempt).

use std::hint::black_box;
use std::process::{Command, Stdio};

use criterion::{criterion_group, criterion_main, Criterion};
use medin::internal::agent::Action;
use medin::internal::pipeline::{Origin, Pipeline};
use medin::internal::tools::ActionInput;

fn action(tool: &str, input: serde_json::Value) -> Action {
    Action {
        id: "b".into(),
        tool: tool.into(),
        input: ActionInput::Json(input),
    }
}

fn bench(c: &mut Criterion) {
    let ws = tempfile::tempdir().expect("tempdir");
    let root = ws.path().canonicalize().expect("canonical workspace");

    let mut g = c.benchmark_group("write_file");
    g.sample_size(200);
    let write = action(
        "write_file",
        serde_json::json!({ "path": "notes.txt", "content": "hello\n" }),
    );
    g.bench_function("medin_pipeline_pass", |b| {
        // A fresh pipeline per batch keeps the in-memory record from growing without bound.
        b.iter_batched(
            || Pipeline::standalone(&root),
            |pipe| {
                let passed = pipe.pass(Origin::Agent, black_box(&write)).expect("the harness runs");
                assert!(!passed.receipt.is_error(), "{:?}", passed.receipt);
            },
            criterion::BatchSize::SmallInput,
        )
    });
    g.bench_function("plain_std_fs_write", |b| {
        b.iter(|| std::fs::write(root.join("notes.txt"), black_box("hello\n")).expect("write"))
    });
    g.finish();

    let mut g = c.benchmark_group("bash_true");
    g.sample_size(100);
    let bash = action("bash", serde_json::json!({ "command": "true" }));
    g.bench_function("medin_pipeline_pass", |b| {
        b.iter_batched(
            || Pipeline::standalone(&root),
            |pipe| {
                let passed = pipe.pass(Origin::Agent, black_box(&bash)).expect("the harness runs");
                assert!(!passed.receipt.is_error(), "{:?}", passed.receipt);
            },
            criterion::BatchSize::SmallInput,
        )
    });
    g.bench_function("plain_sh_c_true", |b| {
        b.iter(|| {
            let out = Command::new("/bin/sh")
                .args(["-c", "true"])
                .current_dir(&root)
                .stdin(Stdio::null())
                .output()
                .expect("spawn");
            assert!(out.status.success());
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

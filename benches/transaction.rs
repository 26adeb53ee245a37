//! What a transaction's checkpoint and rollback cost on a 1,000-file workspace (50 files to a
//! folder, small files): taking the checkpoint (a link-free walk, every file copied and hashed
//! into the run folder), putting back an untouched workspace (the walk, the stamps compared,
//! the check walk), and the whole of a rolled-back transaction's own work — checkpoint, ten
//! files rewritten, five removed and five created by the "steps", rollback.
//!
//! Measured on the 2-core development machine while shared (load ~7), criterion medians:
//! checkpoint 28 ms, rollback of an untouched workspace 48 ms, checkpoint + steps + rollback
//! 110 ms (re-measure on an idle machine before quoting).
//!
//! Run: `cargo bench --bench transaction`.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use medin::internal::pipeline::checkpoint::{Checkpoint, CheckpointLimits};

/// A workspace of `files` small files, 50 to a directory.
fn workspace(files: usize) -> tempfile::TempDir {
    let ws = tempfile::tempdir().expect("tempdir");
    for i in 0..files {
        let dir = ws.path().join(format!("pkg{:03}", i / 50));
        if i % 50 == 0 {
            std::fs::create_dir_all(&dir).expect("mkdir");
        }
        std::fs::write(dir.join(format!("mod{i:05}.py")), format!("VALUE = {i}\n")).expect("write");
    }
    ws
}

static STORES: AtomicU64 = AtomicU64::new(0);

fn take(ws: &Path, scratch: &Path) -> Checkpoint {
    let store = scratch.join(format!("cp{}", STORES.fetch_add(1, Ordering::Relaxed)));
    Checkpoint::take(ws, &store, CheckpointLimits::default()).expect("checkpoint")
}

/// What the steps of a failed transaction did: 10 files rewritten, 5 removed, 5 created.
fn steps(ws: &Path) {
    for i in 0..10 {
        let p = ws.join(format!("pkg{:03}/mod{i:05}.py", i / 50));
        std::fs::write(p, "VALUE = -1\n").expect("write");
    }
    for i in 100..105 {
        std::fs::remove_file(ws.join(format!("pkg{:03}/mod{i:05}.py", i / 50))).expect("remove");
    }
    for i in 0..5 {
        std::fs::write(ws.join(format!("pkg000/new{i}.py")), "NEW = 1\n").expect("create");
    }
}

fn bench(c: &mut Criterion) {
    let ws = workspace(1_000);
    let scratch = tempfile::tempdir().expect("scratch");
    // Stamps older than the racy window, as a workspace's usually are.
    std::thread::sleep(Duration::from_millis(150));
    let mut g = c.benchmark_group("transaction_1000_files");
    g.sample_size(20);
    g.bench_function("checkpoint", |b| b.iter(|| drop(take(ws.path(), scratch.path()))));
    let kept = take(ws.path(), scratch.path());
    g.bench_function("rollback_untouched", |b| {
        b.iter(|| kept.restore(ws.path()).expect("restore"))
    });
    drop(kept);
    g.bench_function("checkpoint_steps_rollback", |b| {
        b.iter(|| {
            let cp = take(ws.path(), scratch.path());
            steps(ws.path());
            let done = cp.restore(ws.path()).expect("restore");
            assert_eq!(done.removed.len(), 5);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Per-command overhead of counting what an agent's `bash` command changed (issue 14, point 6;
//! reference 004's budget: under 2 ms per command on a 1,000-file workspace): the pipeline takes
//! a [`Snapshot`] before the command and one after, and compares them. Measured here: those two
//! walks and the comparison on a workspace of 1,000 and of 10,000 files (50 per directory) that
//! the command left unchanged — what every command pays; a changed file adds one SHA-256 of it.
//! Compared with what a harness without it would do instead: `find -printf` of the same keys
//! twice (a process per snapshot), and one `git status --porcelain` of the tree committed.
//!
//! Measured on the 2-core development machine while shared (load ~7), criterion medians:
//! 1,000 files: snapshot ×2 + diff 6.4 ms; `find` ×2 23 ms; `git status` 14.5 ms.
//! 10,000 files: snapshot ×2 + diff 84 ms; `find` ×2 150 ms; `git status` 55 ms.
//! (Re-measure on an idle machine before quoting against the 2 ms budget.)
//!
//! Run: `cargo bench --bench changes`.

use std::hint::black_box;
use std::path::Path;
use std::process::{Command, Stdio};

use criterion::{criterion_group, criterion_main, Criterion};
use medin::internal::pipeline::changes::{Snapshot, SnapshotLimits};

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

fn quiet(cmd: &mut Command, root: &Path) -> bool {
    cmd.current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn bench(c: &mut Criterion) {
    for files in [1_000usize, 10_000] {
        let ws = workspace(files);
        let root = ws.path();
        let mut g = c.benchmark_group(format!("command_changes_{files}_files"));
        g.sample_size(if files > 1_000 { 20 } else { 100 });
        g.bench_function("medin_snapshot_twice_and_diff", |b| {
            b.iter(|| {
                let before = Snapshot::take(black_box(root), SnapshotLimits::default()).expect("snapshot");
                let after = Snapshot::take(root, SnapshotLimits::default()).expect("snapshot");
                let changes = before.diff(&after);
                assert!(changes.paths.is_empty(), "{:?}", changes.paths.first());
                assert_eq!(after.len(), files + files.div_ceil(50));
            })
        });
        g.bench_function("find_printf_twice", |b| {
            b.iter(|| {
                for _ in 0..2 {
                    let ok = quiet(
                        Command::new("find").args([".", "-printf", "%p %y %s %m %i %T@ %C@\\n"]),
                        root,
                    );
                    assert!(ok, "find runs");
                }
            })
        });
        let git = quiet(Command::new("git").args(["init", "-q"]), root)
            && quiet(
                Command::new("git").args(["-c", "user.name=b", "-c", "user.email=b@b", "add", "-A"]),
                root,
            )
            && quiet(
                Command::new("git").args(["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "b"]),
                root,
            );
        if git {
            g.bench_function("git_status_porcelain", |b| {
                b.iter(|| assert!(quiet(Command::new("git").args(["status", "--porcelain"]), root)))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

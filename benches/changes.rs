//! Per-command overhead of counting what an agent's `bash` command changed (issue 14, point 6;
//! reference 004's budget: under 2 ms per command on a 1,000-file workspace), on a workspace of
//! 1,000 and of 10,000 files (50 per directory) that the command left unchanged — what every
//! command pays; a changed file adds one SHA-256 of it.
//!
//! - `medin_per_command`: what a command costs in the usual case, a command after a command
//!   (the pipeline's `changes::Baseline` keeps the snapshot after one
//!   command as the next one's start): one walk and the comparison.
//! - `medin_per_command_after_other_action`: a command after a file tool's write, a judged
//!   phase or any other action that moved the epoch: two walks and the comparison.
//! - `syscall_floor_one_walk`: the bare system calls of one walk (`readdir` + `fstatat` of
//!   every entry, `openat` of every directory), no allocation, no key, no comparison: what
//!   no walk of the tree can go below on this machine.
//! - `find_printf_twice`: `find -printf` of the same keys twice (a process per snapshot), and
//!   `git_status_porcelain`: one `git status --porcelain` of the tree committed, what a harness
//!   without snapshots would run instead.
//!
//! Each group prints `/proc/loadavg` when it starts and the CPU time per iteration (this
//! thread's, and the children's for `find` and `git`), which a shared machine's load distorts
//! much less than wall time.
//!
//! Measured on the 2-core development machine while shared (load average 7.2–9.1), CPU time per
//! iteration / criterion's wall-clock median:
//! 1,000 files: per command 1.6 / 3.8 ms; after another action 3.2 / 9.0 ms; syscall floor of
//! one walk 1.6 / 3.9 ms; `find` ×2 10.8 / 20 ms; `git status` 6.2 / 13 ms.
//! 10,000 files: per command 19.5 / 21 ms; after another action 40 / 66 ms; floor 18.4 / 42 ms;
//! `find` ×2 60 / 147 ms; `git status` 28 / 66 ms.
//! (Before one walk per command and the allocation-free walk: 6.4–7.1 ms wall for two walks on
//! 1,000 files.) Run: `cargo bench --bench changes`.

use std::ffi::{CStr, CString};
use std::hint::black_box;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

fn find_twice(root: &Path) {
    for _ in 0..2 {
        let ok = quiet(
            // `.git` is pruned, as the snapshot skips it.
            Command::new("find").args([
                ".",
                "-path",
                "./.git",
                "-prune",
                "-o",
                "-printf",
                "%p %y %s %m %i %T@ %C@\\n",
            ]),
            root,
        );
        assert!(ok, "find runs");
    }
}

fn git_status(root: &Path) {
    assert!(quiet(Command::new("git").args(["status", "--porcelain"]), root));
}

/// The bare system calls of one walk below `dir` (an open directory; `.git` not walked);
/// returns the entries seen.
fn syscall_floor(dir: i32) -> usize {
    let mut seen = 0;
    // SAFETY: plain libc calls on descriptors and streams opened here; every stream is closed.
    unsafe {
        let dup = libc::fcntl(dir, libc::F_DUPFD_CLOEXEC, 0);
        let stream = libc::fdopendir(dup);
        assert!(!stream.is_null(), "fdopendir");
        libc::rewinddir(stream);
        loop {
            let ent = libc::readdir(stream);
            if ent.is_null() {
                break;
            }
            let name = CStr::from_ptr((*ent).d_name.as_ptr());
            // `.git` is skipped, as the snapshot skips it.
            if matches!(name.to_bytes(), b"." | b".." | b".git") {
                continue;
            }
            let mut st: libc::stat = std::mem::zeroed();
            libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW);
            seen += 1;
            if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
                let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
                let sub = libc::openat(dir, name.as_ptr(), flags);
                seen += syscall_floor(sub);
                libc::close(sub);
            }
        }
        libc::closedir(stream);
    }
    seen
}

fn thread_cpu() -> Duration {
    // SAFETY: clock_gettime writes the timespec.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn children_cpu() -> Duration {
    // SAFETY: getrusage writes the rusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Wall and CPU time per iteration of `f` over `n` iterations, printed under `label`.
fn cpu_line(label: &str, n: u32, mut f: impl FnMut()) {
    let (wall, cpu, kids) = (Instant::now(), thread_cpu(), children_cpu());
    for _ in 0..n {
        f();
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3 / f64::from(n);
    eprintln!(
        "  {label:<40} wall {:>7.3} ms  cpu {:>7.3} ms (this thread {:.3}, children {:.3})",
        ms(wall.elapsed()),
        ms(thread_cpu() - cpu + (children_cpu() - kids)),
        ms(thread_cpu() - cpu),
        ms(children_cpu() - kids),
    );
}

fn bench(c: &mut Criterion) {
    for files in [1_000usize, 10_000] {
        let ws = workspace(files);
        let root = ws.path();
        let entries = files + files.div_ceil(50);
        let git = quiet(Command::new("git").args(["init", "-q"]), root)
            && quiet(
                Command::new("git").args(["-c", "user.name=b", "-c", "user.email=b@b", "add", "-A"]),
                root,
            )
            && quiet(
                // No automatic gc: it would rewrite `.git` in the background while others walk.
                Command::new("git").args([
                    "-c",
                    "user.name=b",
                    "-c",
                    "user.email=b@b",
                    "-c",
                    "gc.auto=0",
                    "-c",
                    "maintenance.auto=false",
                    "commit",
                    "-qm",
                    "b",
                ]),
                root,
            );
        // Past the racy margin: no file is hashed for being young.
        std::thread::sleep(Duration::from_millis(200));
        let limits = SnapshotLimits::default();
        let c_root = CString::new(root.as_os_str().as_bytes()).expect("no NUL in a temp path");
        // SAFETY: opening a directory by a valid C string.
        let root_fd = unsafe { libc::open(c_root.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        assert!(root_fd >= 0, "open the workspace");

        let per_command = |prev: &mut Snapshot| {
            let after = Snapshot::take(black_box(root), limits).expect("snapshot");
            let changes = prev.diff(&after);
            assert!(changes.paths.is_empty(), "{:?}", changes.paths.first());
            *prev = after;
        };
        let after_other_action = || {
            let before = Snapshot::take(black_box(root), limits).expect("snapshot");
            let after = Snapshot::take(root, limits).expect("snapshot");
            let changes = before.diff(&after);
            assert!(changes.paths.is_empty(), "{:?}", changes.paths.first());
            assert_eq!(after.len(), entries);
        };

        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        eprintln!("command_changes_{files}_files: load average {}", load.trim());
        let n = if files > 1_000 { 20 } else { 200 };
        let mut prev = Snapshot::take(root, limits).expect("snapshot");
        cpu_line("medin_per_command", n, || per_command(&mut prev));
        cpu_line("medin_per_command_after_other_action", n, after_other_action);
        cpu_line("syscall_floor_one_walk", n, || {
            assert_eq!(syscall_floor(root_fd), entries)
        });
        cpu_line("find_printf_twice", n.min(50), || find_twice(root));
        if git {
            cpu_line("git_status_porcelain", n.min(50), || git_status(root));
        }

        let mut g = c.benchmark_group(format!("command_changes_{files}_files"));
        g.sample_size(if files > 1_000 { 20 } else { 100 });
        g.bench_function("medin_per_command", |b| b.iter(|| per_command(&mut prev)));
        g.bench_function("medin_per_command_after_other_action", |b| b.iter(after_other_action));
        g.bench_function("syscall_floor_one_walk", |b| {
            b.iter(|| assert_eq!(syscall_floor(root_fd), entries))
        });
        g.bench_function("find_printf_twice", |b| b.iter(|| find_twice(root)));
        if git {
            g.bench_function("git_status_porcelain", |b| b.iter(|| git_status(root)));
        }
        g.finish();
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        eprintln!("command_changes_{files}_files: load average after {}", load.trim());
        // SAFETY: closing the descriptor opened above, once.
        unsafe { libc::close(root_fd) };
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Cost of one sandboxed command: `true` at each isolation level against a plain
//! `std::process::Command` (both `/bin/true` and `/bin/sh -c true`, since the sandbox always
//! runs a shell), and bubblewrap (`bwrap`, when installed) for comparison.
//!
//! Run: `cargo bench --bench sandbox` (`bash scripts/setup.sh --bench` installs bubblewrap).
//! Targets (issue 4): `process` within 1.3x of a plain spawn; `strict` under 5 ms median.
//! Extra variants show where the time goes: `process` with the opt-in cgroup, `strict`
//! without its cgroup, and without the cgroup and the network namespace.
//!
//! Measured on the 2-core development machine (quiet, load ~1), median per command:
//! plain `true` 744 us, plain `sh -c true` 820 us (915 us with fork+exec), medin `none`
//! 928 us, `process` 884 us (1.08x `sh -c true`, 1.19x `true`; 1.24 ms with the opt-in
//! cgroup), `strict` 3.32 ms (3.15 ms without its cgroup, 2.52 ms also without a network
//! namespace), bwrap `--unshare-all` 4.89 ms. Run to run the medians move by about 5%; on a
//! loaded machine (load 5-8) every figure grows by up to 60%. `none` and `process` include the
//! guardian (`src/sandbox/guardian.rs`): alternated with the code before it (load ~2),
//! `process` 1.16/1.03 ms against 1.22/1.01 ms, i.e. within the noise.
//!
//! Since strict builds its filesystem (issue 9: a fresh root, binds of the system trees, a
//! private /dev, /tmp and /proc, pivot_root), a strict command costs about 0.8 ms more:
//! measured back to back with the previous build on the same machine (load ~3, medians of 8
//! alternating runs of 300 commands), 3.84 → 4.62 ms, 3.30 → 4.17 ms without the cgroup,
//! 2.67 → 3.46 ms also without the network namespace. The view's ~40 mount-related syscalls
//! take ~0.55 ms of it (binds ~0.2 ms, fresh filesystems ~0.1 ms, directories, files and
//! links ~0.15 ms), planning ~0.03 ms, the larger namespace's teardown ~0.07 ms.
//!
//! The workspace at a fixed root (`medin_strict_at_app`, issue 13) costs what the host-path
//! bind did: the same mkdir and bind, at `/app`. Measured against the build before it in
//! interleaved bursts on a machine under load 4-6 (12 rounds of 30 samples each; the median
//! of each burst's 10th percentile): before 7.03 ms, after 6.71 ms for plain `strict`, 7.31 ms
//! at `/app` — all within the run-to-run noise of that machine.
//!
//! Attempt scope (issue 13, target: a command of an attempt within 1.2x of a lone strict
//! command): see the README's "Services and the persistent shell" for the figures.

use std::hint::black_box;
use std::process::{Command, Stdio};

use criterion::{criterion_group, criterion_main, Criterion};
use medin::internal::sandbox::{self, Isolation, SandboxConfig};

fn plain(program: &str, args: &[&str]) {
    let status = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map(|o| o.status.success());
    assert!(matches!(status, Ok(true)), "{program} failed");
}

fn bench(c: &mut Criterion) {
    let ws = tempfile::tempdir().expect("tempdir");
    let mut g = c.benchmark_group("spawn_true");
    g.sample_size(200);
    g.bench_function("plain_true", |b| b.iter(|| plain("/bin/true", &[])));
    g.bench_function("plain_sh_c_true", |b| b.iter(|| plain("/bin/sh", &["-c", "true"])));
    // The same with a (no-op) pre_exec hook, which forces fork+exec instead of posix_spawn, as
    // every sandbox level needs one.
    g.bench_function("plain_sh_c_true_fork_exec", |b| {
        b.iter(|| {
            use std::os::unix::process::CommandExt;
            let mut cmd = Command::new("/bin/sh");
            cmd.args(["-c", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            // SAFETY: the hook does nothing.
            unsafe {
                cmd.pre_exec(|| Ok(()));
            }
            assert!(cmd.output().is_ok_and(|o| o.status.success()));
        })
    });
    for level in [Isolation::None, Isolation::Process, Isolation::Strict] {
        if sandbox::check_isolation(level).is_err() {
            eprintln!("skipping {level}: not available here (medin doctor)");
            continue;
        }
        let mut cfg = SandboxConfig::new(ws.path());
        cfg.isolation = level;
        let mut variants = vec![(format!("medin_{level}"), cfg.clone())];
        if level == Isolation::Process {
            let mut with_cgroup = cfg.clone();
            with_cgroup.cgroup = Some(true);
            variants.push(("medin_process_with_cgroup".into(), with_cgroup));
        }
        if level == Isolation::Strict {
            let mut no_cgroup = cfg.clone();
            no_cgroup.cgroup = Some(false);
            let mut no_netns = no_cgroup.clone();
            no_netns.network = true;
            variants.push(("medin_strict_without_cgroup".into(), no_cgroup));
            variants.push(("medin_strict_without_cgroup_and_netns".into(), no_netns));
            // The workspace at a fixed root (`environment.root: /app`): one more directory
            // in the view, and the working directory entered by its view path.
            let mut at_app = cfg.clone();
            at_app.root = Some(sandbox::FixedPath::parse("/app").expect("a fixed path"));
            variants.push(("medin_strict_at_app".into(), at_app));
        }
        // Issue 13: commands of an attempt join its namespaces instead of making their own.
        // `in_attempt`: the attempt's view entered as it is (the agent's commands, setup,
        // validators); `in_attempt_own_view`: a view of its own in the attempt's other
        // namespaces (a judged run, whose report folder only it may write).
        let mut attempts = Vec::new();
        if level == Isolation::Strict {
            let attempt = sandbox::AttemptSandbox::start(&cfg).expect("the attempt's sandbox starts");
            let mut joined = cfg.clone();
            joined.attempt = Some(attempt.clone());
            let reports = tempfile::tempdir().expect("tempdir");
            let mut own_view = joined.clone();
            own_view
                .write_paths
                .push(reports.path().canonicalize().expect("canonical"));
            variants.push(("medin_strict_in_attempt".into(), joined.clone()));
            variants.push(("medin_strict_in_attempt_own_view".into(), own_view));
            g.bench_function("medin_strict_session_call", |b| {
                b.iter(|| {
                    let o = attempt.session(black_box(&joined), "true", None).expect("session");
                    assert!(o.success());
                })
            });
            attempts.push((attempt, reports));
        }
        for (name, cfg) in variants {
            g.bench_function(name, |b| {
                b.iter(|| {
                    let o = sandbox::run_shell(black_box(&cfg), "true", None).expect("run_shell");
                    assert!(o.success());
                })
            });
        }
    }
    let bwrap_args = [
        "--unshare-all",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "/bin/sh",
        "-c",
        "true",
    ];
    if Command::new("bwrap")
        .args(bwrap_args)
        .output()
        .is_ok_and(|o| o.status.success())
    {
        g.bench_function("bwrap_sh_c_true", |b| b.iter(|| plain("bwrap", &bwrap_args)));
    } else {
        eprintln!("skipping bwrap: not installed or not usable (Debian package `bubblewrap`)");
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

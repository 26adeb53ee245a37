//! Real processes through `sandbox::run_shell`, `spawn_piped` and `prepare_workspace`.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use medin::internal::sandbox::{self, ExitKind, Isolation, SandboxConfig, SandboxError};
use sha2::{Digest, Sha256};

fn cfg(dir: &Path) -> SandboxConfig {
    let mut c = SandboxConfig::new(dir);
    c.timeout = Duration::from_secs(10);
    c.grace = Duration::from_millis(300);
    c
}

/// True when no live process of group `pgid` exists any more: `kill(-pgid, 0)` fails with
/// ESRCH, or only zombies (dead, waiting for init to reap them) are left.
fn group_gone(pgid: i32) -> bool {
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None) == Err(nix::errno::Errno::ESRCH)
        || pids_in_group(pgid).is_empty()
}

/// Live (non-zombie) processes of group `pgid`, from /proc.
fn pids_in_group(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name in parentheses: state ppid pgrp ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let zombie = matches!(fields.first(), Some(&"Z") | Some(&"X"));
        if !zombie && fields.get(2).and_then(|p| p.parse::<i32>().ok()) == Some(pgid) {
            out.push(pid);
        }
    }
    out
}

#[test]
fn runs_in_workspace_with_scrubbed_env_and_closed_stdin() {
    let ws = tempfile::tempdir().unwrap();
    std::env::set_var("MEDIN_TEST_SECRET", "leak");
    let mut c = cfg(ws.path());
    c.env.push(("EXTRA".into(), "yes".into()));
    let o = sandbox::run_shell(&c, "pwd; env | sort; cat; echo err >&2; exit 3", None).unwrap();
    assert_eq!(o.exit, ExitKind::Code(3));
    assert!(!o.success());
    let root = ws.path().canonicalize().unwrap();
    let mut lines = o.stdout.text.lines();
    assert_eq!(lines.next().unwrap(), root.to_str().unwrap());
    let env: Vec<&str> = lines.collect();
    assert!(!o.stdout.text.contains("MEDIN_TEST_SECRET"), "{env:?}");
    assert!(env.contains(&"EXTRA=yes"));
    assert!(env.contains(&"LANG=C.UTF-8"));
    assert!(env.contains(&"TERM=dumb"));
    assert!(env.contains(&format!("HOME={}", root.display()).as_str()));
    assert!(env.contains(&format!("PATH={}", sandbox::SANDBOX_PATH).as_str()));
    let tmpdir = env.iter().find_map(|l| l.strip_prefix("TMPDIR=")).unwrap();
    assert!(!Path::new(tmpdir).exists(), "private TMPDIR is removed afterwards");
    assert_eq!(o.stderr.text, "err\n");
    assert!(!o.timed_out);
}

#[test]
fn tmpdir_is_private_and_writable() {
    let ws = tempfile::tempdir().unwrap();
    let o = sandbox::run_shell(
        &cfg(ws.path()),
        "echo x > \"$TMPDIR/f\" && stat -c %a \"$TMPDIR\"",
        None,
    )
    .unwrap();
    assert!(o.success(), "{o:?}");
    assert_eq!(o.stdout.text.trim(), "700");
}

#[test]
fn relative_cwd_inside_and_outside() {
    let ws = tempfile::tempdir().unwrap();
    fs::create_dir(ws.path().join("sub")).unwrap();
    let o = sandbox::run_shell(&cfg(ws.path()), "basename \"$PWD\"", Some(Path::new("sub"))).unwrap();
    assert_eq!(o.stdout.text, "sub\n");
    for bad in ["..", "/tmp", "sub/../.."] {
        let e = sandbox::run_shell(&cfg(ws.path()), "true", Some(Path::new(bad))).unwrap_err();
        assert!(matches!(e, SandboxError::OutsideWorkspace(_)), "{bad}: {e}");
    }
    std::os::unix::fs::symlink("/tmp", ws.path().join("out")).unwrap();
    let e = sandbox::run_shell(&cfg(ws.path()), "true", Some(Path::new("out"))).unwrap_err();
    assert!(matches!(e, SandboxError::OutsideWorkspace(_)), "{e}");
    let e = sandbox::run_shell(&cfg(ws.path()), "true", Some(Path::new("missing"))).unwrap_err();
    assert!(matches!(e, SandboxError::Spawn { .. }), "{e}");
}

#[test]
fn a_signal_the_harness_ignores_is_not_ignored_by_its_commands() {
    // `nohup medin run` starts medin ignoring SIGHUP; a task's commands must not inherit that
    // (nor Rust's own SIG_IGN of SIGPIPE): a verdict cannot depend on how medin was launched.
    // SAFETY: sets this test process's disposition of SIGHUP, which nothing here handles.
    unsafe { libc::signal(libc::SIGHUP, libc::SIG_IGN) };
    let ws = tempfile::tempdir().unwrap();
    for isolation in [Isolation::Process, sandbox::default_isolation()] {
        let mut c = cfg(ws.path());
        c.isolation = isolation;
        let o = sandbox::run_shell(&c, "kill -HUP $$; sleep 5", None).unwrap();
        assert_eq!(o.exit, ExitKind::Signal(libc::SIGHUP), "{isolation:?}: {o:?}");
        let o = sandbox::run_shell(&c, "grep -E '^SigIgn' /proc/self/status", None).unwrap();
        let ignored = o
            .stdout
            .text
            .trim()
            .strip_prefix("SigIgn:\t")
            .map(|hex| u64::from_str_radix(hex, 16));
        // Bits 31 and 32 are glibc's own real-time signals (32, 33), which no process sets.
        let glibc_reserved = (1u64 << 31) | (1 << 32);
        assert!(
            matches!(ignored, Some(Ok(mask)) if mask & !glibc_reserved == 0),
            "{isolation:?} ignores signals: {}",
            o.stdout.text
        );
    }
}

#[test]
fn signal_exit_is_reported() {
    let ws = tempfile::tempdir().unwrap();
    let o = sandbox::run_shell(&cfg(ws.path()), "kill -9 $$", None).unwrap();
    assert_eq!(o.exit, ExitKind::Signal(9));
}

#[test]
fn timeout_kills_a_tree_that_ignores_sigterm() {
    let ws = tempfile::tempdir().unwrap();
    let mut c = cfg(ws.path());
    c.timeout = Duration::from_millis(300);
    c.grace = Duration::from_millis(300);
    let start = Instant::now();
    let o = sandbox::run_shell(&c, "trap '' TERM; echo $$; sleep 30 & sleep 30; wait", None).unwrap();
    let took = start.elapsed();
    assert!(o.timed_out);
    assert!(!o.success());
    assert_eq!(o.exit, ExitKind::Signal(9), "{o:?}");
    assert!(took < Duration::from_millis(300 + 300 + 1500), "took {took:?}");
    let pgid: i32 = o.stdout.text.trim().parse().unwrap();
    assert!(group_gone(pgid), "group {pgid} still has {:?}", pids_in_group(pgid));
    assert!(pids_in_group(pgid).is_empty());
}

#[test]
fn timeout_with_sigterm_honoured_ends_quickly() {
    let ws = tempfile::tempdir().unwrap();
    let mut c = cfg(ws.path());
    c.timeout = Duration::from_millis(200);
    c.grace = Duration::from_secs(5);
    let start = Instant::now();
    let o = sandbox::run_shell(&c, "sleep 30", None).unwrap();
    assert!(o.timed_out);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "SIGTERM should end it before the grace"
    );
}

#[test]
fn background_children_do_not_outlive_the_command() {
    let ws = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let o = sandbox::run_shell(&cfg(ws.path()), "sleep 100 & echo $$", None).unwrap();
    assert!(o.success(), "{o:?}");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "background child held the pipes"
    );
    let pgid: i32 = o.stdout.text.trim().parse().unwrap();
    assert!(group_gone(pgid), "left: {:?}", pids_in_group(pgid));
}

/// Pids of live processes whose command line is exactly `argv`.
fn pids_with_cmdline(argv: &[&str]) -> Vec<i32> {
    let want: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    let mut out = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if fs::read(format!("/proc/{pid}/cmdline")).ok().as_deref() == Some(want.as_slice()) {
            out.push(pid);
        }
    }
    out
}

#[test]
fn processes_that_leave_the_group_are_killed_too() {
    let ws = tempfile::tempdir().unwrap();
    // A distinctive sleep length so the test finds only its own process.
    let start = Instant::now();
    let o = sandbox::run_shell(
        &cfg(ws.path()),
        "setsid sleep 4242.5 > /dev/null 2>&1 & sleep 0.1",
        None,
    )
    .unwrap();
    assert!(o.success(), "{o:?}");
    assert!(start.elapsed() < Duration::from_secs(3));
    assert!(
        pids_with_cmdline(&["sleep", "4242.5"]).is_empty(),
        "escaped process survived"
    );
    // Even one that keeps the output pipe open: the reader does not hang on it.
    let start = Instant::now();
    let o = sandbox::run_shell(&cfg(ws.path()), "setsid sleep 4243.5 & echo started", None).unwrap();
    assert_eq!(o.stdout.text, "started\n");
    assert!(start.elapsed() < Duration::from_secs(3), "took {:?}", start.elapsed());
    assert!(
        pids_with_cmdline(&["sleep", "4243.5"]).is_empty(),
        "escaped process survived"
    );
}

#[test]
fn floods_on_both_streams_are_capped_counted_and_hashed() {
    let ws = tempfile::tempdir().unwrap();
    let mut c = cfg(ws.path());
    c.output_cap = 1024 * 1024;
    let o = sandbox::run_shell(
        &c,
        "head -c 3145728 /dev/zero | tr '\\0' e >&2 & head -c 5242880 /dev/zero | tr '\\0' o; wait",
        None,
    )
    .unwrap();
    assert!(o.success(), "{:?}", o.exit);
    assert_eq!(o.stdout.total_bytes, 5 * 1024 * 1024);
    assert_eq!(o.stdout.text.len(), 1024 * 1024);
    assert!(o.stdout.truncated);
    let full = vec![b'o'; 5 * 1024 * 1024];
    assert_eq!(
        o.stdout.sha256,
        format!("sha256:{}", hex::encode(Sha256::digest(&full)))
    );
    assert_eq!(o.stderr.total_bytes, 3 * 1024 * 1024);
    assert!(o.stderr.truncated);
    assert_eq!(o.stderr.text.len(), 1024 * 1024);
    let full = vec![b'e'; 3 * 1024 * 1024];
    assert_eq!(
        o.stderr.sha256,
        format!("sha256:{}", hex::encode(Sha256::digest(&full)))
    );
}

#[test]
fn small_output_is_not_truncated_and_hash_matches() {
    let ws = tempfile::tempdir().unwrap();
    let o = sandbox::run_shell(&cfg(ws.path()), "printf hello", None).unwrap();
    assert_eq!(o.stdout.text, "hello");
    assert!(!o.stdout.truncated);
    assert_eq!(
        o.stdout.sha256,
        format!("sha256:{}", hex::encode(Sha256::digest(b"hello")))
    );
    assert_eq!(o.stderr.total_bytes, 0);
}

#[test]
fn rlimits_are_applied() {
    let ws = tempfile::tempdir().unwrap();
    let mut c = cfg(ws.path());
    c.limits.open_files = Some(77);
    c.limits.file_size = Some(4096);
    c.limits.cpu_secs = Some(5);
    let o = sandbox::run_shell(&c, "ulimit -n; ulimit -c; ulimit -t; ulimit -v", None).unwrap();
    let lines: Vec<&str> = o.stdout.text.lines().collect();
    assert_eq!(lines, ["77", "0", "5", "1048576"], "{o:?}");
    // RLIMIT_FSIZE: writing past 4 KiB fails.
    let o = sandbox::run_shell(&c, "head -c 100000 /dev/zero > big", None).unwrap();
    assert!(!o.success());
    assert!(fs::metadata(ws.path().join("big")).unwrap().len() <= 4096);
}

#[test]
fn own_session_and_process_group() {
    let ws = tempfile::tempdir().unwrap();
    let o = sandbox::run_shell(&cfg(ws.path()), "ps -o pid=,pgid=,sid= -p $$", None).unwrap();
    let f: Vec<i32> = o.stdout.text.split_whitespace().map(|x| x.parse().unwrap()).collect();
    assert_eq!(f.len(), 3, "{o:?}");
    assert_eq!(f[0], f[1]);
    assert_eq!(f[0], f[2]);
}

#[test]
fn spawn_piped_talks_and_kills_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("marker"), "here").unwrap();
    std::env::set_var("MEDIN_AGENT_KEY", "k123");
    let mut c = cfg(dir.path());
    c.env.push(("EXTRA".into(), "e".into()));
    let script = "cat marker; echo; echo $MEDIN_AGENT_KEY $EXTRA; sleep 60 & while read l; do echo got $l; done";
    let mut child = sandbox::spawn_piped(&c, script, dir.path()).unwrap();
    let pgid = child.pid() as i32;
    let mut stdin = child.take_stdin().unwrap();
    let mut out = BufReader::new(child.take_stdout().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "here\n");
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "k123 e\n");
    writeln!(stdin, "ping").unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "got ping\n");
    assert!(child.try_wait().unwrap().is_none());
    assert!(child.take_stderr().is_some());
    let start = Instant::now();
    let status = child.kill_tree(Duration::from_millis(500)).unwrap();
    assert!(!status.success());
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(group_gone(pgid), "left: {:?}", pids_in_group(pgid));
}

#[test]
fn spawn_piped_drop_kills_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let child = sandbox::spawn_piped(&cfg(dir.path()), "trap '' TERM; sleep 60 & sleep 60", dir.path()).unwrap();
    let pgid = child.pid() as i32;
    std::thread::sleep(Duration::from_millis(100));
    assert!(!group_gone(pgid));
    drop(child);
    assert!(group_gone(pgid), "left: {:?}", pids_in_group(pgid));
}

#[test]
fn prepare_workspace_copies_files_dirs_symlinks_and_modes() {
    let fx = tempfile::tempdir().unwrap();
    fs::create_dir_all(fx.path().join("a/b")).unwrap();
    fs::write(fx.path().join("a/b/f.txt"), "data").unwrap();
    fs::write(fx.path().join("run.sh"), "#!/bin/sh\n").unwrap();
    fs::set_permissions(fx.path().join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("a/b/f.txt", fx.path().join("link")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/x", fx.path().join("dangling")).unwrap();
    let base = tempfile::tempdir().unwrap();
    let dest = base.path().join("runs/ws");
    sandbox::prepare_workspace(Some(fx.path()), &dest).unwrap();
    assert_eq!(fs::read_to_string(dest.join("a/b/f.txt")).unwrap(), "data");
    assert_eq!(
        fs::metadata(dest.join("run.sh")).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert_eq!(fs::read_link(dest.join("link")).unwrap(), Path::new("a/b/f.txt"));
    assert_eq!(
        fs::read_link(dest.join("dangling")).unwrap(),
        Path::new("/nonexistent/x")
    );
    assert_eq!(fs::read_to_string(dest.join("link")).unwrap(), "data");

    // Not fresh: refused.
    let e = sandbox::prepare_workspace(Some(fx.path()), &dest).unwrap_err();
    assert!(matches!(e, SandboxError::Workspace { .. }), "{e}");
    assert!(e.to_string().contains("not empty"), "{e}");
}

#[test]
fn prepare_workspace_empty_and_errors() {
    let base = tempfile::tempdir().unwrap();
    let dest = base.path().join("ws");
    sandbox::prepare_workspace(None, &dest).unwrap();
    assert!(dest.is_dir());
    assert_eq!(fs::read_dir(&dest).unwrap().count(), 0);
    // An existing empty directory is fine.
    sandbox::prepare_workspace(None, &dest).unwrap();
    let e = sandbox::prepare_workspace(Some(&base.path().join("nope")), &base.path().join("ws2")).unwrap_err();
    assert!(matches!(e, SandboxError::Workspace { .. }), "{e}");
}

#[test]
fn the_command_starts_with_no_blocked_signals_and_sigpipe_at_its_default() {
    // The harness (like every Rust program) ignores SIGPIPE and may block signals in its
    // threads; none of that may reach the command.
    let ws = tempfile::tempdir().unwrap();
    for level in [Isolation::None, Isolation::Process] {
        let mut c = cfg(ws.path());
        c.isolation = level;
        let o = sandbox::run_shell(&c, "grep -E '^(SigBlk|SigIgn):' /proc/self/status", None).unwrap();
        let mask = |key: &str| {
            let line = o.stdout.text.lines().find(|l| l.starts_with(key)).unwrap_or_default();
            u64::from_str_radix(line.split_whitespace().nth(1).unwrap_or("x"), 16).unwrap()
        };
        assert_eq!(mask("SigBlk:"), 0, "{level:?}: {o:?}");
        assert_eq!(
            mask("SigIgn:") & (1 << (13 - 1)),
            0,
            "{level:?}: SIGPIPE ignored: {o:?}"
        );
        // A writer into a closed pipe dies quietly of SIGPIPE instead of printing EPIPE errors.
        let o = sandbox::run_shell(&c, "yes | head -n 1", None).unwrap();
        assert_eq!(o.stdout.text, "y\n");
        assert_eq!(o.stderr.text, "", "{level:?}");
    }
}

#[test]
fn a_command_with_a_nul_byte_is_a_spawn_error_not_a_panic() {
    let ws = tempfile::tempdir().unwrap();
    let e = sandbox::run_shell(&cfg(ws.path()), "echo a\0b", None).unwrap_err();
    assert!(matches!(e, SandboxError::Spawn { .. }), "{e}");
    assert!(e.to_string().contains("NUL byte"), "{e}");
}

#[test]
fn a_child_that_cannot_start_is_a_spawn_error_naming_the_step() {
    // A workspace that is a file: the path resolves, but the child cannot enter it. The
    // failure happens after the fork, in the child, and must come back as an error (not a
    // command that "exited 127").
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    fs::write(&file, "x").unwrap();
    for level in [Isolation::None, Isolation::Process] {
        let mut c = cfg(&file);
        c.isolation = level;
        let e = sandbox::run_shell(&c, "true", None).unwrap_err();
        assert!(matches!(e, SandboxError::Spawn { .. }), "{level:?}: {e}");
        assert!(e.to_string().contains("working directory"), "{level:?}: {e}");
    }
}

/// A strict config for `ws` with the host toolchains `tools` (their directories as read
/// paths, as the runner gives them), or None where strict cannot be had here.
fn strict_with(ws: &Path, tools: &[medin::internal::spec::Toolchain]) -> Option<SandboxConfig> {
    if sandbox::probe().strict.is_err() {
        return None;
    }
    let mut c = cfg(ws);
    c.isolation = Isolation::Strict;
    c.timeout = Duration::from_secs(120);
    let setup = medin::internal::runner::toolchain::toolchain_setup(tools, sandbox::SANDBOX_PATH);
    c.env = setup.env;
    c.read_paths = setup.read_paths;
    Some(c)
}

#[test]
fn strict_view_runs_everyday_programs() {
    use medin::internal::spec::Toolchain;
    let dir = tempfile::tempdir().unwrap();
    let Some(c) = strict_with(dir.path(), &[Toolchain::Python, Toolchain::Node]) else {
        return;
    };
    let script = "set -e; \
        id -u >/dev/null; getent passwd root | cut -d: -f1; ls -la /dev >/dev/null; \
        printf 'b\\na\\n' | sort | head -1; \
        git init -q repo && cd repo && git config user.email t@t && git config user.name t && \
        echo x > f && git add f && git commit -q -m first && git log --format=%s && cd .. ; \
        python3 -c 'import ssl, sqlite3, pty, os; m, s = pty.openpty(); print(\"py\", ssl.OPENSSL_VERSION.split()[0])'; \
        python3 -m pytest --version >/dev/null 2>&1 && echo pytest-ok || echo pytest-missing; \
        if command -v node >/dev/null; then node -e 'console.log(\"node\", 1 + 1)'; else echo node 2; fi";
    let o = sandbox::run_shell(&c, script, None).unwrap();
    let lines: Vec<&str> = o.stdout.text.lines().collect();
    assert!(o.success(), "{o:?}");
    assert_eq!(lines[..4], ["root", "a", "first", "py OpenSSL"], "{o:?}");
    assert_eq!(lines[5], "node 2", "{o:?}");
    // pytest where the host's Python has it (the harness machine's pyenv does).
    if std::process::Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        assert_eq!(lines[4], "pytest-ok", "{o:?}");
    }
}

#[test]
fn strict_view_builds_a_tiny_crate_offline_with_the_host_toolchain() {
    use medin::internal::spec::Toolchain;
    let dir = tempfile::tempdir().unwrap();
    let Some(c) = strict_with(dir.path(), &[Toolchain::Rust]) else {
        return;
    };
    if c.read_paths.is_empty() {
        return; // no rustup toolchain on this machine's PATH
    }
    fs::create_dir(dir.path().join("src")).unwrap();
    fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    fs::write(dir.path().join("src/main.rs"), "fn main() { println!(\"tiny-ok\"); }\n").unwrap();
    let o = sandbox::run_shell(&c, "cargo build --offline -q && ./target/debug/tiny", None).unwrap();
    assert_eq!(o.stdout.text, "tiny-ok\n", "{o:?}");
}

#[test]
fn strict_view_shows_read_paths_at_their_given_and_canonical_paths() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut c) = strict_with(dir.path(), &[]) else {
        return;
    };
    let tools = tempfile::tempdir().unwrap();
    let tools = tools.path().canonicalize().unwrap();
    fs::create_dir_all(tools.join("real/bin")).unwrap();
    fs::write(tools.join("real/bin/tool"), "#!/bin/sh\necho tool-ok\n").unwrap();
    fs::set_permissions(tools.join("real/bin/tool"), fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(tools.join("real"), tools.join("link")).unwrap();
    c.read_paths = vec![tools.join("link")];
    let t = tools.display();
    let o = sandbox::run_shell(
        &c,
        &format!("{t}/link/bin/tool; {t}/real/bin/tool; echo x > {t}/real/new"),
        None,
    )
    .unwrap();
    assert_eq!(o.stdout.text, "tool-ok\ntool-ok\n", "{o:?}");
    assert!(!tools.join("real/new").exists(), "a read path was writable");
    // A read path that would cover the view's own system trees is refused, with the reason.
    c.read_paths = vec!["/".into()];
    let e = sandbox::run_shell(&c, "true", None).unwrap_err();
    assert!(matches!(e, SandboxError::Unsupported { .. }), "{e}");
    assert!(e.to_string().contains("would hide the system directories"), "{e}");
}

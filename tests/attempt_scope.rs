//! The attempt's sandbox under `strict`: one set of namespaces per attempt that every command
//! joins, services that live across commands and die with the attempt, and the persistent
//! shell. Real processes, real namespaces; skipped (with a message) where strict is missing.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use medin::internal::sandbox::{self, AttemptSandbox, ExitKind, Isolation, SandboxConfig};

fn strict_cfg(dir: &Path) -> Option<SandboxConfig> {
    if let Err(e) = sandbox::check_isolation(Isolation::Strict) {
        eprintln!("skipped: strict isolation is not available here: {e}");
        return None;
    }
    let mut c = SandboxConfig::new(dir);
    c.timeout = Duration::from_secs(20);
    c.grace = Duration::from_millis(300);
    c.isolation = Isolation::Strict;
    Some(c)
}

/// Host pids of live processes whose command line contains `needle`.
fn host_pids_with(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmd) = fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z'));
        if !zombie && String::from_utf8_lossy(&cmd).replace('\0', " ").contains(needle) {
            out.push(pid);
        }
    }
    out
}

fn wait_until(mut f: impl FnMut() -> bool, within: Duration) -> bool {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

fn run(cfg: &SandboxConfig, cmd: &str) -> sandbox_out::Out {
    let o = sandbox::run_shell(cfg, cmd, None).expect("sandbox runs");
    sandbox_out::Out {
        code: match o.exit {
            ExitKind::Code(c) => c,
            ExitKind::Signal(s) => 128 + s,
        },
        stdout: o.stdout.text,
        stderr: o.stderr.text,
        ms: o.duration_ms,
    }
}

mod sandbox_out {
    #[derive(Debug)]
    pub struct Out {
        pub code: i32,
        pub stdout: String,
        #[allow(dead_code)] // shown by Debug when an assertion fails
        pub stderr: String,
        pub ms: u64,
    }
}

#[test]
fn a_background_process_outlives_its_command_and_dies_with_the_attempt() {
    let ws = tempfile::tempdir().unwrap();
    let Some(mut cfg) = strict_cfg(ws.path()) else { return };
    let attempt = AttemptSandbox::start(&cfg).expect("attempt starts");
    cfg.attempt = Some(attempt.clone());
    let tag = format!("sleep 31{}", std::process::id() % 1000);
    let o = run(&cfg, &format!("{tag} & echo started"));
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("started"), "{o:?}");
    assert!(o.ms < 2000, "the command waited for its background child: {o:?}");
    assert!(
        !host_pids_with(&tag).is_empty(),
        "the background sleep died with its command"
    );
    // The next command sees it: same PID namespace.
    let o = run(&cfg, "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done");
    assert!(o.stdout.contains(&tag), "{o:?}");
    attempt.end();
    assert!(
        wait_until(|| host_pids_with(&tag).is_empty(), Duration::from_secs(5)),
        "the background sleep outlived the attempt: {:?}",
        host_pids_with(&tag)
    );
}

#[test]
fn a_server_started_by_one_command_answers_the_next_on_localhost() {
    let ws = tempfile::tempdir().unwrap();
    let Some(mut cfg) = strict_cfg(ws.path()) else { return };
    let attempt = AttemptSandbox::start(&cfg).expect("attempt starts");
    cfg.attempt = Some(attempt.clone());
    fs::write(ws.path().join("index.html"), "hello from the service\n").unwrap();
    let o = run(
        &cfg,
        "nohup python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & echo $!",
    );
    assert_eq!(o.code, 0, "{o:?}");
    let fetch = "python3 - <<'PY'\nimport time, urllib.request\nfor _ in range(100):\n    try:\n        print(urllib.request.urlopen('http://127.0.0.1:8765/index.html', timeout=1).read().decode()); break\n    except Exception as e:\n        time.sleep(0.05)\nPY";
    let o = run(&cfg, fetch);
    assert!(o.stdout.contains("hello from the service"), "{o:?}");
    // The network is still the attempt's own: nothing outside answers.
    let o = run(
        &cfg,
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=1)\"",
    );
    assert_ne!(o.code, 0, "the attempt reached the outside network: {o:?}");
    attempt.end();
}

#[test]
fn tmp_is_one_for_the_whole_attempt() {
    let ws = tempfile::tempdir().unwrap();
    let Some(mut cfg) = strict_cfg(ws.path()) else { return };
    let attempt = AttemptSandbox::start(&cfg).expect("attempt starts");
    cfg.attempt = Some(attempt.clone());
    assert_eq!(run(&cfg, "echo kept > /tmp/note && echo x > \"$TMPDIR/y\"").code, 0);
    let o = run(&cfg, "cat /tmp/note \"$TMPDIR/y\"");
    assert_eq!(o.stdout, "kept\nx\n", "{o:?}");
}

#[test]
fn the_session_keeps_cwd_variables_and_functions() {
    let ws = tempfile::tempdir().unwrap();
    let Some(cfg0) = strict_cfg(ws.path()) else { return };
    let attempt = AttemptSandbox::start(&cfg0).expect("attempt starts");
    let mut cfg = cfg0.clone();
    cfg.attempt = Some(attempt.clone());
    fs::create_dir(ws.path().join("sub")).unwrap();
    let s = |c: &str| attempt.session(&cfg, c, None).expect("session runs");
    assert!(s("cd sub && export GREETING=hi && f() { echo \"fn:$1\"; }").success());
    let o = s("pwd; echo $GREETING; f x");
    assert!(o.stdout.text.ends_with("/sub\nhi\nfn:x\n"), "{o:?}");
    let o = s("false");
    assert_eq!(o.exit, ExitKind::Code(1));
    let o = s("printf 'no newline'");
    assert_eq!(o.stdout.text, "no newline");
    let o = s("echo err >&2; exit 3");
    assert_eq!(o.exit, ExitKind::Code(3), "{o:?}");
    assert!(o.stderr.text.starts_with("err\n"), "{o:?}");
    // A new shell: the state is gone.
    let o = s("echo \"[$GREETING]\"");
    assert_eq!(o.stdout.text, "[]\n", "{o:?}");
}

#[test]
fn a_session_call_that_times_out_ends_the_shell_and_the_next_call_gets_a_new_one() {
    let ws = tempfile::tempdir().unwrap();
    let Some(cfg0) = strict_cfg(ws.path()) else { return };
    let attempt = AttemptSandbox::start(&cfg0).expect("attempt starts");
    let mut cfg = cfg0.clone();
    cfg.attempt = Some(attempt.clone());
    cfg.timeout = Duration::from_millis(500);
    let start = Instant::now();
    let o = attempt.session(&cfg, "export X=1; sleep 30", None).unwrap();
    assert!(o.timed_out, "{o:?}");
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(o.stderr.text.contains("state"), "{o:?}");
    let o = attempt.session(&cfg, "echo \"[$X]\"", None).unwrap();
    assert_eq!(o.stdout.text, "[]\n", "{o:?}");
}

#[test]
fn without_an_attempt_a_background_process_still_ends_with_its_command() {
    let ws = tempfile::tempdir().unwrap();
    let Some(cfg) = strict_cfg(ws.path()) else { return };
    let tag = format!("sleep 32{}", std::process::id() % 1000);
    let o = run(&cfg, &format!("{tag} & echo started"));
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        wait_until(|| host_pids_with(&tag).is_empty(), Duration::from_secs(5)),
        "a lone command's background child outlived it"
    );
}

/// A workspace and, beside it, a folder that must stay intact; a strict config inside a
/// started attempt.
fn attempt_with_outside() -> Option<(tempfile::TempDir, SandboxConfig, AttemptSandbox, std::path::PathBuf)> {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    let outside = root.path().join("outside");
    fs::create_dir(&ws).unwrap();
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("victim.txt"), "original").unwrap();
    let mut cfg = strict_cfg(&ws.canonicalize().unwrap())?;
    let attempt = AttemptSandbox::start(&cfg).expect("attempt starts");
    cfg.attempt = Some(attempt.clone());
    Some((root, cfg, attempt, outside.canonicalize().unwrap()))
}

// The escapes a lone strict command is tested against (tests/sandbox_attacks.rs), at attempt
// scope: joining the attempt's namespaces must not open any of them, and what one command
// leaves running must not open them for the next.

#[test]
fn in_an_attempt_writes_outside_the_workspace_fail_however_they_are_made() {
    let Some((_root, cfg, _attempt, outside)) = attempt_with_outside() else {
        return;
    };
    let o = run(
        &cfg,
        &format!(
            "echo pwned > {o}/abs.txt; echo pwned > ../outside/dotdot.txt; ln -s {o} link && echo pwned > link/sym.txt; \
             ln {o}/victim.txt hl; echo pwned > hl; echo fine > inside.txt && echo wrote-inside",
            o = outside.display()
        ),
    );
    assert!(o.stdout.contains("wrote-inside"), "{o:?}");
    assert_eq!(fs::read_to_string(outside.join("victim.txt")).unwrap(), "original");
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        1,
        "something was written outside"
    );
}

#[test]
fn in_an_attempt_the_host_loopback_is_not_reachable_and_secrets_stay_closed() {
    let Some((_root, cfg, _attempt, _outside)) = attempt_with_outside() else {
        return;
    };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let o = run(
        &cfg,
        &format!("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=2); print(\"connected\")'"),
    );
    assert!(
        !o.stdout.contains("connected"),
        "the attempt's loopback reached the host's: {o:?}"
    );
    assert!(listener.accept().is_err(), "the host's listener got a connection");
    let o = run(&cfg, "cat /etc/shadow; ls /root /home 2>&1; echo done");
    assert!(!o.stdout.contains("root:"), "{o:?}");
    assert!(o.stderr.contains("/etc/shadow: Permission denied"), "{o:?}");
}

#[test]
fn in_an_attempt_the_holder_and_other_commands_cannot_be_read_traced_or_used() {
    let Some((_root, cfg, attempt, _outside)) = attempt_with_outside() else {
        return;
    };
    // An earlier command's process: a later command may see and signal it, never trace it or
    // read its memory.
    let tag = format!("sleep 33{}", std::process::id() % 1000);
    assert_eq!(run(&cfg, &format!("{tag} & echo $! > pid")).code, 0);
    let o = run(
        &cfg,
        "p=$(cat pid); python3 -c 'import ctypes, sys; l = ctypes.CDLL(None, use_errno=True); r = l.ptrace(16, int(sys.argv[1]), 0, 0); print(\"attached\" if r == 0 else \"ptrace-errno-%d\" % ctypes.get_errno())' $p; \
         cat /proc/$p/mem 2>&1 | head -c 100; echo",
    );
    assert!(o.stdout.contains("ptrace-errno-1"), "{o:?}");
    assert!(!o.stdout.contains("attached"), "{o:?}");
    // The holder (PID 1): its environment, root, working directory and descriptors are closed.
    let o = run(
        &cfg,
        "cat /proc/1/environ; ls /proc/1/root/ /proc/1/cwd/ /proc/1/fd/ 2>&1; kill -9 1; echo survived-$?",
    );
    assert!(!o.stdout.contains("PATH="), "{o:?}");
    assert!(!o.stdout.contains("workspace"), "{o:?}");
    // SIGKILL to PID 1 from inside is ignored by the kernel: the attempt lives on.
    assert!(
        o.stdout.contains("survived-0") || o.stdout.contains("survived-1"),
        "{o:?}"
    );
    assert_eq!(run(&cfg, "echo alive").stdout, "alive\n");
    // Namespaces, mounts and kernel interfaces stay closed when joined.
    let o = run(
        &cfg,
        "unshare -r true && echo unshared; mount -t tmpfs none /tmp && echo mounted; nsenter -t 1 -m true && echo entered; echo end",
    );
    assert!(
        !o.stdout.contains("unshared") && !o.stdout.contains("mounted") && !o.stdout.contains("entered"),
        "{o:?}"
    );
    attempt.end();
    assert!(wait_until(|| host_pids_with(&tag).is_empty(), Duration::from_secs(5)));
}

#[test]
fn daemons_that_leave_their_session_and_ignore_sigterm_die_with_the_attempt() {
    let Some((_root, cfg, attempt, _outside)) = attempt_with_outside() else {
        return;
    };
    let tag = format!("34{}", std::process::id() % 1000);
    let o = run(
        &cfg,
        &format!(
            "setsid sh -c 'sleep {tag}1' & \
             (setsid sh -c 'trap \"\" TERM HUP; sleep {tag}2' > /dev/null 2>&1 &) & \
             env -i /bin/sh -c 'nohup sleep {tag}3 > /dev/null 2>&1 &'; echo started"
        ),
    );
    assert!(o.stdout.contains("started"), "{o:?}");
    assert!(
        wait_until(
            || host_pids_with(&format!("sleep {tag}")).len() >= 3,
            Duration::from_secs(5)
        ),
        "{:?}",
        host_pids_with(&format!("sleep {tag}"))
    );
    let ended = Instant::now();
    attempt.end();
    assert!(
        wait_until(
            || host_pids_with(&format!("sleep {tag}")).is_empty(),
            Duration::from_secs(5)
        ),
        "daemons outlived the attempt: {:?}",
        host_pids_with(&format!("sleep {tag}"))
    );
    assert!(ended.elapsed() < Duration::from_secs(5));
    // Ended is ended: a later command runs alone (nothing joins a dead attempt).
    assert_eq!(run(&cfg, "echo after").stdout, "after\n");
}

#[test]
fn a_session_at_process_level_keeps_its_state_and_ends_with_the_attempt() {
    let ws = tempfile::tempdir().unwrap();
    let mut cfg = SandboxConfig::new(ws.path());
    cfg.timeout = Duration::from_secs(10);
    cfg.grace = Duration::from_millis(200);
    cfg.isolation = Isolation::Process;
    let attempt = AttemptSandbox::start(&cfg).expect("attempt starts");
    assert!(!attempt.has_namespaces());
    cfg.attempt = Some(attempt.clone());
    let tag = format!("sleep 35{}", std::process::id() % 1000);
    let o = attempt.session(&cfg, &format!("export A=1; {tag} &"), None).unwrap();
    assert!(o.success(), "{o:?}");
    let o = attempt.session(&cfg, "echo $A", None).unwrap();
    assert_eq!(o.stdout.text, "1\n");
    assert!(wait_until(|| !host_pids_with(&tag).is_empty(), Duration::from_secs(5)));
    attempt.end();
    assert!(wait_until(|| host_pids_with(&tag).is_empty(), Duration::from_secs(5)));
}

/// This process's resident memory, in KiB.
fn own_rss_kib() -> u64 {
    fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_background_job_flooding_the_session_between_calls_does_not_grow_the_harness() {
    let ws = tempfile::tempdir().unwrap();
    let Some(cfg0) = strict_cfg(ws.path()) else { return };
    let attempt = AttemptSandbox::start(&cfg0).expect("attempt starts");
    let mut cfg = cfg0.clone();
    cfg.attempt = Some(attempt.clone());
    let before = own_rss_kib();
    // 400 MB written to the shell's stdout while no call reads it. The job waits a second
    // before it writes, so the call's answer (the marker the shell writes once the line is
    // done) is out first: written after, it could queue behind a full pipe and the call time
    // out on a loaded machine, which is the job's doing and not what this test measures.
    let o = attempt
        .session(&cfg, "(sleep 1; head -c 400000000 /dev/zero) &", None)
        .unwrap();
    assert!(o.success(), "{:?}", o.exit);
    std::thread::sleep(Duration::from_secs(4));
    let grown = own_rss_kib().saturating_sub(before);
    assert!(
        grown < 64 * 1024,
        "the harness grew by {grown} KiB holding a background job's output"
    );
    // The next call gets what the job wrote ahead of its answer, cut at the cap (it may run
    // out of time reading it: the job's doing, like a terminal flooded with output).
    let o = attempt.session(&cfg, "echo after", None).unwrap();
    assert!(
        o.stdout.text.len() <= cfg.output_cap,
        "{} bytes kept past the cap",
        o.stdout.text.len()
    );
    assert!(
        own_rss_kib().saturating_sub(before) < 64 * 1024,
        "the harness grew reading a background job's output"
    );
    attempt.end();
}

#[test]
fn what_is_made_to_outlive_the_attempt_runs_through_it_and_ends_with_it() {
    let ws = tempfile::tempdir().unwrap();
    let Some(mut cfg) = strict_cfg(ws.path()) else { return };
    let attempt = AttemptSandbox::start(&cfg).expect("attempt starts");
    cfg.attempt = Some(attempt.clone());
    let tag = format!("medin-outlive-{}", std::process::id());
    // A sleeper that ignores SIGTERM, SIGHUP and SIGINT, named by its last argument.
    fs::write(
        ws.path().join("stay.py"),
        "import signal, sys, time\nfor s in (1, 2, 15):\n    signal.signal(s, signal.SIG_IGN)\ntime.sleep(1000)\n",
    )
    .unwrap();
    // A pid hopper: starts a copy of itself and exits, forever.
    fs::write(
        ws.path().join("hop.sh"),
        format!("sleep 0.05; sh hop.sh {tag}-hop & exit 0\n"),
    )
    .unwrap();
    let o = run(
        &cfg,
        &format!(
            "setsid sh -c 'setsid python3 stay.py {tag}-a &'; \
             nohup sh -c 'kill -STOP $$; python3 stay.py {tag}-b' >/dev/null 2>&1 & \
             sh hop.sh {tag}-hop & echo left"
        ),
    );
    assert_eq!(o.code, 0, "{o:?}");
    let o = attempt
        .session(
            &cfg,
            &format!("python3 stay.py {tag}-c & disown; (setsid python3 stay.py {tag}-d &); echo left"),
            None,
        )
        .unwrap();
    assert!(o.success(), "{:?}", o.exit);
    let alive = |suffix: &str| !host_pids_with(&format!("{tag}-{suffix}")).is_empty();
    assert!(
        wait_until(
            || ["a", "b", "c", "d", "hop"].iter().all(|s| alive(s)),
            Duration::from_secs(5)
        ),
        "something meant to outlive its command died with it: {:?}",
        ["a", "b", "c", "d", "hop"].map(alive)
    );
    attempt.end();
    assert!(
        wait_until(|| host_pids_with(&tag).is_empty(), Duration::from_secs(5)),
        "outlived the attempt: {:?}",
        host_pids_with(&tag)
    );
}

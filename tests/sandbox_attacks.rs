//! Attacks on the sandbox, one test each, through `sandbox::run_shell` with real processes:
//! escaping the workspace (absolute path, `..`, symlink, hard link), reading a planted secret,
//! reaching a loopback listener with the network off, outliving the command (daemons, setsid,
//! SIGTERM ignored), fork bomb, memory hog, CPU spin, huge file, output flood, raising rlimits,
//! ptrace of a sibling, namespace and mount syscalls. Each must be contained, the outcome must
//! name what happened, and nothing may be left behind.
//!
//! Strict-mode tests need root with namespaces and Landlock (`medin doctor`); where strict is not
//! available they check that asking for it fails loudly instead.

mod support;

use std::fs;
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use medin::internal::sandbox::{self, ExitKind, Isolation, LimitHit, SandboxConfig, SandboxError};
use support::pids_with;

fn strict_ok() -> bool {
    sandbox::probe().strict.is_ok()
}

/// A strict config, or None after checking that strict fails loudly here.
fn strict(ws: &Path) -> Option<SandboxConfig> {
    let mut c = SandboxConfig::new(ws);
    c.isolation = Isolation::Strict;
    c.timeout = Duration::from_secs(20);
    c.grace = Duration::from_millis(300);
    if strict_ok() {
        Some(c)
    } else {
        let e = sandbox::run_shell(&c, "true", None).unwrap_err();
        assert!(matches!(e, SandboxError::Unsupported { .. }), "{e}");
        assert!(e.to_string().contains("medin doctor"), "{e}");
        None
    }
}

/// `process` level with its cgroup switched on (off by default for speed).
fn process(ws: &Path) -> SandboxConfig {
    let mut c = SandboxConfig::new(ws);
    c.cgroup = Some(true);
    c.timeout = Duration::from_secs(20);
    c.grace = Duration::from_millis(300);
    c
}

/// A fresh directory tree: `<root>/ws` (the workspace) and `<root>/outside` (must stay intact).
fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    let outside = root.path().join("outside");
    fs::create_dir(&ws).unwrap();
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("victim.txt"), "original").unwrap();
    (root, ws.canonicalize().unwrap(), outside.canonicalize().unwrap())
}

fn assert_no_leftovers(needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !pids_with(needle).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        pids_with(needle).is_empty(),
        "processes left behind: {:?}",
        pids_with(needle)
    );
}

/// Whether a failed access shows in `stderr`: denied (Landlock), or absent from the built view.
fn refused(stderr: &str) -> bool {
    ["Permission denied", "No such file or directory", "nonexistent"]
        .iter()
        .any(|m| stderr.contains(m))
}

fn assert_outside_intact(outside: &Path) {
    let names: Vec<_> = fs::read_dir(outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["victim.txt"], "files appeared outside the workspace");
    assert_eq!(fs::read_to_string(outside.join("victim.txt")).unwrap(), "original");
}

#[test]
fn strict_write_outside_by_absolute_path_dotdot_and_symlink_fails() {
    let (_root, ws, outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    let o = dbg!(sandbox::run_shell(
        &c,
        &format!(
            "echo pwned > {o}/abs.txt; echo pwned > ../outside/dotdot.txt; echo pwned > {o}/victim.txt; \
             ln -s {o} link && echo pwned > link/sym.txt; echo pwned > link/victim.txt; \
             echo fine > inside.txt; mkdir -p sub && echo fine > sub/f && echo fine > \"$TMPDIR/t\" && echo wrote-inside",
            o = outside.display()
        ),
        None
    )
    .unwrap());
    assert_eq!(o.isolation, Isolation::Strict);
    assert!(o.stdout.text.contains("wrote-inside"), "{o:?}");
    // The paths outside do not even exist in the built view.
    assert!(refused(&o.stderr.text), "{o:?}");
    assert_outside_intact(&outside);
    assert_eq!(fs::read_to_string(ws.join("inside.txt")).unwrap(), "fine\n");
}

#[test]
fn strict_hard_link_to_outside_file_fails() {
    let (_root, ws, outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    let o = sandbox::run_shell(
        &c,
        &format!("ln {}/victim.txt hl && echo pwned > hl", outside.display()),
        None,
    )
    .unwrap();
    assert!(!o.success(), "{o:?}");
    assert!(!ws.join("hl").exists());
    assert_outside_intact(&outside);
}

#[test]
fn strict_planted_secrets_are_unreadable() {
    let (root, ws, _outside) = dirs();
    let home = root.path().join("home");
    for d in [".ssh", ".aws", ".config/gh"] {
        fs::create_dir_all(home.join(d)).unwrap();
    }
    fs::write(home.join(".ssh/id_ed25519"), "SECRET-KEY").unwrap();
    fs::write(home.join(".aws/credentials"), "SECRET-AWS").unwrap();
    fs::write(home.join(".config/gh/hosts.yml"), "SECRET-GH").unwrap();
    fs::write(home.join(".netrc"), "SECRET-NETRC").unwrap();
    let Some(c) = strict(&ws) else { return };
    let h = home.display();
    let o = sandbox::run_shell(
        &c,
        &format!(
            "cat {h}/.ssh/id_ed25519 {h}/.aws/credentials {h}/.config/gh/hosts.yml {h}/.netrc; ls {h}; \
             cat /root/.ssh/* /root/.netrc /root/.aws/credentials 2>&1 | head -c 300; ls /home /root 2>&1"
        ),
        None,
    )
    .unwrap();
    assert!(!o.stdout.text.contains("SECRET"), "{o:?}");
    assert!(!o.stderr.text.contains("SECRET"), "{o:?}");
    assert!(refused(&o.stderr.text), "{o:?}");
    // System secrets under /etc stay closed while the rest of /etc is readable.
    let o = sandbox::run_shell(
        &c,
        "cat /etc/shadow; ls /etc/ssh 2>&1 | head -c 200; head -1 /etc/passwd",
        None,
    )
    .unwrap();
    assert!(o.stdout.text.contains("root:x:0:0"), "{o:?}");
    assert!(o.stderr.text.contains("/etc/shadow: Permission denied"), "{o:?}");
    // The harness's run folders of other tasks: a sibling directory of the workspace.
    let o = sandbox::run_shell(&c, "ls ..; cat ../outside/victim.txt", None).unwrap();
    assert!(!o.stdout.text.contains("original"), "{o:?}");
    assert!(!o.success());
}

#[test]
fn strict_network_off_cannot_reach_a_loopback_listener() {
    let (_root, ws, _outside) = dirs();
    let Some(mut c) = strict(&ws) else { return };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let script = format!(
        "python3 -c 'import socket; s=socket.create_connection((\"127.0.0.1\", {port}), timeout=2); s.sendall(b\"hi\"); print(\"connected\")'"
    );
    let o = sandbox::run_shell(&c, &script, None).unwrap();
    assert!(!o.success(), "{o:?}");
    assert!(!o.stdout.text.contains("connected"), "{o:?}");
    assert!(listener.accept().is_err(), "the listener got a connection");
    // With the task's policy allowing network, the same command connects.
    c.network = true;
    let o = sandbox::run_shell(&c, &script, None).unwrap();
    assert!(o.stdout.text.contains("connected"), "{o:?}");
    listener.set_nonblocking(false).unwrap();
    let (mut s, _) = listener.accept().unwrap();
    let mut buf = [0u8; 2];
    s.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"hi");
}

fn daemons(c: &SandboxConfig, tag: &str) {
    let o = sandbox::run_shell(
        c,
        &format!(
            "setsid sh -c 'sleep {tag}1' & \
             (setsid sh -c 'trap \"\" TERM HUP; sleep {tag}2' > /dev/null 2>&1 &) & \
             env -i /bin/sh -c 'nohup sleep {tag}3 > /dev/null 2>&1 &'; echo started"
        ),
        None,
    )
    .unwrap();
    assert!(o.stdout.text.contains("started"), "{o:?}");
    assert!(o.duration_ms < 5000, "{o:?}");
    assert_no_leftovers(&format!("sleep {tag}"));
}

#[test]
fn strict_daemons_do_not_outlive_the_command() {
    let (_root, ws, _outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    daemons(&c, "3711");
}

#[test]
fn process_daemons_that_clear_their_environment_do_not_outlive_the_command() {
    let (_root, ws, _outside) = dirs();
    let c = process(&ws);
    if !sandbox::probe().process_limit && !sandbox::probe().memory_cgroup {
        return; // without a cgroup, `env -i` escapees are out of reach at this level
    }
    daemons(&c, "3722");
}

fn fork_bomb(c: &mut SandboxConfig) {
    c.limits.processes = Some(64);
    c.timeout = Duration::from_secs(8);
    let start = Instant::now();
    let o = sandbox::run_shell(
        c,
        "bomb() { bomb | bomb & }; bomb; i=0; while [ $i -lt 300 ]; do sleep 3733 & i=$((i+1)); done; wait",
        None,
    )
    .unwrap();
    assert_eq!(o.limit, Some(LimitHit::ProcessLimit), "{o:?}");
    assert!(o.usage.peak_processes.is_none_or(|p| p <= 64), "{o:?}");
    assert!(start.elapsed() < Duration::from_secs(15));
    assert_no_leftovers("sleep 3733");
    // The machine still forks.
    assert!(std::process::Command::new("true").status().unwrap().success());
}

#[test]
fn strict_fork_bomb_is_contained_and_named() {
    let (_root, ws, _outside) = dirs();
    let Some(mut c) = strict(&ws) else { return };
    fork_bomb(&mut c);
}

#[test]
fn process_fork_bomb_is_contained_and_named() {
    let (_root, ws, _outside) = dirs();
    if !sandbox::probe().process_limit {
        return;
    }
    fork_bomb(&mut process(&ws));
}

#[test]
fn memory_hog_is_named_memory_limit() {
    let (_root, ws, _outside) = dirs();
    let mut cfgs = vec![process(&ws)];
    cfgs.extend(strict(&ws));
    for mut c in cfgs {
        c.limits.memory = Some(64 << 20);
        let o = sandbox::run_shell(&c, "python3 -c 'b = bytearray(512 * 1024 * 1024); print(len(b))'", None).unwrap();
        assert!(!o.success(), "{o:?}");
        assert_eq!(o.limit, Some(LimitHit::MemoryLimit), "{o:?}");
    }
}

#[test]
fn memory_of_many_processes_is_capped_by_the_cgroup() {
    let (_root, ws, _outside) = dirs();
    if !sandbox::probe().memory_cgroup {
        return;
    }
    let mut c = process(&ws);
    c.limits.memory = Some(100 << 20);
    // Each process stays under the per-process address-space limit; together they do not.
    let hog = "python3 -c 'import time; b = b\"x\" * (45 << 20); time.sleep(3)'";
    let o = sandbox::run_shell(&c, &format!("{hog} & {hog} & {hog} & {hog} & wait"), None).unwrap();
    assert_eq!(o.limit, Some(LimitHit::MemoryLimit), "{o:?}");
}

#[test]
fn cpu_spin_is_named_cpu_limit() {
    let (_root, ws, _outside) = dirs();
    let mut cfgs = vec![process(&ws)];
    cfgs.extend(strict(&ws));
    for mut c in cfgs {
        c.limits.cpu_secs = Some(1);
        let start = Instant::now();
        let o = sandbox::run_shell(&c, "while :; do :; done", None).unwrap();
        assert_eq!(o.limit, Some(LimitHit::CpuLimit), "{o:?}");
        assert_eq!(o.exit, ExitKind::Signal(24), "{o:?}");
        assert!(!o.timed_out);
        assert!(start.elapsed() < Duration::from_secs(10));
        assert!(o.usage.user_ms + o.usage.system_ms >= 900, "{o:?}");
    }
}

#[test]
fn huge_file_is_named_file_size_limit() {
    let (_root, ws, _outside) = dirs();
    let mut cfgs = vec![process(&ws)];
    cfgs.extend(strict(&ws));
    for mut c in cfgs {
        c.limits.file_size = Some(1 << 20);
        let o = sandbox::run_shell(&c, "head -c 50000000 /dev/zero > big", None).unwrap();
        assert_eq!(o.limit, Some(LimitHit::FileSizeLimit), "{o:?}");
        assert!(fs::metadata(ws.join("big")).unwrap().len() <= 1 << 20);
        fs::remove_file(ws.join("big")).unwrap();
    }
}

#[test]
fn output_flood_is_capped_and_the_harness_survives() {
    let (_root, ws, _outside) = dirs();
    let mut cfgs = vec![process(&ws)];
    cfgs.extend(strict(&ws));
    for mut c in cfgs {
        c.output_cap = 4096;
        let o = sandbox::run_shell(&c, "head -c 100000000 /dev/zero; head -c 3000000 /dev/zero >&2", None).unwrap();
        assert!(o.success(), "{o:?}");
        assert_eq!(o.stdout.total_bytes, 100_000_000);
        assert_eq!(o.stderr.total_bytes, 3_000_000);
        assert!(o.stdout.truncated && o.stdout.text.len() == 4096);
        // A command that closes its pipes early and keeps running.
        c.timeout = Duration::from_millis(800);
        let o = sandbox::run_shell(&c, "exec >&- 2>&-; sleep 3744", None).unwrap();
        assert_eq!(o.limit, Some(LimitHit::Timeout), "{o:?}");
        assert_no_leftovers("sleep 3744");
    }
}

#[test]
fn sigterm_ignored_tree_is_killed_at_timeout() {
    let (_root, ws, _outside) = dirs();
    let mut cfgs = vec![process(&ws)];
    cfgs.extend(strict(&ws));
    for mut c in cfgs {
        c.timeout = Duration::from_millis(500);
        let start = Instant::now();
        let o = sandbox::run_shell(
            &c,
            "trap '' TERM; setsid sh -c \"trap '' TERM; sleep 3755\" & sleep 3756; wait",
            None,
        )
        .unwrap();
        assert!(o.timed_out);
        assert_eq!(o.limit, Some(LimitHit::Timeout), "{o:?}");
        assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
        assert_no_leftovers("sleep 375");
    }
}

#[test]
fn strict_sigterm_reaches_setsid_children_before_sigkill() {
    let (_root, ws, _outside) = dirs();
    let Some(mut c) = strict(&ws) else { return };
    c.timeout = Duration::from_millis(500);
    c.grace = Duration::from_secs(2);
    // A daemon in its own session writes a file when it gets SIGTERM.
    let o = sandbox::run_shell(
        &c,
        "setsid sh -c 'trap \"echo got-term > term.txt; exit 0\" TERM; while :; do sleep 0.05; done' & sleep 3766",
        None,
    )
    .unwrap();
    assert!(o.timed_out);
    assert_eq!(
        fs::read_to_string(ws.join("term.txt")).unwrap_or_default(),
        "got-term\n",
        "{o:?}"
    );
    assert_no_leftovers("sleep 3766");
}

#[test]
fn raising_own_rlimits_fails_even_as_root() {
    let (_root, ws, _outside) = dirs();
    let mut cfgs = vec![process(&ws)];
    cfgs.extend(strict(&ws));
    for c in cfgs {
        let o = sandbox::run_shell(
            &c,
            "ulimit -H -n 100000; ulimit -H -f unlimited; python3 -c 'import resource as r; r.setrlimit(r.RLIMIT_FSIZE, (r.RLIM_INFINITY, r.RLIM_INFINITY))' || echo py-denied; ulimit -H -n; ulimit -H -f",
            None,
        )
        .unwrap();
        let lines: Vec<&str> = o.stdout.text.lines().collect();
        // dash counts `ulimit -f` in 512-byte blocks: 256 MiB.
        assert_eq!(lines, ["py-denied", "1024", "524288"], "{o:?}");
    }
}

#[test]
fn strict_ptrace_of_a_sibling_fails() {
    let (_root, ws, _outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    let o = sandbox::run_shell(
        &c,
        "sleep 3777 & python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
r = libc.ptrace(16, pid, 0, 0)
print(\"attach\", r, os.strerror(ctypes.get_errno()))
r = libc.process_vm_readv(pid, 0, 0, 0, 0, 0)
print(\"vm_readv\", r, os.strerror(ctypes.get_errno()))
' $!; kill $!",
        None,
    )
    .unwrap();
    assert!(o.stdout.text.contains("attach -1 Operation not permitted"), "{o:?}");
    assert!(o.stdout.text.contains("vm_readv -1 Operation not permitted"), "{o:?}");
    assert_no_leftovers("sleep 3777");
}

#[test]
fn strict_namespace_mount_and_kernel_syscalls_are_denied() {
    let (_root, ws, _outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    let o = sandbox::run_shell(
        &c,
        "unshare -r true || echo unshare-denied; unshare -m true || echo unshare-m-denied; \
         mount -t tmpfs none . || echo mount-denied; \
         python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); print(\"io_uring\", l.syscall(425, 4, 0)); print(\"bpf\", l.syscall(321, 0, 0, 0))'; \
         ps -e -o pid= | wc -l; hostname",
        None,
    )
    .unwrap();
    for s in [
        "unshare-denied",
        "unshare-m-denied",
        "mount-denied",
        "io_uring -1",
        "bpf -1",
        "medin-sandbox",
    ] {
        assert!(o.stdout.text.contains(s), "missing {s}: {o:?}");
    }
    // Only the command's own tree is visible: PID 1 (the reaper), sh, ps, wc and maybe sh.
    let visible: usize = o
        .stdout
        .text
        .lines()
        .find_map(|l| l.trim().parse().ok())
        .unwrap_or(usize::MAX);
    assert!(visible <= 6, "{o:?}");
}

#[test]
fn strict_exit_codes_and_signals_are_relayed() {
    let (_root, ws, _outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    let o = sandbox::run_shell(&c, "echo out; echo err >&2; exit 7", None).unwrap();
    assert_eq!(o.exit, ExitKind::Code(7));
    assert_eq!(o.stdout.text, "out\n");
    assert_eq!(o.stderr.text, "err\n");
    assert_eq!(o.limit, None);
    let o = sandbox::run_shell(&c, "kill -SEGV $$", None).unwrap();
    assert_eq!(o.exit, ExitKind::Signal(11), "{o:?}");
    // A command that cannot start reports it.
    let o = sandbox::run_shell(&c, "/nonexistent/prog", None).unwrap();
    assert_eq!(o.exit, ExitKind::Code(127), "{o:?}");
}

#[test]
fn isolation_none_has_no_rlimits() {
    let (_root, ws, _outside) = dirs();
    let mut c = process(&ws);
    c.isolation = Isolation::None;
    c.limits.open_files = Some(77);
    let o = sandbox::run_shell(&c, "ulimit -n", None).unwrap();
    assert_ne!(o.stdout.text.trim(), "77");
    assert_eq!(o.isolation, Isolation::None);
}

#[test]
fn strict_hides_host_sockets_and_gives_a_private_dev_shm() {
    let (_root, ws, _outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    let o = sandbox::run_shell(
        &c,
        "ls -A /run | wc -l; echo x > /dev/shm/medin-shm-test && cat /dev/shm/medin-shm-test; \
         python3 -c 'import multiprocessing as m; l = m.Lock(); print(\"lock-ok\")'; echo x > /dev/medin-new-node",
        None,
    )
    .unwrap();
    let lines: Vec<&str> = o.stdout.text.lines().collect();
    assert_eq!(lines, ["0", "x", "lock-ok"], "{o:?}");
    assert!(!Path::new("/dev/shm/medin-shm-test").exists());
    assert!(!Path::new("/dev/medin-new-node").exists());
}

#[test]
fn the_cgroup_is_on_at_strict_and_opt_in_at_process() {
    let (_root, ws, _outside) = dirs();
    if !sandbox::probe().process_limit {
        return;
    }
    let mut c = SandboxConfig::new(&ws);
    let o = sandbox::run_shell(&c, "cat /proc/self/cgroup", None).unwrap();
    assert!(!o.stdout.text.contains("medin-"), "{o:?}");
    c.cgroup = Some(true);
    let o = sandbox::run_shell(&c, "cat /proc/self/cgroup", None).unwrap();
    assert!(o.stdout.text.contains("medin-"), "{o:?}");
    if let Some(c) = strict(&ws) {
        let o = sandbox::run_shell(&c, "cat /proc/self/cgroup", None).unwrap();
        assert!(o.stdout.text.contains("medin-"), "{o:?}");
    }
}

#[test]
fn leftovers_at_a_normal_end_get_sigterm_then_the_grace_then_sigkill() {
    let (_root, ws, _outside) = dirs();
    let mut plain = process(&ws);
    plain.cgroup = None; // the default: group and environment tag, no cgroup
    let mut cfgs = vec![plain, process(&ws)];
    cfgs.extend(strict(&ws));
    for mut c in cfgs {
        c.grace = Duration::from_secs(1);
        let _ = fs::remove_file(ws.join("term.txt"));
        // The command ends normally, leaving a daemon in its own session that cleans up on
        // SIGTERM, and a child that ignores SIGTERM (so the whole grace period runs out).
        let o = sandbox::run_shell(
            &c,
            "setsid sh -c 'trap \"echo got-term > term.txt; exit 0\" TERM; while :; do sleep 0.05; done' \
               > /dev/null 2>&1 & \
             (trap '' TERM; exec sleep 3781) > /dev/null 2>&1 & \
             sleep 0.3; echo done",
            None,
        )
        .unwrap();
        assert!(o.success(), "{:?}: {o:?}", c.isolation);
        assert_eq!(o.stdout.text, "done\n");
        assert_eq!(o.limit, None, "{o:?}");
        assert_eq!(
            fs::read_to_string(ws.join("term.txt")).unwrap_or_default(),
            "got-term\n",
            "{:?}: the daemon was not given SIGTERM first",
            c.isolation
        );
        assert!(
            o.duration_ms >= 1200,
            "{:?}: the SIGTERM-ignoring child was killed before the grace ended ({} ms)",
            c.isolation,
            o.duration_ms
        );
        assert!(o.duration_ms < 5000, "{:?}: {} ms", c.isolation, o.duration_ms);
        assert_no_leftovers("sleep 3781");
    }
}

#[test]
fn a_command_that_leaves_nothing_behind_pays_no_grace() {
    let (_root, ws, _outside) = dirs();
    let mut plain = process(&ws);
    plain.cgroup = None;
    let mut cfgs = vec![plain, process(&ws)];
    cfgs.extend(strict(&ws));
    for mut c in cfgs {
        c.grace = Duration::from_secs(5);
        let start = Instant::now();
        let o = sandbox::run_shell(&c, "sleep 0.05 & wait; echo ok", None).unwrap();
        assert_eq!(o.stdout.text, "ok\n", "{o:?}");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}: waited for a grace period with nothing left ({:?})",
            c.isolation,
            start.elapsed()
        );
    }
}

#[test]
fn an_explicit_memory_limit_holds_for_the_tree_and_lets_runtimes_start() {
    let (_root, ws, _outside) = dirs();
    if !sandbox::probe().memory_cgroup {
        return; // without a memory cgroup the limit is RLIMIT_AS (tested above)
    }
    let mut cfgs = vec![process(&ws)];
    cfgs.extend(strict(&ws));
    for mut c in cfgs {
        c.limits.memory = Some(96 << 20);
        // A shell that doubles a string until it dies says nothing on stderr: only the cgroup's
        // OOM counter can name it.
        let o = sandbox::run_shell(&c, "s=x; while :; do s=$s$s; done", None).unwrap();
        assert!(!o.success(), "{o:?}");
        assert_eq!(o.limit, Some(LimitHit::MemoryLimit), "{:?}: {o:?}", c.isolation);
        // node reserves far more address space than 96 MiB; under RLIMIT_AS it could not start.
        if std::process::Command::new("node").arg("--version").output().is_ok() {
            let o = sandbox::run_shell(&c, "node -e 'console.log(6 * 7)'", None).unwrap();
            assert_eq!(o.stdout.text, "42\n", "{:?}: {o:?}", c.isolation);
        }
    }
}

#[test]
fn a_limit_hit_by_one_child_is_named_though_the_command_goes_on() {
    let (_root, ws, _outside) = dirs();
    let mut cfgs = vec![process(&ws)];
    cfgs.extend(strict(&ws));
    for mut c in cfgs {
        c.limits.file_size = Some(1 << 20);
        c.limits.cpu_secs = Some(1);
        let o = sandbox::run_shell(&c, "head -c 5000000 /dev/zero > big; echo after", None).unwrap();
        assert_eq!(o.stdout.text, "after\n", "{o:?}");
        assert_eq!(o.limit, Some(LimitHit::FileSizeLimit), "{:?}: {o:?}", c.isolation);
        assert!(fs::metadata(ws.join("big")).unwrap().len() <= 1 << 20);
        let o = sandbox::run_shell(&c, "sh -c 'while :; do :; done'; echo after", None).unwrap();
        assert_eq!(o.stdout.text, "after\n", "{o:?}");
        assert_eq!(o.limit, Some(LimitHit::CpuLimit), "{:?}: {o:?}", c.isolation);
    }
}

#[cfg(target_os = "linux")]
#[test]
fn strict_with_network_cannot_reach_abstract_unix_sockets_outside() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let (_root, ws, _outside) = dirs();
    let Some(mut c) = strict(&ws) else { return };
    if sandbox::probe().landlock_abi.unwrap_or(0) < 6 {
        return; // Landlock scopes need ABI 6 (Linux 6.12); older kernels only hide /run
    }
    // With the network allowed there is no network namespace, so abstract sockets (dbus, X11)
    // would be shared with the host but for Landlock's scope.
    c.network = true;
    let name = format!("medin-abstract-{}", std::process::id());
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _listener = UnixListener::bind_addr(&addr).unwrap();
    let connect = format!(
        "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"\\0{name}\"); print(\"connected\")'"
    );
    // The same command outside the sandbox connects: the socket is there to be reached.
    let mut plain = SandboxConfig::new(&ws);
    plain.isolation = Isolation::None;
    let o = sandbox::run_shell(&plain, &connect, None).unwrap();
    assert_eq!(o.stdout.text, "connected\n", "{o:?}");
    let o = sandbox::run_shell(&c, &connect, None).unwrap();
    assert!(!o.success(), "{o:?}");
    assert!(o.stderr.text.contains("Operation not permitted"), "{o:?}");
    // A socket the command makes itself still works.
    let o = sandbox::run_shell(
        &c,
        "python3 -c 'import socket\nl = socket.socket(socket.AF_UNIX); l.bind(\"\\0inside\"); l.listen()\n\
         s = socket.socket(socket.AF_UNIX); s.connect(\"\\0inside\"); print(\"inside-ok\")'",
        None,
    )
    .unwrap();
    assert_eq!(o.stdout.text, "inside-ok\n", "{o:?}");
}

#[test]
fn descriptors_the_harness_inherited_do_not_reach_the_command() {
    let (_root, ws, outside) = dirs();
    let secret = outside.join("inherited-secret.txt");
    fs::write(&secret, "TOP-SECRET").unwrap();
    // Opened without O_CLOEXEC, as a jobserver pipe or a supervisor's socket would be.
    let path = std::ffi::CString::new(secret.to_str().unwrap()).unwrap();
    // SAFETY: open/dup2/close on descriptors this test owns.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY) };
    assert!(fd >= 0);
    let high = 247;
    assert_eq!(unsafe { libc::dup2(fd, high) }, high);
    unsafe { libc::close(fd) };
    let mut plain = process(&ws);
    plain.cgroup = None;
    let mut cfgs = vec![plain, process(&ws)];
    cfgs.extend(strict(&ws));
    for c in cfgs {
        let o = sandbox::run_shell(
            &c,
            &format!("python3 -c 'import os; print(os.read({high}, 100))' 2>/dev/null; echo end"),
            None,
        )
        .unwrap();
        assert_eq!(
            o.stdout.text, "end\n",
            "{:?}: the command read the harness's descriptor",
            c.isolation
        );
    }
    unsafe { libc::close(high) };
}

#[test]
fn an_escapee_whose_main_thread_exited_is_still_found() {
    // A process whose leader thread called pthread_exit shows `Z` in /proc while a worker
    // thread runs on; it must not pass for dead. It leaves the group (setsid) and ignores
    // SIGTERM, so only the environment tag and the SIGKILL after the grace can end it.
    let (root, ws, _outside) = dirs();
    let src = root.path().join("zlead.c");
    let bin = root.path().join(format!("zlead-{}", std::process::id()));
    fs::write(
        &src,
        "#include <pthread.h>\n#include <signal.h>\n#include <unistd.h>\n\
         static void *work(void *a) { (void)a; for (;;) pause(); return 0; }\n\
         int main(void) { pthread_t t; signal(SIGTERM, SIG_IGN); pthread_create(&t, 0, work, 0); pthread_exit(0); }\n",
    )
    .unwrap();
    let built = std::process::Command::new("cc")
        .args(["-pthread", "-o"])
        .arg(&bin)
        .arg(&src)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        return; // no C compiler here (cargo itself links with one, so this is rare)
    }
    let mut c = process(&ws);
    c.cgroup = None; // only the tag can find it
    c.grace = Duration::from_millis(300);
    // Then enough forks that the pids allocated since the start are too many to probe one by
    // one: /proc is walked, and a walk sees thread-group leaders only (not the live worker).
    let o = sandbox::run_shell(
        &c,
        &format!(
            "(setsid {} &); i=0; while [ $i -lt 4200 ]; do : & i=$((i+1)); done; wait; sleep 0.2; echo started",
            bin.display()
        ),
        None,
    )
    .unwrap();
    assert_eq!(o.stdout.text, "started\n", "{o:?}");
    let name = bin.file_name().unwrap().to_string_lossy().into_owned();
    // Its leader is a zombie by design; what matters is that no thread of it still runs.
    let deadline = Instant::now() + Duration::from_secs(2);
    // Its command line is gone with the leader's memory; its name (comm) stays.
    let running = || {
        fs::read_dir("/proc").unwrap().flatten().any(|e| {
            let comm = fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            let threads = fs::read_dir(e.path().join("task")).map(|d| d.count()).unwrap_or(0);
            comm.trim() == name && threads > 1
        })
    };
    while running() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!running(), "a process whose main thread exited survived the command");
}

#[test]
fn the_grace_for_leftovers_does_not_count_against_the_timeout() {
    // The command itself ends inside its timeout; a child that ignores SIGTERM then holds the
    // grace period past the deadline. That is not a timeout, at any level.
    let (_root, ws, _outside) = dirs();
    let mut cfgs = vec![process(&ws)];
    cfgs.extend(strict(&ws));
    for mut c in cfgs {
        // 2 s of slack for the command under load; its leftover's grace (2.5 s) still ends
        // past the timeout (1 s + 2.5 s > 3 s), which is what is tested.
        c.timeout = Duration::from_millis(3000);
        c.grace = Duration::from_millis(2500);
        let o = sandbox::run_shell(
            &c,
            "(trap '' TERM; exec sleep 3951) > /dev/null 2>&1 & sleep 1; echo done",
            None,
        )
        .unwrap();
        assert_eq!(o.stdout.text, "done\n", "{:?}: {o:?}", c.isolation);
        assert!(!o.timed_out, "{:?}: reported as a timeout: {o:?}", c.isolation);
        assert!(o.success(), "{:?}: {o:?}", c.isolation);
        assert!(
            o.duration_ms >= 3400,
            "{:?}: the grace was not given ({} ms)",
            c.isolation,
            o.duration_ms
        );
        assert_no_leftovers("sleep 3951");
    }
}

// ---- The built view (issue 9): nothing of the host is reachable that the allowlist leaves out.

/// A name no other run uses.
fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{prefix}-{}-{nanos:08x}", std::process::id())
}

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Removes a path (file or tree) when dropped, so a failing test leaves nothing in /etc, /run
/// or the home directory.
struct Cleanup(Vec<PathBuf>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = fs::remove_dir_all(p).or_else(|_| fs::remove_file(p));
        }
    }
}

/// A Python one-liner that tries to connect to each Unix socket path and prints
/// `connected <path>` or `refused <path>`.
fn connect_script(paths: &[PathBuf]) -> String {
    let list: Vec<String> = paths.iter().map(|p| format!("\"{}\"", p.display())).collect();
    format!(
        "python3 -c 'import socket\nfor p in [{}]:\n    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect(p); print(\"connected\", p)\n    except OSError as e:\n        print(\"refused\", p, e.errno)'",
        list.join(", ")
    )
}

#[test]
fn strict_host_unix_sockets_are_unreachable_by_path() {
    use std::os::unix::net::UnixListener;
    let (_root, ws, _outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    // A server socket where host daemons keep theirs: the host's /tmp (tmux), /run and
    // /var/run (docker, dbus), and a directory in the home directory.
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/root".into());
    let mut dirs = vec![
        PathBuf::from("/tmp").join(unique("medin-sock")),
        home.join(unique(".medin-sock")),
    ];
    if is_root() {
        dirs.push(PathBuf::from("/run").join(unique("medin-sock")));
        if Path::new("/var/run").is_dir() {
            dirs.push(PathBuf::from("/var/run").join(unique("medin-sock")));
        }
    }
    let _cleanup = Cleanup(dirs.clone());
    // And one in a directory the command may read (a toolchain's, say): the view has it, with
    // its sockets covered.
    let readable = tempfile::tempdir().unwrap();
    let readable = readable.path().canonicalize().unwrap();
    let mut c = c;
    c.read_paths.push(readable.clone());
    dirs.push(readable.join("run"));
    let mut listeners = Vec::new();
    let mut paths = Vec::new();
    for d in &dirs {
        if fs::create_dir(d).is_err() {
            continue;
        }
        let p = d.join("server.sock");
        let l = UnixListener::bind(&p).unwrap();
        l.set_nonblocking(true).unwrap();
        listeners.push(l);
        paths.push(p);
    }
    assert!(!paths.is_empty());
    let script = connect_script(&paths);
    // Outside the sandbox every one of them answers: they are there to be reached.
    let mut plain = SandboxConfig::new(&ws);
    plain.isolation = Isolation::None;
    let o = sandbox::run_shell(&plain, &script, None).unwrap();
    assert_eq!(o.stdout.text.matches("connected").count(), paths.len(), "{o:?}");
    for l in &listeners {
        while l.accept().is_ok() {}
    }
    let o = sandbox::run_shell(&c, &script, None).unwrap();
    assert_eq!(o.stdout.text.matches("refused").count(), paths.len(), "{o:?}");
    assert!(!o.stdout.text.contains("connected"), "{o:?}");
    for (l, p) in listeners.iter().zip(&paths) {
        assert!(l.accept().is_err(), "{} got a connection from inside", p.display());
    }
}

#[test]
fn strict_host_devices_are_absent() {
    let (_root, ws, _outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    // The console, the kernel log, the screen memory, physical memory and the host's disks.
    let mut devices: Vec<String> = [
        "kmsg", "tty1", "tty0", "console", "vcs1", "vcsa1", "mem", "kmem", "port", "loop0",
    ]
    .iter()
    .map(|d| format!("/dev/{d}"))
    .collect();
    for e in fs::read_dir("/sys/block").into_iter().flatten().flatten() {
        devices.push(format!("/dev/{}", e.file_name().to_string_lossy()));
    }
    let script: String = devices
        .iter()
        .map(|d| {
            format!(
                "test -e {d} && echo present {d}; echo '<1>medin forged' 2>/dev/null > {d} && echo wrote {d}; \
                 head -c 1 {d} > /dev/null 2>&1 && echo read {d}; "
            )
        })
        .collect();
    let o = sandbox::run_shell(&c, &script, None).unwrap();
    for word in ["present", "wrote", "read"] {
        assert!(!o.stdout.text.contains(word), "{o:?}");
    }
}

#[test]
fn strict_private_dev_has_the_usual_nodes_and_they_work() {
    let (_root, ws, _outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    let o = sandbox::run_shell(
        &c,
        "ls -A /dev | tr '\\n' ' '; echo; \
         echo x > /dev/null && echo null-ok; head -c 3 /dev/zero | od -An -tx1; \
         head -c 16 /dev/urandom | wc -c; head -c 16 /dev/random | wc -c; \
         echo x > /dev/full || echo full-refuses; \
         true < /dev/tty || echo tty-no-terminal; \
         echo shm > /dev/shm/s && cat /dev/shm/s; readlink /dev/fd /dev/ptmx; \
         python3 -c 'import os, pty\nm, s = pty.openpty()\nos.write(s, b\"pty-ok\\n\")\nprint(os.read(m, 100).decode().strip())'; \
         ls -la /dev > /dev/null && echo ls-ok",
        None,
    )
    .unwrap();
    let lines: Vec<&str> = o.stdout.text.lines().map(str::trim).collect();
    assert_eq!(
        lines,
        [
            "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero",
            "null-ok",
            "00 00 00",
            "16",
            "16",
            "full-refuses",
            "tty-no-terminal",
            "shm",
            "/proc/self/fd",
            "pts/ptmx",
            "pty-ok",
            "ls-ok",
        ],
        "{o:?}"
    );
    // No node can be added.
    let o = sandbox::run_shell(&c, "echo x > /dev/medin-new; mknod /dev/medin-node c 1 3", None).unwrap();
    assert!(!o.success(), "{o:?}");
    assert!(!Path::new("/dev/medin-new").exists() && !Path::new("/dev/medin-node").exists());
}

#[test]
fn strict_etc_secrets_are_hidden_by_mode_name_and_content() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::UnixListener;
    if !is_root() || !strict_ok() {
        return; // planting files in /etc needs root
    }
    let (_root, ws, _outside) = dirs();
    let dir = PathBuf::from("/etc").join(unique("medin-test"));
    let _cleanup = Cleanup(vec![dir.clone()]);
    fs::create_dir(&dir).unwrap();
    let plant = |name: &str, body: &str, mode: u32| {
        let p = dir.join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, body).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
    };
    plant("visible.conf", "VISIBLE-OK\n", 0o644);
    plant("wg0.conf", "SECRET-BY-MODE\n", 0o600);
    plant("wg0.key", "SECRET-BY-NAME\n", 0o644);
    plant("ipsec.secrets", "SECRET-BY-NAME-2\n", 0o644);
    plant(
        "tls.pem",
        "-----BEGIN PRIVATE KEY-----\nSECRET-BY-CONTENT\n-----END PRIVATE KEY-----\n",
        0o644,
    );
    plant("closed/inner.conf", "SECRET-IN-A-CLOSED-DIR\n", 0o644);
    fs::set_permissions(dir.join("closed"), fs::Permissions::from_mode(0o700)).unwrap();
    let sock = dir.join("control.sock");
    let listener = UnixListener::bind(&sock).unwrap();
    listener.set_nonblocking(true).unwrap();
    // A fresh process: /etc is read once per process, and this one may have read it already.
    let d = dir.display();
    let script = format!(
        "cat {d}/visible.conf; for f in wg0.conf wg0.key ipsec.secrets tls.pem closed/inner.conf; do cat {d}/$f; done; \
         ls -la {d}/closed; {}",
        connect_script(std::slice::from_ref(&sock))
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_medin"))
        .args(["exec", "--isolation", "strict", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let stdout = r["stdout"]["text"].as_str().unwrap();
    let stderr = r["stderr"]["text"].as_str().unwrap();
    assert!(stdout.contains("VISIBLE-OK"), "{r}");
    assert!(!stdout.contains("SECRET") && !stderr.contains("SECRET"), "{r}");
    assert!(stdout.contains("refused"), "{r}");
    assert!(listener.accept().is_err(), "the socket in /etc got a connection");
    for f in ["wg0.conf", "wg0.key", "ipsec.secrets", "tls.pem", "closed/inner.conf"] {
        let line = stderr.lines().find(|l| l.contains(f)).unwrap_or_default();
        assert!(refused(line), "{f} was not refused: {r}");
    }
}

#[test]
fn strict_host_tmp_var_home_and_root_are_invisible() {
    let (_root, ws, _outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/root".into());
    let mut planted = vec![
        PathBuf::from("/tmp").join(unique("medin-visible")),
        PathBuf::from("/var/tmp").join(unique("medin-visible")),
        home.join(unique(".medin-visible")),
    ];
    if is_root() {
        planted.push(PathBuf::from("/root").join(unique(".medin-visible")));
    }
    planted.dedup();
    let _cleanup = Cleanup(planted.clone());
    for p in &planted {
        fs::write(p, "HOST-FILE").unwrap();
    }
    let mut script: String = planted
        .iter()
        .map(|p| format!("test -e {0} && echo seen {0}; cat {0} 2>/dev/null; ", p.display()))
        .collect();
    // Host trees that the view leaves out entirely.
    for tree in [
        "/home",
        "/root",
        "/srv",
        "/mnt",
        "/media",
        "/boot",
        "/var/lib",
        "/var/log",
        "/var/cache",
    ] {
        script.push_str(&format!("test -e {tree} && echo seen {tree}; "));
    }
    let o = sandbox::run_shell(&c, &script, None).unwrap();
    assert!(!o.stdout.text.contains("seen"), "{o:?}");
    assert!(!o.stdout.text.contains("HOST-FILE"), "{o:?}");
}

/// Top-level names of the host's root that the view does not have.
fn host_only_root_entries() -> Vec<String> {
    let view = [
        "bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "opt", "proc", "run", "sbin", "sys", "tmp", "usr",
        "var",
    ];
    fs::read_dir("/")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !view.contains(&n.as_str()) && n.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)))
        .collect()
}

#[test]
fn strict_cwd_cannot_walk_out_of_the_new_root() {
    // std enters the working directory before the sandbox's hooks run; after the pivot the
    // process must not keep a directory of the detached host tree, where `..` leads anywhere.
    let (_root, ws, _outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    let host_only = host_only_root_entries();
    assert!(!host_only.is_empty(), "this host's / has nothing the view leaves out");
    fs::create_dir_all(ws.join("a/b")).unwrap();
    let tests: String = host_only
        .iter()
        .map(|n| format!("test -e {n} && echo escaped-to {n}; "))
        .collect();
    let script = format!(
        "pwd; cd ../../../../../../../../../..; pwd; {tests} ls -a | tr '\\n' ' '; echo; \
         cd /; cd ..; {tests} pwd -P"
    );
    let o = sandbox::run_shell(&c, &script, Some(Path::new("a/b"))).unwrap();
    assert!(!o.stdout.text.contains("escaped-to"), "{o:?}");
    let lines: Vec<&str> = o.stdout.text.lines().collect();
    // It starts where it was asked to, at the workspace's host path, and `..` ends at the
    // view's root.
    assert_eq!(lines.first().copied(), ws.join("a/b").to_str(), "{o:?}");
    assert_eq!(lines.get(1), Some(&"/"), "{o:?}");
    assert_eq!(lines.last(), Some(&"/"), "{o:?}");
    for n in &host_only {
        assert!(!lines[2].split(' ').any(|e| e == n), "{n} is listed: {o:?}");
    }
}

#[test]
fn strict_proc_root_cwd_and_fd_links_stay_in_the_view() {
    use std::os::unix::ffi::OsStrExt;
    let (_root, ws, outside) = dirs();
    let Some(c) = strict(&ws) else { return };
    let host_only = host_only_root_entries();
    assert!(!host_only.is_empty(), "this host's / has nothing the view leaves out");
    // A directory the harness holds open without O_CLOEXEC (as a supervisor might).
    let path = std::ffi::CString::new(outside.as_os_str().as_bytes()).unwrap();
    // SAFETY: open/dup2/close on descriptors this test owns.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY) };
    assert!(fd >= 0);
    let high = 243;
    assert_eq!(unsafe { libc::dup2(fd, high) }, high);
    unsafe { libc::close(fd) };
    let mut script = String::new();
    for n in &host_only {
        for base in [
            "/proc/self/root",
            "/proc/1/root",
            "/proc/self/cwd/../../../../../..",
            "/proc/1/cwd/../../../..",
        ] {
            script.push_str(&format!("test -e {base}/{n} && echo escaped {base}/{n}; "));
        }
    }
    script.push_str(&format!(
        "ls /proc/self/fd/{high}/ 2>/dev/null && echo listed-inherited; cat /proc/self/fd/{high}/victim.txt 2>/dev/null; \
         cat /proc/1/root/etc/hostname 2>/dev/null && echo read-reaper-root; ls /proc/self/fd | tr '\\n' ' '"
    ));
    let o = sandbox::run_shell(&c, &script, None).unwrap();
    unsafe { libc::close(high) };
    assert!(!o.stdout.text.contains("escaped"), "{o:?}");
    assert!(!o.stdout.text.contains("listed-inherited"), "{o:?}");
    assert!(!o.stdout.text.contains("original"), "{o:?}");
    assert!(!o.stdout.text.contains("read-reaper-root"), "{o:?}");
    // Only stdin, stdout, stderr and the descriptor `ls` opened for the listing.
    assert_eq!(o.stdout.text.trim_end().rsplit('\n').next(), Some("0 1 2 3"), "{o:?}");
}

#[test]
fn strict_write_paths_are_writable_and_nothing_beside_them() {
    let (root, ws, outside) = dirs();
    let Some(mut c) = strict(&ws) else { return };
    let reports = root.path().join("reports");
    fs::create_dir(&reports).unwrap();
    let reports = reports.canonicalize().unwrap();
    c.write_paths.push(reports.clone());
    let cmd = format!(
        // The report folder's parent is only a mount point in the view (under its private /tmp):
        // what is written there never reaches the host.
        "echo ok > {r}/result.json && ! echo no > {o}/victim.txt && ! ls {o} && (echo no > {r}/../escape.txt; true)",
        r = reports.display(),
        o = outside.display()
    );
    let o = sandbox::run_shell(&c, &cmd, None).unwrap();
    assert!(o.success(), "{o:?}");
    assert_eq!(fs::read_to_string(reports.join("result.json")).unwrap(), "ok\n");
    assert!(!root.path().join("escape.txt").exists());
    assert_outside_intact(&outside);
}

/// Escapes that leave everything a search can see: their session (`setsid`), their
/// environment (`env -i`: no tag), their parent (a double fork), and a "pid hopper" that forks
/// and exits in a loop, so no pid of it lives long. Each has a marker in its command line.
fn escapes(tag: &str) -> String {
    format!(
        "setsid env -i sh -c 'exec sleep {tag}1' > /dev/null 2>&1 & \
         (env -i sh -c '(exec sleep {tag}2) &' > /dev/null 2>&1 &) & \
         (setsid env -i sh -c ': hop{tag}; h() {{ sleep 0.005; h & exit 0; }}; h' > /dev/null 2>&1 &) & \
         (setsid env -i sh -c ': fasthop{tag}; h() {{ h & exit 0; }}; h' > /dev/null 2>&1 &) & \
         sleep 0.3; echo started"
    )
}

fn assert_escapes_ended(tag: &str) {
    for needle in [
        format!("sleep {tag}1"),
        format!("sleep {tag}2"),
        format!("hop{tag}"),
        format!("fasthop{tag}"),
    ] {
        assert_no_leftovers(&needle);
    }
}

#[test]
fn process_daemons_that_leave_session_environment_and_parent_do_not_outlive_the_command() {
    // The default `process` level: no cgroup. The command's guardian is a child subreaper, so
    // every escapee stays its descendant and is ended with the command.
    let (_root, ws, _outside) = dirs();
    let mut c = SandboxConfig::new(&ws);
    c.grace = Duration::from_millis(300);
    assert_eq!(c.cgroup, None);
    let o = sandbox::run_shell(&c, &escapes("3971"), None).unwrap();
    assert_eq!(o.stdout.text, "started\n", "{o:?}");
    assert!(o.success(), "{o:?}");
    assert!(o.duration_ms < 5000, "{o:?}");
    assert_escapes_ended("3971");
}

#[test]
fn escapees_of_a_command_that_times_out_do_not_outlive_it() {
    let (_root, ws, _outside) = dirs();
    let mut c = SandboxConfig::new(&ws);
    c.grace = Duration::from_millis(300);
    c.timeout = Duration::from_millis(1500);
    let o = sandbox::run_shell(&c, &format!("{}; sleep 60", escapes("3972")), None).unwrap();
    assert!(o.timed_out, "{o:?}");
    assert_escapes_ended("3972");
}

#[test]
fn isolation_none_commands_do_not_outlive_their_command_either() {
    let (_root, ws, _outside) = dirs();
    let mut c = SandboxConfig::new(&ws);
    c.isolation = Isolation::None;
    c.grace = Duration::from_millis(300);
    let o = sandbox::run_shell(&c, &escapes("3973"), None).unwrap();
    assert_eq!(o.stdout.text, "started\n", "{o:?}");
    assert_escapes_ended("3973");
}

#[test]
fn usage_and_exit_status_come_through_the_guardian() {
    let (_root, ws, _outside) = dirs();
    let c = SandboxConfig::new(&ws);
    let o = sandbox::run_shell(&c, "(setsid sleep 5 &); exit 7", None).unwrap();
    assert_eq!(o.exit, ExitKind::Code(7), "{o:?}");
    let o = sandbox::run_shell(&c, "kill -USR1 $$", None).unwrap();
    assert_eq!(o.exit, ExitKind::Signal(10), "{o:?}");
    let o = sandbox::run_shell(&c, "head -c 30000000 /dev/zero | tail -c 1 > /dev/null", None).unwrap();
    assert!(o.success(), "{o:?}");
    // The tree's peak RSS, not the harness's (the guardian shares the harness's memory).
    assert!(o.usage.max_rss_kib > 0 && o.usage.max_rss_kib < 200_000, "{o:?}");
}

#[test]
fn strict_credential_files_in_a_toolchain_directory_are_covered() {
    // A toolchain read path such as ~/.cargo holds credentials.toml beside the binaries.
    let (root, ws, _outside) = dirs();
    let Some(mut c) = strict(&ws) else { return };
    let home = root.path().join("cargo-home");
    fs::create_dir_all(home.join("bin")).unwrap();
    fs::write(home.join("bin/tool"), "#!/bin/sh\necho tool-ok\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(home.join("bin/tool"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(
        home.join("credentials.toml"),
        "[registry]\ntoken = \"TOKEN-DO-NOT-LEAK\"\n",
    )
    .unwrap();
    fs::write(
        home.join(".git-credentials"),
        "https://u:TOKEN-DO-NOT-LEAK@example.com\n",
    )
    .unwrap();
    fs::write(home.join("secrets.py"), "# a module, not a secret\n").unwrap();
    let home = home.canonicalize().unwrap();
    c.read_paths.push(home.clone());
    let h = home.display();
    let o = sandbox::run_shell(
        &c,
        &format!("{h}/bin/tool; cat {h}/credentials.toml {h}/.git-credentials; cat {h}/secrets.py"),
        None,
    )
    .unwrap();
    assert!(o.stdout.text.starts_with("tool-ok\n"), "{o:?}");
    assert!(!o.stdout.text.contains("TOKEN-DO-NOT-LEAK"), "{o:?}");
    assert!(o.stdout.text.contains("a module, not a secret"), "{o:?}");
}

#[test]
fn a_very_deep_tree_in_tmpdir_or_the_workspace_does_not_crash_the_cleanup() {
    // 40,000 nested directories made in a second: a recursive removal overflows the thread's
    // stack and aborts the harness (and the next one that reclaims the folder).
    let (_root, ws, _outside) = dirs();
    let mut cfgs = vec![process(&ws)];
    cfgs.extend(strict(&ws));
    for mut c in cfgs {
        // Under strict each level costs more (Landlock walks the path): whatever depth the
        // command reaches before its timeout, the cleanup must survive it.
        c.timeout = Duration::from_secs(8);
        let o = sandbox::run_shell(
            &c,
            "cd \"$TMPDIR\" && python3 -c \"import os\nfor _ in range(40000):\n    os.mkdir('d'); os.chdir('d')\" && echo built",
            None,
        )
        .unwrap();
        assert!(o.stdout.text.contains("built") || o.timed_out, "{o:?}");
    }
    // The harness is still here: a later run of the same tree is fine too.
    let o = sandbox::run_shell(&process(&ws), "true", None).unwrap();
    assert!(o.success());
}

#[test]
fn strict_root_gets_no_real_time_priority_and_no_way_past_file_modes() {
    let (root, ws, _outside) = dirs();
    let Some(mut c) = strict(&ws) else { return };
    // Another user's private directory inside a tree the view shows (a read path here).
    let tree = root.path().join("tree");
    let private = tree.join("private-of-another");
    fs::create_dir_all(&private).unwrap();
    fs::write(private.join("data"), "NOT-YOURS\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&private, fs::Permissions::from_mode(0o700)).unwrap();
    // SAFETY: chown(2) on a path we made; as root it succeeds, otherwise the test says so.
    let c_path = std::ffi::CString::new(private.as_os_str().as_encoded_bytes()).unwrap();
    if unsafe { libc::chown(c_path.as_ptr(), 65534, 65534) } != 0 {
        eprintln!("not root: the file-mode half of this test is skipped");
    }
    c.read_paths.push(tree.canonicalize().unwrap());
    let o = sandbox::run_shell(
        &c,
        &format!(
            "chrt -f 99 true && echo got-rt; cat {}/data 2>/dev/null; echo done",
            private.canonicalize().unwrap().display()
        ),
        None,
    )
    .unwrap();
    assert!(o.stdout.text.contains("done"), "{o:?}");
    assert!(
        !o.stdout.text.contains("got-rt"),
        "real-time scheduling was granted: {o:?}"
    );
    assert!(
        !o.stdout.text.contains("NOT-YOURS"),
        "a 0700 directory of another user was read: {o:?}"
    );
}

//! The harness outlives nothing (issue 9): a real `medin run` killed with SIGKILL in the middle
//! of a run takes everything it started with it — agents and the daemons they forked,
//! `process` and `strict` commands and their escapees (`setsid`, `env -i`, double forks, a pid
//! hopper) — and a later medin process takes back the cgroups, temp directories and
//! workspaces the dead one left, while a live run's stay untouched.
//!
//! Each test uses a private `TMPDIR`, so temp directories are counted without interference;
//! cgroups are counted by the dead process's pid in their names.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::pids_with;

/// The agent: reads the task, forks a daemon that leaves its session and clears its
/// environment, asks for the prompt as one bash call, then waits for medin forever.
const AGENT: &str = r#"
import json, subprocess, sys
tag = sys.argv[1]
task = json.loads(sys.stdin.readline())
subprocess.Popen(["sh", "-c", "setsid env -i sh -c 'exec sleep %s.91' > /dev/null 2>&1 &" % tag])
print(json.dumps({"type": "tool_call", "id": "1", "tool": "bash",
                  "input": {"command": task["prompt"], "timeout_ms": 600000}}), flush=True)
for line in sys.stdin:
    pass
"#;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn strict_ok() -> bool {
    medin::internal::sandbox::probe().strict.is_ok()
}

/// Commands that escape every way a search by group or tag can miss; every process carries
/// `tag` in its command line.
fn escapes(tag: &str, n: u32) -> String {
    format!(
        "setsid env -i sh -c 'exec sleep {tag}.{n}1' > /dev/null 2>&1 & \
         (env -i sh -c '(exec sleep {tag}.{n}2) &' > /dev/null 2>&1 &) & \
         (setsid env -i sh -c ': hop{tag}; h() {{ sleep 0.005; h & exit 0; }}; h' > /dev/null 2>&1 &) & \
         sleep {tag}.{n}3"
    )
}

/// A suite whose tasks start long-lived processes at `process` level (one of them with a
/// memory cgroup) and, where it can be had, at `strict` level. Returns it and how many
/// `sleep <tag>.` processes run once every task has started.
fn suite(tag: &str) -> (tempfile::TempDir, usize) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        &root.join("medin.yaml"),
        "suites: [golden]\nagent: oracle\noutput: target/medin\n",
    );
    write(&root.join("agent.py"), AGENT);
    let task = |isolation: &str, limits: &str, prompt: String| {
        format!(
            "description: long-lived processes at {isolation}\n\
             isolation: {isolation}\n\
             agent: {{ process: {{ command: \"python3 ../agent.py {tag}\" }} }}\n\
             limits: {{ timeout: 10m, command_timeout: 10m{limits} }}\n\
             prompt: \"{}\"\n\
             expect: {{ outcome: success }}\n",
            prompt.replace('\\', "\\\\").replace('"', "\\\"")
        )
    };
    write(&root.join("golden/process.yaml"), &task("process", "", escapes(tag, 1)));
    write(
        &root.join("golden/memory.yaml"),
        &task("process", ", memory: 256MiB", escapes(tag, 2)),
    );
    // Per task: three sleeps of its own, and its agent's daemon.
    let mut sleepers = 2 * 4;
    if strict_ok() {
        write(&root.join("golden/strict.yaml"), &task("strict", "", escapes(tag, 3)));
        sleepers += 4;
    }
    (dir, sleepers)
}

/// A running `medin`, killed (SIGKILL) when dropped, so a failing test leaves no run behind.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn medin(args: &[&str], cwd: &Path, tmp: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_medin"));
    c.args(args)
        .current_dir(cwd)
        .env("TMPDIR", tmp)
        .env_remove("MEDIN_AGENT")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// Live `sleep <tag>.…` processes (the shells that started them mention the tag too).
fn sleepers(tag: &str) -> usize {
    let prefix = format!("sleep\0{tag}.");
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            let cmd = fs::read(e.path().join("cmdline")).unwrap_or_default();
            let stat = fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
            !zombie && cmd.starts_with(prefix.as_bytes())
        })
        .count()
}

/// Waits until `n` sleepers of `tag` run (and its hopper hops), or fails.
fn wait_for_processes(tag: &str, n: usize, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if sleepers(tag) >= n && !pids_with(&format!("hop{tag}")).is_empty() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("medin ended ({status}) before every task had started");
        }
        assert!(
            Instant::now() < deadline,
            "only {} of {n} `sleep {tag}.` processes started",
            sleepers(tag)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_gone_within(needle: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while !pids_with(needle).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<String> = pids_with(needle)
        .into_iter()
        .map(|p| {
            let cmd = fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            format!("{p}: {}", String::from_utf8_lossy(&cmd).replace('\0', " "))
        })
        .collect();
    assert!(left.is_empty(), "still alive after {within:?}: {left:#?}");
}

/// Directories (up to `depth` below `root`) whose name starts with `prefix`.
fn dirs_named(root: &Path, prefix: &str, depth: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(root) else { return out };
    for e in entries.flatten() {
        let path = e.path();
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if e.file_name().to_string_lossy().starts_with(prefix) {
            out.push(path);
        } else if depth > 0 {
            out.extend(dirs_named(&path, prefix, depth - 1));
        }
    }
    out
}

/// What a medin process with pid `pid` has on the host: (cgroup dirs, temp entries, claimed
/// workspaces under `suite`).
fn leftovers(pid: u32, tmp: &Path, suite: &Path) -> (usize, usize, usize) {
    let prefix = format!("medin-{pid}.");
    let cgroups = ["pids", "memory", "unified"]
        .iter()
        .map(|h| dirs_named(&Path::new("/sys/fs/cgroup").join(h), &prefix, 4).len())
        .sum();
    let temp = fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .count();
    let owner = fs::read_dir(suite.join("target/medin/runs"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|run| dirs_named(&run.path(), "attempt-", 3))
        .filter(|a| {
            fs::read_to_string(a.join(".workspace.medin-owner")).is_ok_and(|t| t.starts_with(&format!("{pid}.")))
        })
        .filter(|a| a.join("workspace").is_dir())
        .count();
    (cgroups, temp, owner)
}

#[test]
fn kill_9_of_medin_ends_everything_it_started_and_a_later_run_reclaims_what_it_left() {
    let tag = format!("5{:04}", std::process::id() % 10_000);
    let tmp = tempfile::tempdir().unwrap();
    let (dead_suite, n_sleepers) = suite(&tag);
    let mut dead = Running(
        medin(&["run", "--jobs", "3"], dead_suite.path(), tmp.path())
            .spawn()
            .unwrap(),
    );
    wait_for_processes(&tag, n_sleepers, &mut dead.0);

    // A second run that stays alive: its resources must survive the reclaim.
    let live_tag = format!("6{:04}", std::process::id() % 10_000);
    let (live_suite, live_sleepers) = suite(&live_tag);
    let mut live = Running(
        medin(&["run", "--jobs", "3"], live_suite.path(), tmp.path())
            .spawn()
            .unwrap(),
    );
    wait_for_processes(&live_tag, live_sleepers, &mut live.0);

    let (cg, temp, ws) = leftovers(dead.0.id(), tmp.path(), dead_suite.path());
    let live_before = leftovers(live.0.id(), tmp.path(), live_suite.path());

    dead.0.kill().unwrap(); // SIGKILL
    dead.0.wait().unwrap();
    // Agents, their daemons, commands at every level and their escapees: all gone at once.
    assert_gone_within(&tag, Duration::from_secs(2));
    // The dead process could not clean up after itself.
    assert!(
        temp >= 3 && ws >= 2,
        "the running medin had temp dirs and claimed workspaces: {temp} {ws}"
    );
    let caps = medin::internal::sandbox::probe();
    if caps.memory_cgroup || caps.process_limit {
        assert!(cg >= 1, "the memory-limited task ran in a cgroup");
    }
    assert_eq!(leftovers(dead.0.id(), tmp.path(), dead_suite.path()), (cg, temp, ws));

    // A later medin process takes it all back, and leaves the live run alone.
    let later = medin(&["exec", "--", "true"], tmp.path(), tmp.path()).status().unwrap();
    assert!(later.success());
    assert_eq!(leftovers(dead.0.id(), tmp.path(), dead_suite.path()), (0, 0, 0));
    let note = dirs_named(&dead_suite.path().join("target/medin/runs"), "attempt-", 4)
        .into_iter()
        .find(|a| a.join("workspace-reclaimed.txt").exists());
    let note = note.expect("a reclaimed attempt says why its workspace is gone");
    assert!(note.join("receipts.jsonl").exists() || note.join("transcript.jsonl").exists());
    assert_eq!(leftovers(live.0.id(), tmp.path(), live_suite.path()), live_before);
    assert_eq!(
        sleepers(&live_tag),
        live_sleepers,
        "the live run's processes were touched"
    );

    live.0.kill().unwrap();
    live.0.wait().unwrap();
    assert_gone_within(&live_tag, Duration::from_secs(2));
    let later = medin(&["exec", "--", "true"], tmp.path(), tmp.path()).status().unwrap();
    assert!(later.success());
    assert_eq!(leftovers(live.0.id(), tmp.path(), live_suite.path()), (0, 0, 0));
}

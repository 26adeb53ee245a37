//! Fixed paths (issue 13, point 2): a task's workspace at `/app`, its folders read-only at
//! `/tests`, a writable output folder at `/logs/verifier` — under `strict` only.
//!
//! The first half drives the sandbox directly (`sandbox::run_shell`, `spawn_agent`) and checks
//! what a command sees from inside: its working directory, `HOME` and `PWD`; that the workspace
//! is writable at `/app` (so the Landlock rule on the workspace's inode holds through the bind)
//! and its host path is gone from the view; that a read-only mount cannot be changed by any
//! means; that the walls hold exactly as they do without a root. The second half runs the
//! `medin` binary on small suites: commands, validators and the file tools at `/app`,
//! hostile paths through `/app` refused like workspace ones, and a root where `strict`
//! cannot be had ending the trial as an infrastructure error.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use medin::internal::sandbox::{
    self, spawn_agent, FixedMount, FixedPath, Isolation, MountAccess, SandboxConfig, SandboxError,
};
use support::{medin, suite_with, text};

fn strict_ok() -> bool {
    sandbox::probe().strict.is_ok()
}

fn fixed(text: &str) -> FixedPath {
    FixedPath::parse(text).unwrap()
}

/// A workspace and, beside it, a folder for `/tests` and one for `/logs/verifier`.
struct Layout {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    tests: PathBuf,
    logs: PathBuf,
}

fn layout() -> Layout {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (ws, tests, logs) = (root.join("ws"), root.join("tests"), root.join("logs"));
    for d in [&ws, &tests, &logs] {
        fs::create_dir(d).unwrap();
    }
    fs::write(tests.join("test_a.sh"), "echo from-tests\n").unwrap();
    fs::write(ws.join("seed.txt"), "seed\n").unwrap();
    Layout {
        _dir: dir,
        ws,
        tests,
        logs,
    }
}

/// A strict config with the workspace at `/app`, `/tests` read-only, `/logs/verifier` writable.
fn strict_at_app(l: &Layout) -> SandboxConfig {
    let mut c = SandboxConfig::new(&l.ws);
    c.isolation = Isolation::Strict;
    c.timeout = Duration::from_secs(20);
    c.grace = Duration::from_millis(300);
    c.root = Some(fixed("/app"));
    c.mounts = vec![
        FixedMount {
            at: fixed("/tests"),
            source: l.tests.clone(),
            access: MountAccess::ReadOnly,
        },
        FixedMount {
            at: fixed("/logs/verifier"),
            source: l.logs.clone(),
            access: MountAccess::ReadWrite,
        },
    ];
    c
}

fn run(cfg: &SandboxConfig, command: &str, cwd: Option<&str>) -> (bool, String, String) {
    let o = sandbox::run_shell(cfg, command, cwd.map(Path::new)).expect("the sandbox runs the command");
    (o.success(), o.stdout.text, o.stderr.text)
}

#[test]
fn a_command_starts_in_app_with_home_and_pwd_there_and_writes_the_workspace() {
    if !strict_ok() {
        return;
    }
    let l = layout();
    let cfg = strict_at_app(&l);
    let (ok, out, err) = run(&cfg, "pwd; echo \"$HOME $PWD\"; /bin/pwd -P; cat seed.txt", None);
    assert!(ok, "{err}");
    assert_eq!(out, "/app\n/app /app\n/app\nseed\n");
    // Written at /app, found in the workspace: the Landlock rule on the workspace's inode
    // holds through the bind (without it, Landlock would deny the write).
    let (ok, _, err) = run(
        &cfg,
        "echo hi > /app/out.txt && mkdir -p /app/sub/deep && cd /app && ls",
        None,
    );
    assert!(ok, "{err}");
    assert_eq!(fs::read_to_string(l.ws.join("out.txt")).unwrap(), "hi\n");
    assert!(l.ws.join("sub/deep").is_dir());
    // A workspace-relative `cwd` is below /app.
    let (ok, out, err) = run(&cfg, "pwd; echo $PWD", Some("sub/deep"));
    assert!(ok, "{err}");
    assert_eq!(out, "/app/sub/deep\n/app/sub/deep\n");
    // git stops at /app's parent.
    let (_, out, _) = run(&cfg, "echo $GIT_CEILING_DIRECTORIES", None);
    assert_eq!(out, "/\n");
}

#[test]
fn the_host_path_of_the_workspace_is_not_in_the_view() {
    if !strict_ok() {
        return;
    }
    let l = layout();
    let cfg = strict_at_app(&l);
    let host = l.ws.display().to_string();
    let parent = l.ws.parent().unwrap().display().to_string();
    let (_, out, _) = run(
        &cfg,
        &format!("test -e '{host}' && echo host-visible; test -e '{parent}' && echo parent-visible; echo done"),
        None,
    );
    assert_eq!(out, "done\n", "the run folder's host path must not show: {out}");
    // Nothing in the environment names it either.
    let (_, out, _) = run(&cfg, "env", None);
    assert!(!out.contains(&host), "{out}");
}

#[test]
fn a_read_only_mount_cannot_be_changed_by_any_means() {
    if !strict_ok() {
        return;
    }
    let l = layout();
    let cfg = strict_at_app(&l);
    let (ok, out, err) = run(&cfg, "cat /tests/test_a.sh && sh /tests/test_a.sh", None);
    assert!(ok, "{err}");
    assert_eq!(out, "echo from-tests\nfrom-tests\n");
    for attack in [
        "echo x > /tests/test_a.sh",
        "echo x >> /tests/test_a.sh",
        "touch /tests/new",
        "rm -f /tests/test_a.sh",
        "mv /tests/test_a.sh /tests/b.sh",
        "mv /tests/test_a.sh /app/stolen.sh",
        "chmod 777 /tests/test_a.sh",
        "mkdir /tests/d",
        "ln -s /etc /tests/etc",
        "ln /tests/test_a.sh /app/hard",
        "truncate -s 0 /tests/test_a.sh",
        "mount -o remount,rw /tests",
        "umount /tests",
        "cd /tests && rm -rf ./*",
    ] {
        let (ok, _, _) = run(&cfg, attack, None);
        assert!(!ok, "`{attack}` must fail");
    }
    assert_eq!(
        fs::read_to_string(l.tests.join("test_a.sh")).unwrap(),
        "echo from-tests\n"
    );
    assert_eq!(fs::read_dir(&l.tests).unwrap().count(), 1);
    // (Copying it out is reading it, which is allowed: `mv` to /app copies, then fails to unlink.)
    assert!(!l.ws.join("hard").exists());
    // The writable output folder keeps what commands write, in its host folder.
    let (ok, _, err) = run(&cfg, "echo 0.75 > /logs/verifier/reward.txt", None);
    assert!(ok, "{err}");
    assert_eq!(fs::read_to_string(l.logs.join("reward.txt")).unwrap(), "0.75\n");
}

#[test]
fn the_walls_hold_at_app_as_they_do_at_the_host_path() {
    if !strict_ok() {
        return;
    }
    let l = layout();
    let at_app = strict_at_app(&l);
    let mut at_host = SandboxConfig::new(&l.ws);
    at_host.isolation = Isolation::Strict;
    at_host.timeout = Duration::from_secs(20);
    // Each escape from the workspace: the same answer with and without a root.
    for (attack, _) in [
        ("cat /etc/shadow", "a hidden /etc secret"),
        ("ls /root /home", "absent host trees"),
        ("echo x > /etc/medin-pwned", "a write outside"),
        ("echo x > /usr/medin-pwned", "a write in a system tree"),
        ("echo x > /medin-pwned", "a write at the view's root"),
        ("ln -s /etc e && echo x > e/medin-pwned", "a write through a link"),
        ("cd /app/.. && echo x > medin-pwned", "a write above /app"),
        ("ln seed.txt /tmp/hard", "a hard link out (REFER)"),
    ] {
        let (ok_app, _, _) = run(&at_app, attack, None);
        let (ok_host, _, _) = run(&at_host, attack, None);
        assert!(!ok_app, "`{attack}` must fail at /app");
        assert_eq!(ok_app, ok_host, "`{attack}`: same answer at /app and at the host path");
        let _ = fs::remove_file(l.ws.join("e"));
    }
    assert!(l.ws.join("seed.txt").is_file());
    assert!(!Path::new("/etc/medin-pwned").exists() && !Path::new("/medin-pwned").exists());
    // What was allowed still is: the private TMPDIR and /tmp.
    let (ok, _, err) = run(&at_app, "echo t > \"$TMPDIR/x\" && echo t > /tmp/y && cat /tmp/y", None);
    assert!(ok, "{err}");
}

#[test]
fn fixed_paths_need_strict_and_are_never_run_at_the_host_path() {
    let l = layout();
    for level in [Isolation::Process, Isolation::None] {
        let mut cfg = strict_at_app(&l);
        cfg.isolation = level;
        let e = sandbox::run_shell(&cfg, "echo ran > ran.txt", None).unwrap_err();
        assert!(matches!(e, SandboxError::NeedsStrict { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("/app") && msg.contains("strict") && msg.contains(level.as_str()),
            "{msg}"
        );
        assert!(sandbox::check_config(&cfg).is_err());
        assert!(spawn_agent(&cfg, "echo ran > ran.txt", &l.ws).is_err());
        assert!(!l.ws.join("ran.txt").exists(), "nothing ran at the host path");
    }
}

#[test]
fn fixed_paths_that_overlap_the_hosts_own_places_are_refused_by_name() {
    if !strict_ok() {
        return;
    }
    let l = layout();
    // A read path at or below the fixed root: its mount point would be made inside the
    // workspace's bind.
    // (A folder of the build's own temp dir, which lies outside /tmp, where no fixed path may go.)
    let tool = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let tool = tool.path().canonicalize().unwrap();
    let first = tool
        .components()
        .nth(1)
        .unwrap()
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    if let Ok(over) = FixedPath::parse(&format!("/{first}")) {
        let mut cfg = strict_at_app(&l);
        cfg.root = Some(over.clone());
        cfg.read_paths.push(tool.clone());
        cfg.mounts.clear();
        let e = sandbox::run_shell(&cfg, "true", None).unwrap_err().to_string();
        assert!(e.contains("overlap") && e.contains(&over.to_string()), "{e}");
        // The same folder as a mount's source is fine: only where things are shown matters.
        let mut cfg = strict_at_app(&l);
        cfg.mounts[0].source = tool.clone();
        assert!(sandbox::run_shell(&cfg, "ls /tests", None).unwrap().success());
    }
    // Two fixed paths in one another.
    let mut cfg = strict_at_app(&l);
    cfg.mounts[0].at = fixed("/app/tests");
    let e = sandbox::run_shell(&cfg, "true", None).unwrap_err().to_string();
    assert!(e.contains("/app/tests") && e.contains("overlap"), "{e}");
}

#[test]
fn a_strict_agent_sees_the_workspace_at_app() {
    if !strict_ok() {
        return;
    }
    let l = layout();
    let mut cfg = strict_at_app(&l);
    cfg.network = true;
    let agent_dir = l.ws.parent().unwrap().join("agent");
    fs::create_dir(&agent_dir).unwrap();
    let mut child = spawn_agent(
        &cfg,
        "cat /app/seed.txt; cat /tests/test_a.sh; echo agent > /app/agent.txt; test -e '/app' && echo ok",
        &agent_dir,
    )
    .unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.take_stdout().unwrap(), &mut out).unwrap();
    child.kill_tree(Duration::from_millis(200)).unwrap();
    assert_eq!(out, "seed\necho from-tests\nok\n");
    assert_eq!(fs::read_to_string(l.ws.join("agent.txt")).unwrap(), "agent\n");
}

// ------------------------------------------------------------------ whole tasks, through medin

const SUITE: &str = "suites: [golden]\noutput: out\n";

/// The attempt's receipts, as text.
fn receipts(dir: &Path, task: &str) -> String {
    let run = fs::read_dir(dir.join("out/runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    fs::read_to_string(run.join(format!("golden/{task}/attempt-1/receipts.jsonl"))).unwrap()
}

#[test]
fn commands_validators_and_file_tools_work_at_app() {
    if !strict_ok() {
        return;
    }
    let task = r#"description: a task written against /app, as benchmark tasks are
agent: oracle
environment: { root: /app, mounts: { /tests: tests }, outputs: [/logs/verifier] }
setup: [ "test \"$(pwd)\" = /app && echo setup > /app/setup.txt && mkdir /app/sub" ]
solution:
  - bash: pwd
  - bash: echo hi > /app/out.txt
  - bash: cd /app && ls
  - write_file: { path: /app/a.txt, content: "from a tool\n" }
  - read_file: /app/a.txt
  - edit_file: { path: /app/a.txt, old_string: "from", new_string: "by" }
  - list_dir: /app
  - bash: { command: pwd, cwd: /app/sub }
  - bash: cp /tests/check.sh /app/ && sh /tests/check.sh > /logs/verifier/log.txt
  - verify: { type: file_exists, target: /app/out.txt }
  - final: { result: success, message: done }
expect:
  outcome: success
  files:
    out.txt: { equals: "hi\n" }
    a.txt: { equals: "by a tool\n" }
    setup.txt: { equals: "setup\n" }
    check.sh: { exists: true }
  receipts:
    - { tool: write_file, type: file_write, source: a.txt }
    - { tool: read_file, type: file_read, source: a.txt }
  validate:
    - command: "grep -qx hi /app/out.txt && test \"$(pwd)\" = /app && test \"$HOME\" = /app"
    - command: "sh /tests/check.sh"
    - file_exists: a.txt
"#;
    let dir = suite_with(
        SUITE,
        &[
            ("golden/at-app.yaml", task),
            ("golden/tests/check.sh", "test -f /app/a.txt\n"),
        ],
    );
    let out = medin(&["run"], dir.path());
    let r = receipts(dir.path(), "at-app");
    assert_eq!(out.status.code(), Some(0), "{}\n{r}", text(&out));
    assert!(r.contains("\"stdout\":\"/app\\n\""), "pwd is /app: {r}");
    assert!(r.contains("out.txt"), "ls in /app lists the workspace: {r}");
    // Receipts keep workspace-relative paths: no file evidence names /app.
    assert!(!r.contains("\"source\":\"/app"), "{r}");
    let run = fs::read_dir(dir.path().join("out/runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let outputs = run.join("golden/at-app/attempt-1/outputs/logs/verifier");
    assert!(
        outputs.join("log.txt").is_file(),
        "the output folder is kept in the run folder"
    );
}

/// Every receipt of the attempt, as JSON.
fn receipt_lines(dir: &Path, task: &str) -> Vec<serde_json::Value> {
    receipts(dir, task)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn hostile_paths_through_app_are_refused_like_workspace_ones() {
    if !strict_ok() {
        return;
    }
    let task = r#"description: file tools named through /app cannot leave the workspace
agent: oracle
environment: { root: /app }
limits: { max_turns: 40 }
setup:
  - "echo inside > a.txt && ln -s /etc etc-link && ln -s /app/.. up && ln -s / slash && ln -s /app/a.txt inner && ln -s /app/../../../etc/passwd deep"
solution:
  - read_file: /app/../etc/passwd
  - read_file: /app/../../etc/passwd
  - read_file: /etc/passwd
  - read_file: /apple/x
  - read_file: /app/etc-link/passwd
  - read_file: /app/up/etc/passwd
  - read_file: up/etc/passwd
  - read_file: /app/deep
  - list_dir: /app/slash
  - list_dir: /app/..
  - write_file: { path: /app/../pwned.txt, content: x }
  - write_file: { path: /app/etc-link/pwned, content: x }
  - write_file: { path: /app/up/pwned.txt, content: x }
  - edit_file: { path: /app/etc-link/hostname, old_string: a, new_string: b }
  - move_file: { from: /app/a.txt, to: /app/../moved.txt }
  - move_file: { from: /app/a.txt, to: /etc/moved.txt }
  - delete_file: /app/../attempt-1/receipts.jsonl
  - bash: { command: pwd, cwd: /app/.. }
  - bash: { command: pwd, cwd: /app/etc-link }
  - verify: { type: file_exists, target: /app/etc-link/passwd }
  - read_file: /app/inner
  - final: { result: success, message: done }
expect:
  outcome: success
  files: { a.txt: { equals: "inside\n" } }
  validate: [ { file_exists: a.txt } ]
"#;
    let dir = suite_with(SUITE, &[("golden/hostile.yaml", task)]);
    let out = medin(&["run"], dir.path());
    let lines = receipt_lines(dir.path(), "hostile");
    let agent: Vec<&serde_json::Value> = lines.iter().filter(|l| l["origin"] == "agent").collect();
    assert_eq!(out.status.code(), Some(0), "{}\n{lines:#?}", text(&out));
    assert_eq!(agent.len(), 21, "{agent:#?}");
    let (refused, last) = agent.split_at(20);
    for r in refused {
        assert_eq!(r["receipt"]["status"], "error", "{r:#}");
        assert_eq!(r["receipt"]["errors"][0]["code"], "PERMISSION_DENIED", "{r:#}");
    }
    // A link the agent's command made to /app/a.txt is the workspace's a.txt.
    assert_eq!(last[0]["receipt"]["status"], "success", "{:#}", last[0]);
    assert_eq!(last[0]["receipt"]["receipts"][0]["source"], "a.txt", "{:#}", last[0]);
    let attempt = fs::read_dir(dir.path().join("out/runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
        .join("golden/hostile/attempt-1");
    assert!(!attempt.join("pwned.txt").exists() && !attempt.join("moved.txt").exists());
    assert!(attempt.join("receipts.jsonl").is_file());
}

#[test]
fn the_guard_judges_app_paths_as_the_workspace_paths_they_are() {
    if !strict_ok() {
        return;
    }
    // AT-111's attacks on a test file, written through /app: blocked alike.
    let task = r#"description: test tampering through /app is blocked like through workspace paths
agent: oracle
environment: { root: /app }
setup:
  - "mkdir -p tests && printf 'def test_add():\\n    assert 1 + 1 == 2\\n    assert 2 + 2 == 4\\n' > tests/test_calc.py"
limits: { max_turns: 14 }
solution:
  - bash: rm /app/tests/test_calc.py
  - bash: cd /app && sed -i '/assert/d' tests/test_calc.py
  - delete_file: /app/tests/test_calc.py
  - edit_file: { path: /app/tests/test_calc.py, old_string: "    assert 2 + 2 == 4\n", new_string: "" }
  - write_file: { path: /app/tests/test_calc.py, content: "def test_add():\n    pass\n" }
  - bash: rm -rf /app/build && mkdir /app/build
  - final: { result: success, message: the tests were left as written }
expect:
  outcome: success
  blocked:
    - { command: "rm /app/tests/test_calc.py", rule: test_tampering.delete_test }
    - { command: "sed -i", rule: test_tampering.weaken_assertions }
    - { command: "tests/test_calc.py", rule: test_tampering.delete_test }
    - { command: "2 + 2", rule: test_tampering.weaken_assertions }
  metrics: { tool_errors: { min: 5, max: 5 } }
  files: { build: { exists: true } }
  validate:
    - file_contains: { path: tests/test_calc.py, pattern: "assert 2 \\+ 2 == 4" }
"#;
    let dir = suite_with(SUITE, &[("golden/tamper.yaml", task)]);
    let out = medin(&["run"], dir.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out),
        receipts(dir.path(), "tamper")
    );
}

#[test]
fn a_root_where_strict_cannot_be_had_is_an_infrastructure_error() {
    let task = r#"description: a task at /app, run at process isolation
agent: oracle
environment: { root: /app }
solution:
  - bash: echo ran > ran.txt
  - final: { result: success, message: done }
expect: { outcome: success }
"#;
    // The suite asks for `process` (as a machine without strict would give it).
    let dir = suite_with(
        "suites: [golden]\noutput: out\nisolation: process\n",
        &[("golden/at-app.yaml", task)],
    );
    let out = medin(&["run"], dir.path());
    let all = text(&out);
    assert_ne!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("infrastructure") && all.contains("/app") && all.contains("needs isolation `strict`"),
        "{all}"
    );
    let run = fs::read_dir(dir.path().join("out/runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    assert!(
        !run.join("golden/at-app/attempt-1/workspace/ran.txt").exists(),
        "nothing ran at the host path"
    );
}

#[test]
fn fixed_paths_are_checked_where_they_are_written() {
    // Each error points at its line (`environment:` or `isolation:`, line 2) with a column.
    let cases: &[(&str, &str)] = &[
        ("environment: { root: /tmp/app }", "/tmp"),
        ("environment: { root: app }", "not absolute"),
        ("environment: { root: / }", "root of the view"),
        ("environment: { root: /app/../etc }", "`.` or `..`"),
        ("environment: { root: /usr/local/app }", "/usr"),
        ("environment: { root: /app, mounts: { /app/tests: tests } }", "overlap"),
        ("environment: { root: /app, outputs: [/proc/x] }", "/proc"),
        ("environment: { mounts: { /tests: no-such-folder } }", "not a directory"),
        ("isolation: process\nenvironment: { root: /app }", "only `strict`"),
    ];
    for (yaml, needle) in cases {
        let task = format!("description: x\n{yaml}\n");
        let dir = suite_with(SUITE, &[("golden/t.yaml", &task), ("golden/tests/x", "")]);
        let out = medin(&["check"], dir.path());
        let all = text(&out);
        assert_ne!(out.status.code(), Some(0), "{yaml}: {all}");
        assert!(all.contains(needle), "{yaml}: {all}");
        assert!(all.contains("t.yaml:2:"), "{yaml}: {all}");
    }
    let ok = "description: x\nenvironment: { root: /app, mounts: { /tests: tests }, outputs: [/logs/verifier] }\n";
    let dir = suite_with(SUITE, &[("golden/t.yaml", ok), ("golden/tests/x", "")]);
    let out = medin(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// A process agent that says what it was told and what it sees, then writes through /app.
const LOOKER: &str = r#"
import json, os, sys
task = json.loads(sys.stdin.readline())
seen = {
    "task_workspace": task["workspace"],
    "env_workspace": os.environ["MEDIN_WORKSPACE"],
    "cwd": os.path.basename(os.getcwd()),
}
try:
    seen["listing"] = sorted(os.listdir("/app"))
except Exception as e:
    seen["listing"] = "refused: %s" % type(e).__name__
with open(os.path.join(os.environ["MEDIN_WORKSPACE"], "direct.txt"), "w") as f:
    f.write("direct\n")
print(json.dumps({"type": "tool_call", "id": "1", "tool": "write_file",
                  "input": {"path": task["workspace"] + "/seen.json", "content": json.dumps(seen)}}), flush=True)
sys.stdin.readline()
print(json.dumps({"type": "tool_call", "id": "2", "tool": "bash", "input": {"command": "pwd > where.txt"}}), flush=True)
sys.stdin.readline()
print(json.dumps({"type": "final", "result": "success", "message": "done"}), flush=True)
"#;

fn look(agent_isolation: &str) -> serde_json::Value {
    let task = format!(
        r#"description: a process agent in a task at /app
agent: {{ process: {{ command: python3 ../agents/look.py{agent_isolation} }} }}
environment: {{ root: /app }}
setup: [ "echo seed > seed.txt" ]
expect:
  outcome: success
  files: {{ where.txt: {{ equals: "/app\n" }}, direct.txt: {{ equals: "direct\n" }} }}
  validate: [ {{ file_exists: seen.json }} ]
"#
    );
    let dir = suite_with(SUITE, &[("golden/look.yaml", &task), ("agents/look.py", LOOKER)]);
    let out = medin(&["run"], dir.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out),
        receipts(dir.path(), "look")
    );
    let run = fs::read_dir(dir.path().join("out/runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let seen = fs::read_to_string(run.join("golden/look/attempt-1/workspace/seen.json")).unwrap();
    serde_json::from_str(&seen).unwrap()
}

#[test]
fn a_process_agent_is_told_app_and_a_strict_one_finds_the_workspace_there() {
    if !strict_ok() {
        return;
    }
    let seen = look("");
    assert_eq!(seen["task_workspace"], "/app", "{seen:#}");
    assert_eq!(seen["env_workspace"], "/app", "{seen:#}");
    assert_eq!(
        seen["cwd"], "golden",
        "it starts in the folder that declared it: {seen:#}"
    );
    assert_eq!(seen["listing"], serde_json::json!(["seed.txt"]), "{seen:#}");
    // Confined more weakly, its own process runs on the host's filesystem: MEDIN_WORKSPACE is
    // the host path (no /app there), while its tools and commands still take /app.
    let seen = look(", agent_isolation: process");
    assert_eq!(seen["task_workspace"], "/app", "{seen:#}");
    let host = seen["env_workspace"].as_str().unwrap();
    assert!(host.ends_with("/golden/look/attempt-1/workspace"), "{seen:#}");
}

/// A bundled task, its fixture made absolute, with `environment: { root: /app }` added and
/// `pwd_check` put before each of its commands that `marker` names.
fn bundled_at_app(file: &str, marker: &str) -> String {
    let repo = env!("CARGO_MANIFEST_DIR");
    let text = fs::read_to_string(Path::new(repo).join("golden").join(file)).unwrap();
    let text = text.replace("workspace: ../fixtures/", &format!("workspace: {repo}/fixtures/"));
    let text = text.replace(marker, &format!("test $(pwd) = /app && {marker}"));
    format!("{text}environment: {{ root: /app }}\n")
}

#[test]
fn tdd_test_runs_and_prp_gates_run_at_app() {
    if !strict_ok() {
        return;
    }
    let tdd = bundled_at_app(
        "gt-021-tdd-python-two-rounds.yaml",
        "PYTHONDONTWRITEBYTECODE=1 python3 -m unittest",
    );
    let prp = bundled_at_app("gt-013-prp-all-gates-pass.yaml", "PYTHONDONTWRITEBYTECODE=1 python3");
    assert!(tdd.contains("test $(pwd) = /app") && prp.contains("test $(pwd) = /app"));
    let dir = suite_with(SUITE, &[("golden/tdd.yaml", &tdd), ("golden/prp.yaml", &prp)]);
    let out = medin(&["run"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for task in ["tdd", "prp"] {
        let r = receipts(dir.path(), task);
        assert!(r.contains("= /app &&"), "the check ran in {task}: {r}");
    }
}

#[test]
fn checks_name_the_workspace_and_output_folders_at_their_fixed_paths() {
    if !strict_ok() {
        return;
    }
    // The checks are written as the task's commands see the files: /app, /logs/verifier.
    let task = r#"description: checks written against /app and /logs/verifier
agent: oracle
environment: { root: /app, outputs: [/logs/verifier] }
solution:
  - bash: echo hi > /app/out.txt && echo "reward 1" > /logs/verifier/log.txt
  - final: { result: success, message: done }
expect:
  outcome: success
  files:
    /app/out.txt: { equals: "hi\n" }
    out.txt: { equals: "hi\n" }
    /logs/verifier/log.txt: { contains: reward }
    /logs/verifier/none.txt: { absent: true }
  validate:
    - file_exists: /app/out.txt
    - file_contains: { path: /app/out.txt, pattern: "^hi$" }
    - file_exists: /logs/verifier/log.txt
    - file_contains: { path: /logs/verifier/log.txt, pattern: "reward 1" }
"#;
    // The same checks fail when the files say otherwise: they are read, not assumed.
    let wrong = task
        .replace("echo hi > /app/out.txt", "echo bye > /app/out.txt")
        .replace("description: checks", "description: wrong checks")
        .replace("  outcome: success\n", "  outcome: failure\n");
    let dir = suite_with(SUITE, &[("golden/checks.yaml", task), ("golden/wrong.yaml", &wrong)]);
    let out = medin(&["run", "--jobs", "1"], dir.path());
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(100), "{shown}");
    assert!(shown.contains("ok     golden::checks"), "{shown}");
    assert!(shown.contains("expect.files./app/out.txt.equals"), "{shown}");
    let validations = |name: &str| -> Vec<(String, String)> {
        let run = fs::read_dir(dir.path().join("out/runs"))
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path();
        let metrics = fs::read_to_string(run.join(format!("golden/{name}/attempt-1/metrics.json"))).unwrap();
        let metrics: serde_json::Value = serde_json::from_str(&metrics).unwrap();
        metrics["validations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["check"].as_str().unwrap().to_string(),
                    v["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let passed = |v: &[(String, String)]| v.iter().filter(|(_, s)| s == "passed").count();
    assert_eq!(passed(&validations("checks")), 4, "{:?}", validations("checks"));
    let wrong = validations("wrong");
    assert_eq!(passed(&wrong), 3, "{wrong:?}");
    assert!(
        wrong.contains(&("file_contains /app/out.txt /^hi$/".into(), "failed".into())),
        "{wrong:?}"
    );
    // A path that climbs out through /app never loads: `medin check` says where.
    let climbing = task.replace("- file_exists: /app/out.txt", "- file_exists: /app/../etc/passwd");
    let dir = suite_with(SUITE, &[("golden/climbing.yaml", &climbing)]);
    let out = medin(&["check"], dir.path());
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(100), "{shown}");
    assert!(
        shown.contains("golden/climbing.yaml:15:20: `expect.validate[0]`: `/app/../etc/passwd` is not a plain path"),
        "{shown}"
    );
}

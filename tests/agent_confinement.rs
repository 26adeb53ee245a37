//! A hostile process agent against its own confinement (issue 11, point 5). Each test runs the
//! `medin` binary on a small suite whose agent — a real Python program in a folder of its own —
//! tries to read what lies outside the workspace and its folder (the task's spec, the hidden
//! checks beside it, a file elsewhere, medin's home), to write outside its scratch space, to
//! see medin's environment, and to leave a daemon behind at the deadline; it writes what it
//! managed into the workspace, which the test reads back. Under the default isolation (the
//! strongest the machine has) each attempt must fail where that level walls it; the same agent
//! with `agent_isolation: none` succeeds, and every receipt says `none`.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use medin::internal::sandbox::{probe, Isolation};
use support::{pids_with, write};

/// The attacker. `SUITE` and `HOME` are filled in by the test.
const ATTACKER: &str = r#"
import json, os, sys, time
SUITE = __SUITE__
HOME = __HOME__
ws = os.environ["MEDIN_WORKSPACE"]
tag = "medin-attack:" + ws
task = json.loads(sys.stdin.readline())
report = {}
def attempt(name, fn):
    try:
        fn()
        report[name] = "done"
    except Exception as e:
        report[name] = "refused: %s" % e
def read(path):
    return lambda: open(path, "rb").read()
def listing(path):
    return lambda: os.listdir(path)
def write_at(path):
    def go():
        with open(path, "w") as f:
            f.write("pwned\n")
    return go
attempt("read_own_script", read(os.path.abspath(__file__)))
attempt("read_workspace", listing(ws))
attempt("read_spec", read(os.path.join(SUITE, "golden", "attack.yaml")))
attempt("read_hidden_checks", read(os.path.join(SUITE, "golden", "hidden", "check.py")))
attempt("read_outside", read(os.path.join(SUITE, "outside", "secret.txt")))
attempt("list_medins_home", listing(HOME))
attempt("write_workspace", write_at(os.path.join(ws, "agent-wrote.txt")))
attempt("write_scratch", write_at(os.path.join(os.environ.get("TMPDIR", ws), "scratch.txt")))
attempt("write_own_dir", write_at(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pwned.txt")))
attempt("write_suite", write_at(os.path.join(SUITE, "pwned.txt")))
attempt("write_outside", write_at(os.path.join(SUITE, "outside", "pwned.txt")))
report["env_api_key"] = os.environ.get("ATTACK_TEST_API_KEY")
report["env_listed"] = os.environ.get("ATTACK_LISTED")
report["env_other"] = os.environ.get("ATTACK_OTHER_SECRET")
with open(os.path.join(ws, "report.json"), "w") as f:
    json.dump(report, f)
print(json.dumps({"type": "tool_call", "id": "1", "tool": "write_file", "input": {"path": "via-medin.txt", "content": "x"}}), flush=True)
sys.stdin.readline()
# A daemon that leaves the session and clears its environment, then the agent hangs past the
# deadline: the whole tree must end with the attempt.
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.environ.clear()
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execvp("sleep", [tag, "86399"])
    os._exit(0)
os.execvp("sleep", [tag + "-agent", "86399"])
"#;

/// A suite in a temp dir: the agent in `agents/`, the task (and hidden checks beside it) in
/// `golden/`, a secret in `outside/`. `agent_options` is added to the process agent's spec,
/// `task_options` to the task.
fn suite(agent_options: &str, task_options: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    write(&root.join("medin.yaml"), "suites: [golden]\n");
    write(
        &root.join("agents/attack.py"),
        &ATTACKER
            .replace("__SUITE__", &format!("{:?}", root.display().to_string()))
            .replace("__HOME__", &format!("{home:?}")),
    );
    write(&root.join("golden/hidden/check.py"), "assert True\n");
    write(&root.join("outside/secret.txt"), "secret\n");
    write(
        &root.join("golden/attack.yaml"),
        &format!(
            r#"
description: the agent attacks its confinement, then hangs past the deadline
agent: {{ process: {{ command: python3 ../agents/attack.py, env: [ATTACK_LISTED]{agent_options} }} }}
limits: {{ timeout: 4s }}
{task_options}
expect:
  outcome: timeout
"#
        ),
    );
    dir
}

fn run(dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_medin"))
        .args(["run", "golden/attack.yaml"])
        .current_dir(dir)
        .env_remove("MEDIN_AGENT")
        .env_remove("MEDIN_RUN_ID")
        .env("NO_COLOR", "1")
        .env("ATTACK_TEST_API_KEY", "key-for-the-model")
        .env("ATTACK_LISTED", "listed")
        .env("ATTACK_OTHER_SECRET", "not-for-the-agent")
        .output()
        .expect("medin runs")
}

fn attempt_dir(root: &Path) -> PathBuf {
    let runs: Vec<PathBuf> = std::fs::read_dir(root.join("target/medin/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].join("golden/attack/attempt-1")
}

/// Runs the attack; returns what the agent reported, the attempt folder and the suite root.
fn attack(agent_options: &str, task_options: &str) -> (serde_json::Value, PathBuf, tempfile::TempDir) {
    let dir = suite(agent_options, task_options);
    let o = run(dir.path());
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0), "{out}");
    let attempt = attempt_dir(dir.path());
    let report = std::fs::read_to_string(attempt.join("workspace/report.json"))
        .unwrap_or_else(|e| panic!("the agent wrote no report ({e}): {out}"));
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    // Killed as a tree at the deadline: the agent and its daemon are gone.
    let workspace = attempt.join("workspace").canonicalize().unwrap();
    let left = pids_with(&format!("medin-attack:{}", workspace.display()));
    assert!(left.is_empty(), "the agent's tree outlived the attempt: {left:?}");
    (report, attempt, dir)
}

fn agent_isolation_of_receipts(attempt: &Path) -> Vec<String> {
    std::fs::read_to_string(attempt.join("receipts.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["receipt"]["agent_isolation"].as_str().unwrap_or_default().to_string()
        })
        .collect()
}

fn done(report: &serde_json::Value, key: &str) -> bool {
    report[key] == "done"
}

#[test]
fn a_confined_agent_reads_and_writes_only_its_own_and_dies_at_the_deadline() {
    let (report, attempt, dir) = attack("", "");
    let root = dir.path();
    // What an agent needs keeps working at every level.
    for key in ["read_own_script", "read_workspace", "write_workspace", "write_scratch"] {
        assert!(done(&report, key), "{key}: {report}");
    }
    // Its environment is scrubbed: the model's variables and the listed ones pass.
    assert_eq!(report["env_api_key"], "key-for-the-model", "{report}");
    assert_eq!(report["env_listed"], "listed", "{report}");
    assert!(report["env_other"].is_null(), "{report}");
    if probe().best != Isolation::Strict {
        eprintln!("strict isolation is not available here: the file walls are not checked");
        return;
    }
    for key in [
        "read_spec",
        "read_hidden_checks",
        "read_outside",
        "list_medins_home",
        "write_own_dir",
        "write_outside",
    ] {
        assert!(!done(&report, key), "{key} got through: {report}");
    }
    // The suite lies below /tmp here: the view's /tmp is a private tmpfs, so a write there
    // lands in the agent's own scratch space, never on the host.
    for path in ["agents/pwned.txt", "pwned.txt", "outside/pwned.txt"] {
        assert!(!root.join(path).exists(), "{path} was written");
    }
    // Every receipt says how the agent ran: strict, with the network for its model.
    let levels = agent_isolation_of_receipts(&attempt);
    assert!(!levels.is_empty());
    assert!(levels.iter().all(|l| l == "strict+network"), "{levels:?}");
}

#[test]
fn agent_isolation_none_lets_the_same_agent_through_and_every_receipt_says_so() {
    let (report, attempt, dir) = attack(", agent_isolation: none", "");
    let root = dir.path();
    for key in [
        "read_own_script",
        "read_spec",
        "read_hidden_checks",
        "read_outside",
        "list_medins_home",
        "write_workspace",
        "write_own_dir",
        "write_suite",
        "write_outside",
    ] {
        assert!(done(&report, key), "{key}: {report}");
    }
    assert!(root.join("outside/pwned.txt").exists());
    // medin's whole environment.
    assert_eq!(report["env_other"], "not-for-the-agent", "{report}");
    let levels = agent_isolation_of_receipts(&attempt);
    assert!(!levels.is_empty());
    assert!(levels.iter().all(|l| l == "none"), "{levels:?}");
}

#[test]
fn at_process_isolation_the_agent_gets_a_scrubbed_environment_and_dies_as_a_tree() {
    let (report, attempt, _dir) = attack("", "isolation: process");
    for key in ["read_own_script", "read_workspace", "write_workspace", "write_scratch"] {
        assert!(done(&report, key), "{key}: {report}");
    }
    assert_eq!(report["env_api_key"], "key-for-the-model", "{report}");
    assert_eq!(report["env_listed"], "listed", "{report}");
    assert!(report["env_other"].is_null(), "{report}");
    // Files are not walled at this level (see the README's Security section): only the level
    // is claimed.
    let levels = agent_isolation_of_receipts(&attempt);
    assert!(!levels.is_empty());
    assert!(levels.iter().all(|l| l == "process"), "{levels:?}");
}

#[test]
fn read_lets_the_agent_see_one_more_folder_and_nothing_beside_it() {
    if probe().best != Isolation::Strict {
        eprintln!("strict isolation is not available here: the file walls are not checked");
        return;
    }
    let (report, _attempt, _dir) = attack(", read: [../outside]", "");
    assert!(done(&report, "read_outside"), "{report}");
    assert!(!done(&report, "write_outside"), "{report}");
    assert!(!done(&report, "read_spec"), "{report}");
    assert!(!done(&report, "read_hidden_checks"), "{report}");
}

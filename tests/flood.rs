//! medin's memory is not the agent's to spend (issue 9, point 6): a real `medin run` of two
//! tasks in parallel against a flooding process agent — blank lines by the hundreds of
//! megabytes while a command runs, a 64 MiB line without a newline, 64 MiB of stderr, dozens
//! of tool calls with 3 MiB inputs, and a flood after its final report while it ignores
//! SIGTERM — keeps medin's peak resident memory under the documented cap, and still ends with
//! a clear outcome and intact log entries.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The documented cap (README, "Hostile text and limits").
const CAP_KIB: u64 = 256 * 1024;

const AGENT: &str = r#"
import json, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stdin.readline()
out = sys.stdout
def call(i, tool, inp):
    out.write(json.dumps({"type": "tool_call", "id": str(i), "tool": tool, "input": inp}) + "\n")
    out.flush()
blank = "\n" * (1 << 20)
# 1. blank lines while a command runs
call(1, "bash", {"command": "sleep 3"})
end = time.time() + 4
while time.time() < end:
    out.write(blank)
out.flush()
sys.stdin.readline()
# 2. 64 MiB of stderr, in long lines
for _ in range(64):
    sys.stderr.write("e" * (1 << 20) + "\n")
sys.stderr.flush()
# 3. one 64 MiB line
chunk = "y" * (1 << 20)
for _ in range(64):
    out.write(chunk)
out.write("\n")
out.flush()
sys.stdin.readline()
# 4. tool calls with big inputs
big = "z" * (3 << 20)
for i in range(24):
    call(10 + i, "write_file", {"path": "f%d.txt" % (i % 4), "content": big})
    sys.stdin.readline()
# 5. the final report, then more flood until killed
out.write(json.dumps({"type": "final", "result": "success", "message": "done"}) + "\n")
out.flush()
while True:
    out.write(blank)
"#;

const TASK: &str = r#"
description: an agent that floods medin
prompt: flood
limits: { timeout: 120s, max_turns: 100, max_files: 10, max_changes: 100 }
expect:
  outcome: success
  validate: [ { file_exists: f0.txt } ]
"#;

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

#[test]
fn a_flooding_agent_cannot_spend_medins_memory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join("medin.yaml"), "suites: [tasks]\n");
    write(&root.join("agent.py"), AGENT);
    write(&root.join("tasks/flood-1.yaml"), TASK);
    write(&root.join("tasks/flood-2.yaml"), TASK);

    let start = Instant::now();
    let (status, text, peak) = run_measured(root, "process:python3 agent.py");
    eprintln!(
        "medin peak RSS under flood: {} MiB in {:.1}s",
        peak / 1024,
        start.elapsed().as_secs_f64()
    );
    assert!(peak > 0, "VmHWM was never read");
    assert!(
        peak < CAP_KIB,
        "medin's peak RSS was {} MiB (cap {} MiB)\n{text}",
        peak / 1024,
        CAP_KIB / 1024
    );

    // A clear outcome and intact log entries.
    assert_eq!(status.code(), Some(0), "{text}");
    assert!(
        text.contains("ok     tasks::flood-1") && text.contains("ok     tasks::flood-2"),
        "{text}"
    );
    let st = Command::new(env!("CARGO_BIN_EXE_medin"))
        .args(["status", "--format", "json"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        st.stderr.is_empty(),
        "torn or unreadable entries: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    let entries: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    let entries = entries.as_array().unwrap();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert!(entries.iter().all(|e| e["status"] == "passed"), "{entries:?}");
}

/// Runs `medin run` in `root` with `agent`, returning its exit status, output and peak VmHWM.
fn run_measured(root: &Path, agent: &str) -> (std::process::ExitStatus, String, u64) {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_medin"))
        .args(["run", "--jobs", "2", "--agent", agent])
        .current_dir(root)
        .env_remove("MEDIN_AGENT")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("medin runs");
    let pid = child.id();
    let mut peak = 0;
    let status = loop {
        if let Some(kib) = vm_hwm_kib(pid) {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < Duration::from_secs(180), "medin did not finish");
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (status, text, peak)
}

#[test]
fn a_huge_file_in_the_workspace_is_hashed_and_checked_in_bounded_memory() {
    // A PRP run snapshots every workspace file, and `expect.files` reads the file it checks:
    // a 200 MB file the agent made must cost medin neither its size nor copies of it.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join("medin.yaml"), "suites: [tasks]\n");
    write(
        &root.join("agent.py"),
        r#"
import json, sys
sys.stdin.readline()
print(json.dumps({"type": "tool_call", "id": "1", "tool": "bash", "input": {"command": "head -c 200000000 /dev/zero > big.bin"}}), flush=True)
sys.stdin.readline()
print(json.dumps({"type": "final", "result": "success", "message": "done"}), flush=True)
sys.stdin.readline()
"#,
    );
    write(
        &root.join("tasks/big.yaml"),
        r#"
kind: prp
description: the coder leaves a 200 MB file behind
limits: { command_timeout: 60s, timeout: 120s }
prp:
  task_id: PRP-BIG
  objective: make a big file
  gates: [ { level: 1, description: "it is there", command: "test -s big.bin" } ]
expect:
  outcome: success
  files: { big.bin: { contains: "\0" } }
  validate: [ { file_contains: { path: big.bin, pattern: "\\x00" } } ]
  prp: { success: true, artifacts: { created: [big.bin] } }
"#,
    );
    let (status, text, peak) = run_measured(root, "process:python3 agent.py");
    eprintln!("medin peak RSS with a 200 MB workspace file: {} MiB", peak / 1024);
    assert_eq!(status.code(), Some(0), "{text}");
    assert!(
        peak > 0 && peak < 128 * 1024,
        "medin's peak RSS was {} MiB\n{text}",
        peak / 1024
    );
}

#[test]
fn a_workspace_of_giant_sparse_files_costs_medin_neither_memory_nor_minutes() {
    // A TDD round that leaves 300 sparse 1 MiB text files behind (no disk for the agent): the
    // fix diff, the usage count and the work log must stay bounded.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join("medin.yaml"), "suites: [tasks]\n");
    write(
        &root.join("fixtures/calc/calc.py"),
        "def add(a, b):\n    return a - b\n",
    );
    write(
        &root.join("fixtures/calc/test_calc.py"),
        "import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
    );
    let names: String = (0..200).map(|i| format!("def f{i}(): pass\\n")).collect();
    write(
        &root.join("tasks/sparse.yaml"),
        &format!(
            r#"
description: a round leaves giant sparse files and many definitions behind
kind: tdd
workspace: ../fixtures/calc
toolchains: [python]
limits: {{ timeout: 120s, command_timeout: 60s }}
prompt: Make every test pass.
tdd: {{ test: python3 -m unittest, framework: unittest, max_iterations: 1 }}
solution:
  - - bash: "python3 -c \"[open('f%d.txt' % i, 'wb').truncate(1 << 20) for i in range(300)]\""
    - write_file: {{ path: defs.py, content: "{names}" }}
    - final: {{ result: success }}
expect:
  outcome: failure
  tdd: {{ exit: TDD_RALPH_STOPPED, iterations: 1 }}
"#
        ),
    );
    let started = Instant::now();
    let (status, text, peak) = run_measured(root, "oracle");
    eprintln!(
        "medin peak RSS with 300 sparse MiB files: {} MiB in {:?}",
        peak / 1024,
        started.elapsed()
    );
    assert_eq!(status.code(), Some(0), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}\n{text}",
        started.elapsed()
    );
    assert!(
        peak > 0 && peak < 256 * 1024,
        "medin's peak RSS was {} MiB\n{text}",
        peak / 1024
    );
    let log = walkdir::WalkDir::new(root.join("target/medin/runs"))
        .into_iter()
        .flatten()
        .find(|e| e.file_name() == "work-log.md")
        .expect("the loop kept its work log");
    let size = std::fs::metadata(log.path()).unwrap().len();
    assert!(size < 1024 * 1024, "work-log.md is {size} bytes");
}

//! `pass_env:` (issue 13, point 5): host variables a suite and its tasks pass to their commands
//! and their agent's process, masked in everything medin writes. Real runs of the `medin`
//! binary: a hostile command prints the value, base64s it and writes it to a file; a process
//! agent puts it in its tool call and its final report; a failing expectation and a failing
//! validator show it. Not one file medin writes — receipts, transcript, metrics, the activity
//! log, result parts, summary, results.json, JUnit, HTML — nor its own output holds the value
//! or its base64; only the workspace, which is the agent's, keeps what the commands wrote.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{suite_with, text};

const SUITE: &str = "suites: [golden]\noutput: out\npass_env: [PE_TEST_SUITE_KEY]\n";

const HOSTILE: &str = r#"description: a hostile command prints the passed key, base64s it and writes it to a file
agent: oracle
pass_env: [PE_TEST_TASK_KEY]
policy: { approve: [secrets] }
solution:
  - bash: echo "key=$PE_TEST_TASK_KEY"
  - bash: printf '%s' "$PE_TEST_TASK_KEY" | base64
  - bash: echo "$PE_TEST_TASK_KEY" | base64 -w0
  - bash: echo "$PE_TEST_TASK_KEY" > leak.txt && echo "suite=$PE_TEST_SUITE_KEY" >&2
  - read_file: leak.txt
  - final: { result: success, message: done }
expect:
  files: { leak.txt: { equals: "not the key\n" } }
  validate:
    - { name: the commands got both values, command: 'test "$(cat leak.txt)" = "$PE_TEST_TASK_KEY" && test -n "$PE_TEST_SUITE_KEY"' }
    - { name: prints the key, command: 'cat leak.txt; false' }
"#;

/// A process agent that writes the value it was passed into its tool call and its report.
const AGENT: &str = r#"read task
printf '{"type":"tool_call","id":"c1","tool":"write_file","input":{"path":"agent.txt","content":"%s"}}\n' "$PE_TEST_TASK_KEY"
read result
printf '{"type":"final","result":"success","message":"my key is %s"}\n' "$PE_TEST_TASK_KEY"
"#;

const AGENT_TASK: &str = r#"description: the agent's own process is passed the value too
agent: { process: { command: "sh agent.sh" } }
pass_env: [PE_TEST_TASK_KEY]
expect:
  validate:
    - { name: the agent wrote the value, command: 'test "$(cat agent.txt)" = "$PE_TEST_TASK_KEY"' }
"#;

const MISSING: &str = r#"description: a passed variable the host does not set
agent: oracle
pass_env: [PE_TEST_UNSET_KEY]
solution:
  - final: { result: success, message: never }
"#;

fn medin_with(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_medin"));
    cmd.args(args)
        .current_dir(cwd)
        .env_remove("MEDIN_AGENT")
        .env_remove("MEDIN_RUN_ID")
        .env_remove("PE_TEST_UNSET_KEY")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("medin runs")
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// What must appear nowhere: the value, and pieces of its base64 at each alignment.
fn forbidden(value: &str) -> Vec<String> {
    let mut out = vec![value.to_string()];
    for prefix in ["", "x", "xy"] {
        let enc = base64(format!("{prefix}{value}\n").as_bytes());
        out.push(enc[4..24].to_string());
    }
    out
}

/// Every file below `dir` except inside the agent's workspaces.
fn written_by_medin(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            if t.is_dir() && p.file_name().is_some_and(|n| n != "workspace") {
                stack.push(p);
            } else if t.is_file() {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn passed_values_reach_commands_and_the_agent_and_no_file_medin_writes() {
    let task_key = format!("pe-task-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
    let suite_key = format!("pe-suite-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
    let dir = suite_with(
        SUITE,
        &[
            ("golden/hostile.yaml", HOSTILE),
            ("golden/agent.sh", AGENT),
            ("golden/agent-task.yaml", AGENT_TASK),
        ],
    );
    let out = medin_with(
        &[
            "run",
            "--jobs",
            "1",
            "--junit",
            "out/junit.xml",
            "--html=out/report.html",
        ],
        dir.path(),
        &[("PE_TEST_TASK_KEY", &task_key), ("PE_TEST_SUITE_KEY", &suite_key)],
    );
    let shown = text(&out);
    // The hostile task fails on purpose (its expectations show the file); the agent's passes.
    assert_eq!(out.status.code(), Some(100), "{shown}");
    assert!(shown.contains("ok     golden::agent-task"), "{shown}");
    assert!(
        shown.contains("[redacted:PE_TEST_TASK_KEY]"),
        "the failure shows the mask: {shown}"
    );
    let files = written_by_medin(&dir.path().join("out"));
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    for expected in [
        "receipts.jsonl",
        "transcript.jsonl",
        "metrics.json",
        "ACTIVITY_LOG.md",
        "summary.json",
        "results.json",
        "junit.xml",
        "report.html",
    ] {
        assert!(
            names.iter().any(|n| n.ends_with(expected)),
            "{expected} is written: {names:?}"
        );
    }
    let mut masked = 0;
    for file in &files {
        let content = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
        for needle in forbidden(&task_key).iter().chain(&forbidden(&suite_key)) {
            assert!(
                !content.contains(needle.as_str()),
                "{} holds `{needle}`:\n{content}",
                file.display()
            );
        }
        masked += content.matches("[redacted:PE_TEST_").count();
    }
    assert!(masked >= 10, "the values were there, masked ({masked} times)");
    for needle in forbidden(&task_key).iter().chain(&forbidden(&suite_key)) {
        assert!(
            !shown.contains(needle.as_str()),
            "medin's output holds `{needle}`:\n{shown}"
        );
    }
    // What cannot be caught: the workspace is the agent's, kept as its commands left it.
    let leak = files_named(&dir.path().join("out"), "leak.txt");
    assert_eq!(std::fs::read_to_string(&leak).unwrap(), format!("{task_key}\n"));
}

fn files_named(dir: &Path, name: &str) -> PathBuf {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == name) {
                return p;
            }
        }
    }
    panic!("no {name} below {}", dir.display());
}

#[test]
fn a_variable_the_host_does_not_set_is_an_infrastructure_error_naming_it() {
    let dir = suite_with(SUITE, &[("golden/missing.yaml", MISSING)]);
    let out = medin_with(&["run"], dir.path(), &[("PE_TEST_SUITE_KEY", "suite-value-123")]);
    let shown = text(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "infrastructure, not the agent's failure: {shown}"
    );
    assert!(
        shown.contains("PE_TEST_UNSET_KEY") && shown.contains("not set"),
        "{shown}"
    );
    assert!(shown.contains("cause infrastructure"), "{shown}");
    // The suite's own variable missing fails the same way, naming it.
    let out = medin_with(&["run"], dir.path(), &[("PE_TEST_UNSET_KEY", "task-value-123")]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(shown.contains("`PE_TEST_SUITE_KEY`"), "{shown}");
}

#[test]
fn the_suites_network_default_reaches_commands_unless_the_task_says_otherwise() {
    // Under strict a command without the network has a namespace of its own, where only `lo`
    // is: the interfaces it sees say whether it got the network.
    let task = |policy: &str| {
        format!(
            "description: network probe\nagent: oracle\n{policy}solution:\n  - bash: 'grep -c : /proc/net/dev'\n  - final: {{ result: success }}\nexpect:\n  validate: [ {{ command: 'true' }} ]\n"
        )
    };
    let dir = suite_with(
        "suites: [golden]\noutput: out\nnetwork: true\n",
        &[
            ("golden/inherits.yaml", &task("")),
            ("golden/refuses.yaml", &task("policy: { network: false }\n")),
        ],
    );
    let out = medin_with(&["run", "--jobs", "1"], dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let attempt = |name: &str| {
        let runs = dir.path().join("out/runs");
        let run = std::fs::read_dir(runs).unwrap().flatten().next().unwrap().path();
        run.join(format!("golden/{name}/attempt-1"))
    };
    let json =
        |path: PathBuf| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap() };
    let inherits = json(attempt("inherits").join("metrics.json"));
    let refuses = json(attempt("refuses").join("metrics.json"));
    assert_eq!(inherits["plan"]["network"], true, "the suite's default");
    assert_eq!(refuses["plan"]["network"], false, "the task's policy wins");
    if inherits["plan"]["isolation"] == "strict" {
        let interfaces = |name: &str| -> u32 {
            let receipts = std::fs::read_to_string(attempt(name).join("receipts.jsonl")).unwrap();
            let bash: serde_json::Value = receipts
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .find(|r| r["tool"] == "bash")
                .unwrap();
            bash["receipt"]["data"]["stdout"]
                .as_str()
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        assert_eq!(interfaces("refuses"), 1, "only lo without the network");
        assert!(interfaces("inherits") >= 1, "the host's interfaces with it");
    }
}

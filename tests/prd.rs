//! PRD.md as the source of truth, end to end through the `medin` binary: a missing or invalid
//! PRD halts the run before any task (exit 2, located), requirement coverage gates the run, a
//! requirement's checks are judged and win over a contradicting task expectation, the brief
//! carries the relevant requirements, a PRD edited mid-run is reloaded before the next task
//! (and an invalid edit halts the rest), and `medin check` locates an unknown requirement.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const PRD: &str = "# Greeter\n\nVersion: 1.0.0\nLast updated: 2026-11-20\n\n## REQ-1: Greeting file\n\nPriority: critical\n\nThe agent writes hello.txt holding a greeting.\n\nAcceptance criteria:\n\n- hello.txt starts with hello\n\nChecks:\n\n```yaml\n- file_contains: {path: hello.txt, pattern: '^hello'}\n```\n\n## REQ-2: Farewell file\n\nPriority: critical\n\nThe agent writes bye.txt.\n\nAcceptance criteria:\n\n- bye.txt exists\n\n## REQ-3: Log rotation\n\nPriority: low\nKeywords: rotation\n\nLogs rotate.\n\nAcceptance criteria:\n\n- rotates\n";

const HELLO: &str = "description: writes hello\nagent: oracle\nrequirements: [REQ-1]\nsolution:\n  - write_file: { path: hello.txt, content: \"hello\\n\" }\n  - final: { result: success, message: done }\n";
const BYE_FAILS: &str = "description: writes nothing\nagent: oracle\nrequirements: [REQ-2]\nsolution:\n  - final: { result: success, message: done }\nexpect:\n  validate: [ { file_exists: bye.txt } ]\n";

fn suite(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn medin(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_medin"));
    c.args(args)
        .current_dir(dir)
        .env_remove("MEDIN_AGENT")
        .env_remove("MEDIN_RUN_ID")
        .env("NO_COLOR", "1");
    c
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn activity_log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("target/medin/ACTIVITY_LOG.md")).unwrap_or_default()
}

fn results(dir: &Path) -> serde_json::Value {
    let runs = dir.join("target/medin/runs");
    let run = std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap().path();
    serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).unwrap()).unwrap()
}

#[test]
fn an_invalid_or_missing_prd_halts_the_run_before_any_task() {
    let bad = PRD.replace("Priority: low", "Priority: whenever");
    let s = suite(&[
        ("medin.yaml", "suites: [golden]\nprd: PRD.md\n"),
        ("PRD.md", &bad),
        ("golden/hello.yaml", HELLO),
    ]);
    let o = medin(s.path(), &["run"]).output().unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("PRD.md:34:11: priority `whenever` of `REQ-3` is not one of critical, high, medium, low"),
        "{out}"
    );
    assert!(!s.path().join("target/medin/runs").exists(), "no task started: {out}");

    std::fs::remove_file(s.path().join("PRD.md")).unwrap();
    let o = medin(s.path(), &["run"]).output().unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("PRD.md: the PRD named by medin.yaml does not exist"),
        "{out}"
    );
    assert!(!s.path().join("target/medin/runs").exists(), "{out}");
}

#[test]
fn a_critical_requirement_no_passing_task_proves_fails_the_gate() {
    let s = suite(&[
        ("medin.yaml", "suites: [golden]\nprd: PRD.md\n"),
        ("PRD.md", PRD),
        ("golden/hello.yaml", HELLO),
        ("golden/bye.yaml", BYE_FAILS),
    ]);
    let o = medin(s.path(), &["run"]).output().unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(100), "{out}");
    assert!(out.contains("requirements   1/3 proven (PRD 1.0.0)"), "{out}");
    assert!(
        out.contains("REQ-2: a critical requirement of the PRD that no passing task proves"),
        "{out}"
    );
    let r = results(s.path());
    let cov = &r["requirement_coverage"]["requirements"];
    assert_eq!(cov[0]["id"], "REQ-1");
    assert_eq!(cov[0]["proven"], true);
    assert_eq!(cov[0]["trials"][0]["trial"], "golden::hello");
    assert_eq!(cov[1]["proven"], false);
    assert_eq!(cov[2]["trials"].as_array().unwrap().len(), 0);
    assert!(r["breaches"].to_string().contains("REQ-2"), "{}", r["breaches"]);

    // REQ-2 proven, REQ-3 (low) unproven: the gate holds.
    std::fs::write(
        s.path().join("golden/bye.yaml"),
        BYE_FAILS.replace(
            "  - final:",
            "  - write_file: { path: bye.txt, content: bye }\n  - final:",
        ),
    )
    .unwrap();
    let o = medin(s.path(), &["run"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_requirements_checks_are_judged_and_win_over_a_contradicting_expectation() {
    // The task expects hello.txt absent, which REQ-1's check contradicts: the PRD wins.
    let contradicting = HELLO.to_string() + "expect:\n  files: { hello.txt: { absent: true } }\n";
    // The task expects nothing, but REQ-1's check needs hello.txt: it fails on the PRD's check.
    let unproven = "description: writes bye\nagent: oracle\nrequirements: [REQ-1]\nsolution:\n  - write_file: { path: hello.txt, content: \"bye\\n\" }\n  - final: { result: success, message: done }\n";
    let s = suite(&[
        ("medin.yaml", "suites: [golden]\nprd: PRD.md\n"),
        ("PRD.md", PRD),
        ("golden/contradicting.yaml", &contradicting),
        ("golden/unproven.yaml", unproven),
    ]);
    let o = medin(s.path(), &["run", "golden"]).output().unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(100), "{out}");
    assert!(
        out.contains("ok     golden::contradicting") || out.contains("ok golden::contradicting"),
        "{out}"
    );
    assert!(
        out.contains("REQ-1: file_contains hello.txt"),
        "the PRD's check is named in the failure: {out}"
    );
    let log = activity_log(s.path());
    assert!(log.contains("kind: prd") && log.contains("status: skipped"), "{log}");
    // The attempt records the PRD as applied.
    let run = std::fs::read_dir(s.path().join("target/medin/runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let metrics: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("golden/contradicting/attempt-1/metrics.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(metrics["prd"]["prd_version"], "1.0.0", "{metrics}");
    assert_eq!(metrics["prd"]["named"][0], "REQ-1");
    assert_eq!(metrics["prd"]["checks_added"], 1);
    assert_eq!(metrics["prd"]["conflicts"][0]["path"], "hello.txt");
    assert!(log.contains("PRD conflict with REQ-1"), "{log}");
    assert!(log.contains("the PRD wins"), "{log}");
}

#[test]
fn the_brief_carries_the_relevant_requirements() {
    // A process agent that answers with the requirement ids of its brief and whether the
    // prompt carries them too.
    let agent = r#"import json, sys
task = json.loads(sys.stdin.readline())
ids = ",".join(r["id"] + ":" + r["why"] if isinstance(r["why"], str) else r["id"] + ":" + list(r["why"])[0] for r in task.get("requirements", []))
inprompt = "Requirements (PRD 1.0.0)" in task["prompt"]
print(json.dumps({"type": "final", "result": "success", "message": ids + " prompt=" + str(inprompt)}), flush=True)
"#;
    let task = "description: rotation of the logs\nrequirements: [REQ-2]\nprompt: Rotate.\nexpect:\n  outcome: success\n  final: { message: '^REQ-2:named,REQ-3:keyword prompt=True$' }\n  validate: [ { command: 'true' } ]\n";
    let s = suite(&[
        ("medin.yaml", "suites: [golden]\nprd: PRD.md\n"),
        (
            "PRD.md",
            &PRD.replace(
                "Priority: critical\n\nThe agent writes bye",
                "Priority: high\n\nThe agent writes bye",
            ),
        ),
        ("golden/rotate.yaml", task),
        ("agent.py", agent),
    ]);
    let agent_arg = format!("process:python3 {}", s.path().join("agent.py").display());
    let o = medin(s.path(), &["run", "--agent", &agent_arg, "golden"])
        .output()
        .unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("ok     golden::rotate"), "{out}");
}

#[test]
fn a_prd_edited_mid_run_is_reloaded_before_the_next_task_and_an_invalid_edit_halts_the_rest() {
    let slow = "description: slow\nagent: oracle\nrequirements: [REQ-3]\nsolution:\n  - bash: sleep 3\n  - final: { result: success, message: done }\n";
    let s = suite(&[
        ("medin.yaml", "suites: [golden]\nprd: PRD.md\n"),
        ("PRD.md", PRD),
        ("golden/a-slow.yaml", slow),
        ("golden/b-hello.yaml", HELLO),
        ("golden/c-slow.yaml", slow),
        ("golden/d-hello.yaml", HELLO),
    ]);
    let child = medin(s.path(), &["run", "--jobs", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = |name: &str| {
        std::fs::read_dir(s.path().join("target/medin/runs"))
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .is_some_and(|run| run.path().join("golden").join(name).exists())
    };
    let wait_for = |name: &str| {
        let t = Instant::now();
        while !started(name) {
            assert!(t.elapsed() < Duration::from_secs(60), "{name} never started");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    // While a-slow runs: REQ-3 changes, REQ-4 is added.
    wait_for("a-slow");
    let edited = PRD
        .replace("Version: 1.0.0", "Version: 1.1.0")
        .replace("Logs rotate.", "Logs rotate daily.")
        + "\n## REQ-4: New one\n\nPriority: medium\n\nNew.\n\nAcceptance criteria:\n\n- new\n";
    std::fs::write(s.path().join("PRD.md"), edited).unwrap();
    // While c-slow runs: the PRD breaks.
    wait_for("c-slow");
    std::fs::write(s.path().join("PRD.md"), "# nothing here\n").unwrap();
    let o = child.wait_with_output().unwrap();
    let out = text(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "the halted task is an infrastructure error: {out}"
    );
    let log = activity_log(s.path());
    assert!(
        log.contains("PRD reloaded") && log.contains("1.0.0 → 1.1.0: added REQ-4; changed REQ-3"),
        "{log}"
    );
    assert!(log.contains("PRD changed and is invalid"), "{log}");
    // a-slow names REQ-3, which changed while it ran: a person is asked, in the log.
    assert!(
        log.contains("status: pending")
            && log.contains("human decision requested: the task ran under PRD 1.0.0 and REQ-3 changed in PRD 1.1.0"),
        "{log}"
    );
    // b ran under the reloaded PRD and passed; d did not start under a broken PRD.
    let r = results(s.path());
    let status = |t: &str| {
        r["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["task_id"] == t)
            .map(|x| x["status"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(status("golden::b-hello").as_deref(), Some("passed"), "{out}");
    assert_eq!(status("golden::d-hello").as_deref(), Some("infrastructure"), "{out}");
    assert!(
        out.contains("the suite's PRD is invalid, so no task may start"),
        "{out}"
    );
    assert!(out.contains("PRD.md:1:1: the PRD gives no version"), "{out}");
}

#[test]
fn check_locates_a_requirement_the_prd_does_not_define() {
    let s = suite(&[
        ("medin.yaml", "suites: [golden]\nprd: PRD.md\n"),
        ("PRD.md", PRD),
        ("golden/hello.yaml", &HELLO.replace("[REQ-1]", "[REQ-1, REQ-11]")),
    ]);
    let o = medin(s.path(), &["check", "."]).output().unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(100), "{out}");
    assert!(
        out.contains("hello.yaml:3:23: requirement `REQ-11` is not defined by the PRD")
            && out.contains("did you mean `REQ-1`?"),
        "{out}"
    );
}

//! Real runs of process agents: the example agent and misbehaving agents from
//! `tests/data/agent/`, driven through the JSON-lines protocol. Tool results are receipts built
//! here (protocol testing: nothing medin runs is mocked).

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use medin::internal::agent::process::{group_alive, ProcessAgent};
use medin::internal::agent::{
    start, Action, Agent, AgentEvent, AgentFailure, AgentRegistry, AgentSource, ModelLink, TaskBrief,
};
use medin::internal::sandbox::SandboxConfig;
use medin::internal::spec::{FinalReport, FinalResult};
use medin::internal::tools::{ActionInput, ErrorCode, Receipt};
use serde_json::{json, Value};
use support::pids_with;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn brief(prompt: &str) -> TaskBrief {
    let tools = medin::internal::tools::registry()
        .into_iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    TaskBrief {
        task_id: "gt-test".into(),
        prompt: prompt.into(),
        tools,
        limits: json!({"timeout": "30s", "max_turns": 10}),
        workspace: PathBuf::from("/tmp/medin-test-ws"),
        retry: None,
        requirements: Vec::new(),
    }
}

fn spawn(command: &str, prompt: &str, reply_timeout: Duration) -> ProcessAgent {
    ProcessAgent::spawn(command, &root(), &brief(prompt), reply_timeout).unwrap()
}

fn example(prompt: &str) -> ProcessAgent {
    spawn("python3 examples/agent.py", prompt, Duration::from_secs(10))
}

/// Drives `agent` until a final report or failure, answering each call with `respond`.
/// Returns every event.
fn drive(agent: &mut dyn Agent, mut respond: impl FnMut(&Action) -> Receipt) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    let mut pending: Option<(Action, Receipt)> = None;
    for _ in 0..40 {
        let ev = agent.next(pending.as_ref().map(|(a, r)| (a, r)), far());
        pending = None;
        match &ev {
            AgentEvent::Call(action) => pending = Some((action.clone(), respond(action))),
            AgentEvent::Malformed { .. } => {
                let ack = Action {
                    id: String::new(),
                    tool: String::new(),
                    input: ActionInput::Json(Value::Null),
                };
                pending = Some((
                    ack,
                    Receipt::error(ErrorCode::MalformedOutput, "not a protocol message"),
                ));
            }
            AgentEvent::Usage(_) | AgentEvent::ModelCall(_) => {}
            // A process agent never delegates its tools nor opens connections through medin.
            AgentEvent::Delegated(_)
            | AgentEvent::DelegatedDone { .. }
            | AgentEvent::Unguarded(_)
            | AgentEvent::Connection(_)
            | AgentEvent::Note(_) => panic!("a process agent sent {ev:?}"),
            AgentEvent::Final(_) | AgentEvent::Reply(_) | AgentEvent::Failed(_) | AgentEvent::HarnessFailed(_) => {
                events.push(ev);
                return events;
            }
        }
        events.push(ev);
    }
    panic!("agent did not finish: {events:#?}");
}

fn calls(events: &[AgentEvent]) -> Vec<(String, Value)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Call(Action {
                tool,
                input: ActionInput::Json(v),
                ..
            }) => Some((tool.clone(), v.clone())),
            _ => None,
        })
        .collect()
}

fn final_of(events: &[AgentEvent]) -> FinalReport {
    match events.last() {
        Some(AgentEvent::Final(f)) => f.clone(),
        other => panic!("expected a final report, got {other:?}"),
    }
}

#[test]
fn example_agent_creates_a_file_and_checks_it() {
    let mut agent = example("Create hello.txt containing the line \"hello\".");
    let events = drive(&mut agent, |a| match a.tool.as_str() {
        "write_file" => Receipt::success(json!({"path": "hello.txt", "bytes": 6})),
        "read_file" => Receipt::success(json!({"path": "hello.txt", "content": "hello\n"})),
        other => panic!("unexpected tool {other}"),
    });
    assert_eq!(
        calls(&events),
        vec![
            (
                "write_file".to_string(),
                json!({"path": "hello.txt", "content": "hello\n"})
            ),
            ("read_file".to_string(), json!({"path": "hello.txt"})),
        ]
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Usage(u) if u.input_tokens > 0)),
        "usage reported"
    );
    let ids: Vec<&str> = events
        .iter()
        .filter_map(|e| {
            if let AgentEvent::Call(a) = e {
                Some(a.id.as_str())
            } else {
                None
            }
        })
        .collect();
    assert_eq!(ids, ["r1-call-1", "r1-call-2"]);
    let f = final_of(&events);
    assert_eq!(f.result, FinalResult::Success);
    assert!(f.message.contains("hello.txt"), "{}", f.message);
    agent.finish();
    assert!(!group_alive(agent.pgid()));
}

#[test]
fn example_agent_runs_a_command_and_reports_its_output() {
    let mut agent = example("Run `echo hi` and tell me what it printed.");
    let events = drive(&mut agent, |_| {
        Receipt::success(json!({"exit_code": 0, "stdout": "hi\nthere\n", "stderr": ""}))
    });
    assert_eq!(
        calls(&events),
        vec![("bash".to_string(), json!({"command": "echo hi"}))]
    );
    assert_eq!(
        final_of(&events),
        FinalReport {
            code: None,
            result: FinalResult::Success,
            message: "hi".into()
        }
    );
    agent.finish();

    let mut agent = example("Run `make test`");
    let events = drive(&mut agent, |_| {
        let mut r = Receipt::error(ErrorCode::ToolExecutionFailed, "exit code 2");
        r.data = json!({"exit_code": 2, "stdout": "", "stderr": "make: *** No rule to make target 'test'.\n"});
        r
    });
    let f = final_of(&events);
    assert_eq!(f.result, FinalResult::Error);
    assert!(f.message.contains("No rule to make target"), "{}", f.message);
    agent.finish();
}

#[test]
fn example_agent_reads_and_summarises() {
    let mut agent = example("Read notes.md and summarise it.");
    let events = drive(&mut agent, |_| {
        Receipt::success(json!({"content": "# Title\nline two\nline three\n"}))
    });
    assert_eq!(
        calls(&events),
        vec![("read_file".to_string(), json!({"path": "notes.md"}))]
    );
    assert_eq!(
        final_of(&events),
        FinalReport {
            code: None,
            result: FinalResult::Success,
            message: "notes.md: 3 lines; first line: # Title".into()
        }
    );
    agent.finish();
}

#[test]
fn example_agent_asks_when_it_does_not_understand() {
    let mut agent = example("Make the app faster.");
    let events = drive(&mut agent, |a| panic!("no call expected, got {a:?}"));
    let f = final_of(&events);
    assert_eq!(f.result, FinalResult::Issue);
    assert!(f.message.ends_with('?'), "{}", f.message);
    agent.finish();
}

#[test]
fn example_agent_explains_a_denied_tool() {
    let mut agent = example("Create a.txt containing x");
    let events = drive(&mut agent, |_| {
        Receipt::error(
            ErrorCode::PermissionDenied,
            "tool `write_file` is denied by this task's policy (deny: [\"write_*\"])",
        )
    });
    let f = final_of(&events);
    assert_eq!(f.result, FinalResult::Issue);
    assert!(
        f.message.contains("write_file") && f.message.contains("denied"),
        "{}",
        f.message
    );
    agent.finish();
}

#[test]
fn example_agent_starts_a_new_round_on_feedback() {
    let mut agent = example("Run `cargo test`");
    let events = drive(&mut agent, |_| {
        Receipt::success(json!({"exit_code": 0, "stdout": "ok\n"}))
    });
    assert_eq!(final_of(&events).result, FinalResult::Success);
    agent.feedback(&json!({"round": 2, "failures": ["tests::a"]}));
    let events = drive(&mut agent, |_| {
        Receipt::success(json!({"exit_code": 0, "stdout": "ok again\n"}))
    });
    let AgentEvent::Call(first) = events.iter().find(|e| matches!(e, AgentEvent::Call(_))).unwrap() else {
        unreachable!()
    };
    assert_eq!(first.id, "r2-call-1");
    assert_eq!(final_of(&events).message, "ok again");
    agent.finish();
}

#[test]
fn task_line_and_malformed_reply_reach_the_agent() {
    let mut agent = spawn("python3 tests/data/agent/echo.py", "say hi", Duration::from_secs(10));
    let events = drive(&mut agent, |a| panic!("no call expected, got {a:?}"));
    assert!(matches!(&events[0], AgentEvent::Malformed { line, .. } if line == "this is not a protocol message"));
    let report: Value = serde_json::from_str(&final_of(&events).message).unwrap();
    let task = &report["task"];
    assert_eq!(task["type"], "task");
    assert_eq!(task["task_id"], "gt-test");
    assert_eq!(task["prompt"], "say hi");
    assert_eq!(task["workspace"], "/tmp/medin-test-ws");
    assert_eq!(task["limits"]["max_turns"], 10);
    assert!(task["tools"].as_array().unwrap().iter().any(|t| t["name"] == "bash"));
    assert_eq!(report["reply"]["type"], "tool_result");
    assert_eq!(report["reply"]["id"], Value::Null);
    assert_eq!(report["reply"]["receipt"]["errors"][0]["code"], "MALFORMED_OUTPUT");
    assert_eq!(Path::new(report["cwd"].as_str().unwrap()), root());
    assert_eq!(report["env_task_id"], "gt-test");
    agent.finish();
}

#[test]
fn garbage_lines_are_malformed_then_the_final_counts() {
    let mut agent = spawn("python3 tests/data/agent/garbage.py", "p", Duration::from_secs(10));
    let events = drive(&mut agent, |a| panic!("no call expected, got {a:?}"));
    let malformed: Vec<(&str, &str)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Malformed { line, reason } => Some((line.as_str(), reason.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(malformed.len(), 3, "{events:#?}");
    assert_eq!(malformed[0].0, "Thinking about the task...");
    assert!(malformed[0].1.contains("not JSON"), "{}", malformed[0].1);
    assert!(
        malformed[1].1.contains("unknown message type `thought`"),
        "{}",
        malformed[1].1
    );
    assert!(malformed[2].1.contains("id"), "{}", malformed[2].1);
    assert_eq!(
        final_of(&events),
        FinalReport {
            code: None,
            result: FinalResult::Success,
            message: "done anyway".into()
        }
    );
    agent.finish();
}

#[test]
fn crash_is_reported_with_exit_status_and_stderr_tail() {
    let mut agent = spawn("python3 tests/data/agent/crash.py", "p", Duration::from_secs(10));
    match agent.next(None, far()) {
        AgentEvent::Failed(AgentFailure::Exited { status, stderr_tail }) => {
            assert_eq!(status, "exit code 3");
            assert!(
                stderr_tail.ends_with("fatal: model endpoint unreachable"),
                "{stderr_tail}"
            );
            assert!(stderr_tail.contains("stderr line 29"));
            assert!(
                !stderr_tail.contains("stderr line 5\n"),
                "only the tail is kept: {stderr_tail}"
            );
            assert_eq!(stderr_tail.lines().count(), 20);
        }
        other => panic!("expected Exited, got {other:?}"),
    }
    // The failure sticks, and answering it (a write to a closed stdin) does not panic.
    let a = Action {
        id: "x".into(),
        tool: "bash".into(),
        input: ActionInput::Json(json!({})),
    };
    let r = Receipt::success(json!({}));
    assert!(matches!(
        agent.next(Some((&a, &r)), far()),
        AgentEvent::Failed(AgentFailure::Exited { .. })
    ));
    agent.finish();
}

#[test]
fn exit_without_final_after_a_write_to_closed_stdin() {
    let mut agent = spawn("exit 0", "p", Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(200));
    let a = Action {
        id: "call-1".into(),
        tool: "bash".into(),
        input: ActionInput::Json(json!({})),
    };
    let r = Receipt::success(json!({"big": "x".repeat(200_000)}));
    match agent.next(Some((&a, &r)), far()) {
        AgentEvent::Failed(AgentFailure::Exited { status, stderr_tail }) => {
            assert_eq!(status, "exit code 0");
            assert_eq!(stderr_tail, "(empty)");
        }
        other => panic!("expected Exited, got {other:?}"),
    }
    agent.finish();
}

#[test]
fn hang_times_out_within_the_reply_timeout() {
    let mut agent = spawn("python3 tests/data/agent/hang.py", "p", Duration::from_millis(500));
    let t = Instant::now();
    let ev = agent.next(None, far());
    let took = t.elapsed();
    assert_eq!(
        ev,
        AgentEvent::Failed(AgentFailure::TimedOut {
            after: Duration::from_millis(500)
        })
    );
    assert!(
        took >= Duration::from_millis(450) && took < Duration::from_millis(1200),
        "took {took:?}"
    );
    let t = Instant::now();
    assert!(matches!(
        agent.next(None, far()),
        AgentEvent::Failed(AgentFailure::TimedOut { .. })
    ));
    assert!(
        t.elapsed() < Duration::from_millis(100),
        "a failed agent answers at once"
    );
    let pgid = agent.pgid();
    assert!(group_alive(pgid));
    agent.finish();
    assert!(!group_alive(pgid));
}

fn pid_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next()
                .unwrap_or("Z");
            state != "Z" && state != "X"
        }
        Err(_) => false,
    }
}

#[test]
fn finish_kills_the_whole_group_even_children_that_ignore_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let cmd = format!("python3 tests/data/agent/fork_and_hang.py {}", pidfile.display());
    let mut agent = spawn(&cmd, "p", Duration::from_millis(500));
    assert!(matches!(
        agent.next(None, far()),
        AgentEvent::Failed(AgentFailure::TimedOut { .. })
    ));
    let deadline = Instant::now() + Duration::from_secs(5);
    let child: i32 = loop {
        if let Ok(text) = std::fs::read_to_string(&pidfile) {
            if let Ok(pid) = text.trim().parse() {
                break pid;
            }
        }
        assert!(Instant::now() < deadline, "the agent never started its child");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(pid_alive(child));
    let pgid = agent.pgid();
    let t = Instant::now();
    agent.finish();
    assert!(
        t.elapsed() >= Duration::from_millis(1900),
        "SIGTERM is ignored, so SIGKILL comes after the grace"
    );
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(!group_alive(pgid), "a process of the agent's group survived finish()");
    assert!(!pid_alive(child), "the grandchild {child} survived finish()");
    // finish is idempotent.
    agent.finish();
}

#[test]
fn drop_kills_the_group() {
    let agent = spawn("python3 tests/data/agent/hang.py", "p", Duration::from_millis(500));
    let pgid = agent.pgid();
    std::thread::sleep(Duration::from_millis(100));
    assert!(group_alive(pgid));
    drop(agent);
    assert!(!group_alive(pgid));
}

#[test]
fn start_reports_a_spawn_failure_as_an_agent_failure() {
    let source = AgentSource {
        spec: AgentRegistry::builtin().parse("process:python3 agent.py").unwrap(),
        base_dir: PathBuf::from("/nonexistent/medin/dir"),
    };
    let mut agent = start(
        &source,
        &brief("p"),
        &[],
        &SandboxConfig::new("/tmp"),
        far(),
        &ModelLink::live(),
    );
    match agent.next(None, far()) {
        AgentEvent::Failed(AgentFailure::Spawn { command, reason }) => {
            assert_eq!(command, "python3 agent.py");
            assert!(reason.contains("/nonexistent/medin/dir"), "{reason}");
        }
        other => panic!("expected Spawn, got {other:?}"),
    }
    agent.finish();
}

#[test]
fn start_runs_the_example_agent_from_its_spec() {
    let source = AgentSource {
        spec: AgentRegistry::builtin()
            .parse("process:python3 examples/agent.py")
            .unwrap(),
        base_dir: root(),
    };
    let mut agent = start(
        &source,
        &brief("Run `true`"),
        &[],
        &SandboxConfig::new("/tmp"),
        far(),
        &ModelLink::live(),
    );
    assert_eq!(agent.name(), "process:python3 examples/agent.py");
    let events = drive(agent.as_mut(), |_| {
        Receipt::success(json!({"exit_code": 0, "stdout": ""}))
    });
    assert_eq!(final_of(&events).result, FinalResult::Success);
    agent.finish();
}

#[test]
fn an_overlong_line_is_cut_and_malformed() {
    let mut agent = spawn("python3 tests/data/agent/long_line.py", "p", Duration::from_secs(20));
    let events = drive(&mut agent, |a| panic!("no call expected, got {a:?}"));
    let malformed: Vec<&String> = events
        .iter()
        .filter_map(|e| {
            if let AgentEvent::Malformed { line, .. } = e {
                Some(line)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        malformed.len(),
        1,
        "the rest of the long line is dropped, not read as more lines"
    );
    assert!(malformed[0].chars().count() <= 501);
    assert_eq!(final_of(&events).message, "after the flood");
    agent.finish();
}

#[test]
fn a_command_that_does_not_exist_exits_127_with_the_shell_message() {
    let mut agent = spawn("no-such-agent-binary-medin", "p", Duration::from_secs(5));
    match agent.next(None, far()) {
        AgentEvent::Failed(AgentFailure::Exited { status, stderr_tail }) => {
            assert_eq!(status, "exit code 127");
            assert!(stderr_tail.contains("not found"), "{stderr_tail}");
        }
        other => panic!("expected Exited, got {other:?}"),
    }
    agent.finish();
}

#[test]
fn a_reply_message_carries_free_text_and_a_reply_without_text_is_malformed() {
    use medin::internal::agent::process::parse_line;
    assert_eq!(
        parse_line(r#"{"type":"reply","text":"```json\n{}\n```"}"#),
        Some(AgentEvent::Reply("```json\n{}\n```".into()))
    );
    assert!(matches!(
        parse_line(r#"{"type":"reply"}"#),
        Some(AgentEvent::Malformed { .. })
    ));
}

#[test]
fn an_agent_that_does_not_read_its_stdin_fails_instead_of_filling_medins_memory() {
    // Forty calls without reading one result, each answered with a 1 MiB receipt: medin holds
    // a few for it, then reports the agent, instead of queueing 40 MiB.
    let script = "import json,sys,time\nsys.stdin.readline()\nfor i in range(40):\n    print(json.dumps({'type':'tool_call','id':str(i),'tool':'bash','input':{'command':'true'}}), flush=True)\ntime.sleep(30)\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("deaf.py"), script).unwrap();
    let command = format!("python3 {}", dir.path().join("deaf.py").display());
    let mut agent = spawn(&command, "p", Duration::from_secs(10));
    let big = "o".repeat(1 << 20);
    let events = drive(&mut agent, |_| Receipt::success(json!({ "stdout": big })));
    let calls = events.iter().filter(|e| matches!(e, AgentEvent::Call(_))).count();
    match events.last() {
        Some(AgentEvent::Failed(f @ AgentFailure::NotReading { .. })) => {
            assert!(f.to_string().contains("stopped reading its stdin"), "{f}")
        }
        other => panic!("expected NotReading, got {other:?}"),
    }
    assert!(calls <= 12, "{calls} calls were answered");
}

fn wait_until_gone(needle: &str, within: Duration) -> Vec<i32> {
    let deadline = Instant::now() + within;
    while !pids_with(needle).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    pids_with(needle)
}

#[test]
fn an_agents_daemons_do_not_outlive_it_even_without_session_and_environment() {
    // The agent leaves its session and clears its environment in a daemon, double-forks
    // another, then hangs reading stdin. Finishing the agent ends all of it.
    let mut agent = spawn(
        "setsid env -i sh -c 'exec sleep 3991' > /dev/null 2>&1 & \
         (env -i sh -c '(exec sleep 3992) &' > /dev/null 2>&1 &); exec cat > /dev/null",
        "p",
        Duration::from_millis(300),
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids_with("sleep 399").len() < 2 {
        assert!(Instant::now() < deadline, "the agent's daemons never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    agent.finish();
    assert_eq!(wait_until_gone("sleep 399", Duration::from_secs(2)), Vec::<i32>::new());
}

#[test]
fn an_agent_outlives_the_thread_that_started_it() {
    // PR_SET_PDEATHSIG fires when the *thread* that forked a process exits: an agent started
    // by a thread that then ends must run on until it is finished.
    let mut agent = std::thread::spawn(|| spawn("exec sleep 3993", "p", Duration::from_millis(300)))
        .join()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        group_alive(agent.pgid()),
        "the agent died with the thread that started it"
    );
    assert_eq!(pids_with("sleep 3993").len(), 1);
    agent.finish();
    assert_eq!(wait_until_gone("sleep 3993", Duration::from_secs(2)), Vec::<i32>::new());
}

#[test]
fn an_agent_dies_with_its_guardian() {
    // The agent's parent is its guardian (a child subreaper named medin-guardian); if the
    // guardian is killed the agent gets PDEATHSIG, whatever thread started it.
    let mut agent = spawn("exec sleep 3994", "p", Duration::from_millis(300));
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", agent.pgid())).unwrap();
    let ppid: i32 = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    if std::fs::read_to_string(format!("/proc/{ppid}/comm")).unwrap().trim() != "medin-guardian" {
        return; // no guardian on this platform
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(ppid), nix::sys::signal::Signal::SIGKILL).unwrap();
    assert_eq!(wait_until_gone("sleep 3994", Duration::from_secs(2)), Vec::<i32>::new());
    agent.finish();
}

/// A task deadline far away: these tests exercise the agent's own reply timeout.
fn far() -> std::time::Instant {
    std::time::Instant::now() + std::time::Duration::from_secs(3600)
}

//! What medin's pre-tool hook costs a CLI agent per tool call: the real relay (bash, a TCP
//! round trip to medin's hook server, the answer printed), against the least any command hook
//! costs — a bash that reads its input and prints a fixed allow (what a CLI run without medin's
//! judgement, as in Harbor's or Terminal-Bench's adapters, would pay at most, if it had a hook).
//! The judgement itself (guard, policy, limits, receipt) is measured by `benches/pipeline.rs`.

use std::io::Write;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::mpsc;

use criterion::{criterion_group, criterion_main, Criterion};
use medin::internal::agent::cli::hook::{relay_script, HookAnswer, HookEvent, HookServer};

const PAYLOAD: &str = r#"{"tool_name":"Bash","tool_input":{"command":"ls -la"},"tool_use_id":"toolu_1"}"#;

fn run_hook(script: &std::path::Path) {
    let mut child = Command::new("bash")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("bash runs");
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(PAYLOAD.as_bytes())
        .expect("the hook reads its input");
    let out = child.wait_with_output().expect("the hook ends");
    assert!(out.status.success() && !out.stdout.is_empty());
}

fn hook_round_trip(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (tx, rx) = mpsc::channel();
    let server = HookServer::start(TcpListener::bind("127.0.0.1:0").expect("loopback"), tx).expect("serves");
    std::thread::spawn(move || {
        for call in rx {
            let _ = call.answer.send(HookAnswer {
                exit: 0,
                stdout: r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#.into(),
            });
        }
    });
    let relay = dir.path().join("pre-tool.sh");
    std::fs::write(&relay, relay_script(server.port(), HookEvent::Pre)).expect("written");
    let bare = dir.path().join("bare.sh");
    std::fs::write(&bare, "#!/bin/bash\ncat >/dev/null\necho '{}'\n").expect("written");

    let mut group = c.benchmark_group("cli_hook");
    group.sample_size(30);
    group.bench_function("medin_relay_round_trip", |b| b.iter(|| run_hook(&relay)));
    group.bench_function("bare_bash_hook", |b| b.iter(|| run_hook(&bare)));
    group.finish();
}

criterion_group!(benches, hook_round_trip);
criterion_main!(benches);

//! Embedding medin: an agent written in Rust, registered by name, runs a bundled task.
//!
//! ```sh
//! cargo run --example embed                                          # passes gt-002
//! cargo run --example embed -- golden/gt-005-error-recovery.yaml     # fails, and says why
//! ```
//!
//! In a crate of your own, the same builder is the `main` of a `harness = false` test target
//! (`[[test]] name = "eval", path = "harness/main.rs", harness = false`), so `cargo test`
//! runs your YAML suite with your agent:
//!
//! ```text
//! fn main() -> std::process::ExitCode {
//!     medin::Harness::new(env!("CARGO_MANIFEST_DIR"))
//!         .agent("mine", |context: &medin::AgentContext<'_>| my_agent(context))
//!         .run()
//! }
//! ```
//!
//! and `agent: mine` in `medin.yaml`, in a task, or `MEDIN_AGENT=mine cargo test` picks it.

use std::process::ExitCode;
use std::time::Instant;

use medin::{Action, ActionInput, Agent, AgentContext, AgentEvent, FinalReport, FinalResult, Harness, Receipt};

/// A scripted "coder": looks at the workspace, writes `hello.txt`, checks it, reports.
struct HelloAgent {
    step: usize,
}

impl HelloAgent {
    fn call(&self, tool: &str, input: serde_json::Value) -> AgentEvent {
        AgentEvent::Call(Action {
            id: self.step.to_string(),
            tool: tool.into(),
            input: ActionInput::Json(input),
        })
    }
}

impl Agent for HelloAgent {
    fn name(&self) -> String {
        "hello".into()
    }

    fn next(&mut self, last: Option<(&Action, &Receipt)>, _deadline: Instant) -> AgentEvent {
        // Every action went through medin's guard and sandbox; the receipt says how it went.
        if let Some((action, receipt)) = last {
            eprintln!("  {} -> {:?}", action.tool, receipt.status);
        }
        self.step += 1;
        match self.step {
            1 => self.call("list_dir", serde_json::json!({ "path": "." })),
            2 => self.call(
                "write_file",
                serde_json::json!({ "path": "hello.txt", "content": "hello\n" }),
            ),
            3 => self.call("bash", serde_json::json!({ "command": "cat hello.txt" })),
            _ => AgentEvent::Final(FinalReport {
                result: FinalResult::Success,
                message: "created hello.txt".into(),
                code: None,
            }),
        }
    }

    fn finish(&mut self) {}
}

fn main() -> ExitCode {
    let task = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "golden/gt-002-create-file.yaml".into());
    let harness = Harness::new(env!("CARGO_MANIFEST_DIR"))
        .agent("hello", |_: &AgentContext<'_>| HelloAgent { step: 0 })
        .default_agent("hello");
    let results = match harness.run_tasks(&[task.as_str()]) {
        Ok(results) => results,
        Err(e) => {
            eprintln!("embed: {e}");
            return e.exit_status().into();
        }
    };
    let mut status = medin::ExitStatus::Success;
    for result in &results {
        match result.failure_message() {
            None => println!("{} passed with agent {}", result.trial, result.agent),
            Some(message) => {
                println!("{message}");
                status = status.and(medin::ExitStatus::Failed);
            }
        }
    }
    status.into()
}

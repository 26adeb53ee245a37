//! Who acts. An agent receives the task brief and answers with tool calls until it sends its
//! final report; the runner sends every call through guard → sandbox → validate → log and hands
//! the receipt back.
//!
//! - [`oracle`]: plays the task's scripted `solution`.
//! - [`process`]: any program speaking JSON lines on stdin/stdout (DESIGN §4).
//! - [`exec`]: a black-box command run in the sandbox; only the end state is judged.
//!
//! An agent never touches the workspace itself and never sees the guard: it only proposes.

pub mod exec;
mod reply;
pub use reply::parse_reply;
pub mod oracle;
pub mod process;

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::spec::{AgentSpec, ExecAgentSpec, FinalReport, ProcessAgentSpec, Step};
use crate::tools::{ActionInput, Receipt};

/// One tool call proposed by the agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// The agent's id for the call (echoed in the tool result).
    pub id: String,
    pub tool: String,
    pub input: ActionInput,
}

/// Token usage an agent reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// What the agent did next.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    Call(Action),
    Final(FinalReport),
    /// A free-text reply that ends the round (a coder's answer, parsed by the runner: JSON
    /// `{"result", "message"}`, raw or inside a fenced markdown block).
    Reply(String),
    Usage(Usage),
    /// A line that is not a protocol message (the runner answers with MALFORMED_OUTPUT).
    Malformed {
        line: String,
        reason: String,
    },
    /// The agent broke: exited, hung, or could not start.
    Failed(AgentFailure),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentFailure {
    #[error("agent could not start `{command}`: {reason}")]
    Spawn { command: String, reason: String },
    #[error("agent exited ({status}) before its final report; stderr tail: {stderr_tail}")]
    Exited { status: String, stderr_tail: String },
    #[error("agent sent no message within {:.1}s", after.as_secs_f64())]
    TimedOut { after: Duration },
    #[error("agent ended without a final report")]
    NoFinal,
    /// The agent left more than `unread` messages unread on its stdin (medin holds no more).
    #[error("agent stopped reading its stdin (more than {unread} messages unread); read each tool_result before the next call")]
    NotReading { unread: usize },
}

/// What an agent is told at the start.
#[derive(Debug, Clone, Serialize)]
pub struct TaskBrief {
    pub task_id: String,
    pub prompt: String,
    /// `{name, description, input_schema}` per tool the policy allows.
    pub tools: Vec<serde_json::Value>,
    /// The task's limits, for the agent's information.
    pub limits: serde_json::Value,
    pub workspace: PathBuf,
    /// Set when the agent is started again after a transient failure (2 for the first
    /// restart): its workspace holds what the failed start did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<u32>,
}

/// An agent under test.
pub trait Agent: Send {
    /// A short name for logs (`oracle`, `process:python3 agent.py`).
    fn name(&self) -> String;

    /// The next event. `last` is the receipt of the previous call (None at the start).
    ///
    /// The answer to a [`AgentEvent::Malformed`] line is passed as `last` with an [`Action`]
    /// whose `id` is empty: a process agent then receives a `tool_result` with `"id": null`.
    ///
    /// `deadline` is the task's: an agent never waits for its own answer past it (a process
    /// agent that is still silent then reports [`AgentFailure::TimedOut`], which the runner
    /// turns into the task's timeout).
    fn next(&mut self, last: Option<(&Action, &Receipt)>, deadline: std::time::Instant) -> AgentEvent;

    /// Multi-round kinds: feedback before the next round (test failures, failed gates).
    fn feedback(&mut self, feedback: &serde_json::Value) {
        let _ = feedback;
    }

    /// Ends the agent (kills its process tree, if any). Called exactly once.
    fn finish(&mut self);
}

/// Where an agent spec came from, so relative commands resolve against the right directory.
#[derive(Debug, Clone)]
pub struct AgentSource {
    pub spec: AgentSpec,
    /// Directory of the file that declared the agent (or the current dir for `MEDIN_AGENT`).
    pub base_dir: PathBuf,
}

/// The forms an agent argument can take, for error messages.
pub const AGENT_FORMS: &str = "`oracle` (plays the task's solution), `process:CMD` (a program speaking JSON lines, e.g. `process:python3 examples/agent.py`) or `exec:CMD` (a black-box command run in the workspace)";

/// Parses `oracle`, `process:CMD` or `exec:CMD` (the form of `MEDIN_AGENT` and `--agent`).
pub fn parse_agent_arg(text: &str) -> Result<AgentSpec, String> {
    let t = text.trim();
    if t == "oracle" {
        return Ok(AgentSpec::Oracle);
    }
    let command_of = |rest: &str, kind: &str| {
        let cmd = rest.trim();
        if cmd.is_empty() {
            Err(format!(
                "agent `{t}` has no command after `{kind}:`; write e.g. `{kind}:python3 agent.py`"
            ))
        } else {
            Ok(cmd.to_string())
        }
    };
    if let Some(rest) = t.strip_prefix("process:") {
        return Ok(AgentSpec::Process(ProcessAgentSpec {
            command: command_of(rest, "process")?,
            reply_timeout: None,
        }));
    }
    if let Some(rest) = t.strip_prefix("exec:") {
        return Ok(AgentSpec::Exec(ExecAgentSpec {
            command: command_of(rest, "exec")?,
        }));
    }
    Err(format!("unknown agent `{t}`; use {AGENT_FORMS}"))
}

/// Starts the agent described by `source` for one task attempt.
/// `solution` is the task's scripted solution (used by the oracle only).
///
/// A process agent that cannot be started is returned as an agent whose first event is
/// [`AgentFailure::Spawn`], so the runner reports it like any other agent failure.
pub fn start(
    source: &AgentSource,
    brief: &TaskBrief,
    solution: &[Step],
    sandbox: &crate::sandbox::SandboxConfig,
) -> Box<dyn Agent> {
    let _ = sandbox;
    match &source.spec {
        AgentSpec::Oracle => Box::new(oracle::OracleAgent::new(solution.to_vec())),
        AgentSpec::Process(spec) => {
            let timeout = spec
                .reply_timeout
                .map(|d| d.0)
                .unwrap_or(process::DEFAULT_REPLY_TIMEOUT);
            match process::ProcessAgent::spawn(&spec.command, &source.base_dir, brief, timeout) {
                Ok(agent) => Box::new(agent),
                Err(failure) => Box::new(BrokenAgent {
                    name: format!("process:{}", spec.command),
                    failure,
                }),
            }
        }
        AgentSpec::Exec(spec) => Box::new(exec::ExecAgent::new(&spec.command, brief)),
    }
}

/// An agent that could not start: every event is its failure.
#[derive(Debug)]
pub struct BrokenAgent {
    pub name: String,
    pub failure: AgentFailure,
}

impl Agent for BrokenAgent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn next(&mut self, _last: Option<(&Action, &Receipt)>, _deadline: std::time::Instant) -> AgentEvent {
        AgentEvent::Failed(self.failure.clone())
    }

    fn finish(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_args_parse() {
        assert_eq!(parse_agent_arg("oracle"), Ok(AgentSpec::Oracle));
        assert_eq!(
            parse_agent_arg("process:python3 examples/agent.py"),
            Ok(AgentSpec::Process(ProcessAgentSpec {
                command: "python3 examples/agent.py".into(),
                reply_timeout: None
            }))
        );
        assert_eq!(
            parse_agent_arg(" exec: ./run.sh "),
            Ok(AgentSpec::Exec(ExecAgentSpec {
                command: "./run.sh".into()
            }))
        );
        let err = parse_agent_arg("claude").unwrap_err();
        assert!(
            err.contains("unknown agent `claude`") && err.contains("process:CMD") && err.contains("exec:CMD"),
            "{err}"
        );
        assert!(parse_agent_arg("process:  ").unwrap_err().contains("no command"));
    }
}

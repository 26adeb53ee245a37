//! Who acts. An agent receives the task brief and answers with tool calls until it sends its
//! final report; the runner sends every call through guard → sandbox → validate → log and hands
//! the receipt back.
//!
//! - [`oracle`]: plays the task's scripted `solution`.
//! - [`process`]: any program speaking JSON lines on stdin/stdout (DESIGN §4).
//! - [`exec`]: a black-box command run in the sandbox; only the end state is judged.
//! - [`model`]: `openai:MODEL`, `anthropic:MODEL` and the named model agents of `medin.yaml`:
//!   medin runs the tool-calling loop against the provider's API.
//!
//! Agents are found by name in an [`AgentRegistry`] (the three above are its built-in
//! entries; an embedding crate adds its own), and each kind decides how it starts, its label
//! and how its process is confined ([`kind`]); the runner calls [`start`] and never asks which
//! kind it holds.
//!
//! An agent never touches the workspace itself and never sees the guard: it only proposes.

pub mod cli;
pub mod exec;
mod kind;
pub mod model;
pub mod oracle;
pub mod process;
mod registry;
mod reply;

pub use kind::AgentContext;
pub(crate) use registry::builtin_option_schemas;
pub use registry::{AgentRefError, AgentRegistry, AgentSpec, RegistryError};
pub use reply::parse_reply;

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::spec::{FinalReport, Step};
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

/// What one model exchange cost (model agents report one per exchange).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// Input tokens (cached ones included) and output tokens.
    pub usage: Usage,
    /// Input tokens read from the provider's cache.
    pub cached_input_tokens: u64,
    /// The cost, when a price is known.
    pub cost: Option<Cost>,
    /// Tries of the exchange after the first (rate limits, server errors, timeouts).
    pub retries: u32,
}

/// A cost in US dollars.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub usd: f64,
    /// Computed from medin's table of list prices, not from a price the agent was given.
    pub estimated: bool,
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
    /// A model exchange: its tokens, cost and retries (costs no turn).
    ModelCall(ModelCall),
    /// A line that is not a protocol message (the runner answers with MALFORMED_OUTPUT).
    Malformed {
        line: String,
        reason: String,
    },
    /// The agent broke: exited, hung, or could not start.
    Failed(AgentFailure),
    /// A tool call the agent's own program carries out once medin allows it (a CLI agent's
    /// tool, reported by its pre-tool hook): the runner judges it ([`crate::pipeline::Pipeline::judge`])
    /// and answers with the receipt, whose status says allow or deny.
    Delegated(Action),
    /// A delegated call the agent reports done (a post-tool hook): what it changed is counted
    /// against the runtime limits. `result` is what the agent's tool answered, for the transcript.
    DelegatedDone {
        id: String,
        result: serde_json::Value,
    },
    /// A tool call the agent's program ran without asking medin (seen in its own output with
    /// no pre-tool hook call): its guard was evaded, and the attempt stops.
    Unguarded(Action),
    /// A connection the agent's process tried to open, as medin's egress proxy saw it.
    Connection(Connection),
    /// Something the agent's program said that is only for the transcript (its text, a tool
    /// result it read, its own session events).
    Note(serde_json::Value),
    /// The harness could not serve the agent (a replayed model exchange that does not match
    /// its cassette, a cassette that cannot be read or written): the trial ends as the
    /// harness's error, never as the agent's failure. The text says what broke and what to do.
    HarnessFailed(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentFailure {
    #[error("agent could not start `{command}`: {reason}")]
    Spawn { command: String, reason: String },
    #[error("agent exited ({status}) before its final report; stderr tail: {stderr_tail}")]
    Exited { status: String, stderr_tail: String },
    #[error("agent sent no message within {:.1}s", after.as_secs_f64())]
    TimedOut { after: Duration },
    /// The model's context window cannot hold the conversation: the attempt ends, counted apart
    /// from the agent's failures.
    #[error("context length exceeded: {detail}")]
    ContextLengthExceeded { detail: String },
    #[error("agent ended without a final report")]
    NoFinal,
    /// The agent left more than `unread` messages unread on its stdin (medin holds no more).
    #[error("agent stopped reading its stdin (more than {unread} messages unread); read each tool_result before the next call")]
    NotReading { unread: usize },
}

/// A named agent of `medin.yaml`'s `agents:`: a model agent (`provider:`), or a CLI agent
/// (`cli:`), written by its name wherever an agent is named.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum NamedAgent {
    Cli(cli::NamedCli),
    Model(model::ModelSettings),
}

impl<'de> Deserialize<'de> for NamedAgent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(deserializer)?;
        if value.get("cli").is_some() {
            cli::NamedCli::from_value(value)
                .map(NamedAgent::Cli)
                .map_err(D::Error::custom)
        } else {
            model::ModelSettings::deserialize(value)
                .map(NamedAgent::Model)
                .map_err(|e| {
                    D::Error::custom(format!(
                        "{e} (a model agent names its `provider`; a CLI agent its `cli`)"
                    ))
                })
        }
    }
}

/// A connection attempt of an agent's process (see [`crate::sandbox::egress`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connection {
    pub host: String,
    pub port: u16,
    pub allowed: bool,
    /// How it was tried: `forward` (the model endpoint), `proxy`, `direct`, `dns`.
    pub via: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
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
    /// The suite PRD's requirements relevant to the task (`{id, title, priority, description,
    /// acceptance_criteria, why}`), also written at the end of `prompt` for agents that read
    /// only text. Empty when the suite has no PRD.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<serde_json::Value>,
}

/// An agent under test: it proposes actions, medin runs them.
///
/// The runner asks for the next event with the receipt of the previous call; the agent answers
/// with a tool call ([`AgentEvent::Call`]), its final report ([`AgentEvent::Final`]) or a
/// free-text reply that holds one ([`AgentEvent::Reply`]), token usage, or its own failure.
/// Every call goes through guard → sandbox → validate → log before the agent sees its
/// receipt; an agent never touches the workspace itself. The tools it may call, with their
/// input schemas, are in the [`TaskBrief`] it was started with.
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

/// A boxed agent is an agent (a factory may choose its agent at run time).
impl<A: Agent + ?Sized> Agent for Box<A> {
    fn name(&self) -> String {
        (**self).name()
    }

    fn next(&mut self, last: Option<(&Action, &Receipt)>, deadline: std::time::Instant) -> AgentEvent {
        (**self).next(last, deadline)
    }

    fn feedback(&mut self, feedback: &serde_json::Value) {
        (**self).feedback(feedback)
    }

    fn finish(&mut self) {
        (**self).finish()
    }
}

/// Where an agent spec came from, so relative commands resolve against the right directory.
#[derive(Debug, Clone)]
pub struct AgentSource {
    pub spec: AgentSpec,
    /// Directory of the file that declared the agent (or the current dir for `MEDIN_AGENT`).
    pub base_dir: PathBuf,
}

/// Starts the agent described by `source` for one task attempt: the one way the runner starts
/// an agent, whatever its kind. `solution` is the task's scripted solution (the oracle plays
/// it), `sandbox` the attempt's sandbox, `deadline` the end of the task's time, `model` the
/// attempt's way to a model API (live, recorded or replayed).
///
/// An agent that cannot be started is returned as an agent whose first event is its
/// [`AgentFailure`] (e.g. [`AgentFailure::Spawn`]), so the runner reports it like any other
/// agent failure.
pub fn start(
    source: &AgentSource,
    brief: &TaskBrief,
    solution: &[Step],
    sandbox: &crate::sandbox::SandboxConfig,
    deadline: std::time::Instant,
    model: &model::cassette::ModelLink,
) -> Box<dyn Agent> {
    let context = AgentContext::new(brief, &source.base_dir, deadline, solution, model);
    source.spec.start(&context, sandbox).unwrap_or_else(|failure| {
        Box::new(BrokenAgent {
            name: source.spec.label(),
            failure,
        })
    })
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

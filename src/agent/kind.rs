//! What medin decides per kind of agent, in one type: [`AgentKind`] — how one starts, the
//! label it is shown under, and how the agent process itself is confined (the
//! `agent_isolation` of every receipt). The runner asks an [`AgentKind`] and never matches on
//! which kind it is, so a new kind (a model agent, a CLI agent, an embedding crate's Rust agent)
//! is one more implementation registered by name ([`super::registry`]).

use std::fmt;
use std::path::Path;
use std::time::Instant;

use crate::sandbox::{Isolation, SandboxConfig};
use crate::spec::Step;

use super::model::cassette::ModelLink;
use super::{Agent, AgentFailure, TaskBrief};

/// One kind of agent with its arguments read (`process` with its command): everything the
/// harness needs to know about it.
pub(crate) trait AgentKind: fmt::Debug + Send + Sync {
    /// The short name shown in trial lines, logs and results (`oracle`,
    /// `process:python3 agent.py`).
    fn label(&self) -> String;

    /// How the agent process itself is confined, given the attempt's sandbox.
    fn confinement(&self, sandbox: &SandboxConfig) -> AgentConfinement;

    /// Starts one agent for one attempt, in the attempt's `sandbox` (a kind whose agent runs
    /// inside it joins it there). An agent that cannot start says why; the runner reports it
    /// like any other agent failure.
    fn start(&self, context: &AgentContext<'_>, sandbox: &SandboxConfig) -> Result<Box<dyn Agent>, AgentFailure>;

    /// Whether the agent's exchanges with a model API go through medin ([`AgentContext::model`]),
    /// so a run can record them and replay them from cassettes.
    fn speaks_model_api(&self) -> bool {
        false
    }
}

/// How an agent process is confined, as every receipt's `agent_isolation` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AgentConfinement {
    /// medin's own agent (the oracle): no process, nothing to confine.
    Builtin,
    /// An embedding crate's agent, running inside the harness process; its actions still take
    /// guard → sandbox like every other agent's.
    InProcess,
    /// Run inside the sandbox at this level (the exec agent's command is an action; a process
    /// agent's program). `none` is a process agent run unconfined (`agent_isolation: none`).
    Sandboxed(Isolation),
    /// Run inside the sandbox at this level, but with the network on although the task's
    /// commands have none: a process agent must reach its model endpoint (`strict+network`).
    Networked(Isolation),
    /// A CLI agent run inside the sandbox at this level whose tool calls medin cannot see
    /// before they run (aider: no hooks): judged by what it changed (`strict+unhooked`).
    Unhooked(Isolation),
}

impl fmt::Display for AgentConfinement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentConfinement::Builtin => f.write_str("builtin"),
            AgentConfinement::InProcess => f.write_str("in-process"),
            AgentConfinement::Sandboxed(level) => f.write_str(level.as_str()),
            AgentConfinement::Networked(level) => write!(f, "{level}+network"),
            AgentConfinement::Unhooked(level) => write!(f, "{level}+unhooked"),
        }
    }
}

/// What an agent is started with, for one attempt: the brief it is told, the argument it was
/// named with (`mine:ARG`), where it was declared and the task's deadline. An embedding
/// crate's factory receives it ([`crate::Harness::agent`]).
#[derive(Debug, Clone, Copy)]
pub struct AgentContext<'a> {
    brief: &'a TaskBrief,
    arg: Option<&'a str>,
    base_dir: &'a Path,
    deadline: Instant,
    solution: &'a [Step],
    model: &'a ModelLink,
}

impl<'a> AgentContext<'a> {
    pub(crate) fn new(
        brief: &'a TaskBrief,
        base_dir: &'a Path,
        deadline: Instant,
        solution: &'a [Step],
        model: &'a ModelLink,
    ) -> Self {
        AgentContext {
            brief,
            arg: None,
            base_dir,
            deadline,
            solution,
            model,
        }
    }

    /// The same context, for an agent named with `arg` (`mine:ARG`).
    pub(crate) fn with_arg(self, arg: Option<&'a str>) -> Self {
        AgentContext { arg, ..self }
    }

    /// What the agent is told: the task id, the prompt, the tools it may call, the limits and
    /// the workspace.
    pub fn brief(&self) -> &'a TaskBrief {
        self.brief
    }

    /// The text after the name when the agent was named `name:ARG` (a model, a config file),
    /// `None` when it was named alone.
    pub fn arg(&self) -> Option<&'a str> {
        self.arg
    }

    /// The directory of the file that named the agent (the suite root for `medin.yaml`, the
    /// task's folder for a task's `agent:`, the current directory for `MEDIN_AGENT`): where a
    /// relative path in its argument is meant from.
    pub fn base_dir(&self) -> &'a Path {
        self.base_dir
    }

    /// When the task's time runs out. The harness stops the task then whatever the agent does;
    /// an agent that waits (for a model, a process) should not wait past it.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The attempt's way to a model API: live, recorded or replayed (`--record`, `--replay`,
    /// a task's `cassette:`), shared by every agent the attempt starts.
    pub(crate) fn model(&self) -> &'a ModelLink {
        self.model
    }

    /// The task's reference solution (the oracle plays it; no agent under test sees it).
    pub(crate) fn solution(&self) -> &'a [Step] {
        self.solution
    }
}

//! A task file as written: the shape the YAML deserializes into and the published JSON Schema
//! (`medin schema`) describes.
//!
//! Users write `kind:` and the kind's block side by side (`kind: tdd` plus a top-level `tdd:`
//! block, `expect.tdd` among the expectations), so this shape can hold states no task may be in:
//! a TDD task without its loop, a `prp:` block on a plain task. Only the loader reads it:
//! `spec::load` checks it, with `file:line:col` errors, and turns it into the typed
//! [`TaskSpec`](super::model::TaskSpec), whose [`TaskKind`](super::model::TaskKind) carries each
//! kind together with its blocks. Nothing outside `spec` sees these types.
//!
//! The serde names stay those of the model (`TaskSpec`, `TaskKind`, `Expect`), so messages and
//! the schema's definitions read the same as before the split. `Serialize` is derived only so
//! the schema can show each key's default.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::model::{
    BlockedExpect, EnvironmentSpec, FileExpect, FinalExpect, Limits, MetricsExpect, Outcome, Policy, PrpExpect,
    PrpSpec, ReceiptExpect, RetrySpec, TddExpect, TddSpec, ToolCallsExpect, Toolchain, Validator, VerifySpec,
};
use super::values::SolutionItem;

/// One task file, as written.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename = "TaskSpec", deny_unknown_fields)]
pub(crate) struct RawTask {
    /// Stable id (e.g. `GT-002`); defaults to the file name.
    #[serde(default)]
    pub id: Option<String>,
    /// One line: what the task checks.
    pub description: String,
    /// `task` (default), `tdd` (TDD-Ralph loop, needs a `tdd:` block) or `prp` (progressive
    /// validation gates, needs a `prp:` block).
    #[serde(default)]
    pub kind: RawKind,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Ids of the suite PRD's requirements this task proves (`[REQ-1, REQ-3]`): they are put
    /// in the agent's brief, their `checks` are judged with the task's own, and the run's
    /// requirement coverage counts this task for them. An id the PRD does not define is an
    /// error (`medin check` and the run); a suite without `prd:` cannot name any.
    #[serde(default)]
    pub requirements: Vec<String>,
    /// Fixture directory copied into a fresh workspace, relative to the spec file.
    /// Default: an empty directory.
    #[serde(default)]
    pub workspace: Option<String>,
    /// Shell commands run in the workspace (through the sandbox) before the agent starts,
    /// e.g. `git init`. A failing setup command is a harness error, not an agent failure.
    #[serde(default)]
    pub setup: Vec<String>,
    /// What the agent is asked to do.
    #[serde(default)]
    pub prompt: String,
    #[serde(default)]
    pub limits: Limits,
    #[serde(default)]
    pub policy: Policy,
    /// Retries of an agent that failed transiently (crashed, hung, could not start, or
    /// reported a transient error code such as RATE_LIMIT), with backoff, for every kind:
    /// `{ attempts: 3, base: 1s, factor: 2, cap: 30s, jitter: 0.1 }`. Default: no retry
    /// (1 attempt), except `kind: prp`, whose `prp.retry` defaults to 3 attempts.
    #[serde(default)]
    pub retry: Option<RetrySpec>,
    /// With `repeat` above 1: how many of this task's attempts may fail while others pass
    /// before the task counts as flaky (for `max_flaky`) and fails the run. `1`: one failing
    /// attempt of k is tolerated. Default 0: any mix of passes and failures is flaky and
    /// fails. A task none of whose attempts passed fails whatever the tolerance.
    #[serde(default)]
    pub flake_tolerance: u32,
    /// How strongly commands are confined: `none`, `process` or `strict` (Linux, root:
    /// namespaces, Landlock, seccomp). Overrides the suite's `isolation`; unset in both, the
    /// strongest level this machine supports. A level asked for that the machine cannot give
    /// fails the task; `medin doctor` shows what is available.
    #[serde(default)]
    pub isolation: Option<crate::sandbox::Isolation>,
    /// Pins the task to one agent (e.g. `oracle` for harness self-tests).
    #[serde(default)]
    pub agent: Option<super::AgentRef>,
    /// The reference solution the oracle agent plays, one step per list item (multi-round
    /// kinds: each round ends with `final`, or is written as a nested list of steps).
    #[serde(default)]
    #[schemars(schema_with = "super::values::solution_schema")]
    pub solution: Vec<SolutionItem>,
    #[serde(default)]
    pub expect: RawExpect,
    /// The product requirement prompt of a `kind: prp` task: what the coder implements and the
    /// validation gates that prove it.
    #[serde(default)]
    pub prp: Option<PrpSpec>,
    /// The test loop of a `kind: tdd` task.
    #[serde(default)]
    pub tdd: Option<TddSpec>,
    /// Host toolchains the task's commands need (`rust`, `python`, `node`): their binaries are
    /// put on the sandbox's PATH, with the variables they need to find themselves.
    #[serde(default)]
    pub toolchains: Vec<Toolchain>,
    /// Workspace paths (globs, e.g. `tests/**`, `conftest.py`) put back as the agent found them
    /// before every judged run (TDD test runs, PRP gates, `command` validators); any change the
    /// agent made to them is tampering and fails the attempt. Unset: the test modules and
    /// test-runner configuration the workspace ships (see README, "Judging"); `[]`: nothing.
    #[serde(default)]
    pub protected: Option<Vec<String>>,
    /// A folder of hidden checks, relative to the spec file: its files are copied into the
    /// workspace only for judged runs and taken out after them, so the agent never sees them.
    #[serde(default)]
    pub hidden: Option<String>,
    /// A recorded model conversation, relative to the spec file (`medin run --record` writes
    /// one per attempt: `cassette.jsonl`): the task's pinned model agent is served from it with
    /// no network, so the task replays a real model run deterministically. Needs `agent:` to
    /// name a model agent (`openai:MODEL`, `anthropic:MODEL`, a named model agent).
    #[serde(default)]
    pub cassette: Option<String>,
    /// What the task's commands need besides the host's base system: Python and npm packages
    /// medin provisions once into a read-only cache (`target/medin/envs/`), Debian packages
    /// the host must have. `{ python: [pytest==8.3.3], node: [left-pad@1.3.0], apt: [jq] }`.
    /// Or a container image the commands run in instead: `{ image: "python:3.12-slim" }`,
    /// `{ dockerfile: environment/Dockerfile }` (built by medin).
    #[serde(default)]
    pub environment: Option<EnvironmentSpec>,
    /// The verifier, run after the agent's last action as a judged run: `{ files: tests/,
    /// command: "python3 -m pytest -rA", framework: pytest, timeout: 5m, reward: { file:
    /// reward.txt, pass_at: 1 } }` (all but `command` optional). Its files (default: a task
    /// directory's `tests/`) are copied into the workspace only for verification, read-only; the
    /// result carries per-test outcomes and a reward in [0, 1], and the attempt passes only if
    /// the reward reaches `pass_at` (default 1: every test passed).
    #[serde(default)]
    pub verify: Option<VerifySpec>,
    /// Names of host variables the task's commands and its agent's process get, on top of the
    /// suite's `pass_env` (e.g. `[OPENAI_API_KEY]`, for a CLI agent to reach its model). Their
    /// values are read when the trial starts — a name that is not set is an infrastructure
    /// error naming it — and masked (`[redacted:NAME]`, also base64 and other encodings) in
    /// receipts, transcripts, logs, reports and messages. Not `PATH`, `HOME`, `LD_*`, `MEDIN_*`
    /// or another variable that decides how commands run.
    #[serde(default)]
    pub pass_env: Vec<super::EnvName>,
}

/// A task kind: `task` (one round), `tdd` (TDD-Ralph loop) or `prp` (progressive validation gates).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename = "TaskKind", rename_all = "snake_case")]
pub(crate) enum RawKind {
    #[default]
    Task,
    Tdd,
    Prp,
}

impl RawKind {
    /// The name as written after `kind:`.
    pub fn name(self) -> &'static str {
        match self {
            RawKind::Task => "task",
            RawKind::Tdd => "tdd",
            RawKind::Prp => "prp",
        }
    }
}

/// What must hold after the run.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename = "Expect", deny_unknown_fields)]
pub(crate) struct RawExpect {
    /// Default: `success`.
    #[serde(default)]
    pub outcome: Option<Outcome>,
    #[serde(default, rename = "final")]
    pub final_report: Option<FinalExpect>,
    /// Workspace-relative path → what must hold for it.
    #[serde(default)]
    pub files: BTreeMap<String, FileExpect>,
    /// Each entry must match at least one action's receipt.
    #[serde(default)]
    pub receipts: Vec<ReceiptExpect>,
    #[serde(default)]
    pub tool_calls: Option<ToolCallsExpect>,
    /// Guard verdicts this task expects (harness self-tests of the guard).
    #[serde(default)]
    pub blocked: Vec<BlockedExpect>,
    /// Validations of the end state; the task is complete only if they ran and passed.
    #[serde(default)]
    pub validate: Vec<Validator>,
    #[serde(default)]
    pub metrics: MetricsExpect,
    /// `kind: prp` tasks only: the gate runs, fix attempts and artifacts.
    #[serde(default)]
    pub prp: Option<PrpExpect>,
    /// `kind: tdd` tasks only: the exit tag, iterations and stop reason.
    #[serde(default)]
    pub tdd: Option<TddExpect>,
}

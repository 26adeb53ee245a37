//! The task model: what a YAML task file means once it is parsed.
//!
//! These types are the product's main interface. The parts users write derive serde and a JSON
//! Schema and are strict (`deny_unknown_fields` everywhere), small for the common case. The
//! whole task ([`TaskSpec`]) and its [`Expect`] are typed: the kind carries its own blocks
//! ([`TaskKind`]), so a loaded task is well-formed by construction. The file as written is
//! `spec::raw`; parsing, locations and suggestions live in `spec::load`; this file only says
//! what a well-formed task is.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::tools::receipt::{ErrorCode, EvidenceKind};

/// One task, loaded and checked: what the runner runs. `spec::load` builds it from the file as
/// written (see `spec::raw` for the YAML shape and its documentation); every field here means
/// what its key there says.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSpec {
    /// Stable id (e.g. `GT-002`); `None`: the file name stands for it (`spec::task_id`).
    pub id: Option<String>,
    /// One line: what the task checks.
    pub description: String,
    /// What kind of task it is, together with what only that kind has.
    pub kind: TaskKind,
    pub tags: Vec<String>,
    /// Ids of the suite PRD's requirements this task proves (see [`crate::prd`]).
    pub requirements: Vec<String>,
    /// Fixture directory copied into a fresh workspace, relative to the spec file (it exists).
    pub workspace: Option<String>,
    /// Shell commands run in the workspace before the agent starts.
    pub setup: Vec<String>,
    /// What the agent is asked to do.
    pub prompt: String,
    pub limits: Limits,
    pub policy: Policy,
    /// Retries of an agent that failed transiently (see [`crate::plan`] for the defaults).
    pub retry: Option<RetrySpec>,
    /// Failing attempts tolerated beside passing ones before the task is flaky (see
    /// `report::repeats`); 0 by default.
    pub flake_tolerance: u32,
    /// The confinement the task asks for; `None`: the suite's, else the strongest available.
    pub isolation: Option<crate::sandbox::Isolation>,
    /// The agent the task is pinned to, if any.
    pub agent: Option<crate::agent::AgentSpec>,
    /// The reference solution the oracle agent plays, flat: in a multi-round kind each round
    /// ends with a `final` or `reply` step (rounds written as nested lists are flattened so).
    pub solution: Vec<Step>,
    /// What must hold after the run, whatever the kind (the kind's own expectations are in
    /// [`TaskKind`]).
    pub expect: Expect,
    /// Host toolchains the task lists.
    pub toolchains: Vec<Toolchain>,
    /// Workspace globs restored before judged runs; `None`: the workspace's test files.
    pub protected: Option<Vec<String>>,
    /// A folder of hidden checks, relative to the spec file (it exists).
    pub hidden: Option<String>,
    /// A model conversation to replay, relative to the spec file (it exists; the task pins a
    /// model agent).
    pub cassette: Option<String>,
    /// Packages the task's commands need (names checked).
    pub environment: Option<EnvironmentSpec>,
    /// The verifier run after the agent's last action (`verify:`), with its defaults resolved.
    pub verify: Option<VerifySpec>,
    /// Host variables passed to the task's commands and its agent's process (`pass_env:`),
    /// besides the suite's; their values are masked in everything medin writes.
    pub pass_env: Vec<super::EnvName>,
}

/// A task's declared environment (`environment:`): see [`crate::runner`]'s environment module.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentSpec {
    /// Python requirement specifiers (`pytest`, `requests==2.32.3`, `numpy>=2`), installed with
    /// pip into a venv made from the host's python3; its `bin` is first on PATH.
    #[serde(default)]
    pub python: Vec<String>,
    /// npm packages (`left-pad`, `@scope/pkg@1.2.3`), installed with npm; their bins on PATH
    /// and `NODE_PATH` set.
    #[serde(default)]
    pub node: Vec<String>,
    /// Debian packages the host must have installed (checked, not installed: a missing one is
    /// an infrastructure error naming the `apt-get install` that fixes it).
    #[serde(default)]
    pub apt: Vec<String>,
    /// Where commands see the workspace, an absolute path such as `/app` (as Terminal-Bench and
    /// Harbor tasks expect): every command, validator, test run and the agent's own process
    /// see it there, start there, and `HOME` names it; file tools take `/app/x` as the
    /// workspace's `x`. Needs `strict` isolation (elsewhere the trial is an infrastructure
    /// error) or a container (`image:`/`dockerfile:`, where it defaults to `/app`). Not `/`,
    /// nor in `/proc`, `/dev`, `/sys`, `/usr`, `/etc`, `/bin`, `/sbin`, `/lib*`, `/opt`,
    /// `/tmp`, `/run`, `/var/tmp`, `/var/run`.
    #[serde(default)]
    pub root: Option<String>,
    /// Folders of the task shown read-only at fixed absolute paths under `strict`, as
    /// `{ /tests: tests/ }` (the folder relative to the spec file). The agent can read them
    /// all along: for checks it must not see, use `hidden:`.
    #[serde(default)]
    pub mounts: BTreeMap<String, String>,
    /// Empty folders shown read-write at fixed absolute paths under `strict`, one per
    /// attempt, kept in the run folder as `outputs/<path>` (`[/logs/verifier]`). What the
    /// task's commands leave there is the agent's doing: the harness reads it as untrusted
    /// (beneath the folder, never through a link).
    #[serde(default)]
    pub outputs: Vec<String>,
    /// A container image the task's commands run in (`python:3.12-slim`,
    /// `localhost/my-task:1`), through the machine's podman or docker: one container per
    /// attempt, the workspace bind-mounted at `root` (default `/app`), every command `exec`'d
    /// into it through the same guard, limits, receipts and verification. Pulled by the
    /// harness when it is not there. Not with `dockerfile:`, `python:`, `node:` or `apt:` (the
    /// image brings its packages). Without an engine the task is `pending`.
    #[serde(default)]
    pub image: Option<String>,
    /// A Dockerfile, relative to the spec file (a task directory's `environment/Dockerfile`),
    /// built by the harness before the agent starts (its folder is the build context; no
    /// network unless `policy.network`; built once per content), then run like `image:`.
    #[serde(default)]
    pub dockerfile: Option<String>,
}

/// Where a task's container image comes from (`environment.image` or `environment.dockerfile`;
/// the loader keeps them exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerSource<'a> {
    /// An image by name.
    Image(&'a str),
    /// A Dockerfile relative to the spec file, to be built.
    Dockerfile(&'a str),
}

impl EnvironmentSpec {
    /// Whether the task asks for fixed paths (which only `strict` or a container can give).
    pub fn has_fixed_paths(&self) -> bool {
        self.root.is_some() || !self.mounts.is_empty() || !self.outputs.is_empty()
    }

    /// The container the task's commands run in, if it names one (`image:` first).
    pub fn container(&self) -> Option<ContainerSource<'_>> {
        match (&self.image, &self.dockerfile) {
            (Some(image), _) => Some(ContainerSource::Image(image)),
            (None, Some(file)) => Some(ContainerSource::Dockerfile(file)),
            (None, None) => None,
        }
    }
}

/// `verify:`: hidden tests (or any verifier) copied in after the agent's last action and run
/// as a judged run; the result carries per-test outcomes and a reward in [0, 1].
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifySpec {
    /// Folder of the verifier's files, relative to the spec file (in a task directory:
    /// `tests/`, the default when it exists). Copied, read-only, into the workspace folder of
    /// the same name — emptied of whatever the agent left there — only after the agent's last
    /// action, and taken out after verification; the command runs in it.
    #[serde(default)]
    pub files: Option<String>,
    /// The verifier, run with `sh -c` through the sandbox as a judged run (e.g.
    /// `python3 -m pytest -rA`).
    pub command: String,
    /// The runner whose output `command` prints, for per-test results when medin's runner shims
    /// do not report them (pytest and unittest are reported by the shims; default: detected).
    #[serde(default)]
    pub framework: Option<String>,
    /// The verifier's own time limit (default 5m), apart from the agent's `limits.timeout`.
    #[serde(default)]
    pub timeout: Option<DurationSpec>,
    /// Where the reward comes from and what reward passes (default: the fraction of tests
    /// that passed, and a pass needs 1.0).
    #[serde(default)]
    pub reward: Option<RewardSpec>,
}

/// `verify.reward`: the reward's source and the pass mark.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RewardSpec {
    /// A file the verifier writes its reward in (a number from 0 to 1), relative to the
    /// workspace root (`$MEDIN_REWARD_FILE` names it for the command). One that is there before
    /// verification is deleted first. Default: the reward is the fraction of tests that passed.
    #[serde(default)]
    pub file: Option<String>,
    /// The least reward that passes, above 0 and at most 1 (default 1: every test passed).
    #[serde(default)]
    pub pass_at: Option<f64>,
}

impl VerifySpec {
    /// The verifier's time limit when `timeout` is not given.
    pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

    /// `timeout`, or [`VerifySpec::DEFAULT_TIMEOUT`].
    pub fn time_limit(&self) -> std::time::Duration {
        self.timeout.map(|t| t.0).unwrap_or(Self::DEFAULT_TIMEOUT)
    }

    /// The least reward that passes (`reward.pass_at`, default 1).
    pub fn pass_at(&self) -> f64 {
        self.reward.as_ref().and_then(|r| r.pass_at).unwrap_or(1.0)
    }

    /// The reward file, workspace-relative, if the verifier writes one.
    pub fn reward_file(&self) -> Option<&str> {
        self.reward.as_ref().and_then(|r| r.file.as_deref())
    }
}

/// A host toolchain a task may use inside the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Toolchain {
    Rust,
    Python,
    Node,
}

/// A TDD-Ralph loop: run the real tests, give the failures to the agent, let it fix, repeat.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TddSpec {
    /// The project's real test command, run in the sandbox (e.g. `cargo test --offline`).
    pub test: String,
    /// The runner whose output `test` prints (default: detected from the output).
    #[serde(default)]
    pub framework: Option<String>,
    /// Fix rounds at most (default 5).
    #[serde(default)]
    pub max_iterations: Option<u32>,
    /// A build command verified after each fix, before the tests are judged.
    #[serde(default)]
    pub build: Option<String>,
    /// Identical error signatures in a row that trip the circuit breaker (default 3).
    #[serde(default)]
    pub breaker: Option<u32>,
    /// Write `tdd-state/coverage.json` (per-iteration counts) as well.
    #[serde(default)]
    pub coverage: bool,
}
/// A PRP: objective, context, steps, and the progressive validation gates (levels 1-4).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrpSpec {
    /// The PRP's own id (default: the task id).
    #[serde(default)]
    pub task_id: Option<String>,
    pub objective: String,
    #[serde(default)]
    pub context: String,
    #[serde(default)]
    pub implementation_steps: Vec<String>,
    /// Run sorted by level; the first failure stops the rest.
    pub gates: Vec<GateSpec>,
    #[serde(default)]
    pub success_criteria: Vec<String>,
    #[serde(default)]
    pub references: Vec<String>,
    /// Fix rounds after a failed gate run (default 2).
    #[serde(default)]
    pub fix_attempts: Option<u32>,
    /// Delay before each fix round (default: base 2s, factor 2, cap 30s, jitter 0.1).
    #[serde(default)]
    pub backoff: Option<BackoffSpec>,
    /// Retries of an agent round that failed transiently (crash, hang, timeout):
    /// default 3 attempts, base 1s, factor 2, cap 30s, jitter 0.1.
    #[serde(default)]
    pub retry: Option<RetrySpec>,
    /// Time limit of one gate command (default 120s).
    #[serde(default)]
    pub gate_timeout: Option<DurationSpec>,
}

/// One validation gate.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateSpec {
    /// 1 syntax and style, 2 unit tests, 3 integration, 4 manual or domain-specific.
    pub level: GateLevel,
    pub description: String,
    /// Shell command run in the workspace (through guard and sandbox); null = skipped.
    #[serde(default)]
    pub command: Option<String>,
    /// A manual gate is skipped (and counts as passed).
    #[serde(default)]
    pub manual: bool,
}

/// A gate level, 1 to 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
pub struct GateLevel(#[schemars(range(min = 1, max = 4))] pub u8);

impl<'de> Deserialize<'de> for GateLevel {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = i64::deserialize(d)?;
        match u8::try_from(n) {
            Ok(level @ 1..=4) => Ok(GateLevel(level)),
            _ => Err(serde::de::Error::custom(format!(
                "gate level {n} is out of range; use 1 (syntax and style), 2 (unit tests), 3 (integration) or 4 (manual or domain-specific)"
            ))),
        }
    }
}

/// Exponential backoff: `min(cap, base * factor^(n-1))`, plus up to `jitter` of it at random.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackoffSpec {
    #[serde(default)]
    pub base: Option<DurationSpec>,
    #[serde(default)]
    pub factor: Option<f64>,
    #[serde(default)]
    pub cap: Option<DurationSpec>,
    #[serde(default)]
    pub jitter: Option<f64>,
}

/// Retries of transient agent failures.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrySpec {
    /// Attempts in all, the first included (default 3).
    #[serde(default)]
    pub attempts: Option<u32>,
    #[serde(default, flatten)]
    pub backoff: BackoffSpec,
}

/// What kind of task it is, with the blocks only that kind has: a TDD task without its loop, or
/// PRP expectations on a plain task, cannot be built. Adding a kind means a variant here (and
/// its block in `spec::raw`, read by `spec::load`), its module in the runner and its arm where
/// `Attempt::run` dispatches; every exhaustive `match` on the kind points at what else must
/// learn it.
// One value per loaded task, inside a `TaskSpec` that is larger still: boxing the blocks would
// only add indirection to every match.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Default, PartialEq)]
pub enum TaskKind {
    /// `kind: task` (the default): one round, then the end state is judged.
    #[default]
    Task,
    /// `kind: tdd`: a TDD-Ralph loop over the project's real tests.
    Tdd {
        /// The top-level `tdd:` block.
        tdd: TddSpec,
        /// `expect.tdd`.
        expect: Option<TddExpect>,
    },
    /// `kind: prp`: a product requirement prompt and its progressive validation gates.
    Prp {
        /// The top-level `prp:` block.
        prp: PrpSpec,
        /// `expect.prp`.
        expect: Option<PrpExpect>,
    },
}

impl TaskKind {
    /// The name written after `kind:`.
    pub fn name(&self) -> &'static str {
        match self {
            TaskKind::Task => "task",
            TaskKind::Tdd { .. } => "tdd",
            TaskKind::Prp { .. } => "prp",
        }
    }

    /// The shell commands the harness itself runs for this kind, in the workspace: the TDD test
    /// and build commands, the PRP gates' commands.
    pub fn harness_commands(&self) -> Vec<&str> {
        match self {
            TaskKind::Task => Vec::new(),
            TaskKind::Tdd { tdd, .. } => std::iter::once(tdd.test.as_str()).chain(tdd.build.as_deref()).collect(),
            TaskKind::Prp { prp, .. } => prp.gates.iter().filter_map(|g| g.command.as_deref()).collect(),
        }
    }

    /// How this kind retries an agent that failed transiently when the task's top-level `retry:`
    /// says nothing: its own block's `retry` (PRP), and its default number of attempts (the
    /// first included; 1 = no retry).
    pub fn retry_default(&self) -> (Option<&RetrySpec>, u32) {
        match self {
            TaskKind::Task | TaskKind::Tdd { .. } => (None, 1),
            TaskKind::Prp { prp, .. } => (prp.retry.as_ref(), 3),
        }
    }

    /// Whether every change to the tests is prohibited, whatever the policy says: a TDD loop is
    /// judged by its tests.
    pub fn prohibits_test_tampering(&self) -> bool {
        match self {
            TaskKind::Tdd { .. } => true,
            TaskKind::Task | TaskKind::Prp { .. } => false,
        }
    }
}

/// A duration written as `"500ms"`, `"30s"`, `"2m"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DurationSpec(pub std::time::Duration);

/// A size written as `"64MiB"`, `"512KiB"`, `"1GB"` or a plain number of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

/// Runtime and resource limits of one task.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Wall-clock limit for the whole task (default 60s).
    #[serde(default)]
    pub timeout: Option<DurationSpec>,
    /// Wall-clock limit for one command (default 30s).
    #[serde(default)]
    pub command_timeout: Option<DurationSpec>,
    /// Tool calls allowed before the task is stopped (default 50).
    #[serde(default)]
    pub max_turns: Option<u32>,
    /// Identical calls in a row (the same tool with the same input, or the same malformed
    /// line) allowed before the task is stopped: an agent stuck in a loop (default 10).
    #[serde(default)]
    pub max_repeats: Option<u32>,
    /// Distinct workspace files the agent may touch.
    #[serde(default)]
    pub max_files: Option<u32>,
    /// Mutating file operations the agent may make.
    #[serde(default)]
    pub max_changes: Option<u32>,
    /// Memory limit per command (default 1GiB address space per process). Setting it gives each
    /// command a memory cgroup: the limit then holds for the whole tree's resident memory and a
    /// hit is named MEMORY_LIMIT for certain.
    #[serde(default)]
    pub memory: Option<ByteSize>,
    /// CPU-time limit per command (default: the command timeout).
    #[serde(default)]
    pub cpu: Option<DurationSpec>,
    /// Largest file a command may write (default 256MiB).
    #[serde(default)]
    pub file_size: Option<ByteSize>,
    /// Captured output per stream before truncation (default 1MiB).
    #[serde(default)]
    pub output: Option<ByteSize>,
    /// Processes alive at once per command (default 1024, enforced by a pids cgroup: always under
    /// `strict`; setting it turns the cgroup on under `process` too, at 0.3-10 ms per command).
    #[serde(default)]
    pub processes: Option<u32>,
}

/// What the agent may do, and what a guard warning or block means for this task.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Whether commands may use the network. Unset: the suite's `network` (`medin.yaml`),
    /// else false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    #[serde(default)]
    pub tools: ToolPolicy,
    /// Hosts (`host:port`) a CLI agent's own process may reach through medin's egress proxy,
    /// besides its model endpoint (e.g. `[pypi.org:443]`). Every attempt, allowed or not, is a
    /// receipt; with none, nothing but the model is reachable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub egress: Vec<String>,
    /// Guard categories whose warnings are approved without asking (e.g. `[git]`).
    #[serde(default)]
    pub approve: Vec<String>,
    /// Guard rules deliberately bypassed for this task; each needs a written justification,
    /// which is logged with every receipt it affects.
    #[serde(default)]
    pub bypass: Vec<Bypass>,
}

/// Tool allow/deny globs. Deny wins; an empty allow list allows every tool.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolPolicy {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bypass {
    /// The guard rule id, e.g. `deletion.recursive_force`.
    pub rule: String,
    /// Why bypassing it is right for this task.
    pub justification: String,
}

/// One step of a solution: a tool call, a raw call, or the final report.
///
/// YAML: a one-key map. `- bash: ls`, `- write_file: {path: a, content: b}`,
/// `- call: {tool: deploy, input: {..}}` (any tool name, unchecked),
/// `- call: {tool: write_file, raw: '{"path": 3'}` (input sent verbatim, e.g. invalid JSON),
/// `- final: {result: success, message: done}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Step {
    /// A registered tool; its input is checked against the tool's schema when the spec loads.
    Tool {
        tool: String,
        input: serde_json::Value,
    },
    /// `call:` with `input`: any tool name and input, sent as written (unchecked on purpose).
    Call {
        tool: String,
        input: serde_json::Value,
    },
    Raw {
        tool: String,
        raw: String,
    },
    Final(FinalReport),
    /// `reply: "text"`: a free-text reply that ends the round, parsed like a coder's answer.
    Reply(String),
}

/// How the agent ends a round.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinalReport {
    pub result: FinalResult,
    #[serde(default)]
    pub message: String,
    /// With `result: error`: the error's code. TIMEOUT, RATE_LIMIT, NETWORK_ERROR and
    /// DEPENDENCY_FAIL are transient, and a multi-round kind retries the round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinalResult {
    /// The agent claims the task is done (still to be validated).
    Success,
    /// The agent gives up with an error.
    Error,
    /// The agent raises an issue: a clarifying question, an ambiguity, a refusal.
    Issue,
}

/// How a task attempt ended, as judged by the harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The agent reported success and every validation ran and passed.
    Success,
    /// The agent reported error or issue, or a validation failed.
    Failure,
    /// The harness stopped the task: turn or runtime limit, INVARIANT_BROKEN.
    Stopped,
    /// The task ran past its time limit.
    Timeout,
    /// The agent claimed success but no validation could confirm it.
    Pending,
    /// The agent broke: crashed, hung, or left the protocol.
    Error,
}

/// What must hold after the run, for every kind of task (`expect.tdd` and `expect.prp` live in
/// their [`TaskKind`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expect {
    /// Default: `success`.
    pub outcome: Option<Outcome>,
    /// `final:`.
    pub final_report: Option<FinalExpect>,
    /// Workspace-relative path → what must hold for it.
    pub files: BTreeMap<String, FileExpect>,
    /// Each entry must match at least one action's receipt.
    pub receipts: Vec<ReceiptExpect>,
    pub tool_calls: Option<ToolCallsExpect>,
    /// Guard verdicts this task expects (harness self-tests of the guard).
    pub blocked: Vec<BlockedExpect>,
    /// Validations of the end state; the task is complete only if they ran and passed.
    pub validate: Vec<Validator>,
    pub metrics: MetricsExpect,
}

/// What a TDD loop must show.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TddExpect {
    /// `TDD_RALPH_COMPLETE` or `TDD_RALPH_STOPPED`.
    #[serde(default)]
    pub exit: Option<String>,
    /// Fix rounds that ran.
    #[serde(default)]
    pub iterations: Option<u32>,
    /// converged | circuit_breaker | max_iterations | prohibited_action | infrastructure
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Fix level of each round, in order (`L1`, `L2`, `L3`; `none` for a round that changed nothing).
    #[serde(default)]
    pub fix_levels: Option<Vec<String>>,
    /// Files of the loop's state (`plan.md`, `work-log.md`, `test-results.json`,
    /// `error-history.json`, `circuit-breaker.md`, `summary.md`, `coverage.json`), as the harness
    /// keeps them in the run folder — not the copy the agent is shown in its workspace.
    #[serde(default)]
    pub state: BTreeMap<String, FileExpect>,
}

/// What a PRP run must show.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrpExpect {
    /// Every gate passed (or was skipped) in the last run.
    #[serde(default)]
    pub success: Option<bool>,
    /// Fix rounds that ran.
    #[serde(default)]
    pub fix_attempts: Option<u32>,
    /// Gate outcomes per gate run, in gate order; gates that did not run are left out.
    #[serde(default)]
    pub gates: Option<Vec<Vec<GateOutcome>>>,
    /// Agent-round retries (transient failures) that happened.
    #[serde(default)]
    pub retries: Option<u32>,
    /// Regex the PRP error must match (e.g. "after all fix attempts").
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub artifacts: Option<ArtifactsExpect>,
}

/// How one gate ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateOutcome {
    Passed,
    Failed,
    Skipped,
    /// The gate command ran past the gate timeout.
    Timeout,
    /// The guard refused the gate command.
    Blocked,
}

/// Workspace paths the run must have created, modified and deleted (exactly these sets).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactsExpect {
    #[serde(default)]
    pub created: Option<Vec<String>>,
    #[serde(default)]
    pub modified: Option<Vec<String>>,
    #[serde(default)]
    pub deleted: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinalExpect {
    #[serde(default)]
    pub result: Option<FinalResult>,
    /// Regex the final message must match.
    #[serde(default)]
    pub message: Option<String>,
}

/// Checks on one workspace file after the run.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileExpect {
    #[serde(default)]
    pub exists: Option<bool>,
    /// Substring the content must contain.
    #[serde(default)]
    pub contains: Option<String>,
    /// Regex the content must match.
    #[serde(default)]
    pub matches: Option<String>,
    /// Exact content.
    #[serde(default)]
    pub equals: Option<String>,
    /// The file must not exist.
    #[serde(default)]
    pub absent: bool,
    /// Content must equal the fixture's.
    #[serde(default)]
    pub unchanged: bool,
}

/// Matches at least one receipt; every given field must hold.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReceiptExpect {
    /// The tool that produced the receipt.
    #[serde(default)]
    pub tool: Option<String>,
    /// `success`, `error`, `partial` or `dry_run`.
    #[serde(default)]
    pub status: Option<String>,
    /// Evidence entry type, e.g. `file_write`.
    #[serde(default, rename = "type")]
    pub kind: Option<EvidenceKind>,
    /// Evidence source (path or command).
    #[serde(default)]
    pub source: Option<String>,
    /// Evidence hash, `sha256:<hex>` of the file content.
    #[serde(default)]
    pub hash: Option<String>,
    /// An error code the receipt carries.
    #[serde(default)]
    pub error: Option<ErrorCode>,
    /// Regex an error message must match.
    #[serde(default)]
    pub message: Option<String>,
    /// JSON the receipt's data must contain (object subset match).
    #[serde(default)]
    pub data: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallsExpect {
    /// Tool names in exactly this order (all calls).
    #[serde(default)]
    pub sequence: Option<Vec<String>>,
    /// Tools that must have been called.
    #[serde(default)]
    pub contains: Vec<String>,
    /// Tools that must not have been called (successfully run).
    #[serde(default)]
    pub not_contains: Vec<String>,
}

/// A guard verdict the task expects to see. Every given field must hold for one verdict.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockedExpect {
    /// Substring of the command (or tool input) that was judged.
    #[serde(default)]
    pub command: Option<String>,
    /// Rule id, e.g. `deletion.recursive_force`.
    #[serde(default)]
    pub rule: Option<String>,
    /// Category, e.g. `deletion`.
    #[serde(default)]
    pub category: Option<String>,
    /// `block` (default) or `warn`.
    #[serde(default)]
    pub recommendation: Option<String>,
    /// What the policy made of it: `deny` (default for a block: the action must not have run),
    /// `bypassed`, `warn` or `allow`.
    #[serde(default)]
    pub decision: Option<String>,
}

/// Bounds on the attempt's metrics.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricsExpect {
    #[serde(default)]
    pub turns: Option<Range<u32>>,
    #[serde(default)]
    pub tool_errors: Option<Range<u32>>,
    #[serde(default)]
    pub duration: Option<Range<DurationSpec>>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, bound(deserialize = "T: Deserialize<'de>"))]
pub struct Range<T> {
    #[serde(default)]
    pub min: Option<T>,
    #[serde(default)]
    pub max: Option<T>,
}

/// One entry of `expect.validate`: a check, and the name it is shown by when it fails.
///
/// YAML: a one-key map naming the check, plus an optional `name:`
/// (`- { name: tests pass, command: "pytest -q" }`). Read and described in `spec::values`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validator {
    /// Shown instead of the check's own label (`tests pass` rather than the command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(flatten)]
    pub check: ValidatorSpec,
}

impl From<ValidatorSpec> for Validator {
    fn from(check: ValidatorSpec) -> Self {
        Validator { name: None, check }
    }
}

/// A real check of the end state. YAML: a one-key map.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ValidatorSpec {
    /// A workspace path that must exist and be readable.
    FileExists(String),
    FileContains(FileContainsCheck),
    /// A shell command run in the workspace through the sandbox.
    Command(CommandCheck),
    PortListening(PortCheck),
    Http(HttpCheck),
    /// A script through the sandbox whose last line of stdout is one JSON verdict
    /// (`{"status": "passed"|"failed"|"pending", "message": "..", "evidence": {..}}`).
    Custom(CustomCheck),
    /// A container, asked of the installed engine (podman or docker).
    Docker(DockerCheck),
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileContainsCheck {
    pub path: String,
    /// Regex.
    pub pattern: String,
}

/// `command: "grep -q x f"` or `command: {run: .., exit_code: 0, stdout: regex, timeout: 5s}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommandCheck {
    pub run: String,
    pub exit_code: i32,
    /// Regex stdout must match.
    pub stdout: Option<String>,
    pub timeout: Option<DurationSpec>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PortCheck {
    pub port: u16,
    #[serde(default)]
    pub host: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpCheck {
    pub url: String,
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(default)]
    pub body_contains: Option<String>,
    #[serde(default)]
    pub timeout: Option<DurationSpec>,
}

/// `custom: {command: "python3 check.py", timeout: 10s}`: a script run like a `command`
/// validator (guard, sandbox, judged run) whose stdout's last line is its verdict, one JSON
/// object `{"status": "passed"|"failed"|"pending", "message": "...", "evidence": {...}}`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomCheck {
    /// The shell command that runs the script, in the workspace.
    pub command: String,
    /// Wall-clock limit (default 60s).
    #[serde(default)]
    pub timeout: Option<DurationSpec>,
}

/// `docker: {container: web, running: true, healthy: true}`: the container's state as the
/// installed engine (podman or docker; `MEDIN_CONTAINER_ENGINE` overrides) reports it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DockerCheck {
    /// Container name or id.
    pub container: String,
    /// `true` (default): the container must be running; `false`: it must exist and be stopped.
    #[serde(default = "yes")]
    pub running: bool,
    /// `true`: its health check must report `healthy` as well (default: health not checked).
    #[serde(default)]
    pub healthy: bool,
}

fn yes() -> bool {
    true
}

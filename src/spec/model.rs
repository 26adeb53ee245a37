//! The task model: what a YAML task file means once it is parsed.
//!
//! These types are the product's main interface. They are strict (`deny_unknown_fields`
//! everywhere), small for the common case, and each derives a JSON Schema so editors can
//! complete specs. Parsing, locations and suggestions live in `spec::load`; this file only
//! says what a well-formed task is.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::tools::receipt::{ErrorCode, EvidenceKind};

/// One task file, as written.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Stable id (e.g. `GT-002`); defaults to the file name.
    #[serde(default)]
    pub id: Option<String>,
    /// One line: what the task checks.
    pub description: String,
    /// `task` (default), `tdd` (TDD-Ralph loop) or `prp` (progressive validation gates).
    #[serde(default)]
    pub kind: TaskKind,
    #[serde(default)]
    pub tags: Vec<String>,
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
    /// How strongly commands are confined: `none`, `process` or `strict` (Linux, root:
    /// namespaces, Landlock, seccomp). Overrides the suite's `isolation`; unset in both, the
    /// strongest level this machine supports. A level asked for that the machine cannot give
    /// fails the task; `medin doctor` shows what is available.
    #[serde(default)]
    pub isolation: Option<crate::sandbox::Isolation>,
    /// Pins the task to one agent (e.g. `oracle` for harness self-tests).
    #[serde(default)]
    pub agent: Option<AgentSpec>,
    /// The reference solution the oracle agent plays, one step per list item (multi-round
    /// kinds: each round ends with `final`, or is written as a nested list of steps).
    #[serde(default, deserialize_with = "super::values::solution_steps")]
    #[schemars(schema_with = "super::values::solution_schema")]
    pub solution: Vec<Step>,
    #[serde(default)]
    pub expect: Expect,
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

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    #[default]
    Task,
    Tdd,
    Prp,
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
    /// Whether commands may use the network (default false).
    #[serde(default)]
    pub network: bool,
    #[serde(default)]
    pub tools: ToolPolicy,
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

/// Who acts.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum AgentSpec {
    /// Plays the task's `solution`.
    Oracle,
    /// A program speaking the JSON-lines protocol on stdin/stdout.
    Process(ProcessAgentSpec),
    /// A black-box command run inside the sandbox; only the end state is judged.
    Exec(ExecAgentSpec),
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessAgentSpec {
    /// Shell command line that starts the agent. It runs with the directory of the file that
    /// declared it as working directory.
    pub command: String,
    /// How long the agent may take to answer one message (default 30s).
    #[serde(default)]
    pub reply_timeout: Option<DurationSpec>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecAgentSpec {
    /// Shell command line run in the workspace; `$MEDIN_PROMPT` holds the prompt.
    pub command: String,
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

/// What must hold after the run.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
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
    pub validate: Vec<ValidatorSpec>,
    #[serde(default)]
    pub metrics: MetricsExpect,
    /// PRP tasks: the gate runs, fix attempts and artifacts.
    #[serde(default)]
    pub prp: Option<PrpExpect>,
    /// TDD tasks: the exit tag, iterations and stop reason.
    #[serde(default)]
    pub tdd: Option<TddExpect>,
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

//! medin: evaluate AI coding agents the way `cargo test` evaluates code.
//!
//! A task is a YAML file. Each task becomes one test case; running it sends every action of the
//! agent under test through **guard → sandbox → validate → log**, then checks the task's
//! expectations and the suite's metric thresholds.
//!
//! # Embedding medin
//!
//! A crate runs its own suite of YAML tasks, with agents of its own, through the [`Harness`]
//! builder. Agents are found by name: `oracle`, `process:CMD` and `exec:CMD` are built in,
//! and [`Harness::agent`] adds one written in Rust. Once registered, it is named like the
//! built-ins — by `agent:` in `medin.yaml` or in a task, by `MEDIN_AGENT`, or by
//! [`Harness::default_agent`] — as `mine` or `mine:ARG`.
//!
//! As a `harness = false` test target (`cargo test`, `cargo nextest`, libtest's flags):
//!
//! ```no_run
//! use medin::{Action, ActionInput, Agent, AgentContext, AgentEvent, FinalReport, FinalResult, Harness, Receipt};
//!
//! /// Writes `hello.txt`, then reports success.
//! struct Hello {
//!     wrote: bool,
//! }
//!
//! impl Agent for Hello {
//!     fn name(&self) -> String {
//!         "hello".into()
//!     }
//!
//!     fn next(&mut self, _last: Option<(&Action, &Receipt)>, _deadline: std::time::Instant) -> AgentEvent {
//!         if std::mem::replace(&mut self.wrote, true) {
//!             return AgentEvent::Final(FinalReport {
//!                 result: FinalResult::Success,
//!                 message: "wrote hello.txt".into(),
//!                 code: None,
//!             });
//!         }
//!         AgentEvent::Call(Action {
//!             id: "1".into(),
//!             tool: "write_file".into(),
//!             input: ActionInput::Json(serde_json::json!({ "path": "hello.txt", "content": "hello\n" })),
//!         })
//!     }
//!
//!     fn finish(&mut self) {}
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     Harness::new(env!("CARGO_MANIFEST_DIR"))
//!         .agent("hello", |_: &AgentContext<'_>| Hello { wrote: false })
//!         .default_agent("hello")
//!         .run()
//! }
//! ```
//!
//! From a Rust test, [`Harness::run_tasks`] and [`Harness::run_filtered`] run task files and
//! hand back their [`TaskResult`]s instead of exiting.
//!
//! # The public surface
//!
//! - running: [`Harness`] (the builder), [`HarnessError`], [`ExitStatus`] (the one exit-code
//!   table);
//! - writing an agent: the [`Agent`] trait, what it is started with ([`AgentContext`],
//!   [`TaskBrief`]), what it answers ([`AgentEvent`]: an [`Action`] with its [`ActionInput`],
//!   a [`FinalReport`] with its [`FinalResult`], a free-text reply, [`Usage`], or an
//!   [`AgentFailure`]), and what it receives for each action: a [`Receipt`]
//!   ([`ReceiptStatus`], [`ToolError`] and its [`ErrorCode`], [`Evidence`] of an
//!   [`EvidenceKind`], [`WouldAffect`]); [`RegistryError`] when a name cannot be registered;
//! - reading results: [`TaskResult`], its [`TrialVerdict`] (with the [`Mismatch`]es of a
//!   failure, or the [`Cause`] of a harness error), its [`Outcome`] and its
//!   [`AttemptMetrics`] (with a [`ToolTally`] per tool).
//!
//! Everything else is the crate's own and may change in any release. `medin::internal` exists
//! for medin's own binary, benchmarks and tests only: it is not API.
//!
//! # Inside
//!
//! - `spec` reads task files and the suite file;
//! - `agent` is who acts, registered by name (oracle, process, exec, and an embedder's own);
//! - `guard` decides whether an action may run; `pipeline` is the one path every action takes;
//! - `sandbox` is where it runs; `tools` is what it can do;
//! - `validate` checks the outcome for real;
//! - `log` keeps receipts, transcripts, metrics and the activity log;
//! - `plan` resolves a trial's effective settings once (agent, isolation, limits, ask mode,
//!   deadline, retry);
//! - `runner` runs one task end to end (one episode for every kind) and judges it;
//! - `report` holds the trial event stream and its reporters (activity log, result parts,
//!   libtest line, progress, suite metrics, thresholds, `summary.json`);
//! - `harness` plans a run and drives it (one driver for `medin run` and the libtest trials
//!   of `cargo test`), and holds the [`Harness`] builder;
//! - `exit` is the one exit-code table of every command and the harness;
//! - `inert` decides what of an agent's or a command's text may reach a terminal or a report;
//! - `import` turns Terminal-Bench and Harbor task directories into medin task directories;
//! - `testparse` reads what real test runners print (cargo test, pytest, jest, go test, …)
//!   into one report, for loops that run an agent's tests.

mod agent;
mod error;
mod exit;
mod guard;
mod harness;
mod import;
mod inert;
mod log;
mod partition;
mod pipeline;
mod plan;
mod prd;
mod report;
mod runner;
mod sandbox;
mod secrets;
mod spec;
mod suggest;
mod testparse;
mod tools;
mod validate;
mod watch;

#[doc(hidden)]
pub mod internal;

pub use agent::{Action, Agent, AgentContext, AgentEvent, AgentFailure, RegistryError, TaskBrief, Usage};
pub use error::Cause;
pub use exit::ExitStatus;
pub use harness::{Harness, HarnessError};
pub use runner::{AttemptMetrics, Mismatch, TaskResult, ToolTally, TrialVerdict};
pub use spec::{FinalReport, FinalResult, Outcome};
pub use tools::receipt::ToolError;
pub use tools::{ActionInput, ErrorCode, Evidence, EvidenceKind, Receipt, ReceiptStatus, WouldAffect};

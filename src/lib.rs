//! medin: evaluate AI coding agents the way `cargo test` evaluates code.
//!
//! A task is a YAML file. Each task becomes one test case; running it sends every action of the
//! agent under test through **guard → sandbox → validate → log**, then checks the task's
//! expectations and the suite's metric thresholds.
//!
//! - [`spec`] reads task files and the suite file;
//! - [`agent`] is who acts (oracle, process, exec);
//! - [`guard`] decides whether an action may run;
//! - [`sandbox`] is where it runs;
//! - [`tools`] is what it can do;
//! - [`validate`] checks the outcome for real;
//! - [`log`] keeps receipts, transcripts, metrics and the activity log;
//! - [`runner`] runs one task end to end and judges it;
//! - [`report`] holds the trial event stream and its reporters (activity log, result parts,
//!   libtest line, progress, suite metrics, thresholds, `summary.json`);
//! - [`harness`] plans a run and drives it (one driver for `medin run` and the libtest trials
//!   of `cargo test`);
//! - [`exit`] is the one exit-code table of every command and the harness;
//! - [`inert`] decides what of an agent's or a command's text may reach a terminal or a report;
//! - [`testparse`] reads what real test runners print (cargo test, pytest, jest, go test, …)
//!   into one report, for loops that run an agent's tests.

pub mod agent;
pub mod error;
pub mod exit;
pub mod guard;
pub mod harness;
pub mod inert;
pub mod log;
pub mod pipeline;
pub mod plan;
pub mod report;
pub mod runner;
pub mod sandbox;
pub mod spec;
pub mod suggest;
pub mod testparse;
pub mod tools;
pub mod validate;

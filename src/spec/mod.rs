//! Task specs: the YAML task model (typed: the kind carries its own blocks; the file as written
//! lives in `raw`), loading with limits and `file:line:col` errors, the suite
//! file (`medin.yaml`), discovery of task files and task directories ([`taskdir`]), files in a
//! suite folder that are not tasks (`foreign`), the published JSON Schema, and the one way
//! regexes from specs are compiled ([`pattern`]).
//!
//! This module owns the meaning of the YAML and every message about a malformed one. It never
//! runs anything: a loaded task is plain data for the runner.

mod agent_ref;
pub mod check;
mod foreign;
pub mod limits;
pub mod load;
pub mod model;
pub mod pass_env;
pub mod pattern;
mod raw;
pub mod schema;
pub mod suite;
pub mod taskdir;
pub mod values;

pub use crate::agent::AgentSpec;
pub use agent_ref::{AgentGiven, AgentRef};
pub use check::{check_paths, SpecWarning};
pub use load::parse_task;
pub use load::{load_task, load_task_with, SpecError};
pub use model::*;
pub use pass_env::EnvName;
pub use schema::task_schema_json;
pub use suite::{discover, load_suite, load_suite_with, Bound, SpecFile, Suite, ThresholdSet};

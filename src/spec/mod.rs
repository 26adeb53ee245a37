//! Task specs: the YAML task model (typed: the kind carries its own blocks; the file as written
//! lives in `raw`), loading with limits and `file:line:col` errors, the suite
//! file (`medin.yaml`), discovery of task files, the published JSON Schema, and the one way
//! regexes from specs are compiled ([`pattern`]).
//!
//! This module owns the meaning of the YAML and every message about a malformed one. It never
//! runs anything: a loaded task is plain data for the runner.

pub mod check;
pub mod limits;
pub mod load;
pub mod model;
pub mod pattern;
mod raw;
pub mod schema;
pub mod suite;
pub mod values;

pub use check::check_paths;
pub use load::{load_task, SpecError};
pub use load::{parse_task, task_id};
pub use model::*;
pub use schema::{suite_schema_json, task_schema_json};
pub use suite::{discover, load_suite, SpecFile, Suite, SuiteConfig, ThresholdSet};

//! The suite: `medin.yaml` (folders, default agent, repeats, thresholds) and discovery of the
//! task files in its folders. Trial names are `<category>::<path-without-extension>`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::load::SpecError;
use super::model::AgentSpec;

/// `medin.yaml`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteConfig {
    /// Folders holding task files; the folder name is the category (default: golden,
    /// adversarial, regression).
    #[serde(default = "default_suites")]
    pub suites: Vec<String>,
    /// Agent for tasks that do not pin one (default `oracle`); `MEDIN_AGENT` overrides it.
    #[serde(default)]
    pub agent: Option<AgentSpec>,
    /// Attempts per task (epochs), default 1.
    #[serde(default)]
    pub repeat: Option<u32>,
    /// Where run folders and ACTIVITY_LOG.md go, relative to medin.yaml (default target/medin).
    #[serde(default)]
    pub output: Option<String>,
    /// `overall` and per-category thresholds.
    #[serde(default)]
    pub thresholds: BTreeMap<String, ThresholdSet>,
}

fn default_suites() -> Vec<String> {
    vec!["golden".into(), "adversarial".into(), "regression".into()]
}

impl Default for SuiteConfig {
    fn default() -> Self {
        SuiteConfig { suites: default_suites(), agent: None, repeat: None, output: None, thresholds: BTreeMap::new() }
    }
}

/// Bounds on suite metrics for one category (or `overall`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThresholdSet {
    /// Fraction of trials that must pass, 0.0-1.0.
    #[serde(default)]
    pub min_success_rate: Option<f64>,
    /// Highest fraction of tool calls that may end in an error receipt.
    #[serde(default)]
    pub max_tool_error_rate: Option<f64>,
    /// Highest average number of turns per task.
    #[serde(default)]
    pub max_avg_turns: Option<f64>,
}

/// A loaded suite: its config and where it lives.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Directory of `medin.yaml` (or the directory given when there is none).
    pub root: PathBuf,
    pub config: SuiteConfig,
}

/// One task file found in a suite folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SpecFile {
    /// Folder name: golden, adversarial, regression, ...
    pub category: String,
    /// Path below the category folder, without extension, `/`-separated.
    pub name: String,
    pub path: PathBuf,
}

impl SpecFile {
    /// `<category>::<name>`.
    pub fn trial_name(&self) -> String {
        format!("{}::{}", self.category, self.name)
    }
}

/// Loads `medin.yaml` from `dir` (defaults when it does not exist).
pub fn load_suite(dir: &Path) -> Result<Suite, SpecError> {
    let _ = dir;
    todo!("spec helper")
}

/// Every `*.yaml`/`*.yml` below the suite's folders, sorted by trial name.
pub fn discover(suite: &Suite) -> Result<Vec<SpecFile>, SpecError> {
    let _ = suite;
    todo!("spec helper")
}

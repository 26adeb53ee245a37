//! `results.json`: a run's results as data for other programs — versioned, with a JSON Schema
//! (`medin schema --results`), written into the run folder whenever the run is concluded (by
//! `medin run`, the `eval` harness, and `medin report` over every shard's parts).
//!
//! The format only grows: a field is never renamed or given another meaning within one
//! `schema_version`; a reader must ignore fields it does not know. Version 1 has grown so far
//! by the suite metrics (`metrics`), warning-level breaches (`warnings`) and per trial its
//! failure message, tool tallies, model cost, flake tolerance and quality metrics — all
//! additions, so it is still version 1; `breaches` holds what failed the gate, as it always
//! did (now that thresholds have levels: the critical ones). medin reads its own
//! `results.json` back (`medin report FILE`), older ones too: an absent field reads as empty.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::events::{Event, ReportError, Reporter};
use super::finish::RunConclusion;
use super::metrics::SuiteMetrics;
use super::quality::AttemptQuality;
use super::record::{TrialRecord, TrialStatus};
use super::run::atomic_write;
use crate::runner::{AttemptMetrics, ModelMetrics, ToolTally};

/// The version of the `results.json` format this medin writes.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Results {
    /// The version of this format ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The medin that wrote it.
    pub medin_version: String,
    pub run_id: String,
    /// When the run was concluded (RFC 3339).
    pub concluded_at: String,
    /// SHA-256 over the suite's task files (their paths and contents): two runs with the same
    /// hash ran the same tasks.
    pub suite_hash: Option<String>,
    pub machine: Machine,
    /// Whether the thresholds (or a baseline) judged the run, and what broke.
    pub gated: bool,
    /// The breaches that failed the gate: critical thresholds, regressions from a baseline.
    pub breaches: Vec<String>,
    /// Thresholds breached at level warning: reported, not failing.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The suite metrics of the run (overall, per category, per tool).
    #[serde(default)]
    pub metrics: SuiteMetrics,
    /// Per requirement of the suite's PRD: the trials naming it and whether one passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirement_coverage: Option<crate::prd::Coverage>,
    pub trials: Vec<TrialResult>,
}

/// Where the run concluded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Machine {
    pub os: String,
    pub arch: String,
    pub cpus: usize,
}

impl Machine {
    pub fn this() -> Self {
        Machine {
            os: std::env::consts::OS.into(),
            arch: std::env::consts::ARCH.into(),
            cpus: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        }
    }
}

/// One attempt of one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrialResult {
    /// `<category>::<path/without/extension>`.
    pub task_id: String,
    pub category: String,
    pub tags: Vec<String>,
    pub agent: String,
    pub attempt: u32,
    /// `passed`, `failed` (the agent's failure) or `infrastructure` (the harness's).
    pub status: String,
    /// `success`, `failure`, `stopped`, `timeout`, `pending` or `error`.
    pub outcome: Option<String>,
    /// Whose failure it is: `agent`, or for a harness error `infrastructure` / `invalid_task`;
    /// none when it passed.
    pub cause: Option<String>,
    pub duration_ms: u64,
    pub turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub guard_blocks: u32,
    pub tool_calls: u32,
    pub tool_errors: u32,
    /// Each expectation that did not hold.
    pub failed_expectations: Vec<FailedExpectation>,
    pub run_dir: PathBuf,
    /// The failure message (each expectation that did not hold, inert and clipped; the run
    /// folder), when it did not pass.
    #[serde(default)]
    pub failure: Option<String>,
    /// When the attempt finished (RFC 3339).
    #[serde(default)]
    pub finished_at: Option<String>,
    /// The agent's calls and error receipts per tool.
    #[serde(default)]
    pub by_tool: BTreeMap<String, ToolTally>,
    /// A model agent's exchanges, retries, cached tokens and cost in US dollars.
    #[serde(default)]
    pub model: Option<ModelMetrics>,
    /// The model ran out of context window: counted apart from the agent's failures.
    #[serde(default)]
    pub context_length_exceeded: bool,
    /// The task's `flake_tolerance`.
    #[serde(default)]
    pub flake_tolerance: u32,
    /// The PRD requirements the task names (it proves them if it passed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<String>,
    /// The agent claimed success and the trial failed.
    #[serde(default)]
    pub false_success: bool,
    /// Time to first correct, the agent's claim, verification failures, missing receipts,
    /// errors per code and per-tool latencies of this attempt.
    #[serde(default)]
    pub quality: AttemptQuality,
    /// The verifier's reward in [0, 1] (a task with `verify:`), else none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f64>,
}

/// An expectation that did not hold: where in the spec, expected against actual.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FailedExpectation {
    pub expectation: String,
    pub expected: String,
    pub actual: String,
}

impl TrialResult {
    fn of(t: &TrialRecord) -> Self {
        let m = &t.metrics;
        TrialResult {
            task_id: t.trial.clone(),
            category: t.category.clone(),
            tags: t.tags.clone(),
            agent: t.agent.clone(),
            attempt: t.attempt,
            status: t.status.as_str().into(),
            outcome: t.outcome.map(|o| crate::runner::expect::outcome_name(o).to_string()),
            cause: match t.status {
                TrialStatus::Passed => None,
                TrialStatus::Failed => Some("agent".into()),
                TrialStatus::Infrastructure => Some(
                    t.cause
                        .map(|c| c.as_str())
                        .unwrap_or(crate::error::Cause::Infrastructure.as_str())
                        .into(),
                ),
            },
            duration_ms: m.duration_ms,
            turns: m.turns,
            input_tokens: m.usage.input_tokens,
            output_tokens: m.usage.output_tokens,
            guard_blocks: m.guard_blocks,
            tool_calls: m.by_tool.values().fold(0u32, |n, t| n.saturating_add(t.calls)),
            tool_errors: m.tool_errors,
            failed_expectations: t.expectations.clone(),
            run_dir: t.run_dir.clone(),
            failure: t.failure.clone(),
            finished_at: Some(t.finished_at.to_rfc3339()),
            by_tool: m.by_tool.clone(),
            model: m.model,
            context_length_exceeded: m.context_length_exceeded,
            flake_tolerance: t.flake_tolerance,
            requirements: t.requirements.clone(),
            false_success: t.false_success(),
            quality: t.quality.clone(),
            reward: m.reward,
        }
    }

    /// The trial record this result was written from, as far as `results.json` keeps it: what
    /// the metrics, the thresholds and every reporter read. What it does not keep (guard
    /// warnings, malformed lines, tampering counts) reads as zero.
    pub fn to_record(&self) -> Result<TrialRecord, String> {
        let word = |text: &str| serde_json::Value::String(text.to_string());
        let shown = |text: &str| crate::inert::line(&crate::inert::clip(text, 100)).into_owned();
        let status: TrialStatus = serde_json::from_value(word(&self.status)).map_err(|_| {
            format!(
                "trial {}: status `{}` is not one of passed, failed, infrastructure",
                shown(&self.task_id),
                shown(&self.status)
            )
        })?;
        let outcome = match &self.outcome {
            None => None,
            Some(text) => Some(serde_json::from_value(word(text)).map_err(|_| {
                format!(
                    "trial {}: outcome `{}` is not one of success, failure, stopped, timeout, pending, error",
                    shown(&self.task_id),
                    shown(text)
                )
            })?),
        };
        let cause = match (status, self.cause.as_deref()) {
            (TrialStatus::Infrastructure, Some(text)) => serde_json::from_value(word(text)).ok(),
            _ => None,
        };
        let finished_at = self
            .finished_at
            .as_deref()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&chrono::Utc))
            .unwrap_or_default();
        Ok(TrialRecord {
            trial: self.task_id.clone(),
            category: self.category.clone(),
            attempt: self.attempt,
            agent: self.agent.clone(),
            status,
            outcome,
            failure: self.failure.clone(),
            metrics: AttemptMetrics {
                turns: self.turns,
                tool_errors: self.tool_errors,
                by_tool: self.by_tool.clone(),
                guard_blocks: self.guard_blocks,
                duration_ms: self.duration_ms,
                usage: crate::agent::Usage {
                    input_tokens: self.input_tokens,
                    output_tokens: self.output_tokens,
                },
                model: self.model,
                context_length_exceeded: self.context_length_exceeded,
                reward: self.reward,
                ..AttemptMetrics::default()
            },
            run_dir: self.run_dir.clone(),
            finished_at,
            tags: self.tags.clone(),
            cause,
            expectations: self.failed_expectations.clone(),
            quality: self.quality.clone(),
            flake_tolerance: self.flake_tolerance,
            requirements: self.requirements.clone(),
        })
    }
}

/// The results of a concluded run.
pub fn of(run: &RunConclusion, suite_hash: Option<String>) -> Results {
    Results {
        schema_version: SCHEMA_VERSION,
        medin_version: env!("CARGO_PKG_VERSION").into(),
        run_id: run.run_id.to_string(),
        concluded_at: chrono::Utc::now().to_rfc3339(),
        suite_hash,
        machine: Machine::this(),
        gated: run.breaches.is_some(),
        breaches: run
            .breaches
            .iter()
            .flatten()
            .filter(|b| b.is_critical())
            .map(|b| b.to_string())
            .collect(),
        warnings: run
            .breaches
            .iter()
            .flatten()
            .filter(|b| !b.is_critical())
            .map(|b| b.to_string())
            .collect(),
        metrics: run.metrics.clone(),
        requirement_coverage: run.coverage.clone(),
        trials: run.trials.iter().map(TrialResult::of).collect(),
    }
}

/// The JSON Schema of `results.json`.
pub fn schema_json() -> String {
    serde_json::to_string_pretty(&schemars::schema_for!(Results)).unwrap_or_default()
}

/// SHA-256 over `files` (relative to `root`: each path and the hash of its content), sorted,
/// so the order they were found in does not matter. A file that cannot be read counts as its
/// error text: the hash then differs from a run that could read it.
pub fn suite_hash(root: &Path, files: &[PathBuf]) -> String {
    let mut entries: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(root).unwrap_or(f).to_string_lossy().into_owned();
            let content = match std::fs::read(f) {
                Ok(bytes) => crate::tools::receipt::sha256_tagged(&bytes),
                Err(e) => format!("unreadable: {e}"),
            };
            (rel, content)
        })
        .collect();
    entries.sort();
    let mut h = Sha256::new();
    for (path, content) in entries {
        h.update(path.as_bytes());
        h.update([0]);
        h.update(content.as_bytes());
        h.update([b'\n']);
    }
    format!("sha256:{}", hex::encode(h.finalize()))
}

/// Writes `results.json` into the run folder when the run is concluded (atomically: several
/// processes of one run may conclude it).
pub struct ResultsFile {
    suite_hash: Option<String>,
}

impl ResultsFile {
    pub fn new(suite_hash: Option<String>) -> Self {
        ResultsFile { suite_hash }
    }
}

impl Reporter for ResultsFile {
    fn report(&self, event: &Event<'_>) -> Result<(), ReportError> {
        let Event::RunFinished(run) = event else {
            return Ok(());
        };
        let path = run.folder.join("results.json");
        let text = serde_json::to_string_pretty(&of(run, self.suite_hash.clone())).unwrap_or_default();
        atomic_write(&path, (crate::inert::json(&text).into_owned() + "\n").as_bytes())
            .map_err(|e| ReportError::new("results.json", format!("cannot write {}: {e}", path.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_hash_depends_on_paths_and_contents_not_on_order() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("golden/a.yaml"), dir.path().join("golden/b.yaml"));
        std::fs::create_dir_all(a.parent().unwrap()).unwrap();
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        let h1 = suite_hash(dir.path(), &[a.clone(), b.clone()]);
        assert_eq!(h1, suite_hash(dir.path(), &[b.clone(), a.clone()]));
        std::fs::write(&b, "b2").unwrap();
        assert_ne!(h1, suite_hash(dir.path(), &[a.clone(), b.clone()]));
        assert!(h1.starts_with("sha256:") && h1.len() == 7 + 64);
    }

    #[test]
    fn a_trial_result_reads_back_as_the_record_it_was_written_from() {
        let mut record = TrialRecord::for_test("golden::a", 2, TrialStatus::Failed);
        record.metrics.turns = 4;
        record.metrics.usage.input_tokens = 100;
        record
            .metrics
            .by_tool
            .insert("bash".into(), ToolTally { calls: 3, errors: 1 });
        record.quality.claimed_success = true;
        record.quality.tool_latency_ms.insert("bash".into(), vec![5, 7, 9]);
        record.flake_tolerance = 1;
        record.outcome = Some(crate::spec::Outcome::Failure);
        // A second's precision is what RFC 3339 keeps here.
        record.finished_at = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let written = TrialResult::of(&record);
        assert!(written.false_success);
        let text = serde_json::to_string(&written).unwrap();
        let read: TrialResult = serde_json::from_str(&text).unwrap();
        assert_eq!(read.to_record().unwrap(), record);
        // Older files have none of the added fields: they read as empty.
        let old = r#"{"task_id":"golden::b","category":"golden","tags":[],"agent":"oracle","attempt":1,"status":"passed","outcome":"success","cause":null,"duration_ms":3,"turns":1,"input_tokens":0,"output_tokens":0,"guard_blocks":0,"tool_calls":1,"tool_errors":0,"failed_expectations":[],"run_dir":"/x"}"#;
        let old: TrialResult = serde_json::from_str(old).unwrap();
        assert_eq!(old.to_record().unwrap().status, TrialStatus::Passed);
        let bad = TrialResult {
            status: "won".into(),
            ..old
        };
        assert!(bad.to_record().unwrap_err().contains("status `won`"));
    }

    #[test]
    fn the_schema_names_the_version_and_every_trial_field() {
        let schema = schema_json();
        for field in [
            "schema_version",
            "suite_hash",
            "failed_expectations",
            "cause",
            "tags",
            "warnings",
            "tokens_per_success",
            "time_to_first_correct_ms",
            "missing_receipts",
            "errors_by_code",
            "tool_latency",
            "false_success",
        ] {
            assert!(schema.contains(field), "{field} missing from the schema");
        }
    }
}

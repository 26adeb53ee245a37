//! What one attempt produced, as data: every action with its guard verdict, decision and
//! receipt, the agent's final report, the validations, and the attempt's metrics. The runner
//! fills it; expectations, the log and the report read it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::agent::Usage;
use crate::guard::Verdict;
use crate::spec::{FinalReport, Outcome};
use crate::tools::Receipt;
use crate::validate::ValidationResult;

/// One action, as written to `receipts.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ActionRecord {
    /// 1-based position in the attempt.
    pub seq: u32,
    /// The agent's call id (empty for malformed output).
    pub action_id: String,
    pub tool: String,
    /// The input as JSON, or `{"raw": text}` when it was not JSON.
    pub input: serde_json::Value,
    /// Who asked for it: agent | setup | test | build | gate | validator | harness.
    #[serde(default)]
    pub origin: crate::guard::policy::Origin,
    /// The guard's verdict, when the action reached the guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<Verdict>,
    /// allow | warn | deny | bypassed | not_checked
    pub decision: String,
    /// The written justification of a bypass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
    /// A runtime limit this action broke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    pub receipt: Receipt,
    pub timestamp: String,
    /// The tool was invoked (not refused by policy, guard or a limit), whatever its result.
    #[serde(default)]
    pub ran: bool,
    /// Milliseconds from the pipeline taking the action up (tool policy, guard, limits, the
    /// tool or command itself) to its receipt: the latency the agent saw. `None` for records
    /// the pipeline did not time (notes about the agent or of the harness).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

impl ActionRecord {
    /// An agent's tool call (not the harness's own step, not a receipt about the agent).
    pub fn is_agent_call(&self) -> bool {
        self.origin == crate::guard::policy::Origin::Agent && !self.tool.is_empty()
    }

    /// The record as an attempt keeps it in memory, once `receipts.jsonl` has the whole of it:
    /// the input and the receipt's data and error contexts cut to [`RETAINED_JSON_BYTES`] each
    /// (strings to [`RETAINED_TEXT_BYTES`]), messages and lists cut likewise. A cut string ends
    /// with its full length and SHA-256, like cut command output. So an agent's thousands of
    /// calls with megabyte inputs cost medin kilobytes each, and expectations still see every
    /// tool, status, error code, evidence entry and the start of every value.
    pub fn retained(mut self) -> Self {
        let text = |t: &mut String| {
            if t.len() > RETAINED_TEXT_BYTES {
                *t = crate::tools::receipt::cut_text(t, RETAINED_TEXT_BYTES);
            }
        };
        let json = |v: &mut serde_json::Value| *v = cap_json(v, &mut Budget::new());
        text(&mut self.action_id);
        text(&mut self.tool);
        json(&mut self.input);
        if let Some(j) = &mut self.justification {
            text(j);
        }
        if let Some(l) = &mut self.limit {
            text(l);
        }
        if let Some(g) = &mut self.guard {
            g.violations.truncate(RETAINED_ITEMS);
            for v in &mut g.violations {
                text(&mut v.matched);
                text(&mut v.description);
                text(&mut v.rule);
            }
            if let Some(a) = &mut g.alternative {
                text(a);
            }
        }
        let r = &mut self.receipt;
        json(&mut r.data);
        r.errors.truncate(RETAINED_ITEMS);
        for e in &mut r.errors {
            text(&mut e.message);
            json(&mut e.context);
        }
        for list in [&mut r.warnings, &mut r.next_actions] {
            list.truncate(RETAINED_ITEMS);
            list.iter_mut().for_each(text);
        }
        r.receipts.truncate(RETAINED_ITEMS);
        for e in &mut r.receipts {
            text(&mut e.source);
        }
        r.would_affect.truncate(RETAINED_ITEMS);
        for w in &mut r.would_affect {
            text(&mut w.target);
        }
        self
    }
}

/// Bytes of one JSON value (an input, a receipt's data) an attempt keeps in memory.
pub const RETAINED_JSON_BYTES: usize = 32 * 1024;
/// Bytes of one string an attempt keeps in memory.
pub const RETAINED_TEXT_BYTES: usize = 4 * 1024;
/// Entries of one list (errors, warnings, evidence, …) an attempt keeps in memory.
pub const RETAINED_ITEMS: usize = 256;

/// What is left to keep of one JSON value: bytes, and nodes (so a million `null`s cost too).
struct Budget {
    bytes: usize,
    nodes: usize,
}

impl Budget {
    fn new() -> Self {
        Budget {
            bytes: RETAINED_JSON_BYTES,
            nodes: RETAINED_JSON_BYTES / 16,
        }
    }

    /// Takes `bytes` for one node; false when the budget is spent.
    fn take(&mut self, bytes: usize) -> bool {
        if self.nodes == 0 || self.bytes == 0 {
            return false;
        }
        self.nodes -= 1;
        self.bytes = self.bytes.saturating_sub(bytes.max(1));
        true
    }
}

/// A copy of `v` within `budget`: strings cut, entries past the budget replaced by one marker.
fn cap_json(v: &serde_json::Value, budget: &mut Budget) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            let keep = s.len().min(RETAINED_TEXT_BYTES).min(budget.bytes);
            budget.take(keep);
            if keep < s.len() {
                Value::String(crate::tools::receipt::cut_text(s, keep))
            } else {
                v.clone()
            }
        }
        Value::Array(items) => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                if !budget.take(8) {
                    out.push(Value::String(format!(
                        "… [cut by medin: {} more items]",
                        items.len() - i
                    )));
                    break;
                }
                out.push(cap_json(item, budget));
            }
            Value::Array(out)
        }
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (i, (k, item)) in map.iter().enumerate() {
                if !budget.take(8 + k.len().min(RETAINED_TEXT_BYTES)) {
                    out.insert(
                        "…".into(),
                        Value::String(format!("cut by medin: {} more keys", map.len() - i)),
                    );
                    break;
                }
                let key = if k.len() > RETAINED_TEXT_BYTES {
                    crate::tools::receipt::cut_text(k, 256)
                } else {
                    k.clone()
                };
                out.insert(key, cap_json(item, budget));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// Calls and errors of one tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolTally {
    pub calls: u32,
    pub errors: u32,
}

/// Numbers of one attempt, written to `metrics.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AttemptMetrics {
    /// Tool calls the agent made (malformed lines count too).
    pub turns: u32,
    /// Receipts with status error.
    pub tool_errors: u32,
    pub by_tool: BTreeMap<String, ToolTally>,
    /// Actions the guard blocked (and policy denied).
    pub guard_blocks: u32,
    pub guard_warnings: u32,
    pub malformed: u32,
    /// Changes the agent made to protected files (each found before a judged run).
    #[serde(default)]
    pub tampering: u32,
    pub duration_ms: u64,
    pub usage: Usage,
    /// Model agents: exchanges, retries, cached tokens and cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelMetrics>,
    /// The attempt ended because the model's context window could not hold the conversation:
    /// counted apart from the agent's failures.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub context_length_exceeded: bool,
    /// The verifier's reward in [0, 1] (`verify:` tasks; `None`: no verification, or one that
    /// judged nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f64>,
    /// The verifier's per-test outcomes, sorted by id (`verify:` tasks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_results: Vec<crate::validate::verify::TestOutcome>,
}

/// What a model agent's exchanges cost in one attempt (its tokens are in `usage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModelMetrics {
    /// Exchanges that were answered or given up on.
    pub calls: u32,
    /// Tries after the first, over all exchanges (rate limits, server errors, timeouts).
    pub retries: u32,
    /// Input tokens read from the provider's cache (part of `usage.input_tokens`).
    pub cached_input_tokens: u64,
    /// The cost in US dollars of the exchanges whose price is known.
    pub cost_usd: f64,
    /// Part of the cost comes from medin's table of list prices: an estimate.
    pub cost_estimated: bool,
    /// Exchanges of a model with no known price (not in `cost_usd`).
    pub unpriced_calls: u32,
}

impl ModelMetrics {
    /// Adds one exchange.
    pub fn add(&mut self, call: &crate::agent::ModelCall) {
        self.calls = self.calls.saturating_add(1);
        self.retries = self.retries.saturating_add(call.retries);
        self.cached_input_tokens = self.cached_input_tokens.saturating_add(call.cached_input_tokens);
        match call.cost {
            Some(cost) if cost.usd.is_finite() && cost.usd >= 0.0 => {
                self.cost_usd += cost.usd;
                self.cost_estimated |= cost.estimated;
            }
            _ => self.unpriced_calls = self.unpriced_calls.saturating_add(1),
        }
    }

    /// Sums two attempts' (or groups') model metrics.
    pub fn merge(&mut self, other: &ModelMetrics) {
        self.calls = self.calls.saturating_add(other.calls);
        self.retries = self.retries.saturating_add(other.retries);
        self.cached_input_tokens = self.cached_input_tokens.saturating_add(other.cached_input_tokens);
        self.cost_usd += other.cost_usd;
        self.cost_estimated |= other.cost_estimated;
        self.unpriced_calls = self.unpriced_calls.saturating_add(other.unpriced_calls);
    }
}

/// Everything one attempt produced.
#[derive(Debug, Clone, Default)]
pub struct AttemptRecord {
    pub actions: Vec<ActionRecord>,
    pub final_report: Option<FinalReport>,
    /// Why the harness stopped the task (limit, invariant), or why the agent broke.
    pub stop_reason: Option<String>,
    pub outcome: Option<Outcome>,
    pub validations: Vec<ValidationResult>,
    pub metrics: AttemptMetrics,
    pub workspace: PathBuf,
    /// The attempt's run folder (the harness's own files: loop state, PRP artifacts).
    pub run_dir: PathBuf,
    /// Path → `sha256:<hex>` of every workspace file when the agent started (after setup).
    pub initial: std::collections::BTreeMap<String, String>,
    /// Changes the agent made to protected files, as found before each judged run.
    pub tampering: Vec<crate::validate::judged::Tampering>,
    /// PRP tasks: gate runs, fix attempts, retries, artifacts.
    pub prp: Option<PrpRecord>,
    /// TDD tasks: exit tag, iterations, stop reason, fix levels.
    pub tdd: Option<super::tdd::TddRecord>,
    /// `verify:` tasks: the verification, run after the agent's last action.
    pub verification: Option<crate::validate::verify::Verification>,
    /// The task's fixed paths and their folders, for `expect.files` paths such as `/app/x`.
    pub places: crate::validate::file::FixedPlaces,
}

/// The result of one gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    pub level: u8,
    pub description: String,
    pub command: Option<String>,
    pub outcome: crate::spec::GateOutcome,
    /// `outcome` is passed or skipped.
    pub success: bool,
    pub skipped: bool,
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub duration_ms: u64,
}

/// One file the run created, modified or deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    pub path: String,
    /// `sha256:<hex>` of the content now (of the original content for a deleted file).
    pub hash: String,
    /// `receipt` when a file tool's receipt names the file, `command` when only a command can
    /// have changed it.
    pub source: String,
}

/// Files the run changed, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifacts {
    pub created: Vec<Artifact>,
    pub modified: Vec<Artifact>,
    pub deleted: Vec<Artifact>,
}

/// What a PRP run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PrpRecord {
    pub task_id: String,
    pub success: bool,
    /// Fix rounds that ran.
    pub fix_attempts: u32,
    /// Every gate run, in order: run 0 after the first round, run n after fix round n.
    pub runs: Vec<Vec<GateResult>>,
    /// Agent-round retries after transient failures.
    pub retries: u32,
    /// Delays slept, in milliseconds, with what they were for.
    pub delays: Vec<(String, u64)>,
    /// The coder's reports, one per round.
    pub replies: Vec<crate::spec::FinalReport>,
    pub error: Option<String>,
    pub artifacts: Artifacts,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Receipt;
    use serde_json::json;

    #[test]
    fn a_retained_record_is_small_and_keeps_what_expectations_read() {
        let big = "z".repeat(3 << 20);
        let mut receipt =
            Receipt::success(json!({ "exit_code": 0, "stdout": big, "lines": vec![json!(null); 100_000] }));
        receipt.warnings = vec!["w".repeat(10_000); 1000];
        let rec = ActionRecord {
            seq: 1,
            action_id: "1".into(),
            tool: "write_file".into(),
            input: json!({ "path": "a.txt", "content": big }),
            guard: None,
            decision: "allow".into(),
            justification: None,
            limit: None,
            receipt,
            timestamp: String::new(),
            ran: true,
            origin: crate::guard::policy::Origin::Agent,
            duration_ms: Some(3),
        }
        .retained();
        let size = serde_json::to_string(&rec).unwrap().len();
        assert!(
            size < 4 * RETAINED_JSON_BYTES + RETAINED_ITEMS * (RETAINED_TEXT_BYTES + 200),
            "{size}"
        );
        assert_eq!(rec.input["path"], "a.txt");
        assert!(rec.input["content"]
            .as_str()
            .unwrap()
            .contains("3145728 bytes in all, sha256:"));
        assert_eq!(rec.receipt.data["exit_code"], 0);
        assert_eq!(rec.tool, "write_file");
        let small = json!({ "command": "ls", "n": [1, 2, 3] });
        assert_eq!(cap_json(&small, &mut Budget::new()), small);
    }
}

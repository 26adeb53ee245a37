//! PRP tasks (`kind: prp`): a coder agent implements a product requirement prompt, then
//! progressive validation gates prove it.
//!
//! The flow follows the reference executor, with its gaps closed:
//! 1. the PRP is written into the workspace as markdown (`.prp/<id>.md`) and the coder's first
//!    prompt is the execute prompt with that path injected;
//! 2. the coder's round ends with a report: a `final`, or a free-text reply parsed as
//!    `{"result", "message"}` (raw or in a fenced block; unparsable → `error`, reply quoted).
//!    `error` or `issue` ends the task before any gate runs;
//! 3. the gates run sorted by level, one after another, each through the guard and the sandbox
//!    with the workspace as cwd (`sh -c`, so quoting works as in a shell); the first failure stops
//!    the rest; a manual gate or a null command is skipped and counts as passed;
//! 4. after a failed gate run, a fix round: wait the backoff delay, send the error context as
//!    `feedback`, let the coder act, re-run all gates; after the last fix attempt the task fails
//!    with "validation failed after all fix attempts";
//! 5. an agent round that fails transiently (crash, hang, could not start) is retried with
//!    exponential backoff and jitter, apart from fix attempts; a permanent failure is not;
//! 6. every gate run, delay and retry is a receipt (`medin.gate`, `medin.backoff`,
//!    `medin.retry`), and the run folder gets `validation-results.json`,
//!    `execution-summary.md` and `artifacts-list.json` (files created, modified and deleted,
//!    with hashes).
//!
//! Success still needs evidence: if every gate was skipped and no `expect.validate` check ran,
//! the outcome is `pending`, not `success`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::episode::{Episode, RoundEnd};
use super::judge::{Ending, KindCheck};
use super::record::{Artifact, Artifacts, AttemptRecord, GateResult, PrpRecord};
use super::{Attempt, KindRun};
use crate::agent::Action;
use crate::error::RunError;
use crate::pipeline::{CommandOptions, CommandPassed, Origin};
use crate::plan::Backoff;
use crate::sandbox::{self, CommandOutcome};
use crate::spec::{FinalResult, GateOutcome, GateSpec, Outcome, PrpSpec};
use crate::tools::{ActionInput, ErrorCode, EvidenceKind, Receipt};
use crate::validate::judged::RunnerEvidence;

/// The execute prompt; `$PRP_FILE_PATH` is replaced by the PRP's workspace path.
pub const EXECUTE_PROMPT: &str = "# Execute the PRP

Read the PRP file at `$PRP_FILE_PATH` first: it holds the objective, the context, the
implementation steps and the validation gates (level 1 syntax and style, 2 unit tests,
3 integration, 4 manual or domain-specific). Implement it in this workspace so that every gate
passes, running the gates' commands yourself to check. If a fundamental issue with the plan is
found, stop and explain it.

Strictly end with your result in this JSON format:

```json
{\"result\": \"success\" | \"error\" | \"issue\", \"message\": \"what you did, or the problem\"}
```
";

const DEFAULT_FIX_ATTEMPTS: u32 = 2;
const DEFAULT_GATE_TIMEOUT: Duration = Duration::from_secs(120);
const FIX_BACKOFF: Backoff = Backoff {
    base: Duration::from_secs(2),
    factor: 2.0,
    cap: Duration::from_secs(30),
    jitter: 0.1,
};
/// How much of a gate's output goes into the fix prompt and the results.
const TAIL_CHARS: usize = 4000;

/// A PRP task: the coder's round, then gate runs and fix rounds.
pub(super) struct PrpGates {
    prp: PrpSpec,
    rec: PrpRecord,
}

impl PrpGates {
    pub fn new(prp: PrpSpec) -> Self {
        PrpGates {
            prp,
            rec: PrpRecord::default(),
        }
    }
}

impl KindRun for PrpGates {
    fn play(&mut self, att: &mut Attempt<'_>, record: &mut AttemptRecord) -> Result<Ending, RunError> {
        let prp = &self.prp;
        let task_id = prp
            .task_id
            .clone()
            .or_else(|| att.task.id.clone())
            .unwrap_or_else(|| att.task_id.clone());
        let prp_rel = format!(".prp/{}.md", file_safe(&task_id));
        att.ws
            .write(&prp_rel, render_prp(&task_id, prp).as_bytes(), None)
            .map_err(|e| RunError::harness("cannot write the PRP into the workspace", e))?;
        let before = snapshot(&att.ws);
        let rec = &mut self.rec;
        rec.task_id = task_id;
        let prompt = EXECUTE_PROMPT.replace("$PRP_FILE_PATH", &prp_rel);

        let mut episode = Episode::start(att, prompt)?;
        let ending = match episode.round(att)? {
            RoundEnd::Reported(report) => {
                let result = report.result;
                rec.replies.push(report.clone());
                record.final_report = Some(report.clone());
                if result != FinalResult::Success {
                    rec.error = Some(format!(
                        "the coder reported {}: {}",
                        result_name(result),
                        report.message
                    ));
                    Ending::Finished {
                        claim: Some(result),
                        check: KindCheck::NoneRan,
                    }
                } else {
                    gate_loop(att, prp, record, rec, &mut episode)?
                }
            }
            RoundEnd::AgentFailed(f) => Ending::AgentBroke(f.to_string()),
            RoundEnd::Stopped(o, reason) => Ending::Stopped(o, reason),
        };
        let stats = episode.finish();
        rec.retries = stats.retries;
        rec.delays = stats.delays;
        rec.artifacts = artifacts(&before, &snapshot(&att.ws), &att.pipe.actions_since(0));
        Ok(ending)
    }

    fn conclude(self: Box<Self>, att: &Attempt<'_>, record: &mut AttemptRecord) -> Result<(), RunError> {
        let outcome = record.outcome.unwrap_or(Outcome::Error);
        write_artifacts(att.run_dir(), &self.prp, &self.rec, outcome)?;
        record.prp = Some(self.rec);
        Ok(())
    }
}

/// Gate runs and fix rounds, until the gates pass, the fix attempts run out, or the task stops.
fn gate_loop(
    att: &mut Attempt<'_>,
    prp: &PrpSpec,
    record: &mut AttemptRecord,
    rec: &mut PrpRecord,
    episode: &mut Episode,
) -> Result<Ending, RunError> {
    let fix_backoff = Backoff::from_spec(prp.backoff.as_ref(), FIX_BACKOFF);
    let max_fix = prp.fix_attempts.unwrap_or(DEFAULT_FIX_ATTEMPTS);
    loop {
        let run = att.judged(record, "the gates", super::Hidden::Out, |att, _| run_gates(att, prp))??;
        let passed = run.iter().all(|g| g.success);
        // Success needs a gate that really ran: skipped and manual gates prove nothing.
        let a_gate_ran = run.iter().any(|g| g.outcome == GateOutcome::Passed);
        rec.runs.push(run);
        // The tests were put back before the gates ran; a coder that changed them has failed
        // (the judge says so, naming what it changed).
        if !record.tampering.is_empty() {
            rec.error = Some(super::tampering_summary(&record.tampering));
            return Ok(finished(KindCheck::NoneRan));
        }
        if passed {
            rec.success = true;
            return Ok(finished(if a_gate_ran {
                KindCheck::Passed
            } else {
                KindCheck::NoneRan
            }));
        }
        if rec.fix_attempts >= max_fix {
            let why = format!(
                "validation failed after all fix attempts ({max_fix} fix attempt{})",
                if max_fix == 1 { "" } else { "s" }
            );
            rec.error = Some(why.clone());
            return Ok(finished(KindCheck::Failed(why)));
        }
        rec.fix_attempts += 1;
        let n = rec.fix_attempts;
        let delay = fix_backoff.delay(n, fastrand::f64());
        if !episode.pause(att, "medin.backoff", delay, serde_json::json!({ "fix_attempt": n }))? {
            let reason = format!(
                "task timeout of {} reached",
                humantime::format_duration(att.pipe.deadline().timeout)
            );
            return Ok(Ending::Stopped(Outcome::Timeout, reason));
        }
        let failed: Vec<&GateResult> = rec
            .runs
            .last()
            .map(|r| r.iter().filter(|g| !g.success).collect())
            .unwrap_or_default();
        let fix_prompt = fix_prompt(&rec.task_id, &failed, n, max_fix);
        let feedback = serde_json::json!({
            "kind": "gates_failed",
            "attempt": n,
            "max_attempts": max_fix,
            "prompt": fix_prompt,
            "failed_gates": failed.iter().map(|g| serde_json::json!({
                "level": g.level, "description": g.description, "command": g.command,
                "exit_code": g.exit_code, "stdout_tail": g.stdout, "stderr_tail": g.stderr,
                "outcome": g.outcome,
            })).collect::<Vec<_>>(),
        });
        episode.feedback(att, fix_prompt, feedback)?;
        match episode.round(att)? {
            RoundEnd::Reported(report) => {
                let result = report.result;
                rec.replies.push(report.clone());
                record.final_report = Some(report.clone());
                if result != FinalResult::Success {
                    let why = format!(
                        "the coder reported {} in fix round {n}: {}",
                        result_name(result),
                        report.message
                    );
                    rec.error = Some(why.clone());
                    return Ok(finished(KindCheck::Failed(why)));
                }
            }
            RoundEnd::AgentFailed(f) => return Ok(Ending::AgentBroke(f.to_string())),
            RoundEnd::Stopped(o, reason) => return Ok(Ending::Stopped(o, reason)),
        }
    }
}

/// The coder's work is done and reported a success; the gates say whether it holds.
fn finished(check: KindCheck) -> Ending {
    Ending::Finished {
        claim: Some(FinalResult::Success),
        check,
    }
}

/// Runs the gates sorted by level, stopping at the first failure.
fn run_gates(att: &mut Attempt<'_>, prp: &PrpSpec) -> Result<Vec<GateResult>, RunError> {
    let mut gates: Vec<_> = prp.gates.iter().collect();
    gates.sort_by_key(|g| g.level);
    let timeout = prp.gate_timeout.map(|d| d.0).unwrap_or(DEFAULT_GATE_TIMEOUT);
    let mut results = Vec::new();
    for gate in gates {
        let level = gate.level.0;
        let input = serde_json::json!({ "level": level, "description": gate.description, "command": gate.command });
        let action = Action {
            id: format!("gate-{level}"),
            tool: "medin.gate".into(),
            input: ActionInput::Json(input),
        };
        let command = match (&gate.command, gate.manual) {
            (Some(c), false) if !c.trim().is_empty() => c.clone(),
            _ => {
                let result = GateResult {
                    level,
                    description: gate.description.clone(),
                    command: gate.command.clone(),
                    outcome: GateOutcome::Skipped,
                    success: true,
                    skipped: true,
                    exit_code: None,
                    stdout: String::new(),
                    stderr: String::new(),
                    duration_ms: 0,
                };
                let receipt =
                    Receipt::success(serde_json::to_value(&result).unwrap_or_default()).with_warning(format!(
                        "level {level} gate skipped ({})",
                        if gate.manual { "manual" } else { "no command" }
                    ));
                att.pipe.note(&action, receipt)?;
                results.push(result);
                continue;
            }
        };
        // The gate's command takes the same path as any command: the pipeline (guard,
        // decision, sandbox under the deadline, receipt), judged through the runner shims.
        let options = CommandOptions {
            timeout: Some(timeout),
            judged: true,
        };
        let mut result = None;
        let passed = att
            .pipe
            .command_with(Origin::Gate, &action, &command, options, |out, evidence| {
                let r = gate_result(gate, &command, out, evidence);
                let receipt = gate_receipt(&r, &command, timeout);
                result = Some(r);
                receipt
            })?;
        let result = match (passed, result) {
            (CommandPassed::Denied { message }, _) => {
                results.push(GateResult {
                    level,
                    description: gate.description.clone(),
                    command: Some(command.clone()),
                    outcome: GateOutcome::Blocked,
                    success: false,
                    skipped: false,
                    exit_code: None,
                    stdout: String::new(),
                    stderr: message,
                    duration_ms: 0,
                });
                break;
            }
            (CommandPassed::Ran { .. }, Some(r)) => r,
            (CommandPassed::Ran { outcome, evidence }, None) => {
                gate_result(gate, &command, &outcome, evidence.as_ref())
            }
        };
        let stop = !result.success;
        results.push(result);
        if stop {
            break;
        }
    }
    Ok(results)
}

/// What a gate's command that ran says: a test runner's own report decides over its exit
/// code (one that never finished, or reported a failure, is no pass).
fn gate_result(gate: &GateSpec, command: &str, out: &CommandOutcome, evidence: Option<&RunnerEvidence>) -> GateResult {
    let runner_failed = evidence.is_some_and(|e| e.recognised() && e.contradicts_a_pass());
    let runner = evidence.filter(|_| runner_failed).map(|e| e.to_report(None));
    let outcome = if out.timed_out {
        GateOutcome::Timeout
    } else if out.success() && !runner_failed {
        GateOutcome::Passed
    } else {
        GateOutcome::Failed
    };
    let mut stderr = crate::inert::tail(&out.stderr.text, TAIL_CHARS);
    if let Some(r) = runner {
        let first = r
            .failures
            .first()
            .map(|f| format!("{}: {}", f.name, crate::inert::tail(&f.message, 500)))
            .unwrap_or_default();
        stderr = format!(
            "medin: the {} runner reported {:?} ({} passed, {} failed): {first}\n{stderr}",
            r.framework, r.status, r.passed, r.failed
        );
    }
    GateResult {
        level: gate.level.0,
        description: gate.description.clone(),
        command: Some(command.to_string()),
        outcome,
        success: outcome == GateOutcome::Passed,
        skipped: false,
        exit_code: match out.exit {
            sandbox::ExitKind::Code(c) => Some(c),
            sandbox::ExitKind::Signal(_) => None,
        },
        stdout: crate::inert::tail(&out.stdout.text, TAIL_CHARS),
        stderr,
        duration_ms: out.duration_ms,
    }
}

/// A gate's receipt: success, TIMEOUT, or VERIFICATION_FAILED, with the gate result as data.
fn gate_receipt(result: &GateResult, command: &str, timeout: Duration) -> Receipt {
    let level = result.level;
    let data = serde_json::to_value(result).unwrap_or_default();
    let mut receipt = match result.outcome {
        GateOutcome::Passed => return Receipt::success(data),
        GateOutcome::Timeout => Receipt::error(
            ErrorCode::Timeout,
            format!(
                "level {level} gate `{command}` ran past its {} timeout",
                humantime::format_duration(timeout)
            ),
        ),
        _ => Receipt::error(
            ErrorCode::VerificationFailed,
            format!("level {level} gate `{command}` failed (exit {:?})", result.exit_code),
        ),
    };
    receipt.data = data;
    receipt
}

fn fix_prompt(task_id: &str, failed: &[&GateResult], attempt: u32, max: u32) -> String {
    let mut context = String::new();
    for g in failed {
        let _ = write!(
            context,
            "\nLevel {}: {}\nCommand: {}\nExit code: {}\nOutput: {}\nError: {}\n",
            g.level,
            g.description,
            g.command.as_deref().unwrap_or("-"),
            g.exit_code
                .map(|c| c.to_string())
                .unwrap_or_else(|| format!("none ({:?})", g.outcome).to_lowercase()),
            g.stdout.trim_end(),
            g.stderr.trim_end(),
        );
    }
    format!(
        "The previous implementation failed validation. Please fix the issues.\n\nPRP task id: {task_id}\nFailed validation gates:\n{context}\nFix attempt: {attempt}/{max}\n\nAnalyse the failures and fix the implementation. End with your result in the same JSON format:\n{{\"result\": \"success\" | \"error\" | \"issue\", \"message\": \"...\"}}"
    )
}

/// The PRP as markdown, as the coder reads it.
fn render_prp(task_id: &str, prp: &PrpSpec) -> String {
    let mut s = format!("# PRP {task_id}\n\n## Objective\n\n{}\n", prp.objective.trim());
    if !prp.context.trim().is_empty() {
        let _ = write!(s, "\n## Context\n\n{}\n", prp.context.trim());
    }
    let list = |s: &mut String, title: &str, items: &[String]| {
        if !items.is_empty() {
            let _ = write!(s, "\n## {title}\n\n");
            for (i, item) in items.iter().enumerate() {
                let _ = writeln!(s, "{}. {}", i + 1, item.trim());
            }
        }
    };
    list(&mut s, "Implementation steps", &prp.implementation_steps);
    let _ = write!(s, "\n## Validation gates\n\n");
    let mut gates: Vec<_> = prp.gates.iter().collect();
    gates.sort_by_key(|g| g.level);
    for g in gates {
        let how = match (&g.command, g.manual) {
            (_, true) => "manual".to_string(),
            (Some(c), false) => format!("`{c}`"),
            (None, false) => "no command".to_string(),
        };
        let _ = writeln!(s, "- Level {}: {} — {how}", g.level.0, g.description);
    }
    list(&mut s, "Success criteria", &prp.success_criteria);
    list(&mut s, "References", &prp.references);
    s
}

/// Path → content hash of every file in the workspace, leaving out `.git/` and the PRP itself.
pub(super) fn snapshot(ws: &crate::sandbox::Beneath) -> BTreeMap<String, String> {
    super::snapshot::hashes(ws, |rel| super::snapshot::under_top_level(rel, &[".git", ".prp"]))
}

/// Created, modified and deleted files between two snapshots; `source` says whether a file
/// tool's receipt names the file.
fn artifacts(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
    actions: &[super::record::ActionRecord],
) -> Artifacts {
    let by_receipt: BTreeSet<&str> = actions
        .iter()
        .flat_map(|a| a.receipt.receipts.iter())
        .filter(|e| {
            matches!(
                e.kind,
                EvidenceKind::FileWrite | EvidenceKind::FileDelete | EvidenceKind::FileMove
            )
        })
        .map(|e| e.source.as_str())
        .collect();
    let source = |p: &str| {
        if by_receipt.iter().any(|s| *s == p || s.contains(p)) {
            "receipt".to_string()
        } else {
            "command".to_string()
        }
    };
    let mut out = Artifacts::default();
    for (path, hash) in after {
        match before.get(path) {
            None => out.created.push(Artifact {
                path: path.clone(),
                hash: hash.clone(),
                source: source(path),
            }),
            Some(old) if old != hash => out.modified.push(Artifact {
                path: path.clone(),
                hash: hash.clone(),
                source: source(path),
            }),
            Some(_) => {}
        }
    }
    for (path, hash) in before {
        if !after.contains_key(path) {
            out.deleted.push(Artifact {
                path: path.clone(),
                hash: hash.clone(),
                source: source(path),
            });
        }
    }
    out
}

/// `validation-results.json`, `execution-summary.md`, `artifacts-list.json`.
fn write_artifacts(dir: &Path, prp: &PrpSpec, rec: &PrpRecord, outcome: Outcome) -> Result<(), RunError> {
    let write = |name: &str, text: String| {
        // The summary quotes the coder and its file names: markdown for people, made inert;
        // the JSON files keep the exact text, escaped.
        let text = if name.ends_with(".md") {
            crate::inert::text(&text).into_owned()
        } else {
            crate::inert::json(&text).into_owned()
        };
        std::fs::write(dir.join(name), text).map_err(|e| RunError::log(dir.join(name), e))
    };
    let results = serde_json::json!({
        "task_id": rec.task_id,
        "success": rec.success,
        "outcome": outcome,
        "fix_attempts": rec.fix_attempts,
        "retries": rec.retries,
        "delays": rec.delays.iter().map(|(what, ms)| serde_json::json!({ "for": what, "delay_ms": ms })).collect::<Vec<_>>(),
        "error": rec.error,
        "runs": rec.runs.iter().enumerate().map(|(i, run)| serde_json::json!({ "run": i, "after": if i == 0 { "implementation".to_string() } else { format!("fix attempt {i}") }, "gates": run })).collect::<Vec<_>>(),
    });
    write("validation-results.json", pretty(&results))?;
    write(
        "artifacts-list.json",
        pretty(&serde_json::to_value(&rec.artifacts).unwrap_or_default()),
    )?;
    let mut md = format!(
        "# PRP {}\n\n**Objective:** {}\n\n**Outcome:** {} — {}\n\n**Fix attempts:** {} · **Agent retries:** {}\n",
        rec.task_id,
        prp.objective.trim(),
        super::expect::outcome_name(outcome),
        if rec.success {
            "every gate passed"
        } else {
            rec.error.as_deref().unwrap_or("gates did not pass")
        },
        rec.fix_attempts,
        rec.retries,
    );
    for (i, run) in rec.runs.iter().enumerate() {
        let _ = write!(
            md,
            "\n## Gate run {} ({})\n\n| level | gate | command | result | exit | ms |\n|---|---|---|---|---|---|\n",
            i + 1,
            if i == 0 {
                "after implementation".to_string()
            } else {
                format!("after fix attempt {i}")
            }
        );
        for g in run {
            let _ = writeln!(
                md,
                "| {} | {} | `{}` | {:?} | {} | {} |",
                g.level,
                g.description.replace('|', "\\|"),
                g.command.as_deref().unwrap_or("-").replace('|', "\\|"),
                g.outcome,
                g.exit_code.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
                g.duration_ms
            );
        }
    }
    let _ = write!(md, "\n## Artifacts\n\n");
    for (kind, list) in [
        ("created", &rec.artifacts.created),
        ("modified", &rec.artifacts.modified),
        ("deleted", &rec.artifacts.deleted),
    ] {
        for a in list {
            let _ = writeln!(md, "- {kind} `{}` ({}, {})", a.path, a.hash, a.source);
        }
    }
    if !rec.replies.is_empty() {
        let _ = write!(md, "\n## Coder replies\n\n");
        for (i, r) in rec.replies.iter().enumerate() {
            let _ = writeln!(
                md,
                "{}. {}: {}",
                i + 1,
                result_name(r.result),
                r.message.replace('\n', " ")
            );
        }
    }
    write("execution-summary.md", md)
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

fn result_name(r: FinalResult) -> &'static str {
    match r {
        FinalResult::Success => "success",
        FinalResult::Error => "error",
        FinalResult::Issue => "issue",
    }
}

fn file_safe(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_by_the_factor_up_to_the_cap_with_positive_jitter() {
        let b = FIX_BACKOFF;
        assert_eq!(b.delay(1, 0.0), Duration::from_secs(2));
        assert_eq!(b.delay(2, 0.0), Duration::from_secs(4));
        assert_eq!(b.delay(3, 0.0), Duration::from_secs(8));
        assert_eq!(b.delay(10, 0.0), Duration::from_secs(30));
        assert_eq!(b.delay(1, 1.0), Duration::from_secs_f64(2.2));
        assert!(b.delay(40, 1.0) <= Duration::from_secs(33));
    }

    #[test]
    fn artifacts_are_classified_against_the_snapshot() {
        let before: BTreeMap<String, String> = [
            ("a".into(), "h1".into()),
            ("b".into(), "h2".into()),
            ("c".into(), "h3".into()),
        ]
        .into();
        let after: BTreeMap<String, String> = [
            ("a".into(), "h1".into()),
            ("b".into(), "h9".into()),
            ("d".into(), "h4".into()),
        ]
        .into();
        let arts = artifacts(&before, &after, &[]);
        let names = |v: &[Artifact]| v.iter().map(|a| a.path.clone()).collect::<Vec<_>>();
        assert_eq!(names(&arts.created), ["d"]);
        assert_eq!(names(&arts.modified), ["b"]);
        assert_eq!(names(&arts.deleted), ["c"]);
        assert_eq!(arts.deleted[0].hash, "h3");
        assert_eq!(arts.created[0].source, "command");
    }

    #[test]
    fn the_fix_prompt_carries_the_error_context() {
        let g = GateResult {
            level: 2,
            description: "unit tests".into(),
            command: Some("python3 -m unittest".into()),
            outcome: GateOutcome::Failed,
            success: false,
            skipped: false,
            exit_code: Some(1),
            stdout: "FAILED (failures=1)".into(),
            stderr: "AssertionError: 3 != 4".into(),
            duration_ms: 5,
        };
        let p = fix_prompt("PRP-1", &[&g], 1, 2);
        for needle in [
            "Level 2: unit tests",
            "python3 -m unittest",
            "Exit code: 1",
            "AssertionError",
            "Fix attempt: 1/2",
        ] {
            assert!(p.contains(needle), "{needle} missing from {p}");
        }
    }
}

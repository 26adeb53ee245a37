//! Expectations: what must hold after an attempt, checked against what really happened. Each
//! expectation that does not hold becomes a [`Mismatch`] naming it, with expected against
//! actual (text differences as a line diff).

use std::fmt::Write as _;

use regex::Regex;

use super::record::{ActionRecord, AttemptRecord};
use crate::guard::Recommendation;
use crate::sandbox::{Beneath, BeneathError, EntryKind};
use crate::spec::{BlockedExpect, Expect, FileExpect, Outcome, Range, ReceiptExpect, TaskKind};
use crate::validate::ValidationStatus;

/// One expectation that did not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Where in the spec, e.g. `expect.files.hello.txt.equals`.
    pub what: String,
    pub expected: String,
    pub actual: String,
    /// A unified line diff when both sides are multi-line text.
    pub diff: Option<String>,
}

impl Mismatch {
    fn new(what: impl Into<String>, expected: impl Into<String>, actual: impl Into<String>) -> Self {
        Mismatch {
            what: what.into(),
            expected: expected.into(),
            actual: actual.into(),
            diff: None,
        }
    }

    fn text(what: impl Into<String>, expected: &str, actual: &str) -> Self {
        let mut m = Mismatch::new(what, expected, actual);
        let multi_line = |t: &str| t.trim_end_matches('\n').contains('\n');
        if multi_line(expected) || multi_line(actual) || expected.len() > 60 || actual.len() > 60 {
            m.diff = Some(
                similar::TextDiff::from_lines(expected, actual)
                    .unified_diff()
                    .header("expected", "actual")
                    .to_string(),
            );
        } else {
            m.expected = format!("{expected:?}");
            m.actual = format!("{actual:?}");
        }
        m
    }
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.diff {
            Some(diff) => {
                writeln!(f, "{}: expected and actual differ:", self.what)?;
                for line in diff.lines() {
                    writeln!(f, "      {line}")?;
                }
                Ok(())
            }
            None => write!(f, "{}: expected {}, got {}", self.what, self.expected, self.actual),
        }
    }
}

/// Checks every expectation of `expect`, and those of the task's `kind`, against `record`.
pub fn check(expect: &Expect, kind: &TaskKind, record: &AttemptRecord) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let expected_outcome = expect.outcome.unwrap_or(Outcome::Success);
    match record.outcome {
        Some(actual) if actual == expected_outcome => {}
        actual => {
            let mut got = actual
                .map(|o| outcome_name(o).to_string())
                .unwrap_or_else(|| "no outcome".into());
            if let Some(reason) = &record.stop_reason {
                let _ = write!(got, " ({reason})");
            }
            if expected_outcome == Outcome::Success && actual == Some(Outcome::Pending) && record.validations.is_empty()
            {
                got.push_str(" — no validation ran; add `expect.validate` checks: nothing is complete without one");
            }
            out.push(Mismatch::new("expect.outcome", outcome_name(expected_outcome), got));
        }
    }
    if let Some(fe) = &expect.final_report {
        check_final(fe, record, &mut out);
    }
    if !expect.files.is_empty() {
        match Beneath::open(&record.workspace) {
            Ok(ws) => {
                for (path, fe) in &expect.files {
                    let key = format!("expect.files.{path}");
                    // `/app/x` is the workspace's `x`; `/logs/verifier/x` its output folder's.
                    match record.places.resolve(&record.workspace, path) {
                        Ok(r) if r.in_workspace => check_file(&key, &ws, &r.rel, fe, Some(&record.initial), &mut out),
                        Ok(r) => match Beneath::open(&r.folder) {
                            Ok(folder) => check_file(&key, &folder, &r.rel, fe, None, &mut out),
                            Err(e) => out.push(Mismatch::new(
                                key,
                                "a readable folder",
                                format!("the folder of {path} cannot be opened: {e}"),
                            )),
                        },
                        Err(why) => out.push(Mismatch::new(key, "a workspace-relative path", why)),
                    }
                }
            }
            Err(e) => out.push(Mismatch::new(
                "expect.files",
                "a readable workspace",
                format!("the workspace cannot be opened: {e}"),
            )),
        }
    }
    for (i, re) in expect.receipts.iter().enumerate() {
        if !record.actions.iter().any(|a| receipt_matches(re, a)) {
            out.push(Mismatch::new(
                format!("expect.receipts[{i}]"),
                serde_json::to_string(re).unwrap_or_default(),
                format!(
                    "no receipt matched among {} actions: {}",
                    record.actions.len(),
                    summarize_actions(&record.actions)
                ),
            ));
        }
    }
    if let Some(tc) = &expect.tool_calls {
        let called: Vec<&str> = record
            .actions
            .iter()
            .filter(|a| a.is_agent_call())
            .map(|a| a.tool.as_str())
            .collect();
        if let Some(seq) = &tc.sequence {
            if seq.iter().map(String::as_str).ne(called.iter().copied()) {
                out.push(Mismatch::new(
                    "expect.tool_calls.sequence",
                    format!("{seq:?}"),
                    format!("{called:?}"),
                ));
            }
        }
        for t in &tc.contains {
            if !called.contains(&t.as_str()) {
                out.push(Mismatch::new(
                    "expect.tool_calls.contains",
                    format!("a call of `{t}`"),
                    format!("{called:?}"),
                ));
            }
        }
        for t in &tc.not_contains {
            // Any call that reached the tool counts, whatever its result (a command that changed
            // things and then exited non-zero still ran).
            if record
                .actions
                .iter()
                .any(|a| a.is_agent_call() && a.tool == *t && a.ran)
            {
                out.push(Mismatch::new(
                    "expect.tool_calls.not_contains",
                    format!("`{t}` never ran"),
                    format!("`{t}` ran: {called:?}"),
                ));
            }
        }
    }
    for (i, be) in expect.blocked.iter().enumerate() {
        if !record.actions.iter().any(|a| blocked_matches(be, a)) {
            let seen: Vec<String> = record
                .actions
                .iter()
                .filter_map(|a| {
                    a.guard.as_ref().map(|g| {
                        format!(
                            "{} → {:?} {:?}",
                            short(&a.input.to_string(), 60),
                            g.recommendation,
                            g.violations.iter().map(|v| v.rule.as_str()).collect::<Vec<_>>()
                        )
                    })
                })
                .collect();
            out.push(Mismatch::new(
                format!("expect.blocked[{i}]"),
                serde_json::to_string(be).unwrap_or_default(),
                format!("verdicts seen: {seen:?}"),
            ));
        }
    }
    // Validations judge the outcome; when success is expected, each one that did not pass is
    // also named, with its evidence, so the failure explains itself.
    // Each is shown by its name (or a short label), with the tail of what it printed.
    let explain_validations = expected_outcome == Outcome::Success;
    if let Some(v) = record
        .verification
        .as_ref()
        .filter(|v| explain_validations && !v.passed())
    {
        let m = Mismatch::new(
            format!("verify `{}` ({:?})", v.command, v.status),
            v.expected(),
            v.actual(),
        );
        let log = format!(
            "{}log: {}",
            if v.notes.is_empty() {
                String::new()
            } else {
                format!("{}\n", v.notes.join("\n"))
            },
            v.log.display()
        );
        out.push(with_output(m, Some(&log), v.output_tail.as_deref()));
    }
    for v in record.validations.iter().filter(|_| explain_validations) {
        if v.status != ValidationStatus::Passed {
            let mut actual = format!("{:?}: {}", v.status, v.evidence);
            if let Some(e) = &v.error {
                let _ = write!(actual, " ({e})");
            }
            let expected = v.expected.clone().unwrap_or_else(|| "passed".into());
            let mut m = Mismatch::new(format!("expect.validate `{}`", v.check), expected, actual);
            if let (Some(e), Some(a)) = (&v.expected, &v.actual) {
                m = Mismatch::text(format!("expect.validate `{}` ({:?})", v.check, v.status), e, a);
            }
            out.push(with_output(m, None, v.output_tail.as_deref()));
        }
    }
    match kind {
        TaskKind::Task => {}
        TaskKind::Tdd { expect: te, .. } => te.iter().for_each(|te| check_tdd(te, record, &mut out)),
        TaskKind::Prp { expect: pe, .. } => pe.iter().for_each(|pe| check_prp(pe, record, &mut out)),
    }
    let m = &record.metrics;
    check_range("expect.metrics.turns", &expect.metrics.turns, m.turns, &mut out);
    check_range(
        "expect.metrics.tool_errors",
        &expect.metrics.tool_errors,
        m.tool_errors,
        &mut out,
    );
    if let Some(r) = &expect.metrics.duration {
        let d = std::time::Duration::from_millis(m.duration_ms);
        if r.min.is_some_and(|min| d < min.0) || r.max.is_some_and(|max| d > max.0) {
            out.push(Mismatch::new(
                "expect.metrics.duration",
                range_text(
                    &r.min.map(|x| humantime::format_duration(x.0).to_string()),
                    &r.max.map(|x| humantime::format_duration(x.0).to_string()),
                ),
                format!("{} ms", m.duration_ms),
            ));
        }
    }
    out
}

/// `m` followed by `note` and the last lines a command printed, each line indented under it.
fn with_output(mut m: Mismatch, note: Option<&str>, tail: Option<&str>) -> Mismatch {
    let mut lines: Vec<String> = note.into_iter().flat_map(str::lines).map(str::to_string).collect();
    if let Some(tail) = tail {
        lines.push("last lines of its output:".into());
        lines.extend(tail.lines().map(|l| format!("| {l}")));
    }
    match &mut m.diff {
        // A diff's lines are indented when shown.
        Some(diff) => {
            diff.truncate(diff.trim_end().len());
            lines.iter().for_each(|l| {
                let _ = write!(diff, "\n{l}");
            })
        }
        None => lines.iter().for_each(|l| {
            let _ = write!(m.actual, "\n      {l}");
        }),
    }
    m
}

/// Patterns in specs match in multi-line mode: `^` and `$` match at line boundaries, so
/// `^42$` matches the output `42\n`.
pub fn text_regex(pattern: &str) -> Result<Regex, crate::spec::pattern::PatternError> {
    crate::spec::pattern::compile(pattern)
}

fn check_prp(pe: &crate::spec::PrpExpect, record: &AttemptRecord, out: &mut Vec<Mismatch>) {
    let Some(rec) = &record.prp else {
        out.push(Mismatch::new(
            "expect.prp",
            "a PRP run",
            "this task is not `kind: prp` or did not get to run its PRP",
        ));
        return;
    };
    if let Some(want) = pe.success {
        if want != rec.success {
            out.push(Mismatch::new(
                "expect.prp.success",
                want.to_string(),
                format!("{} ({})", rec.success, rec.error.as_deref().unwrap_or("no error")),
            ));
        }
    }
    if let Some(want) = pe.fix_attempts {
        if want != rec.fix_attempts {
            out.push(Mismatch::new(
                "expect.prp.fix_attempts",
                want.to_string(),
                rec.fix_attempts.to_string(),
            ));
        }
    }
    if let Some(want) = pe.retries {
        if want != rec.retries {
            out.push(Mismatch::new(
                "expect.prp.retries",
                want.to_string(),
                rec.retries.to_string(),
            ));
        }
    }
    if let Some(want) = &pe.gates {
        let actual: Vec<Vec<crate::spec::GateOutcome>> =
            rec.runs.iter().map(|r| r.iter().map(|g| g.outcome).collect()).collect();
        if *want != actual {
            let show = |v: &Vec<Vec<crate::spec::GateOutcome>>| serde_json::to_string(v).unwrap_or_default();
            out.push(Mismatch::new("expect.prp.gates", show(want), show(&actual)));
        }
    }
    if let Some(pattern) = &pe.error {
        let actual = rec.error.clone().unwrap_or_default();
        match text_regex(pattern) {
            Ok(re) if re.is_match(&actual) => {}
            Ok(_) => out.push(Mismatch::new(
                "expect.prp.error",
                format!("a match for /{pattern}/"),
                format!("{actual:?}"),
            )),
            Err(e) => out.push(Mismatch::new("expect.prp.error", "a valid regex", e.to_string())),
        }
    }
    if let Some(arts) = &pe.artifacts {
        let sets = [
            ("created", &arts.created, &rec.artifacts.created),
            ("modified", &arts.modified, &rec.artifacts.modified),
            ("deleted", &arts.deleted, &rec.artifacts.deleted),
        ];
        for (kind, want, have) in sets {
            let Some(want) = want else { continue };
            let mut want: Vec<&str> = want.iter().map(String::as_str).collect();
            want.sort_unstable();
            let have: Vec<&str> = have.iter().map(|a| a.path.as_str()).collect();
            if want != have {
                out.push(Mismatch::new(
                    format!("expect.prp.artifacts.{kind}"),
                    format!("{want:?}"),
                    format!("{have:?}"),
                ));
            }
        }
    }
}

fn check_tdd(te: &crate::spec::TddExpect, record: &AttemptRecord, out: &mut Vec<Mismatch>) {
    let Some(rec) = &record.tdd else {
        out.push(Mismatch::new(
            "expect.tdd",
            "a TDD loop",
            "this task is not `kind: tdd` or its loop did not run",
        ));
        return;
    };
    if let Some(want) = &te.exit {
        if *want != rec.exit {
            out.push(Mismatch::new(
                "expect.tdd.exit",
                want.clone(),
                format!("{} ({})", rec.exit, rec.detail),
            ));
        }
    }
    if let Some(want) = te.iterations {
        if want != rec.iterations {
            out.push(Mismatch::new(
                "expect.tdd.iterations",
                want.to_string(),
                rec.iterations.to_string(),
            ));
        }
    }
    if let Some(want) = &te.stop_reason {
        let actual = rec.stop_reason.map(|r| r.as_str()).unwrap_or("-");
        if want != actual {
            out.push(Mismatch::new(
                "expect.tdd.stop_reason",
                want.clone(),
                format!("{actual} ({})", rec.detail),
            ));
        }
    }
    if let Some(want) = &te.fix_levels {
        if *want != rec.fix_levels {
            out.push(Mismatch::new(
                "expect.tdd.fix_levels",
                format!("{want:?}"),
                format!("{:?}", rec.fix_levels),
            ));
        }
    }
    if !te.state.is_empty() {
        match Beneath::open(&record.run_dir.join("tdd-state")) {
            Ok(dir) => {
                for (path, fe) in &te.state {
                    check_file(&format!("expect.tdd.state.{path}"), &dir, path, fe, None, out);
                }
            }
            Err(e) => out.push(Mismatch::new(
                "expect.tdd.state",
                "the loop's state folder",
                e.to_string(),
            )),
        }
    }
}

pub fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Success => "success",
        Outcome::Failure => "failure",
        Outcome::Stopped => "stopped",
        Outcome::Timeout => "timeout",
        Outcome::Pending => "pending",
        Outcome::Error => "error",
    }
}

fn check_final(fe: &crate::spec::FinalExpect, record: &AttemptRecord, out: &mut Vec<Mismatch>) {
    let Some(fr) = &record.final_report else {
        out.push(Mismatch::new("expect.final", "a final report", "the agent sent none"));
        return;
    };
    if let Some(result) = fe.result {
        if result != fr.result {
            out.push(Mismatch::new(
                "expect.final.result",
                format!("{result:?}").to_lowercase(),
                format!("{:?}", fr.result).to_lowercase(),
            ));
        }
    }
    if let Some(pattern) = &fe.message {
        match text_regex(pattern) {
            Ok(re) if re.is_match(&fr.message) => {}
            Ok(_) => out.push(Mismatch::new(
                "expect.final.message",
                format!("a match for /{pattern}/"),
                format!("{:?}", fr.message),
            )),
            Err(e) => out.push(Mismatch::new("expect.final.message", "a valid regex", e.to_string())),
        }
    }
}

/// One `files` expectation, read beneath `root` without following links: a symlink, FIFO or
/// device exists but has no content the harness will read.
fn check_file(
    key: &str,
    root: &Beneath,
    path: &str,
    fe: &FileExpect,
    initial: Option<&std::collections::BTreeMap<String, String>>,
    out: &mut Vec<Mismatch>,
) {
    let entry = match root.entry(path) {
        Ok(e) => e,
        Err(e @ BeneathError::Outside(_)) => {
            out.push(Mismatch::new(
                key,
                "a workspace-relative path",
                format!("a path leaving the workspace ({e})"),
            ));
            return;
        }
        Err(e) => {
            out.push(Mismatch::new(key, "a readable path", e.to_string()));
            return;
        }
    };
    let exists = entry.is_some();
    if fe.absent && exists {
        out.push(Mismatch::new(
            format!("{key}.absent"),
            "no such file",
            "the file exists",
        ));
    }
    if let Some(want) = fe.exists {
        if want != exists {
            out.push(Mismatch::new(
                format!("{key}.exists"),
                want.to_string(),
                exists.to_string(),
            ));
        }
    }
    let needs_content = fe.contains.is_some() || fe.matches.is_some() || fe.equals.is_some();
    // At most the first MAX_READ bytes are read, as `file_contains` does.
    let content: Result<(Vec<u8>, bool), String> = match entry {
        None => Err("no such file".into()),
        Some(m) if m.kind != EntryKind::File => Err(format!(
            "a {} (the harness does not follow links or open special files)",
            m.kind.describe()
        )),
        Some(_) => crate::validate::file::read_head(root, path).map_err(|e| e.to_string()),
    };
    let cut = content.as_ref().is_ok_and(|(_, more)| *more);
    let text = content
        .as_ref()
        .ok()
        .map(|(c, _)| String::from_utf8_lossy(c).into_owned());
    if needs_content {
        if let Err(why) = &content {
            out.push(Mismatch::new(key, "a readable regular file", why.clone()));
        }
    }
    if let Some(text) = &text {
        if let Some(sub) = &fe.contains {
            if !text.contains(sub.as_str()) {
                out.push(Mismatch::new(
                    format!("{key}.contains"),
                    format!("{sub:?}"),
                    short(text, 200),
                ));
            }
        }
        if let Some(pattern) = &fe.matches {
            match text_regex(pattern) {
                Ok(re) if re.is_match(text) => {}
                Ok(_) => out.push(Mismatch::new(
                    format!("{key}.matches"),
                    format!("/{pattern}/"),
                    short(text, 200),
                )),
                Err(e) => out.push(Mismatch::new(format!("{key}.matches"), "a valid regex", e.to_string())),
            }
        }
        if let Some(want) = &fe.equals {
            if cut {
                out.push(Mismatch::new(
                    format!("{key}.equals"),
                    format!("{} bytes", want.len()),
                    format!("more than {} bytes", crate::validate::file::MAX_READ),
                ));
            } else if want != text {
                out.push(Mismatch::text(format!("{key}.equals"), want, text));
            }
        }
    }
    if fe.unchanged {
        // Compared with the workspace as the agent found it (after setup), not the fixture on
        // disk, which a setup step or an escaped command may have changed since; read the same
        // way the initial snapshot was.
        let before = initial.and_then(|m| m.get(path)).cloned();
        let now = entry.and_then(|m| super::snapshot::state_of(root, path, m.kind, m.size));
        if before != now {
            let show = |h: &Option<String>| h.clone().unwrap_or_else(|| "<absent>".into());
            out.push(Mismatch::new(format!("{key}.unchanged"), show(&before), show(&now)));
        }
    }
}

fn receipt_matches(re: &ReceiptExpect, a: &ActionRecord) -> bool {
    let r = &a.receipt;
    if re.tool.as_ref().is_some_and(|t| *t != a.tool) {
        return false;
    }
    // A harness step (`medin.retry`, `medin.protect`, `medin.gate` …) is proved only by the
    // harness's or the author's own record: an agent calling a tool by that name made a record
    // of a denied call, not of the step.
    if re.tool.as_deref().is_some_and(|t| t.starts_with("medin.")) && a.origin == crate::guard::policy::Origin::Agent {
        return false;
    }
    if let Some(status) = &re.status {
        let actual = serde_json::to_value(r.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        if *status != actual {
            return false;
        }
    }
    if re.kind.is_some() || re.source.is_some() || re.hash.is_some() {
        let hit = r.receipts.iter().any(|e| {
            re.kind.is_none_or(|k| k == e.kind)
                && re.source.as_ref().is_none_or(|s| *s == e.source)
                && re.hash.as_ref().is_none_or(|h| e.hash.as_ref() == Some(h))
        });
        if !hit {
            return false;
        }
    }
    if let Some(code) = re.error {
        if !r.errors.iter().any(|e| e.code == code) {
            return false;
        }
    }
    if let Some(pattern) = &re.message {
        let Ok(rx) = text_regex(pattern) else { return false };
        if !r.errors.iter().any(|e| rx.is_match(&e.message)) && !r.warnings.iter().any(|w| rx.is_match(w)) {
            return false;
        }
    }
    if let Some(want) = &re.data {
        if !json_contains(&r.data, want) {
            return false;
        }
    }
    true
}

/// `want` is contained in `have`: objects by subset, everything else by equality.
pub fn json_contains(have: &serde_json::Value, want: &serde_json::Value) -> bool {
    match (have, want) {
        (serde_json::Value::Object(h), serde_json::Value::Object(w)) => {
            w.iter().all(|(k, wv)| h.get(k).is_some_and(|hv| json_contains(hv, wv)))
        }
        _ => have == want,
    }
}

fn blocked_matches(be: &BlockedExpect, a: &ActionRecord) -> bool {
    let Some(verdict) = &a.guard else { return false };
    let want = match be.recommendation.as_deref() {
        None | Some("block") => Recommendation::Block,
        Some("warn") => Recommendation::Warn,
        Some("allow") => Recommendation::Allow,
        Some(_) => return false,
    };
    if verdict.recommendation != want {
        return false;
    }
    // A block the policy let through (a bypass) is not "blocked" unless the task says so.
    let decision = be.decision.as_deref().unwrap_or(match want {
        Recommendation::Block => "deny",
        Recommendation::Warn => "warn",
        Recommendation::Allow => "allow",
    });
    if a.decision != decision {
        return false;
    }
    if let Some(c) = &be.command {
        if !a.input.to_string().contains(c.as_str())
            && !a
                .input
                .get("command")
                .and_then(|v| v.as_str())
                .is_some_and(|s| s.contains(c.as_str()))
        {
            return false;
        }
    }
    let rule_ok = |v: &crate::guard::Violation| {
        be.rule.as_ref().is_none_or(|r| *r == v.rule) && be.category.as_ref().is_none_or(|c| c == v.category.as_str())
    };
    if be.rule.is_some() || be.category.is_some() {
        verdict.violations.iter().any(rule_ok)
    } else {
        true
    }
}

fn check_range(what: &str, range: &Option<Range<u32>>, actual: u32, out: &mut Vec<Mismatch>) {
    if let Some(r) = range {
        if r.min.is_some_and(|m| actual < m) || r.max.is_some_and(|m| actual > m) {
            out.push(Mismatch::new(what, range_text(&r.min, &r.max), actual.to_string()));
        }
    }
}

fn range_text<T: std::fmt::Display>(min: &Option<T>, max: &Option<T>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!("between {a} and {b}"),
        (Some(a), None) => format!("at least {a}"),
        (None, Some(b)) => format!("at most {b}"),
        (None, None) => "anything".into(),
    }
}

fn summarize_actions(actions: &[ActionRecord]) -> String {
    let parts: Vec<String> = actions
        .iter()
        .map(|a| {
            let code = a.receipt.error_code().map(|c| format!(" {c}")).unwrap_or_default();
            format!("#{} {} {:?}{}", a.seq, a.tool, a.receipt.status, code)
        })
        .collect();
    parts.join("; ")
}

fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        format!("{text:?}")
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut:?}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::record::ActionRecord;
    use crate::spec::{FinalExpect, FinalReport, FinalResult, ToolCallsExpect};
    use crate::tools::{ErrorCode, Evidence, EvidenceKind, Receipt};
    use std::path::Path;

    fn action(seq: u32, tool: &str, receipt: Receipt) -> ActionRecord {
        ActionRecord {
            seq,
            action_id: format!("call-{seq}"),
            tool: tool.into(),
            input: serde_json::json!({}),
            guard: None,
            decision: "allow".into(),
            justification: None,
            limit: None,
            receipt,
            timestamp: String::new(),
            ran: true,
            origin: crate::guard::policy::Origin::Agent,
            duration_ms: None,
        }
    }

    fn record(dir: &Path) -> AttemptRecord {
        let write = Receipt::success(serde_json::json!({"bytes": 6})).with_evidence(Evidence {
            kind: EvidenceKind::FileWrite,
            source: "hello.txt".into(),
            timestamp: 0,
            hash: Some("sha256:abc".into()),
            duration_ms: 1,
        });
        AttemptRecord {
            actions: vec![
                action(1, "write_file", write),
                action(2, "bash", Receipt::error(ErrorCode::Timeout, "timed out after 1s")),
            ],
            final_report: Some(FinalReport {
                code: None,
                result: FinalResult::Success,
                message: "created hello.txt".into(),
            }),
            outcome: Some(Outcome::Success),
            workspace: dir.to_path_buf(),
            ..Default::default()
        }
    }

    #[test]
    fn every_expectation_that_holds_gives_no_mismatch() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hello.txt"), "hello\n").unwrap();
        let expect = crate::spec::parse_task(
            r#"
            description: every expectation
            expect:
              outcome: success
              final: { result: success, message: "^created" }
              files: { hello.txt: { exists: true, contains: hell, matches: "^hello$", equals: "hello\n" }, gone.txt: { absent: true } }
              receipts: [ { type: file_write, source: hello.txt, hash: "sha256:abc" }, { tool: bash, error: TIMEOUT, message: "timed out" } ]
              tool_calls: { sequence: [write_file, bash], contains: [bash], not_contains: [delete_file] }
              metrics: { tool_errors: { min: 1, max: 1 } }
            "#,
            std::path::Path::new("every-expectation.yaml"),
        )
        .unwrap()
        .expect;
        let mut rec = record(dir.path());
        rec.metrics.tool_errors = 1;
        let ms = check(&expect, &TaskKind::Task, &rec);
        assert!(ms.is_empty(), "{ms:#?}");
    }

    #[test]
    fn each_failed_expectation_is_named_with_expected_and_actual() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hello.txt"), "helo\nworld\n").unwrap();
        let expect = Expect {
            outcome: Some(Outcome::Stopped),
            final_report: Some(FinalExpect {
                result: Some(FinalResult::Issue),
                message: None,
            }),
            files: [(
                "hello.txt".to_string(),
                FileExpect {
                    equals: Some("hello\nworld\n".into()),
                    ..Default::default()
                },
            )]
            .into(),
            tool_calls: Some(ToolCallsExpect {
                not_contains: vec!["write_file".into()],
                ..Default::default()
            }),
            receipts: vec![ReceiptExpect {
                error: Some(ErrorCode::Conflict),
                ..Default::default()
            }],
            ..Default::default()
        };
        let ms = check(&expect, &TaskKind::Task, &record(dir.path()));
        let whats: Vec<&str> = ms.iter().map(|m| m.what.as_str()).collect();
        assert_eq!(
            whats,
            [
                "expect.outcome",
                "expect.final.result",
                "expect.files.hello.txt.equals",
                "expect.receipts[0]",
                "expect.tool_calls.not_contains"
            ]
        );
        let diff = ms[2].to_string();
        assert!(diff.contains("-hello") && diff.contains("+helo"), "{diff}");
        assert_eq!(ms[0].expected, "stopped");
        assert!(ms[0].actual.starts_with("success"));
    }

    #[test]
    fn pending_without_validations_explains_what_to_add() {
        let dir = tempfile::tempdir().unwrap();
        let mut rec = record(dir.path());
        rec.outcome = Some(Outcome::Pending);
        let ms = check(&Expect::default(), &TaskKind::Task, &rec);
        assert_eq!(ms.len(), 1);
        assert!(ms[0].actual.contains("add `expect.validate`"), "{}", ms[0]);
    }

    #[test]
    fn files_outside_the_workspace_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let expect = Expect {
            outcome: Some(Outcome::Success),
            files: [(
                "../etc/passwd".to_string(),
                FileExpect {
                    exists: Some(true),
                    ..Default::default()
                },
            )]
            .into(),
            ..Default::default()
        };
        let ms = check(&expect, &TaskKind::Task, &record(dir.path()));
        assert_eq!(ms.len(), 1);
        assert!(ms[0].actual.contains("leaving the workspace"));
    }

    #[test]
    fn json_subset_matching() {
        let have = serde_json::json!({"a": 1, "b": {"c": true, "d": "x"}});
        assert!(json_contains(&have, &serde_json::json!({"b": {"c": true}})));
        assert!(!json_contains(&have, &serde_json::json!({"b": {"c": false}})));
        assert!(!json_contains(&have, &serde_json::json!({"z": 1})));
    }

    #[test]
    fn not_contains_counts_a_call_that_ran_and_failed() {
        let dir = tempfile::tempdir().unwrap();
        let mut rec = record(dir.path());
        rec.actions[1].receipt = Receipt::error(ErrorCode::ToolExecutionFailed, "exit 1");
        let expect = Expect {
            tool_calls: Some(ToolCallsExpect {
                not_contains: vec!["bash".into()],
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(check(&expect, &TaskKind::Task, &rec)
            .iter()
            .any(|m| m.what == "expect.tool_calls.not_contains"));
        // A call the policy refused did not run.
        rec.actions[1].ran = false;
        rec.actions[1].decision = "deny".into();
        assert!(!check(&expect, &TaskKind::Task, &rec)
            .iter()
            .any(|m| m.what == "expect.tool_calls.not_contains"));
    }

    #[test]
    fn a_bypassed_block_is_not_blocked_unless_the_task_says_so() {
        use crate::guard::{Category, Risk, Verdict, Violation};
        let dir = tempfile::tempdir().unwrap();
        let mut rec = record(dir.path());
        let violation = Violation {
            category: Category::Deletion,
            rule: "deletion.recursive_force".into(),
            severity: Risk::Critical,
            matched: "rm -rf /x".into(),
            description: "d".into(),
            recommendation: Recommendation::Block,
        };
        rec.actions[1].guard = Some(Verdict::from_violations(vec![violation], None));
        rec.actions[1].decision = "bypassed".into();
        let blocked = |decision: Option<&str>| Expect {
            blocked: vec![BlockedExpect {
                rule: Some("deletion.recursive_force".into()),
                decision: decision.map(str::to_string),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(check(&blocked(None), &TaskKind::Task, &rec)
            .iter()
            .any(|m| m.what == "expect.blocked[0]"));
        assert!(!check(&blocked(Some("bypassed")), &TaskKind::Task, &rec)
            .iter()
            .any(|m| m.what == "expect.blocked[0]"));
        rec.actions[1].decision = "deny".into();
        assert!(!check(&blocked(None), &TaskKind::Task, &rec)
            .iter()
            .any(|m| m.what == "expect.blocked[0]"));
    }
}

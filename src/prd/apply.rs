//! A task under its PRD: which requirements it is briefed with, which checks the PRD adds to
//! its judgement, and where the two disagree — in one place, before the attempt starts.
//!
//! **The PRD's checks are judged.** Every validator a named requirement declares (`checks:`)
//! joins the task's `expect.validate`, named `REQ-1: <check>`: a task proves a requirement
//! only if the requirement's own checks pass in it.
//!
//! **Contradiction**, the checkable notion: a task's file expectation says the opposite of a
//! named requirement's check on the same workspace path —
//!
//! | requirement check | task expectation that contradicts it |
//! |---|---|
//! | `file_exists: P` | `files: { P: { absent: true } }` or `{ exists: false }` |
//! | `file_contains: { path: P, pattern: R }` | `P` absent / `exists: false`, or `equals: S` where `R` does not match `S` |
//!
//! **The PRD wins**: the contradicting expectation is set aside (not judged), the
//! requirement's check is, and the conflict is reported to the log. Other expectations stay.

use serde::Serialize;

use super::parse::{Prd, Requirement};
use super::relevance::{relevant, Why};
use crate::spec::model::{TaskSpec, Validator, ValidatorSpec};

/// A task expectation that contradicts a requirement it names; the requirement won.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    pub requirement: String,
    /// The workspace path both are about.
    pub path: String,
    /// The task's expectation, set aside (`absent: true`).
    pub task_expected: String,
    /// The requirement's check, judged instead.
    pub requirement_check: String,
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the task expects `{}` {} but {} requires {}: the task's expectation is set aside, the PRD wins",
            self.path, self.task_expected, self.requirement, self.requirement_check
        )
    }
}

/// What applying the PRD to a task did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Applied {
    /// The PRD the task started under.
    #[serde(skip)]
    pub started_under: std::sync::Arc<Prd>,
    pub prd_version: String,
    /// The requirements the task names.
    pub named: Vec<String>,
    /// The requirements it is briefed with, and why (named ones first).
    pub relevant: Vec<(Requirement, Why)>,
    /// Checks added from named requirements.
    pub checks_added: usize,
    pub conflicts: Vec<Conflict>,
}

impl Applied {
    /// The requirements for the agent's brief, as data.
    pub fn brief_json(&self) -> Vec<serde_json::Value> {
        self.relevant
            .iter()
            .map(|(r, why)| {
                serde_json::json!({
                    "id": r.id,
                    "title": r.title,
                    "priority": r.priority,
                    "description": r.description,
                    "acceptance_criteria": r.acceptance_criteria,
                    "why": why,
                })
            })
            .collect()
    }

    /// The requirements as the agent's brief shows them: one block per requirement.
    pub fn brief(&self) -> String {
        let mut out = format!("Requirements (PRD {}):\n", self.prd_version);
        for (r, why) in &self.relevant {
            let note = match why {
                Why::Named => String::new(),
                Why::DependencyOf(of) => format!(" [needed by {of}]"),
                Why::Keyword(k) => format!(" [related: {k}]"),
            };
            out.push_str(&format!(
                "- {}{note}\n  {}\n",
                r.headline(),
                r.description.replace('\n', "\n  ")
            ));
            for c in &r.acceptance_criteria {
                out.push_str(&format!("  * {c}\n"));
            }
        }
        out
    }
}

/// A task that ran while the PRD changed the requirements it names: its verdict was reached
/// under the old text, so a person must decide (re-run it, or accept the verdict). Reference
/// 000's property 40; in a CI run nobody can be asked, so the decision is requested in the
/// log, as a `pending` entry, and the run goes on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecisionNeeded {
    pub from_version: String,
    pub to_version: String,
    /// The named requirements that changed or were removed while the task ran.
    pub requirements: Vec<String>,
}

impl std::fmt::Display for DecisionNeeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "human decision requested: the task ran under PRD {} and {} changed in PRD {} while it ran; re-run it under the new PRD, or accept its verdict",
            self.from_version,
            self.requirements.join(", "),
            self.to_version
        )
    }
}

impl Applied {
    /// Whether `now` (the PRD in use when the task finished) changed a requirement the task
    /// names since it started.
    pub fn decision_needed(&self, now: &Prd) -> Option<DecisionNeeded> {
        if now.digest == self.started_under.digest {
            return None;
        }
        let diff = self.started_under.diff(now);
        let requirements: Vec<String> = self
            .named
            .iter()
            .filter(|id| diff.changed.contains(id) || diff.removed.contains(id))
            .cloned()
            .collect();
        (!requirements.is_empty()).then(|| DecisionNeeded {
            from_version: self.started_under.version.clone(),
            to_version: now.version.clone(),
            requirements,
        })
    }
}

/// Applies `prd` to `spec`: adds the named requirements' checks, sets aside what contradicts
/// them, and picks the relevant requirements. Ids the PRD does not define are left to
/// [`unknown`]; here they are skipped.
pub fn apply(spec: &mut TaskSpec, prd: &std::sync::Arc<Prd>) -> Applied {
    let named: Vec<&Requirement> = spec
        .requirements
        .iter()
        .filter_map(|id| prd.requirements.iter().find(|r| &r.id == id))
        .collect();
    let mut conflicts = Vec::new();
    let mut checks_added = 0;
    for r in &named {
        for check in &r.checks {
            conflicts.extend(set_aside_contradictions(spec, r, check));
            let label = crate::validate::check_label(check);
            spec.expect.validate.push(Validator {
                name: Some(format!("{}: {label}", r.id)),
                check: check.check.clone(),
            });
            checks_added += 1;
        }
    }
    let context = [spec.description.as_str(), spec.prompt.as_str(), &spec.tags.join(" ")];
    let relevant = relevant(prd, &spec.requirements, &context)
        .into_iter()
        .map(|r| (r.requirement.clone(), r.why))
        .collect();
    Applied {
        started_under: prd.clone(),
        prd_version: prd.version.clone(),
        named: spec.requirements.clone(),
        relevant,
        checks_added,
        conflicts,
    }
}

/// Whether the requirements the task at `file` names can be proven here: `Err` (located in
/// the task file) for an id `prd` does not define, or for any id when there is no PRD.
pub fn check_named(file: &std::path::Path, spec: &TaskSpec, prd: Option<&Prd>) -> Result<(), crate::spec::SpecError> {
    let Some(first) = spec.requirements.first() else {
        return Ok(());
    };
    let Some(prd) = prd else {
        return Err(crate::spec::load::requirement_error(
            file,
            first,
            format!("the task names requirement `{first}`, but its suite has no PRD that loads"),
            "name the PRD in medin.yaml (`prd: PRD.md`) and fix it, or remove `requirements:`",
        ));
    };
    let unknown = spec
        .requirements
        .iter()
        .find(|id| !prd.requirements.iter().any(|r| &r.id == *id));
    let Some(id) = unknown else { return Ok(()) };
    let defined: Vec<&str> = prd.requirements.iter().map(|r| r.id.as_str()).collect();
    let help = match crate::suggest::nearest(id, &defined) {
        Some(n) => format!("did you mean `{n}`?"),
        None => format!("the PRD defines {}", defined.join(", ")),
    };
    Err(crate::spec::load::requirement_error(
        file,
        id,
        format!("requirement `{id}` is not defined by the PRD ({})", prd.path.display()),
        &help,
    ))
}

fn same_path(a: &str, b: &str) -> bool {
    let norm = |p: &str| p.trim().trim_start_matches("./").trim_end_matches('/').to_string();
    norm(a) == norm(b)
}

/// Removes from `spec` the file expectations that contradict `check` of `r`; returns them.
fn set_aside_contradictions(spec: &mut TaskSpec, r: &Requirement, check: &Validator) -> Vec<Conflict> {
    let (path, pattern, requirement_check) = match &check.check {
        ValidatorSpec::FileExists(p) => (p.as_str(), None, format!("`file_exists: {p}`")),
        ValidatorSpec::FileContains(c) => (
            c.path.as_str(),
            Some(c.pattern.as_str()),
            format!("`file_contains: {{path: {}, pattern: {}}}`", c.path, c.pattern),
        ),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let conflict = |task_expected: String| Conflict {
        requirement: r.id.clone(),
        path: path.to_string(),
        task_expected,
        requirement_check: requirement_check.clone(),
    };
    let keys: Vec<String> = spec
        .expect
        .files
        .keys()
        .filter(|k| same_path(k, path))
        .cloned()
        .collect();
    for key in keys {
        let Some(fe) = spec.expect.files.get_mut(&key) else {
            continue;
        };
        if fe.absent {
            fe.absent = false;
            out.push(conflict("to be absent (`absent: true`)".into()));
        }
        if fe.exists == Some(false) {
            fe.exists = None;
            out.push(conflict("not to exist (`exists: false`)".into()));
        }
        if let (Some(pattern), Some(equals)) = (pattern, fe.equals.as_ref()) {
            // A pattern that does not compile is the check's own failure, judged as such.
            if regex::Regex::new(pattern).is_ok_and(|re| !re.is_match(equals)) {
                out.push(conflict(format!(
                    "to equal {equals:?}, which `{pattern}` does not match"
                )));
                fe.equals = None;
            }
        }
        if *fe == crate::spec::model::FileExpect::default() {
            spec.expect.files.remove(&key);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prd::{coverage, parse};
    use std::path::Path;

    const PRD: &str = "Version: 1.0.0\nLast updated: 2026-11-20\n\n## REQ-1: Greeting file\nPriority: critical\n\nWrite hello.txt.\n\nAcceptance criteria:\n- it exists\n\nChecks:\n```yaml\n- file_contains: {path: hello.txt, pattern: '^hello'}\n```\n\n## REQ-2: Base\nPriority: high\n\nThe base.\n\nAcceptance criteria:\n- base\n\n## REQ-3: Logging rotation\nPriority: low\nKeywords: rotation\n\nLogs rotate.\n\nAcceptance criteria:\n- rotates\n\n## REQ-4: Needs base\nPriority: medium\nDepends on: REQ-2\n\nOn top.\n\nAcceptance criteria:\n- on top\n";

    fn task(yaml: &str) -> TaskSpec {
        crate::spec::parse_task(yaml, Path::new("t.yaml")).unwrap()
    }

    #[test]
    fn named_checks_are_judged_and_contradictions_set_aside() {
        let prd = std::sync::Arc::new(parse(PRD, Path::new("PRD.md")).unwrap());
        let mut t = task("description: d\nrequirements: [REQ-1]\nexpect:\n  files:\n    hello.txt: { absent: true }\n    ./hello.txt: { equals: \"bye\\n\", contains: bye }\n    other.txt: { absent: true }\n");
        let applied = apply(&mut t, &prd);
        assert_eq!(applied.checks_added, 1);
        assert_eq!(
            t.expect.validate.last().and_then(|v| v.name.clone()).as_deref(),
            Some("REQ-1: file_contains hello.txt /^hello/")
        );
        let what: Vec<&str> = applied.conflicts.iter().map(|c| c.task_expected.as_str()).collect();
        assert_eq!(what.len(), 2, "{what:?}");
        assert!(
            what.iter().any(|w| w.contains("absent")) && what.iter().any(|w| w.contains("bye")),
            "{what:?}"
        );
        // The contradicting parts are gone; what did not contradict stays.
        assert!(!t.expect.files.contains_key("hello.txt"));
        assert_eq!(t.expect.files["./hello.txt"].contains.as_deref(), Some("bye"));
        assert!(t.expect.files["./hello.txt"].equals.is_none());
        assert!(t.expect.files["other.txt"].absent);
        assert!(applied.conflicts[0].to_string().contains("the PRD wins"));
    }

    #[test]
    fn relevance_takes_named_dependencies_and_keywords() {
        let prd = std::sync::Arc::new(parse(PRD, Path::new("PRD.md")).unwrap());
        let mut t = task("description: check log rotation works\nrequirements: [REQ-4]\n");
        let applied = apply(&mut t, &prd);
        let got: Vec<(&str, &Why)> = applied.relevant.iter().map(|(r, w)| (r.id.as_str(), w)).collect();
        assert_eq!(
            got,
            vec![
                ("REQ-4", &Why::Named),
                ("REQ-2", &Why::DependencyOf("REQ-4".into())),
                ("REQ-3", &Why::Keyword("rotation".into()))
            ]
        );
        assert!(
            applied.brief().contains("REQ-2 (high): Base [needed by REQ-4]"),
            "{}",
            applied.brief()
        );
        let mut unrelated = task("description: nothing in common\n");
        assert!(apply(&mut unrelated, &prd).relevant.is_empty());
    }

    #[test]
    fn unknown_ids_and_missing_prd_are_located_errors() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.yaml");
        std::fs::write(&file, "description: d\nrequirements: [REQ-1, REQ-9]\n").unwrap();
        let t = crate::spec::load_task(&file).unwrap();
        let prd = std::sync::Arc::new(parse(PRD, Path::new("PRD.md")).unwrap());
        let e = check_named(&file, &t, Some(&prd)).unwrap_err().to_string();
        assert!(e.contains("t.yaml:2:23: requirement `REQ-9` is not defined"), "{e}");
        let e = check_named(&file, &t, None).unwrap_err().to_string();
        assert!(e.contains("t.yaml:2:16:") && e.contains("has no PRD"), "{e}");
    }

    #[test]
    fn coverage_proves_by_passing_trials_and_flags_critical_gaps() {
        let prd = std::sync::Arc::new(parse(PRD, Path::new("PRD.md")).unwrap());
        let one = vec!["REQ-1".to_string()];
        let both = vec!["REQ-2".to_string(), "REQ-1".to_string()];
        let c = coverage(
            &prd,
            vec![("a", 1, false, one.as_slice()), ("b", 1, true, both.as_slice())],
        );
        assert!(c.requirements[0].proven && c.requirements[1].proven);
        assert!(c.unproven_critical().is_empty());
        let c = coverage(&prd, vec![("a", 1, false, one.as_slice())]);
        assert_eq!(c.unproven_critical().len(), 1);
        assert_eq!(c.requirements[0].trials.len(), 1);
        assert_eq!(c.rate(), 0.0);
    }
}

//! The PRD under `medin watch`: what a change of the PRD file does to a session that keeps
//! running tasks (reference 000, properties 5 and 38–42).
//!
//! [`PrdWatch`] holds the PRD the session works against and turns a change of the file into a
//! [`PrdEvent`]:
//!
//! - **reload** — the file is loaded again and compared with the PRD held
//!   ([`super::Prd::diff`]: requirements added, removed, changed); the new one is held from
//!   then on. The watch closes its gate on the change before asking for the reload, so no new
//!   task starts between the change and the reload (property 39); a task already running
//!   finishes.
//! - **invalid** — the file does not load (a [`super::PrdError`], with `file:line:col`). The
//!   last good PRD is kept, but [`PrdWatch::holds_tasks`] says no task may start until the file
//!   loads again: a watch should not exit over a half-saved edit, nor run tasks against a PRD
//!   nobody can read.
//! - **frozen** — with `--freeze`, a change is [`PrdEvent::Ignored`] (property 42) and
//!   remembered; [`PrdWatch::unfreeze`] reloads a PRD that changed while frozen, so the
//!   session does not go on against a file that no longer says what it holds.
//!
//! Every reload is written to `ACTIVITY_LOG.md` as a `prd` entry whose body is the diff summary
//! (property 41; [`reload_entry`]). A reload that changes or removes requirements while tasks
//! run makes those tasks' results suspect (property 40): each such task finishes, and a
//! `pending` `prd` entry ([`decision_entry`]) asks a person to decide — re-run it (save its
//! task file under the watch, or `medin run` it) or keep the result as it is. Nothing decides
//! for them: the watch does not re-run it on its own.
//!
//! This module reads the PRD file and shapes entries; it never runs a task, prints or writes
//! the log (the watch loop does).

use std::path::{Path, PathBuf};

use chrono::Utc;

use super::{load, Prd, PrdDiff};
use crate::log::{ActivityEntry, EntryKind, EntryStatus};

/// What a change of the PRD file came to.
#[derive(Debug, Clone, PartialEq)]
pub enum PrdEvent {
    /// The PRD was loaded (`from`: the version held before, if any; none at the start or after
    /// a PRD that never loaded).
    Reloaded {
        from: Option<String>,
        to: String,
        diff: PrdDiff,
        requirements: usize,
    },
    /// The file does not load; tasks wait until it does.
    Invalid { error: String },
    /// Frozen: the change is not looked at until [`PrdWatch::unfreeze`].
    Ignored,
}

/// The PRD a watch session works against.
#[derive(Debug)]
pub struct PrdWatch {
    path: PathBuf,
    held: Option<Prd>,
    /// The file's last load failed (its message).
    invalid: Option<String>,
    frozen: bool,
    /// The file changed while frozen.
    changed_while_frozen: bool,
}

impl PrdWatch {
    /// Loads the PRD at `path` (frozen or not, the first load happens).
    pub fn open(path: PathBuf, frozen: bool) -> (PrdWatch, PrdEvent) {
        let mut watch = PrdWatch {
            path,
            held: None,
            invalid: None,
            frozen,
            changed_while_frozen: false,
        };
        let event = watch.reload();
        (watch, event)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The PRD held (the last one that loaded).
    pub fn held(&self) -> Option<&Prd> {
        self.held.as_ref()
    }

    pub fn is_frozen(&self) -> bool {
        self.frozen
    }

    /// Whether tasks must wait: the PRD file does not load.
    pub fn holds_tasks(&self) -> bool {
        self.invalid.is_some()
    }

    /// The file changed: reloaded, or ignored while frozen.
    pub fn changed(&mut self) -> PrdEvent {
        if self.frozen {
            self.changed_while_frozen = true;
            return PrdEvent::Ignored;
        }
        self.reload()
    }

    /// Changes from now on are ignored.
    pub fn freeze(&mut self) {
        self.frozen = true;
    }

    /// Changes are looked at again; a change made while frozen is reloaded now.
    pub fn unfreeze(&mut self) -> Option<PrdEvent> {
        self.frozen = false;
        std::mem::take(&mut self.changed_while_frozen).then(|| self.reload())
    }

    fn reload(&mut self) -> PrdEvent {
        match load(&self.path) {
            Ok(prd) => {
                let diff = match &self.held {
                    Some(old) => old.diff(&prd),
                    None => PrdDiff {
                        added: prd.requirements.iter().map(|r| r.id.clone()).collect(),
                        ..PrdDiff::default()
                    },
                };
                let event = PrdEvent::Reloaded {
                    from: self.held.as_ref().map(|p| p.version.clone()),
                    to: prd.version.clone(),
                    diff,
                    requirements: prd.requirements.len(),
                };
                self.held = Some(prd);
                self.invalid = None;
                event
            }
            Err(e) => {
                let error = e.to_string();
                self.invalid = Some(error.clone());
                PrdEvent::Invalid { error }
            }
        }
    }
}

impl PrdEvent {
    /// Whether the change makes the results of tasks running meanwhile suspect: requirements
    /// changed or removed (one added asks nothing of work already under way).
    pub fn unsettles_running_tasks(&self) -> bool {
        matches!(self, PrdEvent::Reloaded { diff, from: Some(_), .. } if !diff.changed.is_empty() || !diff.removed.is_empty())
    }

    /// One line for people: what the reload found.
    pub fn describe(&self) -> String {
        match self {
            PrdEvent::Reloaded {
                from: Some(from),
                to,
                diff,
                ..
            } => format!("version {from} → {to}; {}", diff.summary()),
            PrdEvent::Reloaded {
                from: None,
                to,
                requirements,
                ..
            } => format!("version {to}, {requirements} requirements"),
            PrdEvent::Invalid { error } => error.clone(),
            PrdEvent::Ignored => "ignored (frozen)".into(),
        }
    }
}

/// Who wrote an entry and when, for the `prd` entries of one watch session.
#[derive(Debug, Clone)]
pub struct EntryContext {
    /// The session's id (as a run id: what the entries' `run_id` says).
    pub session: String,
    /// The agent the session runs tasks with (as `medin run` would name it).
    pub agent: String,
}

/// The `ACTIVITY_LOG.md` entry of a load or reload of the PRD at `path` (none for an ignored
/// change): `passed` with the diff summary, or `error` with the message.
pub fn reload_entry(path: &Path, event: &PrdEvent, duration_ms: u64, ctx: &EntryContext) -> Option<ActivityEntry> {
    let (status, description, failures) = match event {
        PrdEvent::Ignored => return None,
        PrdEvent::Reloaded { from: None, .. } => (
            EntryStatus::Passed,
            format!("PRD loaded: {}", event.describe()),
            Vec::new(),
        ),
        PrdEvent::Reloaded { .. } => (
            EntryStatus::Passed,
            format!("PRD reloaded: {}", event.describe()),
            Vec::new(),
        ),
        PrdEvent::Invalid { error } => (
            EntryStatus::Error,
            "PRD changed and does not load: no new task starts until it does".to_string(),
            vec![error.clone()],
        ),
    };
    Some(ActivityEntry {
        timestamp: Utc::now(),
        task_id: prd_task_id(path),
        category: "prd".into(),
        kind: EntryKind::Prd,
        status,
        outcome: None,
        duration_ms,
        attempt: 1,
        run_id: ctx.session.clone(),
        run_dir: String::new(),
        agent: ctx.agent.clone(),
        description,
        correction: None,
        validations: Vec::new(),
        failures,
    })
}

/// The `pending` entry of a trial that ran while the PRD changed under it (`event`, which
/// [`PrdEvent::unsettles_running_tasks`]): a person decides whether it runs again.
pub fn decision_entry(
    trial: &str,
    category: &str,
    run_id: &str,
    run_dir: &Path,
    event: &PrdEvent,
    ctx: &EntryContext,
) -> ActivityEntry {
    let (from, to, summary) = match event {
        PrdEvent::Reloaded { from, to, diff, .. } => (from.clone().unwrap_or_default(), to.clone(), diff.summary()),
        other => (String::new(), String::new(), other.describe()),
    };
    ActivityEntry {
        timestamp: Utc::now(),
        task_id: trial.to_string(),
        category: category.to_string(),
        kind: EntryKind::Prd,
        status: EntryStatus::Pending,
        outcome: None,
        duration_ms: 0,
        attempt: 1,
        run_id: run_id.to_string(),
        run_dir: run_dir.display().to_string(),
        agent: ctx.agent.clone(),
        description: format!(
            "The PRD changed while this trial ran (version {from} → {to}; {summary}): its result was judged against the PRD it started with."
        ),
        correction: None,
        validations: Vec::new(),
        failures: vec![format!(
            "decision needed: re-run {trial} (save its task file while `medin watch` runs, or `medin run` it) or keep this result"
        )],
    }
}

/// The task id of the PRD's entries: `prd::<file name>`.
fn prd_task_id(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("prd::{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "version: 1.0.0\n## REQ-1: login\nusers log in\n## REQ-2: logout\nusers log out\n";
    const V2: &str =
        "version: 1.1.0\n## REQ-1: login\nusers log in with a key\n## REQ-3: audit\nevery action is logged\n";

    fn ctx() -> EntryContext {
        EntryContext {
            session: "watch-1".into(),
            agent: "oracle".into(),
        }
    }

    #[test]
    fn a_change_is_reloaded_with_what_it_added_removed_and_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("PRD.md");
        std::fs::write(&path, V1).unwrap();
        let (mut watch, first) = PrdWatch::open(path.clone(), false);
        assert!(
            matches!(
                first,
                PrdEvent::Reloaded {
                    from: None,
                    requirements: 2,
                    ..
                }
            ),
            "{first:?}"
        );
        std::fs::write(&path, V2).unwrap();
        let event = watch.changed();
        let PrdEvent::Reloaded { from, to, diff, .. } = &event else {
            panic!("{event:?}")
        };
        assert_eq!((from.as_deref(), to.as_str()), (Some("1.0.0"), "1.1.0"));
        assert_eq!(
            (&diff.added[..], &diff.removed[..], &diff.changed[..]),
            (
                &["REQ-3".to_string()][..],
                &["REQ-2".to_string()][..],
                &["REQ-1".to_string()][..]
            )
        );
        assert!(event.unsettles_running_tasks());
        let entry = reload_entry(&path, &event, 3, &ctx()).unwrap();
        assert_eq!(
            (entry.kind, entry.status, entry.task_id.as_str()),
            (EntryKind::Prd, EntryStatus::Passed, "prd::PRD.md")
        );
        assert!(entry.description.contains(&diff.summary()), "{}", entry.description);
    }

    #[test]
    fn an_invalid_prd_holds_tasks_until_it_loads_and_keeps_the_last_good_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("PRD.md");
        std::fs::write(&path, V1).unwrap();
        let (mut watch, _) = PrdWatch::open(path.clone(), false);
        std::fs::write(&path, "## no version and a bad heading\n").unwrap();
        let event = watch.changed();
        assert!(
            matches!(&event, PrdEvent::Invalid { error } if error.contains("PRD.md:1:1")),
            "{event:?}"
        );
        assert!(watch.holds_tasks());
        assert_eq!(watch.held().map(|p| p.version.as_str()), Some("1.0.0"));
        let entry = reload_entry(&path, &event, 0, &ctx()).unwrap();
        assert_eq!(entry.status, EntryStatus::Error);
        std::fs::write(&path, V2).unwrap();
        let event = watch.changed();
        // The diff is against the last PRD that loaded.
        assert!(
            matches!(&event, PrdEvent::Reloaded { from: Some(v), .. } if v == "1.0.0"),
            "{event:?}"
        );
        assert!(!watch.holds_tasks());
    }

    #[test]
    fn frozen_changes_are_ignored_and_reloaded_on_unfreeze() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("PRD.md");
        std::fs::write(&path, V1).unwrap();
        let (mut watch, _) = PrdWatch::open(path.clone(), true);
        std::fs::write(&path, V2).unwrap();
        assert_eq!(watch.changed(), PrdEvent::Ignored);
        assert_eq!(watch.held().map(|p| p.version.as_str()), Some("1.0.0"));
        assert!(reload_entry(&path, &PrdEvent::Ignored, 0, &ctx()).is_none());
        let event = watch
            .unfreeze()
            .expect("a change made while frozen is reloaded on unfreeze");
        assert!(
            matches!(&event, PrdEvent::Reloaded { to, .. } if to == "1.1.0"),
            "{event:?}"
        );
        // Unfreezing with nothing changed reloads nothing.
        watch.freeze();
        assert_eq!(watch.unfreeze(), None);
    }

    #[test]
    fn a_trial_caught_by_a_change_waits_for_a_decision() {
        let event = PrdEvent::Reloaded {
            from: Some("1.0.0".into()),
            to: "1.1.0".into(),
            diff: PrdDiff {
                changed: vec!["REQ-1".into()],
                ..PrdDiff::default()
            },
            requirements: 1,
        };
        let e = decision_entry("golden::t1", "golden", "r1", Path::new("/runs/r1/t1"), &event, &ctx());
        assert_eq!((e.kind, e.status), (EntryKind::Prd, EntryStatus::Pending));
        assert!(
            e.failures[0].starts_with("decision needed: re-run golden::t1"),
            "{:?}",
            e.failures
        );
        assert!(e.description.contains("1.0.0 → 1.1.0"), "{}", e.description);
    }
}

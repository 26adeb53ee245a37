//! The PRD under `medin watch`: what a change of the PRD file does to a session that keeps
//! running tasks (reference 000, properties 5 and 38–42).
//!
//! A watch session holds one [`LivePrd`] and hands it to every run it starts, so a task
//! starting in any run reloads a changed file exactly as under `medin run`
//! ([`LivePrd::before_task`]). [`PrdWatch`] adds what only a session that outlives its runs
//! needs, and turns a change of the file into a [`PrdEvent`]:
//!
//! - **reload at once** — when the watcher sees the file change, the watch closes its gate (no
//!   new task starts; a running one finishes) and reloads here, before any task would: the
//!   change is logged with its diff when it is seen, not when the next task happens to start
//!   (property 39). A task that started between the save and the watcher's event has already
//!   reloaded it (and logged it, in its run): the watch then finds it [`PrdEvent::Unchanged`].
//! - **invalid** — the file does not load (a [`PrdError`], with `file:line:col`):
//!   [`PrdWatch::holds_tasks`] says no task may start until it loads again. A watch does not
//!   exit over a half-saved edit, nor run tasks against a PRD nobody can read.
//! - **frozen** — with `--freeze`, a change is [`PrdEvent::Ignored`] (property 42) and
//!   remembered. Runs started meanwhile get a [`LivePrd`] opened on a copy of the file taken
//!   when it was frozen (`snapshot`), so their tasks do not reload it either.
//!   [`PrdWatch::unfreeze`] goes back to the live file and reloads a change made while frozen.
//! - **a decision** — because every run gets the session's [`LivePrd`], a task that was
//!   running when the watch reloaded a requirement it names is caught by the runner when it
//!   finishes, as under `medin run`: a `pending` `prd` entry asks a person to re-run it or
//!   accept its verdict (property 40; `Applied::decision_needed`). The watch only says which
//!   tasks were running ([`PrdEvent::unsettles_running_tasks`]); nothing re-runs on its own.
//!
//! This module reads the PRD and shapes entries; it never runs a task, prints or writes the
//! log (the watch loop does, in the runs' own entry for a reload: `ActivityLogReporter::prd_entry`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::diff::PrdDiff;
use super::{LivePrd, PrdError, Reload};

/// What a change of the PRD file came to.
#[derive(Debug, Clone, PartialEq)]
pub enum PrdEvent {
    /// The PRD was (re)loaded; the diff is against the last one that loaded (all added when
    /// none had).
    Reloaded(PrdDiff),
    /// The file does not load; tasks wait until it does.
    Invalid(PrdError),
    /// The file says what the PRD in use says (a task that started meanwhile reloaded it).
    Unchanged,
    /// Frozen: the change is not looked at until [`PrdWatch::unfreeze`].
    Ignored,
}

impl PrdEvent {
    /// What the run's log calls it (`None` for what is no reload).
    pub fn as_reload(&self) -> Option<Reload> {
        match self {
            PrdEvent::Reloaded(diff) => Some(Reload::Reloaded(diff.clone())),
            PrdEvent::Invalid(e) => Some(Reload::Invalid(e.clone())),
            PrdEvent::Unchanged | PrdEvent::Ignored => None,
        }
    }

    /// Whether the change makes the results of tasks running meanwhile suspect: requirements
    /// changed or removed (one added asks nothing of work already under way).
    pub fn unsettles_running_tasks(&self) -> bool {
        matches!(self, PrdEvent::Reloaded(diff) if !diff.changed.is_empty() || !diff.removed.is_empty())
    }

    /// One line for people.
    pub fn describe(&self) -> String {
        match self {
            PrdEvent::Reloaded(diff) => diff.summary(),
            PrdEvent::Invalid(e) => e.to_string(),
            PrdEvent::Unchanged => "no change to reload (a task that started meanwhile already did)".into(),
            PrdEvent::Ignored => "ignored (frozen)".into(),
        }
    }
}

/// The PRD a watch session works against.
#[derive(Debug)]
pub struct PrdWatch {
    path: PathBuf,
    /// `None` while the file has never loaded.
    live: Option<Arc<LivePrd>>,
    /// The file's last load failed.
    invalid: Option<PrdError>,
    /// Where the frozen copy goes.
    snapshot: PathBuf,
    /// The PRD runs get while frozen (opened on `snapshot`).
    frozen: Option<Arc<LivePrd>>,
    /// Frozen but nothing loaded to copy yet: the first good load is taken as it is.
    frozen_empty: bool,
    /// The file changed while frozen.
    changed_while_frozen: bool,
}

impl PrdWatch {
    /// Loads the PRD at `path`; with `frozen`, copies it to `snapshot` for the runs. The
    /// event is the first load (a `Reloaded` diff with every requirement added) or why it
    /// does not load.
    pub fn open(path: PathBuf, snapshot: PathBuf, frozen: bool) -> (PrdWatch, PrdEvent) {
        let mut watch = PrdWatch {
            path,
            live: None,
            invalid: None,
            snapshot,
            frozen: None,
            frozen_empty: false,
            changed_while_frozen: false,
        };
        let event = watch.reload();
        if frozen {
            if let Err(e) = watch.freeze() {
                watch.invalid = Some(e);
            }
        }
        (watch, event)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_frozen(&self) -> bool {
        self.frozen.is_some() || self.frozen_empty
    }

    /// The version in use, if one loaded.
    pub fn version(&self) -> Option<String> {
        let live = self.frozen.as_ref().or(self.live.as_ref())?;
        Some(live.current().version.clone())
    }

    /// Whether tasks must wait: the PRD in use does not load.
    pub fn holds_tasks(&self) -> bool {
        self.frozen.is_none() && (self.invalid.is_some() || self.live.is_none())
    }

    /// The PRD the runs started now are to use: the frozen copy, or the live file.
    pub fn for_runs(&self) -> Option<Arc<LivePrd>> {
        self.frozen.clone().or_else(|| self.live.clone())
    }

    /// The file changed: reloaded, or ignored while frozen.
    pub fn changed(&mut self) -> PrdEvent {
        if self.is_frozen() {
            self.changed_while_frozen = true;
            return PrdEvent::Ignored;
        }
        self.reload()
    }

    /// Changes from now on are ignored; runs get a copy of the PRD as it is now.
    pub fn freeze(&mut self) -> Result<(), PrdError> {
        let Some(live) = &self.live else {
            self.frozen_empty = true;
            return Ok(());
        };
        let unreadable = |e: std::io::Error| PrdError::Unreadable {
            path: self.snapshot.clone(),
            message: format!("cannot keep a frozen copy of the PRD: {e}"),
        };
        if let Some(dir) = self.snapshot.parent() {
            std::fs::create_dir_all(dir).map_err(unreadable)?;
        }
        // The copy is of the PRD in use: its file may already say something newer.
        let bytes = std::fs::read(live.path()).map_err(unreadable)?;
        std::fs::write(&self.snapshot, bytes).map_err(unreadable)?;
        let copy = LivePrd::open(&self.snapshot)?;
        if copy.current().digest != live.current().digest {
            // Saved after the last reload: the copy must not be of the unseen change.
            self.changed_while_frozen = true;
        }
        self.frozen = Some(Arc::new(copy));
        Ok(())
    }

    /// Changes are looked at again; a change made while frozen is reloaded now.
    pub fn unfreeze(&mut self) -> Option<PrdEvent> {
        self.frozen = None;
        self.frozen_empty = false;
        std::mem::take(&mut self.changed_while_frozen).then(|| self.reload())
    }

    fn reload(&mut self) -> PrdEvent {
        let event = match &self.live {
            Some(live) => match live.before_task() {
                (Ok(_), Some(Reload::Reloaded(diff))) => PrdEvent::Reloaded(diff),
                (Ok(_), _) => PrdEvent::Unchanged,
                (Err(e), _) => PrdEvent::Invalid(e),
            },
            None => match LivePrd::open(&self.path) {
                Ok(live) => {
                    let prd = live.current();
                    let diff = PrdDiff {
                        to_version: prd.version.clone(),
                        added: prd.requirements.iter().map(|r| r.id.clone()).collect(),
                        ..PrdDiff::default()
                    };
                    self.live = Some(Arc::new(live));
                    PrdEvent::Reloaded(diff)
                }
                Err(e) => PrdEvent::Invalid(e),
            },
        };
        match &event {
            PrdEvent::Invalid(e) => self.invalid = Some(e.clone()),
            PrdEvent::Reloaded(_) | PrdEvent::Unchanged => self.invalid = None,
            PrdEvent::Ignored => {}
        }
        event
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PRD in the front-matter form with `ids` (each with `text` as its description).
    fn prd(version: &str, reqs: &[(&str, &str)]) -> String {
        let mut s = format!("---\nversion: {version}\nlastUpdated: 2026-01-19\nrequirements:\n");
        for (id, text) in reqs {
            s.push_str(&format!(
                "  - id: {id}\n    title: {id}\n    description: {text}\n    acceptance_criteria: [it holds]\n    priority: high\n"
            ));
        }
        s.push_str("---\n");
        s
    }

    fn v1() -> String {
        prd("1.0.0", &[("REQ-1", "users log in"), ("REQ-2", "users log out")])
    }

    fn v2() -> String {
        prd(
            "1.1.0",
            &[
                ("REQ-1", "users log in with a key"),
                ("REQ-3", "every action is logged"),
            ],
        )
    }

    fn open(text: &str, frozen: bool) -> (tempfile::TempDir, PathBuf, PrdWatch, PrdEvent) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("PRD.md");
        std::fs::write(&path, text).unwrap();
        let (watch, event) = PrdWatch::open(path.clone(), dir.path().join("frozen/PRD.md"), frozen);
        (dir, path, watch, event)
    }

    #[test]
    fn a_change_is_reloaded_with_what_it_added_removed_and_changed() {
        let (_dir, path, mut watch, first) = open(&v1(), false);
        assert!(
            matches!(&first, PrdEvent::Reloaded(d) if d.added == ["REQ-1", "REQ-2"]),
            "{first:?}"
        );
        std::fs::write(&path, v2()).unwrap();
        let event = watch.changed();
        let PrdEvent::Reloaded(diff) = &event else {
            panic!("{event:?}")
        };
        assert_eq!(
            (diff.added.as_slice(), diff.removed.as_slice(), diff.changed.as_slice()),
            (
                &["REQ-3".to_string()][..],
                &["REQ-2".to_string()][..],
                &["REQ-1".to_string()][..]
            )
        );
        assert!(event.unsettles_running_tasks());
        // A task's own reload found it first: nothing left to reload.
        assert_eq!(watch.changed(), PrdEvent::Unchanged);
        assert_eq!(watch.version().as_deref(), Some("1.1.0"));
    }

    #[test]
    fn an_invalid_prd_holds_tasks_until_it_loads() {
        let (_dir, path, mut watch, _) = open(&v1(), false);
        std::fs::write(&path, "---\nversion: one\n---\n").unwrap();
        let event = watch.changed();
        assert!(
            matches!(&event, PrdEvent::Invalid(PrdError::Invalid { .. })),
            "{event:?}"
        );
        assert!(event.describe().contains("PRD.md:"), "{}", event.describe());
        assert!(watch.holds_tasks());
        std::fs::write(&path, v2()).unwrap();
        let event = watch.changed();
        assert!(
            matches!(&event, PrdEvent::Reloaded(d) if d.from_version == "1.0.0"),
            "{event:?}"
        );
        assert!(!watch.holds_tasks());
    }

    #[test]
    fn a_prd_that_never_loaded_holds_tasks_and_loads_on_a_change() {
        let (_dir, path, mut watch, first) = open("not a prd", false);
        assert!(matches!(first, PrdEvent::Invalid(_)), "{first:?}");
        assert!(watch.holds_tasks() && watch.for_runs().is_none());
        std::fs::write(&path, v1()).unwrap();
        assert!(matches!(watch.changed(), PrdEvent::Reloaded(_)));
        assert!(!watch.holds_tasks() && watch.for_runs().is_some());
    }

    #[test]
    fn frozen_changes_are_ignored_by_the_watch_and_by_its_runs_and_reloaded_on_unfreeze() {
        let (_dir, path, mut watch, _) = open(&v1(), true);
        std::fs::write(&path, v2()).unwrap();
        assert_eq!(watch.changed(), PrdEvent::Ignored);
        // What a run's task sees: the copy, unchanged.
        let runs = watch.for_runs().unwrap();
        let (prd, reload) = runs.before_task();
        assert_eq!((prd.unwrap().version.as_str(), reload), ("1.0.0", None));
        let event = watch
            .unfreeze()
            .expect("a change made while frozen is reloaded on unfreeze");
        assert!(
            matches!(&event, PrdEvent::Reloaded(d) if d.to_version == "1.1.0"),
            "{event:?}"
        );
        assert_eq!(watch.for_runs().unwrap().current().version, "1.1.0");
        // Unfreezing with nothing changed reloads nothing.
        watch.freeze().unwrap();
        assert_eq!(watch.unfreeze(), None);
    }
}

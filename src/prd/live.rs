//! The PRD of a running suite, reloaded when its file changes: [`LivePrd::before_task`] is
//! called before every task starts (and when one ends, to see whether the requirements it
//! names changed while it ran). It compares the file's digest with the one in use and,
//! when they differ, parses it again: a valid new PRD replaces the old one (the change is
//! returned as a [`Reload`] for the log) before the task starts; an invalid one halts the
//! run — that task and every later one end as infrastructure errors naming the problem, as a
//! missing or invalid PRD at the start does. Tasks already running finish under the PRD they
//! started with.
//!
//! The file is read once per task start (a PRD is small; reading it costs microseconds), so a
//! change is seen by the next task to start, whenever it was made.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::diff::PrdDiff;
use super::parse::{load, Prd, PrdError};

/// What a reload found.
#[derive(Debug, Clone, PartialEq)]
pub enum Reload {
    /// The PRD changed and was reloaded.
    Reloaded(PrdDiff),
    /// The PRD changed and is now invalid: the run halts.
    Invalid(PrdError),
}

/// The current PRD of a run, shared by its trials.
#[derive(Debug)]
pub struct LivePrd {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    current: Arc<Prd>,
    /// Set once the file turned invalid during the run: every later task halts on it.
    halted: Option<PrdError>,
}

impl LivePrd {
    /// Loads the PRD at `path` (an error halts the run before it starts).
    pub fn open(path: &Path) -> Result<LivePrd, PrdError> {
        let prd = load(path)?;
        Ok(LivePrd {
            path: path.to_path_buf(),
            state: Mutex::new(State {
                current: Arc::new(prd),
                halted: None,
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The PRD in use, without looking at the file.
    pub fn current(&self) -> Arc<Prd> {
        self.lock().current.clone()
    }

    /// The PRD the next task must start under, reloading it first if its file changed. The
    /// second value says what a reload found (for the log), when there was one.
    pub fn before_task(&self) -> (Result<Arc<Prd>, PrdError>, Option<Reload>) {
        let mut state = self.lock();
        if let Some(e) = &state.halted {
            // Halted stays halted unless the file is valid again and differs.
            if let Ok(prd) = load(&self.path) {
                let diff = state.current.diff(&prd);
                state.current = Arc::new(prd);
                state.halted = None;
                return (Ok(state.current.clone()), Some(Reload::Reloaded(diff)));
            }
            return (Err(e.clone()), None);
        }
        let digest = match std::fs::read(&self.path) {
            Ok(bytes) => {
                let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&bytes).to_vec();
                hex::encode(Sha256::digest(&bytes))
            }
            Err(_) => String::new(),
        };
        if digest == state.current.digest {
            return (Ok(state.current.clone()), None);
        }
        match load(&self.path) {
            Ok(prd) => {
                let diff = state.current.diff(&prd);
                state.current = Arc::new(prd);
                (Ok(state.current.clone()), Some(Reload::Reloaded(diff)))
            }
            Err(e) => {
                state.halted = Some(e.clone());
                (Err(e.clone()), Some(Reload::Invalid(e)))
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

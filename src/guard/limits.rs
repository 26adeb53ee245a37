//! Runtime limits: files touched, changes made, time spent, turns taken. Checked before and
//! after every action; the first violation is reported in the order files → changes → time.

use std::time::{Duration, Instant};

use crate::tools::WouldAffect;

/// The limits that apply to one task attempt (None = unlimited).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuntimeLimits {
    pub max_files: Option<u32>,
    pub max_changes: Option<u32>,
    pub timeout: Option<Duration>,
    pub max_turns: Option<u32>,
}

/// A limit that was exceeded. Its `Display` is the message that goes in the log, e.g.
/// `File limit exceeded: 2 > 1`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitViolation {
    #[error("File limit exceeded: {count} > {max}")]
    Files { count: u32, max: u32 },
    #[error("Change limit exceeded: {count} > {max}")]
    Changes { count: u32, max: u32 },
    #[error("Execution timeout: {:.1}s > {:.1}s", elapsed.as_secs_f64(), max.as_secs_f64())]
    Time { elapsed: Duration, max: Duration },
    #[error("Turn limit exceeded: {count} > {max}")]
    Turns { count: u32, max: u32 },
}

/// Counts what the agent has done so far and checks it against the limits.
#[derive(Debug, Clone)]
pub struct LimitTracker {
    _private: (),
}

impl LimitTracker {
    pub fn new(limits: RuntimeLimits, started: Instant) -> Self {
        let _ = (limits, started);
        todo!("guard helper")
    }

    /// Counts one more turn (tool call); errors when that exceeds `max_turns`.
    pub fn begin_turn(&mut self) -> Result<(), LimitViolation> {
        todo!("guard helper")
    }

    /// Before an action: would doing what `affected` lists exceed a limit? Order: files →
    /// changes → time.
    pub fn check_before(&self, affected: &[WouldAffect]) -> Result<(), LimitViolation> {
        let _ = affected;
        todo!("guard helper")
    }

    /// Records what an action that ran affected.
    pub fn record(&mut self, affected: &[WouldAffect]) {
        let _ = affected;
        todo!("guard helper")
    }

    /// After an action: is any limit exceeded now? Order: files → changes → time.
    pub fn check_after(&self) -> Result<(), LimitViolation> {
        todo!("guard helper")
    }

    pub fn turns(&self) -> u32 {
        todo!("guard helper")
    }
}

//! Runtime limits: files touched, changes made, time spent, turns taken, the same call repeated.
//! Checked before and after every action; the first violation is reported in the order files →
//! changes → time (turns and repeats are counted as each call begins).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::tools::WouldAffect;

/// The limits that apply to one task attempt (None = unlimited).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuntimeLimits {
    pub max_files: Option<u32>,
    pub max_changes: Option<u32>,
    pub timeout: Option<Duration>,
    pub max_turns: Option<u32>,
    /// Identical calls in a row allowed.
    pub max_repeats: Option<u32>,
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
    #[error("Repeat limit exceeded: the same call {count} times in a row > {max}; the agent is looping")]
    Repeats { count: u32, max: u32 },
}

/// Counts what the agent has done so far and checks it against the limits.
///
/// - files: distinct targets of `would_affect` entries of type `file`, whatever the action
///   (reads count: the limit is on what the agent touches);
/// - changes: `would_affect` entries whose action changes something (create, modify, write,
///   delete, move, rename);
/// - turns: tool calls, counted by [`LimitTracker::begin_turn`];
/// - repeats: the length of the current run of identical calls (same [`CallKey`]);
/// - time: wall-clock since `started`.
#[derive(Debug, Clone)]
pub struct LimitTracker {
    limits: RuntimeLimits,
    started: Instant,
    files: BTreeSet<String>,
    changes: u32,
    turns: u32,
    /// The last call and how many times in a row it was made.
    last_call: Option<CallKey>,
    repeats: u32,
}

/// What makes two calls the same call: the tool and its input (a malformed line: its text),
/// hashed. Two calls with the same key in a row are a repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallKey(u64);

impl CallKey {
    /// The key of a call of `tool` with `input` (its JSON text, or the raw text).
    pub fn new(tool: &str, input: &str) -> Self {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (tool, input).hash(&mut h);
        CallKey(h.finish())
    }
}

/// Actions of a `would_affect` entry that count as a change.
const CHANGE_ACTIONS: &[&str] = &["create", "modify", "write", "delete", "move", "rename", "overwrite"];

fn is_change(w: &WouldAffect) -> bool {
    CHANGE_ACTIONS.contains(&w.action.as_str())
}

fn is_file(w: &WouldAffect) -> bool {
    w.kind == "file"
}

impl LimitTracker {
    pub fn new(limits: RuntimeLimits, started: Instant) -> Self {
        LimitTracker {
            limits,
            started,
            files: BTreeSet::new(),
            changes: 0,
            turns: 0,
            last_call: None,
            repeats: 0,
        }
    }

    /// Counts one more turn (tool call `call`); errors when that exceeds `max_turns`, or
    /// `max_repeats` identical calls in a row.
    pub fn begin_turn(&mut self, call: CallKey) -> Result<(), LimitViolation> {
        self.turns = self.turns.saturating_add(1);
        self.repeats = if self.last_call == Some(call) {
            self.repeats.saturating_add(1)
        } else {
            1
        };
        self.last_call = Some(call);
        if let Some(max) = self.limits.max_turns {
            if self.turns > max {
                return Err(LimitViolation::Turns { count: self.turns, max });
            }
        }
        match self.limits.max_repeats {
            Some(max) if self.repeats > max => Err(LimitViolation::Repeats {
                count: self.repeats,
                max,
            }),
            _ => Ok(()),
        }
    }

    /// Counts one more turn taken inside a call already begun (a transaction's step) against
    /// `max_turns`, leaving the run of identical calls alone: the call the agent repeats is
    /// the transaction, so its steps must not break that run (else the same transaction sent
    /// again and again alternates with its steps and is never seen as a loop).
    pub fn begin_inner_turn(&mut self) -> Result<(), LimitViolation> {
        self.turns = self.turns.saturating_add(1);
        match self.limits.max_turns {
            Some(max) if self.turns > max => Err(LimitViolation::Turns { count: self.turns, max }),
            _ => Ok(()),
        }
    }

    /// Before an action: would doing what `affected` lists exceed a limit? Order: files →
    /// changes → time.
    pub fn check_before(&self, affected: &[WouldAffect]) -> Result<(), LimitViolation> {
        let new_files = affected
            .iter()
            .filter(|w| is_file(w) && !self.files.contains(&w.target))
            .map(|w| w.target.as_str())
            .collect::<BTreeSet<_>>()
            .len();
        let files = count(self.files.len()).saturating_add(count(new_files));
        let changes = self
            .changes
            .saturating_add(count(affected.iter().filter(|w| is_change(w)).count()));
        self.check(files, changes)
    }

    /// Records what an action that ran affected.
    pub fn record(&mut self, affected: &[WouldAffect]) {
        for w in affected {
            if is_file(w) {
                self.files.insert(w.target.clone());
            }
            if is_change(w) {
                self.changes = self.changes.saturating_add(1);
            }
        }
    }

    /// After an action: is any limit exceeded now? Order: files → changes → time.
    pub fn check_after(&self) -> Result<(), LimitViolation> {
        self.check(count(self.files.len()), self.changes)
    }

    pub fn turns(&self) -> u32 {
        self.turns
    }

    /// Changes made so far.
    #[cfg(test)]
    pub fn changes(&self) -> u32 {
        self.changes
    }

    fn check(&self, files: u32, changes: u32) -> Result<(), LimitViolation> {
        if let Some(max) = self.limits.max_files {
            if files > max {
                return Err(LimitViolation::Files { count: files, max });
            }
        }
        if let Some(max) = self.limits.max_changes {
            if changes > max {
                return Err(LimitViolation::Changes { count: changes, max });
            }
        }
        if let Some(max) = self.limits.timeout {
            let elapsed = self.started.elapsed();
            if elapsed > max {
                return Err(LimitViolation::Time { elapsed, max });
            }
        }
        Ok(())
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wa(target: &str, action: &str) -> WouldAffect {
        WouldAffect {
            kind: "file".into(),
            target: target.into(),
            action: action.into(),
        }
    }

    fn limits(files: Option<u32>, changes: Option<u32>) -> RuntimeLimits {
        RuntimeLimits {
            max_files: files,
            max_changes: changes,
            timeout: None,
            max_turns: None,
            max_repeats: None,
        }
    }

    #[test]
    fn second_distinct_file_exceeds_max_files_1() {
        let mut t = LimitTracker::new(limits(Some(1), None), Instant::now());
        t.check_before(&[wa("a.txt", "create")]).unwrap();
        t.record(&[wa("a.txt", "create")]);
        // The same file again is fine.
        t.check_before(&[wa("a.txt", "modify")]).unwrap();
        t.check_before(&[wa("a.txt", "read")]).unwrap();
        let err = t.check_before(&[wa("b.txt", "create")]).unwrap_err();
        assert_eq!(err, LimitViolation::Files { count: 2, max: 1 });
        assert_eq!(err.to_string(), "File limit exceeded: 2 > 1");
        // Reads count toward files too.
        assert!(t.check_before(&[wa("c.txt", "read")]).is_err());
        t.check_after().unwrap();
    }

    #[test]
    fn changes_count_mutating_actions_only() {
        let mut t = LimitTracker::new(limits(None, Some(2)), Instant::now());
        t.record(&[wa("a", "create"), wa("a", "read")]);
        t.record(&[wa("a", "modify")]);
        assert_eq!(t.changes(), 2);
        t.check_after().unwrap();
        t.check_before(&[wa("a", "read")]).unwrap();
        let err = t.check_before(&[wa("a", "delete")]).unwrap_err();
        assert_eq!(err.to_string(), "Change limit exceeded: 3 > 2");
        t.record(&[wa("b", "delete")]);
        assert_eq!(t.check_after(), Err(LimitViolation::Changes { count: 3, max: 2 }));
    }

    #[test]
    fn files_are_reported_before_changes() {
        let t = LimitTracker::new(limits(Some(0), Some(0)), Instant::now());
        assert_eq!(
            t.check_before(&[wa("x", "create")]),
            Err(LimitViolation::Files { count: 1, max: 0 })
        );
    }

    #[test]
    fn changes_are_reported_before_time() {
        let started = Instant::now() - Duration::from_secs(5);
        let l = RuntimeLimits {
            max_files: None,
            max_changes: Some(0),
            timeout: Some(Duration::from_secs(1)),
            max_turns: None,
            max_repeats: None,
        };
        let t = LimitTracker::new(l, started);
        assert!(matches!(
            t.check_before(&[wa("x", "create")]),
            Err(LimitViolation::Changes { .. })
        ));
        assert!(matches!(t.check_before(&[]), Err(LimitViolation::Time { .. })));
    }

    #[test]
    fn time_limit_uses_elapsed_time() {
        let l = RuntimeLimits {
            timeout: Some(Duration::from_millis(50)),
            ..Default::default()
        };
        let t = LimitTracker::new(l, Instant::now());
        t.check_after().unwrap();
        std::thread::sleep(Duration::from_millis(80));
        let err = t.check_after().unwrap_err();
        assert!(err.to_string().starts_with("Execution timeout: "), "{err}");
    }

    #[test]
    fn turns_error_past_max() {
        let l = RuntimeLimits {
            max_turns: Some(2),
            ..Default::default()
        };
        let mut t = LimitTracker::new(l, Instant::now());
        t.begin_turn(CallKey::new("bash", &t.turns().to_string())).unwrap();
        t.begin_turn(CallKey::new("bash", &t.turns().to_string())).unwrap();
        assert_eq!(
            t.begin_turn(CallKey::new("bash", "x")),
            Err(LimitViolation::Turns { count: 3, max: 2 })
        );
        assert_eq!(t.turns(), 3);
    }

    #[test]
    fn the_same_call_past_max_repeats_in_a_row_is_a_loop_and_any_other_call_breaks_the_run() {
        let l = RuntimeLimits {
            max_repeats: Some(3),
            ..Default::default()
        };
        let mut t = LimitTracker::new(l, Instant::now());
        let (ls, pwd) = (
            CallKey::new("bash", "{\"command\":\"ls\"}"),
            CallKey::new("bash", "{\"command\":\"pwd\"}"),
        );
        for _ in 0..3 {
            t.begin_turn(ls).unwrap();
        }
        t.begin_turn(pwd).unwrap();
        for _ in 0..3 {
            t.begin_turn(ls).unwrap();
        }
        let err = t.begin_turn(ls).unwrap_err();
        assert_eq!(err, LimitViolation::Repeats { count: 4, max: 3 });
        assert!(err.to_string().contains("looping"), "{err}");
        assert_ne!(CallKey::new("bash", "ls"), CallKey::new("read_file", "ls"));
    }

    #[test]
    fn no_limits_never_error() {
        let mut t = LimitTracker::new(RuntimeLimits::default(), Instant::now());
        for i in 0..100 {
            t.begin_turn(CallKey::new("bash", &t.turns().to_string())).unwrap();
            t.record(&[wa(&format!("f{i}"), "create")]);
        }
        t.check_after().unwrap();
    }

    #[test]
    fn non_file_entries_do_not_count_as_files() {
        let t = LimitTracker::new(limits(Some(0), None), Instant::now());
        let dir = WouldAffect {
            kind: "directory".into(),
            target: "d".into(),
            action: "list".into(),
        };
        t.check_before(&[dir]).unwrap();
    }
}

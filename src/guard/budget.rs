//! What one check of a command line may cost. A hostile agent that has read the guard writes
//! lines that are cheap to send and dear to read; this module owns the bounds, for one
//! top-level [`check_command_in`] and everything it does:
//!
//! - **Lines judged inside the line**: the command an unknown wrapper runs (`chronic sh
//!   ..`), a line handed to an option (`tool --on-finish 'rm -rf ~'`), a staged
//!   configuration's text. Each is judged by a fresh [`check_command_in`], and each of those
//!   may find more: at most [`MAX_CARRIED_LINES`] of them, [`MAX_CARRIED_BYTES`] in all, all
//!   levels counted. Without a bound, each carried line was read again with what surrounds
//!   it, and a pipeline of wrappers around `sh -c '..'` built a longer line on every reading
//!   (two stages ran for minutes).
//! - **Time in the shell parser**: tree-sitter's error recovery grows faster than the text on
//!   some malformed input (8 KB of `` !`< `` took 17 s). Each parse is stopped once the check's
//!   parses together have taken [`MAX_PARSE_TIME`], and the check is then blocked
//!   (`parse.too_large`), whatever else it found. This is the one bound measured in time, so
//!   the one that can differ between machines: the well-formed scripts it was tried on (up to
//!   34 KB) parse in under 3 ms, a hundredth of it. What the walker and the rules spend is not
//!   counted: it is bounded by the other limits, and counting it would let a long harmless
//!   line spend a later parse's time.
//!
//! Past a bound the line is blocked as one the guard could not read to the end. The walker's
//! own bounds (a value's length, text read again, text added by expansions, nesting) are in
//! [`super::shell`] and block the same way, as clear parse errors.
//!
//! The counts live in thread-locals: the guard is synchronous, and a check started on one
//! thread finishes there. The outermost check resets them; nesting is tracked by a drop guard,
//! so a panic inside a check leaves the count right for the next one.
//!
//! [`check_command_in`]: super::check_command_in

use std::cell::Cell;
use std::time::Duration;

use super::{GuardContext, Verdict};

/// The most command lines one top-level check judges inside the line it was given.
pub(crate) const MAX_CARRIED_LINES: u32 = 64;

/// The most bytes of carried lines one top-level check judges: each is read whole, and a
/// line that unwraps one word at a time (`eval eval .. ls`) is read again at every word.
pub(crate) const MAX_CARRIED_BYTES: usize = 64 * 1024;

/// The most time the shell parser may spend, all parses counted, on one top-level check.
pub(crate) const MAX_PARSE_TIME: Duration = Duration::from_millis(250);

thread_local! {
    /// How deep the running check is: 0 outside any check, 1 in a top-level one.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Carried lines judged since the outermost check started, and their bytes.
    static JUDGED: Cell<(u32, usize)> = const { Cell::new((0, 0)) };
    /// Time the running check's parses have taken, and whether one was stopped for it.
    static PARSING: Cell<(Duration, bool)> = const { Cell::new((Duration::ZERO, false)) };
}

/// Held while a check runs; the outermost one resets the counts (carried lines, parser time).
pub(super) struct Nesting(());

impl Nesting {
    pub(super) fn enter() -> Self {
        let depth = DEPTH.get();
        if depth == 0 {
            JUDGED.set((0, 0));
            PARSING.set((Duration::ZERO, false));
        }
        DEPTH.set(depth + 1);
        Nesting(())
    }
}

impl Drop for Nesting {
    fn drop(&mut self) {
        DEPTH.set(DEPTH.get().saturating_sub(1));
    }
}

/// The verdict on `line`, a command line carried inside the one being checked, or a block
/// when the line being checked has already had [`MAX_CARRIED_LINES`] or [`MAX_CARRIED_BYTES`]
/// judged.
pub(crate) fn check_carried(line: &str, ctx: &GuardContext<'_>, cwd: Option<&str>) -> Verdict {
    let (lines, bytes) = JUDGED.get();
    let judged = (lines + 1, bytes.saturating_add(line.len()));
    JUDGED.set(judged);
    let beyond = if judged.0 > MAX_CARRIED_LINES {
        format!("carries more than {MAX_CARRIED_LINES} command lines inside one another")
    } else if judged.1 > MAX_CARRIED_BYTES {
        format!(
            "carries more than {} KiB of command lines inside one another",
            MAX_CARRIED_BYTES / 1024
        )
    } else {
        return super::check_command_in(line, ctx, cwd);
    };
    Verdict::from_violations(vec![super::rules::too_large(line, &beyond)], None)
}

/// How much longer the shell parser may run: what is left of [`MAX_PARSE_TIME`] for the
/// running check, or all of it for a parse outside any check.
pub(crate) fn parse_time_left() -> Duration {
    if DEPTH.get() == 0 {
        return MAX_PARSE_TIME;
    }
    MAX_PARSE_TIME.saturating_sub(PARSING.get().0)
}

/// Records a parse that took `took`, and whether it was stopped for want of time.
pub(crate) fn spend_parse_time(took: Duration, stopped: bool) {
    let (spent, ran_out) = PARSING.get();
    PARSING.set((spent + took, ran_out || stopped));
}

/// Whether a parse of the running check was stopped for want of time.
pub(crate) fn parse_time_ran_out() -> bool {
    PARSING.get().1
}

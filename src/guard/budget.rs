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
//!   some malformed input (8 KB of `` !`< `` took 17 s, 16 KB of `` `<? `` 18 s and 6 GB). The
//!   parser is stopped once the check has spent [`MAX_PARSE_TIME`] in it, all parses counted.
//!   This is the one bound measured in time, so the one that can differ between machines: the
//!   well-formed scripts it was tried on (up to 34 KB) parse in under 3 ms, a hundredth of it.
//!
//! Past a bound the line is blocked as one the guard could not read to the end.
//!
//! The counts live in thread-locals: the guard is synchronous, and a check started on one
//! thread finishes there. The outermost check resets them; nesting is tracked by a drop guard,
//! so a panic inside a check leaves the count right for the next one.
//!
//! [`check_command_in`]: super::check_command_in

use std::cell::Cell;
use std::time::{Duration, Instant};

use super::{GuardContext, Verdict};

/// The most command lines one top-level check judges inside the line it was given.
pub(crate) const MAX_CARRIED_LINES: u32 = 64;

/// The most bytes of carried lines one top-level check judges: each is read whole, and a
/// line that unwraps one word at a time (`eval eval .. ls`) is read again at every word.
pub(crate) const MAX_CARRIED_BYTES: usize = 64 * 1024;

/// The most time the shell parser may spend, in all, on one top-level check.
pub(crate) const MAX_PARSE_TIME: Duration = Duration::from_millis(250);

thread_local! {
    /// How deep the running check is: 0 outside any check, 1 in a top-level one.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Carried lines judged since the outermost check started, and their bytes.
    static JUDGED: Cell<(u32, usize)> = const { Cell::new((0, 0)) };
    /// When the running check's parser time runs out; set by its first parse.
    static PARSE_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Held while a check runs; the outermost one resets the count of carried lines.
pub(super) struct Nesting(());

impl Nesting {
    pub(super) fn enter() -> Self {
        let depth = DEPTH.get();
        if depth == 0 {
            JUDGED.set((0, 0));
            PARSE_DEADLINE.set(None);
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

/// When the shell parser must give up: [`MAX_PARSE_TIME`] after the running check's first
/// parse, or after now for a parse outside any check.
pub(crate) fn parse_deadline() -> Instant {
    if DEPTH.get() == 0 {
        return Instant::now() + MAX_PARSE_TIME;
    }
    match PARSE_DEADLINE.get() {
        Some(deadline) => deadline,
        None => {
            let deadline = Instant::now() + MAX_PARSE_TIME;
            PARSE_DEADLINE.set(Some(deadline));
            deadline
        }
    }
}

//! Command lines the guard judges *inside* a command line: the command an unknown wrapper
//! runs (`chronic sh ..`), a line handed to an option (`tool --on-finish 'rm -rf ~'`), a
//! staged configuration's text. Each is judged by a fresh [`check_command_in`], and each of
//! those may find more. This module owns how many: one top-level check judges at most
//! [`MAX_CARRIED_LINES`] of them, [`MAX_CARRIED_BYTES`] in all, all levels counted, and a line
//! that asks for more is blocked as one the guard could not read to the end.
//!
//! Without a bound, a hostile line makes the guard's work grow without limit: each carried
//! line is read again with what surrounds it, and a pipeline of wrappers around `sh -c '..'`
//! built a longer line on every reading (two stages ran for minutes). No real command carries
//! more than a handful of lines.
//!
//! The count lives in a thread-local: the guard is synchronous, and a check started on one
//! thread finishes there. The outermost check resets it; nesting is tracked by a drop guard,
//! so a panic inside a check leaves the count right for the next one.
//!
//! [`check_command_in`]: super::check_command_in

use std::cell::Cell;

use super::{GuardContext, Verdict};

/// The most command lines one top-level check judges inside the line it was given.
pub(crate) const MAX_CARRIED_LINES: u32 = 64;

/// The most bytes of carried lines one top-level check judges: each is read whole, and a
/// line that unwraps one word at a time (`eval eval .. ls`) is read again at every word.
pub(crate) const MAX_CARRIED_BYTES: usize = 64 * 1024;

thread_local! {
    /// How deep the running check is: 0 outside any check, 1 in a top-level one.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Carried lines judged since the outermost check started, and their bytes.
    static JUDGED: Cell<(u32, usize)> = const { Cell::new((0, 0)) };
}

/// Held while a check runs; the outermost one resets the count of carried lines.
pub(super) struct Nesting(());

impl Nesting {
    pub(super) fn enter() -> Self {
        let depth = DEPTH.get();
        if depth == 0 {
            JUDGED.set((0, 0));
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

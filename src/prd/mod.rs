//! PRD.md as the source of truth: a suite may name a product requirements document
//! (`prd: PRD.md` in `medin.yaml`) and its tasks name the requirements they prove
//! (`requirements: [REQ-3]`). This module owns everything the suite knows about it:
//!
//! - **parse** ([`load`]): the markdown, in either of two forms (YAML front matter, or one
//!   heading per requirement; see [`parse`]'s essay), checked against reference 000's schema
//!   (a `MAJOR.MINOR.PATCH` version, a last-updated date, and requirements each with an id,
//!   title, description, acceptance criteria and a priority). A missing or invalid PRD is a
//!   [`PrdError`] with `file:line:col`: the run halts before any task starts (exit 2).
//! - **relevance** ([`relevant`]): which requirements a task is briefed with — the ones it
//!   names, what they depend on, and the ones that share a keyword with it.
//! - **conflicts** ([`apply`]): a requirement's `checks` are judged in every task that names
//!   it, and a task expectation that contradicts one of them is set aside and logged: the
//!   PRD wins.
//! - **coverage** ([`coverage`]): per requirement, the trials that prove it and whether they
//!   passed; a critical requirement no passing trial proves fails the gate.
//! - **reload** ([`LivePrd`]): a PRD edited during a run is reloaded before the next task
//!   starts, and the change (requirements added, removed, changed: `PrdDiff`) is logged.
//!
//! The PRD never runs anything and never reads the workspace: checks it declares run through
//! the same validators (and, for commands, the same pipeline) as a task's own.

mod apply;
mod coverage;
mod diff;
mod live;
mod parse;
mod relevance;
pub mod watch;

pub use apply::{apply, check_named, Applied, Conflict, DecisionNeeded};
pub use coverage::{coverage, Coverage};
pub use live::{LivePrd, Reload};
pub use parse::{load, parse, Prd, PrdError, Priority};
pub use relevance::Why;

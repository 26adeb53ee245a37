//! The properties of reference 000 ("Medin Protocol", properties 1–42) as proptest properties,
//! one binary (link time matters), one module per area. Each test is named `pNN_<name>` after
//! the reference's property and carries its text in the doc comment, with what medin makes of it
//! where medin's architecture differs (the README's "The 42 properties of the Medin Protocol"
//! maps every property to its test, bench or reason).
//!
//! Case counts: pure properties run 100 or more cases, as the reference asks; properties that
//! spawn real processes or run whole tasks run fewer (each says how many and why), so the whole
//! target stays well under a minute on two loaded cores.

mod support;

use proptest::test_runner::{Config, FileFailurePersistence};

/// `n` cases; a failing case is kept in `tests/properties/regressions.txt` (this target has no
/// `lib.rs` beside it for proptest's default place), and replayed first from then on.
pub fn cases(n: u32) -> Config {
    Config {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/properties/regressions.txt"
        )))),
        ..Config::with_cases(n)
    }
}

#[path = "properties/cli.rs"]
mod cli;
#[path = "properties/guard.rs"]
mod guard;
#[path = "properties/log.rs"]
mod log;
#[path = "properties/prd.rs"]
mod prd;
#[path = "properties/runner.rs"]
mod runner;
#[path = "properties/sandbox.rs"]
mod sandbox;
#[path = "properties/transaction.rs"]
mod transaction;
#[path = "properties/validate.rs"]
mod validate;

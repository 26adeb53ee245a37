//! The properties of reference 000 ("Medin Protocol", properties 1–42) as proptest properties,
//! one binary (link time matters), one module per area.

use proptest::test_runner::{Config, FileFailurePersistence};

/// `n` cases; a failing case is kept in `tests/properties/regressions.txt`, and replayed first
/// from then on.
pub fn cases(n: u32) -> Config {
    Config {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/properties/regressions.txt"
        )))),
        ..Config::with_cases(n)
    }
}

#[path = "properties/prd.rs"]
mod prd;

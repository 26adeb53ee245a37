//! The `eval` test target: every YAML task of the bundled suite is one test case.
//! `cargo test --test eval -- --list` lists them; `cargo nextest run --test eval` runs them.

fn main() -> std::process::ExitCode {
    medin::harness::run_suite_at(env!("CARGO_MANIFEST_DIR"))
}

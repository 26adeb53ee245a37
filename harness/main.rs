//! The `eval` test target: every YAML task of the bundled suite is one test case.
//! `cargo test --test eval -- --list` lists them; `cargo nextest run --test eval` runs them.
//! It is what an embedding crate writes, with its own agents added by `.agent(name, factory)`.

fn main() -> std::process::ExitCode {
    medin::Harness::new(env!("CARGO_MANIFEST_DIR")).run()
}

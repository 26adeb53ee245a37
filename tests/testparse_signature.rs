//! `error_signature`: the same failure seen again (other paths, line numbers, addresses,
//! durations, thread ids, temp names) gives the same signature; another message or another
//! failing test gives another. Uses real runner outputs from tests/data/testparse.

use std::path::Path;

use medin::internal::testparse::signature::{normalize_message, top_functions};
use medin::internal::testparse::{error_signature, parse, Failure, Status, TestReport};

fn report(rel: &str) -> TestReport {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/testparse")
        .join(rel);
    let out = std::fs::read_to_string(&p).unwrap();
    let exit = std::fs::read_to_string(p.with_extension("exit"))
        .ok()
        .map(|s| s.trim().parse().unwrap());
    parse(&out, exit, None)
}

fn one(name: &str, message: &str, stack: Option<&str>) -> TestReport {
    TestReport {
        framework: "libtest".into(),
        status: Status::Failed,
        total: 1,
        passed: 0,
        failed: 1,
        skipped: 0,
        failures: vec![Failure {
            name: name.into(),
            file: Some("src/lib.rs".into()),
            line: Some(3),
            message: message.into(),
            stack: stack.map(str::to_string),
        }],
    }
}

#[test]
fn the_same_failures_in_two_real_runs_have_one_signature() {
    // Two separate `cargo test` runs (different thread ids, colours, timings).
    assert_eq!(
        error_signature(&report("libtest/lib_fail_fast.txt")),
        error_signature(&report("libtest/ansi_color.txt"))
    );
    // pytest runs: different object addresses (0x7f…) in the tracebacks. (`-v` prints a
    // longer assertion diff, which is a different message.)
    let q = error_signature(&report("pytest/q.txt"));
    assert_eq!(q, error_signature(&report("pytest/default.txt")));
    assert_eq!(q, error_signature(&report("pytest/junit_run.txt")));
    assert_ne!(q, error_signature(&report("pytest/verbose.txt")));
    // unittest under Python 3.11 and 3.12.
    assert_eq!(
        error_signature(&report("unittest/verbose.txt")),
        error_signature(&report("unittest/verbose_py312.txt"))
    );
}

#[test]
fn a_different_set_of_failing_tests_has_another_signature() {
    assert_ne!(
        error_signature(&report("pytest/q.txt")),
        error_signature(&report("pytest/stop_first.txt"))
    );
    assert_ne!(
        error_signature(&report("libtest/lib_fail_fast.txt")),
        error_signature(&report("libtest/mixed_no_fail_fast.txt"))
    );
}

#[test]
fn volatile_parts_do_not_change_the_signature() {
    let a = one(
        "t::x",
        "thread 't::x' (1416) panicked at /tmp/tmpAb12x/src/lib.rs:25:9:\nvalue 0x7ffd5a3c at 2026-11-21T21:18:34.715Z took 0.34s",
        Some("   0: std::panicking::begin\n   1: lt::tests::x::h0123456789abcdef\n"),
    );
    let b = one(
        "t::x",
        "thread 't::x' (99) panicked at /home/ci/work/src/lib.rs:31:5:\nvalue 0x55aa01 at 2027-01-02T03:04:05Z took 12ms",
        Some("   0: std::panicking::begin\n   1: lt::tests::x::hfedcba9876543210\n"),
    );
    assert_eq!(error_signature(&a), error_signature(&b));
    assert_eq!(
        normalize_message(&a.failures[0].message),
        normalize_message(&b.failures[0].message)
    );
    // Python tracebacks: another file path and line, same functions.
    let py1 = one(
        "t",
        "AssertionError: 2 != 3",
        Some("  File \"/tmp/a/test_x.py\", line 9, in test_x\n"),
    );
    let py2 = one(
        "t",
        "AssertionError: 2 != 3",
        Some("  File \"/srv/b/test_x.py\", line 12, in test_x\n"),
    );
    assert_eq!(error_signature(&py1), error_signature(&py2));
}

#[test]
fn a_different_message_test_or_stack_changes_the_signature() {
    let base = one("t::x", "assertion failed: 2 == 3", None);
    assert_ne!(
        error_signature(&base),
        error_signature(&one("t::x", "assertion failed: 2 == 4", None))
    );
    assert_ne!(
        error_signature(&base),
        error_signature(&one("t::y", "assertion failed: 2 == 3", None))
    );
    assert_ne!(
        error_signature(&one("t", "boom", Some("  File \"a.py\", line 1, in f\n"))),
        error_signature(&one("t", "boom", Some("  File \"a.py\", line 1, in g\n")))
    );
    // The order failures are listed in does not matter.
    let mut two = base.clone();
    two.failures.push(one("t::y", "other", None).failures.remove(0));
    let mut rev = two.clone();
    rev.failures.reverse();
    assert_eq!(error_signature(&two), error_signature(&rev));
    assert_eq!(error_signature(&two).len(), 64);
}

#[test]
fn stack_function_names_are_read_for_each_language() {
    let rust = "   0: __rustc::rust_begin_unwind\n             at /rustc/x/panicking.rs:689:5\n   1: core::panicking::panic_fmt\n";
    assert_eq!(
        top_functions(rust),
        ["__rustc::rust_begin_unwind", "core::panicking::panic_fmt"]
    );
    let js =
        "at Object.toBe (__tests__/math.test.js:6:19)\nat new Promise (<anonymous>)\nat async Test.run (node:x:1:2)";
    assert_eq!(top_functions(js), ["Object.toBe", "new Promise", "Test.run"]);
    let py = "    def test_add_fails():\n>       assert add(2, 2) == 5\ntests/test_math.py:13: in helper\n    @pytest.mark.parametrize(\"n\", [1])";
    assert_eq!(top_functions(py), ["test_add_fails", "helper"]);
    let go = "goroutine 25 [running]:\ntesting.tRunner.func1.2({0x508f00, 0x551ed0})\n\t/usr/lib/go/src/testing/testing.go:1396 +0x24e\n";
    assert_eq!(top_functions(go), ["testing.tRunner.func1.2"]);
    let many = (0..9)
        .map(|i| format!("  File \"x.py\", line {i}, in f{i}"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(top_functions(&many).len(), 5);
}

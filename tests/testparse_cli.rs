//! `medin parse-tests` through the real binary: a file, stdin, a named framework, bad input.

use std::io::Write;
use std::process::{Command, Stdio};

const FIXTURE: &str = "tests/data/testparse/libtest/mixed_no_fail_fast";

fn medin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_medin"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn expected() -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(format!("{}/{FIXTURE}.expect.json", env!("CARGO_MANIFEST_DIR"))).unwrap(),
    )
    .unwrap()
}

#[test]
fn parse_tests_prints_the_report_of_a_file() {
    let out = medin()
        .args(["parse-tests", "--exit-code", "101", &format!("{FIXTURE}.txt")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got, expected());
    assert_eq!(got["status"], "failed");
    assert_eq!(got["failed"], 4);
}

#[test]
fn parse_tests_reads_stdin_and_takes_a_framework() {
    let text = std::fs::read(format!("{}/{FIXTURE}.txt", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut child = medin()
        .args(["parse-tests", "--framework", "cargo", "--exit-code", "101", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got, expected());
}

#[test]
fn a_passing_parse_with_a_failing_exit_code_is_error() {
    let out = medin()
        .args([
            "parse-tests",
            "--exit-code",
            "1",
            "tests/data/testparse/libtest/all_pass.txt",
        ])
        .output()
        .unwrap();
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["status"], "error");
}

#[test]
fn bad_arguments_say_what_to_do_and_exit_by_the_table() {
    // A framework medin does not know is a usage error (64); an input it cannot read is an
    // infrastructure error (2).
    let out = medin()
        .args(["parse-tests", "--framework", "mocha", "-"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown test framework `mocha`"));
    let out = medin()
        .args(["parse-tests", "/nonexistent/output.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read test output from /nonexistent/output.txt"));
}

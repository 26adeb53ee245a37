//! The `command` validator through the real sandbox (`crate::sandbox::run_shell`).
//! These tests need the sandbox implementation merged; before that, they panic in `todo!()`.

use std::path::Path;
use std::time::{Duration, Instant};

use medin::internal::spec::{CommandCheck, DurationSpec, ValidatorSpec};
use medin::internal::validate::{run_all, ValidateContext, ValidationResult, ValidationStatus};

fn cmd(run: &str) -> CommandCheck {
    CommandCheck {
        run: run.to_string(),
        exit_code: 0,
        stdout: None,
        timeout: None,
    }
}

fn one(check: CommandCheck, dir: &Path) -> ValidationResult {
    let ctx = ValidateContext::new(dir);
    run_all(&[ValidatorSpec::Command(check).into()], &ctx).remove(0)
}

#[test]
fn a_command_passes_on_its_expected_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "x\n").unwrap();
    let r = one(cmd("grep -q x f"), dir.path());
    assert_eq!(r.status, ValidationStatus::Passed, "{r:#?}");
    assert!(r.passed);
    assert_eq!(r.check, "command grep -q x f");
    assert_eq!(r.confidence, 95);

    let r = one(cmd("grep -q y f"), dir.path());
    assert_eq!(r.status, ValidationStatus::Failed, "{r:#?}");
    assert_eq!(r.expected.as_deref(), Some("exit 0"));
    assert_eq!(r.actual.as_deref(), Some("exit 1"));

    let r = one(
        CommandCheck {
            exit_code: 3,
            ..cmd("exit 3")
        },
        dir.path(),
    );
    assert!(r.passed, "{r:#?}");
}

#[test]
fn a_command_checks_stdout_against_a_regex() {
    let dir = tempfile::tempdir().unwrap();
    let r = one(
        CommandCheck {
            stdout: Some(r"^v\d+$".into()),
            ..cmd("echo v42")
        },
        dir.path(),
    );
    assert!(r.passed, "{r:#?}");
    let r = one(
        CommandCheck {
            stdout: Some(r"^v\d+$".into()),
            ..cmd("echo version")
        },
        dir.path(),
    );
    assert_eq!(r.status, ValidationStatus::Failed, "{r:#?}");
    assert_eq!(r.expected.as_deref(), Some(r"^v\d+$"));
    assert_eq!(r.actual.as_deref(), Some("version\n"));
}

#[test]
fn a_command_runs_in_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker"), "").unwrap();
    let r = one(cmd("test -f marker"), dir.path());
    assert!(r.passed, "{r:#?}");
}

#[test]
fn a_slow_command_is_pending_after_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let r = one(
        CommandCheck {
            timeout: Some(DurationSpec(Duration::from_millis(300))),
            ..cmd("sleep 10")
        },
        dir.path(),
    );
    assert_eq!(r.status, ValidationStatus::Pending, "{r:#?}");
    assert_eq!(r.error.as_deref(), Some("timed out after 300ms"));
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

#[test]
fn a_missing_tool_is_pending_not_failed() {
    let dir = tempfile::tempdir().unwrap();
    let r = one(cmd("no-such-tool-medin --version"), dir.path());
    assert_eq!(r.status, ValidationStatus::Pending, "{r:#?}");
    assert!(r.error.unwrap().contains("command not found"));
}

// ---------------------------------------------------------------- custom

mod custom {
    use super::*;
    use medin::internal::spec::CustomCheck;

    fn custom(dir: &Path, script: &str) -> ValidationResult {
        std::fs::write(dir.join("check.sh"), script).unwrap();
        let check = CustomCheck {
            command: "sh check.sh".into(),
            timeout: Some(DurationSpec(Duration::from_secs(10))),
        };
        run_all(&[ValidatorSpec::Custom(check).into()], &ValidateContext::new(dir)).remove(0)
    }

    #[test]
    fn a_script_states_its_verdict_on_its_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let r = custom(
            dir.path(),
            "echo checking\necho '{\"status\": \"passed\", \"message\": \"3 rows\", \"evidence\": {\"rows\": 3}}'\n",
        );
        assert_eq!(r.status, ValidationStatus::Passed, "{r:#?}");
        assert_eq!(r.check, "custom sh check.sh");
        assert!(
            r.evidence.contains("3 rows") && r.evidence.contains("{\"rows\":3}"),
            "{}",
            r.evidence
        );

        let r = custom(
            dir.path(),
            "echo '{\"status\": \"failed\", \"message\": \"table missing\"}'; exit 1\n",
        );
        assert_eq!(r.status, ValidationStatus::Failed, "{r:#?}");
        assert!(r.error.unwrap().contains("table missing"));

        let r = custom(
            dir.path(),
            "echo '{\"status\": \"pending\", \"message\": \"db down\"}'\n",
        );
        assert_eq!(r.status, ValidationStatus::Pending, "{r:#?}");
        assert!(r.error.unwrap().contains("db down"));
    }

    #[test]
    fn anything_but_a_verdict_is_a_failure_that_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("true\n", "printed nothing"),
            ("echo all good\n", "not JSON"),
            ("echo '{\"status\": \"passed\"}'; echo trailing\n", "not JSON"),
            ("echo '{\"status\": \"passed\"}'; exit 3\n", "exited 3"),
            ("echo '{\"status\": \"green\"}'\n", "is not \"passed\""),
            ("echo '{\"status\": \"passed\", \"extra\": 1}'\n", "unknown key"),
        ];
        for (script, why) in cases {
            let r = custom(dir.path(), script);
            assert_eq!(r.status, ValidationStatus::Failed, "{script}: {r:#?}");
            let error = r.error.unwrap_or_default();
            assert!(error.contains(why), "{script}: {error}");
        }
        let r = custom(dir.path(), "exec no-such-tool-medin\n");
        assert_eq!(r.status, ValidationStatus::Pending, "{r:#?}");
    }

    #[test]
    fn hostile_output_is_bounded_and_made_inert() {
        let dir = tempfile::tempdir().unwrap();
        // Megabytes before the verdict: the sandbox keeps the head, so the verdict is lost.
        let r = custom(
            dir.path(),
            "head -c 20000000 /dev/zero | tr '\\0' x; echo; echo '{\"status\": \"passed\"}'\n",
        );
        assert_eq!(r.status, ValidationStatus::Failed, "{r:#?}");
        assert!(r.error.unwrap().contains("was cut"));
        // Escape sequences in the message and many lines before it.
        let r = custom(
            dir.path(),
            "seq 1 5000; printf '{\"status\": \"failed\", \"message\": \"\\\\u001b]0;pwned\\\\u0007\\\\u001b[2Jgone\"}\\n'\n",
        );
        assert_eq!(r.status, ValidationStatus::Failed, "{r:#?}");
        let shown = format!("{} {}", r.evidence, r.error.unwrap_or_default());
        assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'), "{shown:?}");
        assert!(shown.contains("gone"), "{shown}");
        assert!(r.output_tail.unwrap().lines().count() <= 21);
    }

    #[test]
    fn a_slow_check_carries_a_warning_naming_it_and_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let r = custom(dir.path(), "sleep 0.3; echo '{\"status\": \"passed\"}'\n");
        assert_eq!(r.status, ValidationStatus::Passed, "{r:#?}");
        assert_eq!(r.warnings.len(), 1, "{r:#?}");
        assert!(r.warnings[0].contains("custom sh check.sh") && r.warnings[0].contains(" ms (over 100 ms)"));
        let fast = run_all(
            &[ValidatorSpec::FileExists("check.sh".into()).into()],
            &ValidateContext::new(dir.path()),
        );
        assert!(fast[0].warnings.is_empty(), "{:?}", fast[0]);
    }
}

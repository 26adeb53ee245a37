//! A test command whose runner is not installed, recognised from what the shell or the
//! interpreter says about it: `No module named pytest` from `python3 -m pytest`, `pytest: not
//! found` (exit 127) from the shell. That is the machine's problem, never the agent's: the
//! runner reports it as infrastructure, naming the runner and the fix.

use std::sync::LazyLock;

use regex::Regex;

/// A runner the machine lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingRunner {
    /// `pytest`, `jest`, `medin-no-such-test-runner` …
    pub runner: String,
    /// What it should have been installed for: `python3`, or `the sandbox's PATH`.
    pub toolchain: String,
}

impl MissingRunner {
    /// What to do about it.
    pub fn fix(&self) -> String {
        if self.toolchain == "python3" {
            format!(
                "run scripts/setup.sh (it installs pytest), or `python3 -m pip install {}`",
                self.runner
            )
        } else {
            "run scripts/setup.sh, or install it and list its toolchain in the task's `toolchains:`".to_string()
        }
    }
}

static NO_MODULE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^[^\n]*(?:No module named|ModuleNotFoundError: No module named) '?([A-Za-z_][A-Za-z0-9_]*)'?\s*$")
        .expect("a constant pattern")
});

static NOT_FOUND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^(?:[^:\n]*: )?(?:\d+: )?([A-Za-z0-9_.+-]+): (?:command )?not found\s*$")
        .expect("a constant pattern")
});

/// The runner `output` (stdout and stderr of a test command that exited with `exit_code`)
/// says is missing. Only the command's first words are believed: a module missing deep inside
/// a traceback of the code under test is the code's failure, so only a bare `No module named`
/// line that ends the output counts for Python.
pub fn missing_runner(output: &str, exit_code: i32) -> Option<MissingRunner> {
    if exit_code == 0 {
        return None;
    }
    let text = output.trim_end();
    if exit_code == 127 {
        if let Some(c) = NOT_FOUND.captures_iter(text).last() {
            return Some(MissingRunner {
                runner: c[1].to_string(),
                toolchain: "the sandbox's PATH".into(),
            });
        }
    }
    // `python3 -m pytest` without pytest: `/usr/bin/python3: No module named pytest`, and
    // nothing else (no traceback, which would mean the code under test imported it).
    let last = text.lines().last().unwrap_or_default();
    let c = NO_MODULE.captures(last)?;
    let runner = c[1].to_string();
    let runner_like = ["pytest", "nose2", "unittest", "coverage", "tox", "hypothesis"].contains(&runner.as_str())
        || (!text.contains("Traceback") && last.contains("python"));
    runner_like.then(|| MissingRunner {
        runner,
        toolchain: "python3".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_without_pytest_names_pytest_and_setup() {
        let m = missing_runner("\n/usr/bin/python3: No module named pytest\n", 1).unwrap();
        assert_eq!(m.runner, "pytest");
        assert_eq!(m.toolchain, "python3");
        assert!(m.fix().contains("scripts/setup.sh"), "{}", m.fix());
    }

    #[test]
    fn a_shell_that_cannot_find_the_runner_names_it() {
        let m = missing_runner("sh: 1: medin-no-such-test-runner: not found\n", 127).unwrap();
        assert_eq!(m.runner, "medin-no-such-test-runner");
        let m = missing_runner("bash: jest: command not found", 127).unwrap();
        assert_eq!(m.runner, "jest");
    }

    #[test]
    fn the_code_under_test_missing_a_module_is_not_a_missing_runner() {
        let traceback = "Traceback (most recent call last):\n  File \"calc.py\", line 1, in <module>\n    import numpyy\nModuleNotFoundError: No module named 'numpyy'";
        assert_eq!(missing_runner(traceback, 1), None);
        assert_eq!(missing_runner("/usr/bin/python3: No module named pytest", 0), None);
        assert_eq!(missing_runner("1 failed, 2 passed", 1), None);
    }
}

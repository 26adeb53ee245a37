//! "The harness broke", as a type: [`RunError`] is every way medin itself can fail to run a
//! trial — a sandbox that cannot start, a test runner that is not installed, a fixture it
//! cannot read, a log it cannot write, a broken task spec.
//!
//! It is kept apart from "the task failed" everywhere: a `RunError` crosses into the runner at
//! one place ([`crate::runner`]'s attempt boundary), where it ends the attempt as outcome
//! `error` with cause [`Cause::Infrastructure`] (or [`Cause::InvalidTask`] for a spec the
//! author must fix). It never becomes the agent's failure, never consumes a fix round, a TDD
//! iteration or a breaker signature, and is counted apart in the metrics and `summary.json`.
//! Every message says what failed and what to do.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Why a trial ended in `error` when nobody can blame the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The machine or medin could not run the trial (sandbox, runner, files, logs).
    Infrastructure,
    /// The task itself is broken (its spec, its fixture, its setup): the author must fix it.
    InvalidTask,
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Infrastructure => "infrastructure",
            Cause::InvalidTask => "invalid_task",
        }
    }
}

/// A harness failure: why medin could not run (the rest of) a trial.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The task file does not load; the message carries `file:line:col`.
    #[error("invalid task spec:\n{0}")]
    Spec(String),
    /// The task's fixture cannot be copied into a workspace.
    #[error("cannot prepare the workspace from the fixture: {0}; check the task's `workspace:` path")]
    Fixture(#[source] crate::sandbox::SandboxError),
    /// The isolation the task asks for cannot be had on this machine.
    #[error(transparent)]
    Isolation(crate::sandbox::SandboxError),
    /// A command could not be started by the sandbox at all (not: it ran and failed).
    #[error("the sandbox could not start {what}: {detail}; run `medin doctor` to see what this machine supports")]
    SandboxStart { what: String, detail: String },
    /// A test runner the task's commands need is not installed.
    #[error("{runner} is not installed for {toolchain} (the command `{command}` cannot run it): {fix}")]
    RunnerMissing {
        runner: String,
        toolchain: String,
        command: String,
        fix: String,
    },
    /// A command the task's author wrote (setup, test, build) was denied by the guard.
    #[error("the {} command `{command}` was denied: {message}; add a justified bypass to the task's policy if it is intended", origin.as_str())]
    Denied {
        origin: crate::guard::policy::Origin,
        command: String,
        message: String,
    },
    /// A `setup:` command of the task failed: the task cannot start as written.
    #[error("setup command `{command}` {detail}; fix the task's `setup:` or the fixture it needs")]
    Setup { command: String, detail: String },
    /// A file of the run folder cannot be written (receipts, transcript, metrics, loop state).
    #[error("cannot write {file}: {source}; check free space and permissions of the run folder")]
    Log {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A package the task declared in `environment:` could not be provided.
    #[error("{0}")]
    Environment(#[from] crate::runner::EnvironmentError),
    /// A host variable the task passes (`pass_env:`) is not there to pass.
    #[error("{0}")]
    Secret(#[from] crate::secrets::SecretError),
    /// The task's container could not be had: no engine (the trial is `pending`, see
    /// [`RunError::is_pending`]), an image missing or not built, a container that did not start.
    #[error("{0}")]
    Container(#[from] crate::sandbox::ContainerError),
    /// Another file operation of the harness failed.
    #[error("{what}: {detail}")]
    Harness { what: String, detail: String },
    /// The suite's PRD turned missing or invalid during the run: no task may start until it is
    /// fixed (the message carries `file:line:col`).
    #[error("the suite's PRD is invalid, so no task may start:\n{0}")]
    Prd(String),
    /// A bug in medin (a panic), caught so that it costs one trial, not the run.
    #[error("medin panicked while running this task ({0}); this is a medin bug, please report it with the spec")]
    Panic(String),
}

impl RunError {
    /// Whose problem this is.
    pub fn cause(&self) -> Cause {
        match self {
            RunError::Spec(_)
            | RunError::Prd(_)
            | RunError::Fixture(_)
            | RunError::Setup { .. }
            | RunError::Denied { .. } => Cause::InvalidTask,
            _ => Cause::Infrastructure,
        }
    }

    /// Whether the trial waits for something this machine lacks and a setup step gives (a
    /// container engine): its outcome is `pending`, not `error` — still counted apart from
    /// the agent, as infrastructure.
    pub fn is_pending(&self) -> bool {
        matches!(self, RunError::Container(e) if e.is_pending())
    }

    /// A failed harness step, with what it was and what went wrong.
    pub fn harness(what: impl Into<String>, detail: impl std::fmt::Display) -> Self {
        RunError::Harness {
            what: what.into(),
            detail: detail.to_string(),
        }
    }

    /// A run-folder file that could not be written.
    pub fn log(file: impl Into<PathBuf>, source: std::io::Error) -> Self {
        RunError::Log {
            file: file.into(),
            source,
        }
    }

    /// A command the sandbox could not start.
    pub fn sandbox_start(what: impl Into<String>, detail: impl std::fmt::Display) -> Self {
        RunError::SandboxStart {
            what: what.into(),
            detail: detail.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_runner_names_itself_and_the_fix() {
        let e = RunError::RunnerMissing {
            runner: "pytest".into(),
            toolchain: "python3".into(),
            command: "python3 -m pytest -q".into(),
            fix: "run scripts/setup.sh".into(),
        };
        let text = e.to_string();
        assert!(text.starts_with("pytest is not installed for python3"), "{text}");
        assert!(text.contains("run scripts/setup.sh"), "{text}");
        assert_eq!(e.cause(), Cause::Infrastructure);
    }

    #[test]
    fn a_broken_task_is_the_authors_not_the_machines() {
        assert_eq!(RunError::Spec("x.yaml:1:1: bad".into()).cause(), Cause::InvalidTask);
        let setup = RunError::Setup {
            command: "false".into(),
            detail: "exited with 1".into(),
        };
        assert_eq!(setup.cause(), Cause::InvalidTask);
        assert_eq!(
            RunError::sandbox_start("a gate", "no pid namespace").cause(),
            Cause::Infrastructure
        );
    }

    #[test]
    fn no_container_engine_is_pending_infrastructure_naming_the_fix() {
        let e = RunError::Container(crate::sandbox::ContainerError::NoEngine {
            reason: "no `podman` on PATH".into(),
        });
        assert!(e.is_pending());
        assert_eq!(e.cause(), Cause::Infrastructure);
        assert!(e.to_string().contains("bash scripts/setup.sh --containers"), "{e}");
        let missing = RunError::Container(crate::sandbox::ContainerError::ImageMissing {
            image: "localhost/nothing:1".into(),
            detail: "not there".into(),
        });
        assert!(!missing.is_pending());
        assert!(missing.to_string().contains("localhost/nothing:1"), "{missing}");
    }
}

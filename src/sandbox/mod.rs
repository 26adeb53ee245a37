//! Where actions run: a fresh workspace per task attempt, and every command as its own process
//! tree with cwd in the workspace, stdin closed, a scrubbed environment, its own session and
//! process group, rlimits, captured output with a cap, and a timeout that kills the whole tree
//! (SIGTERM, grace period, SIGKILL).
//!
//! The sandbox never decides policy: whatever reaches it has passed the guard.
//!
//! This first version isolates at the process level only: setsid, rlimits (address space, CPU,
//! file size, open files, no core dumps), a scrubbed environment, a private `TMPDIR`, and a
//! whole-tree kill. Processes that leave the group (`setsid cmd &`) are found by an environment
//! tag ([`MARKER_VAR`]) and killed as well. Namespaces, Landlock and seccomp are not
//! applied yet: a command can still read and write outside the workspace with absolute paths,
//! so confinement of file *tools* is done in [`crate::tools::path`].
//!
//! Files: `process.rs` (spawn, wait, kill), `capture.rs` (capped, hashed output),
//! `workspace.rs` (fresh workspace from a fixture).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How one command is confined.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The workspace root; commands run here (or below).
    pub workspace: PathBuf,
    /// Wall-clock limit per command.
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    pub limits: ResourceLimits,
    /// Bytes kept per stream; the rest is counted and hashed, not kept.
    pub output_cap: usize,
    /// Whether the command may use the network (enforced by later isolation levels).
    pub network: bool,
    /// Extra environment variables on top of the scrubbed base.
    pub env: Vec<(String, String)>,
}

impl SandboxConfig {
    /// Defaults: 30 s timeout, 2 s grace, 1 MiB output cap, default limits, no network.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        SandboxConfig {
            workspace: workspace.into(),
            timeout: Duration::from_secs(30),
            grace: Duration::from_secs(2),
            limits: ResourceLimits::default(),
            output_cap: 1024 * 1024,
            network: false,
            env: Vec::new(),
        }
    }
}

/// rlimits applied to each command (None = inherit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceLimits {
    /// Address space, bytes.
    pub memory: Option<u64>,
    /// CPU seconds.
    pub cpu_secs: Option<u64>,
    /// Largest file written, bytes.
    pub file_size: Option<u64>,
    /// Open files.
    pub open_files: Option<u64>,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        ResourceLimits {
            memory: Some(1024 * 1024 * 1024),
            cpu_secs: None,
            file_size: Some(256 * 1024 * 1024),
            open_files: Some(1024),
        }
    }
}

/// One captured output stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedOutput {
    /// The kept bytes, decoded lossily as UTF-8.
    pub text: String,
    /// Total bytes the command wrote to this stream.
    pub total_bytes: u64,
    /// True when `text` holds less than the command wrote.
    pub truncated: bool,
    /// `sha256:<hex>` of the full stream, so a truncated output can be matched later.
    pub sha256: String,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitKind {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

/// The result of one sandboxed command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandOutcome {
    pub exit: ExitKind,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub duration_ms: u64,
    /// The timeout fired and the tree was killed.
    pub timed_out: bool,
}

impl CommandOutcome {
    pub fn success(&self) -> bool {
        self.exit == ExitKind::Code(0) && !self.timed_out
    }
}

/// The sandbox itself failed (not the command).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot start `{command}` in {workspace}: {source}")]
    Spawn {
        command: String,
        workspace: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot prepare workspace {path}: {source}")]
    Workspace {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("working directory {0} is outside the workspace")]
    OutsideWorkspace(PathBuf),
}

mod capture;
mod process;
mod workspace;

pub use process::{PipedChild, MARKER_VAR};

/// The fixed `PATH` every sandboxed command sees.
pub const SANDBOX_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Runs `command` with `/bin/sh -c` in `cfg.workspace` (or `cwd`, a workspace-relative dir).
///
/// The command gets stdin from `/dev/null`, a scrubbed environment (`PATH`, `HOME` = the
/// workspace, a private `TMPDIR` removed afterwards, `LANG=C.UTF-8`, `TERM=dumb`,
/// `GIT_CEILING_DIRECTORIES` = the workspace's parent so git never finds a repository above
/// the workspace, plus `cfg.env`), its own session and process group, and the rlimits of `cfg.limits` (core dumps
/// off). When the timeout fires the whole group gets SIGTERM, then SIGKILL after `cfg.grace`;
/// when the shell exits, whatever it left running in its group is killed too.
///
/// A non-zero exit, a signal or a timeout is a normal [`CommandOutcome`]; `Err` means the
/// sandbox itself failed (the command could not be started, or `cwd` leads outside).
pub fn run_shell(cfg: &SandboxConfig, command: &str, cwd: Option<&Path>) -> Result<CommandOutcome, SandboxError> {
    process::run_shell(cfg, command, cwd)
}

/// Starts a long-running program (an agent) with `/bin/sh -c` in `cwd` (any directory), its own
/// session and process group, stdin/stdout/stderr piped, and the current environment plus
/// `cfg.env`. The returned [`PipedChild`] kills the whole tree when dropped.
pub fn spawn_piped(cfg: &SandboxConfig, command: &str, cwd: &Path) -> Result<PipedChild, SandboxError> {
    process::spawn_piped(cfg, command, cwd)
}

/// Whether a live (non-zombie) process is left in process group `pgid`.
pub fn group_alive(pgid: i32) -> bool {
    process::group_has_live_members(nix::unistd::Pid::from_raw(pgid))
}

/// Copies `fixture` (if any) into a fresh, empty `dest`.
///
/// `dest` is created (with its parents); it is an error if it already exists and is not empty.
/// Files keep their permission bits, directories are recreated, symlinks are copied as
/// symlinks (their targets are not followed). `None` leaves an empty directory.
pub fn prepare_workspace(fixture: Option<&Path>, dest: &Path) -> Result<(), SandboxError> {
    workspace::prepare(fixture, dest)
}

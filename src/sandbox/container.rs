//! Containers: a task that names `environment.image` or `environment.dockerfile` runs its
//! commands in a container of the machine's engine (podman preferred, docker accepted;
//! `MEDIN_CONTAINER_ENGINE` names another), one per attempt. What is the same as on the host,
//! and what is not:
//!
//! - **The same path.** Every command — the agent's, `setup:`, validators, TDD and PRP runs,
//!   the verifier — still goes guard → decision → [`crate::sandbox::run_shell`] → receipt; only
//!   the last step differs: `run_shell` `exec`s into the attempt's container
//!   ([`SandboxConfig::container`](crate::sandbox::SandboxConfig::container)) instead of
//!   starting a host process tree. The workspace is bind-mounted at the task's root (default
//!   `/app`), so the harness's file tools, hidden checks and `verify:` files, copied into the
//!   workspace on the host, are there inside; the runner's shim and report folders of judged
//!   runs are mounted at their host paths (shims read-only).
//! - **Limits.** The task's memory and process limits hold for the whole container (`--memory`,
//!   `--pids-limit`: the attempt, not each command); open files, file size and CPU time are
//!   rlimits of every process (`--ulimit`), as on the host. No capabilities
//!   (`--cap-drop=all`), `no-new-privileges`, no network unless the task's policy allows it.
//!   The command's timeout is the same; when it fires the command's process group is sent
//!   SIGTERM *inside* the container (each `exec` leads its own session), then SIGKILL after the
//!   grace, then its `exec` client is killed. Receipts say `isolation: container`; per-command
//!   CPU and memory usage is not measured.
//! - **Lifetime.** A command's background processes live until the attempt's container is
//!   removed (SIGTERM, grace, SIGKILL) at the end of the attempt — the DESIGN's per-attempt
//!   services — not only until the command ends, as on the host. The container is removed when
//!   its [`Container`] is dropped (a panic included); a harness killed outright leaves it
//!   running, labelled with its owner, and the next medin process that uses the engine removes
//!   it (`engine.rs`, through `sandbox::reclaim`'s owner tags).
//! - **Images** (`image.rs`): a named image is pulled by the harness when the engine lacks it;
//!   a Dockerfile is built by the harness before the agent starts, with no network unless the
//!   task's policy allows it, tagged by its build context's content so a context seen before is
//!   not built again. A missing image is an infrastructure error naming it. No engine at all
//!   makes the trial `pending`, naming [`ENGINE_FIX`].
//! - **This machine's quirks** (`engine.rs`): where the engine's default rlimits exceed what
//!   the harness may hand on (a VM without `CAP_SYS_RESOURCE`) or its runtime refuses hybrid
//!   cgroups, the first start fails, the fix (`--ulimit nproc=…`, `--runtime runc`) is learnt
//!   and the start retried; later starts of the process apply it at once. No configuration
//!   file is written.
//!
//! Known gaps: a process the agent leaves running can write into a later judged run's report
//! folder (it is mounted read-write for the whole attempt), as it can at `process` isolation;
//! a command that leaves its process group (`setsid`) survives its timeout until the attempt
//! ends; commands run as the image's user, so an image whose user is not root (or not the
//! harness's user, rootless) may not write the workspace.

mod engine;
mod image;
mod run;

pub use engine::{Engine, ENGINE_FIX, ENGINE_VAR};
pub use image::{image_name_is_valid, ready as ready_image, ImageSource, ReadyImage};
pub use run::{Container, ContainerRequest};

use std::path::PathBuf;

/// Why a task's container could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContainerError {
    /// No engine on this machine: the trial is `pending`, not failed.
    #[error("the task runs in a container and this machine has no container engine ({reason}); install one: {ENGINE_FIX}, or set MEDIN_CONTAINER_ENGINE to podman or docker")]
    NoEngine { reason: String },
    /// The engine lacks the image and could not get it.
    #[error("the container image `{image}` is not available: {detail}; pull or build it (`podman pull {image}`, or `bash scripts/setup.sh --containers` for medin's test images)")]
    ImageMissing { image: String, detail: String },
    /// The task's Dockerfile did not build.
    #[error("cannot build the container image from {}: {detail}", dockerfile.display())]
    Build { dockerfile: PathBuf, detail: String },
    /// The container did not start.
    #[error("cannot start a container of `{image}`: {detail}; run the image with the engine's own `run` to see why")]
    Start { image: String, detail: String },
}

impl ContainerError {
    /// Whether the trial waits for the machine (no engine) rather than having failed to run.
    pub fn is_pending(&self) -> bool {
        matches!(self, ContainerError::NoEngine { .. })
    }
}

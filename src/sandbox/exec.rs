//! `medin exec`: one command run exactly as a task would run it, with its receipt printed as
//! JSON and its status as the exit code. For users debugging a task, and for tests.

use std::path::PathBuf;
use std::time::Duration;

use super::{run_shell, CommandOutcome, ExitKind, Isolation, SandboxConfig};
use crate::spec::{ByteSize, DurationSpec};

/// Arguments of `medin exec` (the binary's command line reads them).
#[derive(Debug, Clone)]
pub struct ExecArgs {
    /// The workspace the command runs in (default: the current directory).
    pub workspace: Option<PathBuf>,
    /// none | process | strict (default: the strongest this machine supports, as for tasks;
    /// `medin doctor` names it).
    pub isolation: Option<Isolation>,
    /// Allow network access (strict mode otherwise gives the command no network).
    pub network: bool,
    /// Memory limit, e.g. 64MiB (default 1GiB of address space per process; setting it puts
    /// the command in a memory cgroup, where the limit holds for the whole tree).
    pub memory: Option<String>,
    /// CPU-time limit, e.g. 5s (default none).
    pub cpu: Option<String>,
    /// Wall-clock timeout, e.g. 10s (default 30s).
    pub timeout: Option<String>,
    /// Largest file the command may write, e.g. 1MiB (default 256MiB).
    pub file_size: Option<String>,
    /// Processes alive at once (default 1024; puts the command in its own cgroup, which is
    /// otherwise done only at `strict`).
    pub max_procs: Option<u64>,
    /// Put the command in its own cgroup (pids + memory) even at `process`.
    pub cgroup: bool,
    /// Bytes of output kept per stream (default 1MiB).
    pub output: Option<String>,
    /// The command and its arguments (after `--`).
    pub command: Vec<String>,
}

/// Quotes `arg` for `/bin/sh` (single quotes; plain words unchanged).
pub fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// The configuration `medin exec` runs with.
pub fn exec_config(a: &ExecArgs) -> Result<SandboxConfig, String> {
    let ws = match &a.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    let mut cfg = SandboxConfig::new(ws);
    cfg.isolation = a.isolation.unwrap_or_else(super::default_isolation);
    cfg.network = a.network;
    if let Some(m) = &a.memory {
        cfg.limits.memory = Some(ByteSize::parse(m).map_err(|e| format!("--memory: {e}"))?.0);
        cfg.cgroup = Some(true);
    }
    if let Some(c) = &a.cpu {
        let d = DurationSpec::parse(c).map_err(|e| format!("--cpu: {e}"))?.0;
        cfg.limits.cpu_secs = Some(d.as_secs().max(1));
    }
    if let Some(t) = &a.timeout {
        cfg.timeout = DurationSpec::parse(t).map_err(|e| format!("--timeout: {e}"))?.0;
    }
    if let Some(f) = &a.file_size {
        cfg.limits.file_size = Some(ByteSize::parse(f).map_err(|e| format!("--file-size: {e}"))?.0);
    }
    if let Some(o) = &a.output {
        cfg.output_cap =
            usize::try_from(ByteSize::parse(o).map_err(|e| format!("--output: {e}"))?.0).unwrap_or(usize::MAX);
    }
    if let Some(n) = a.max_procs {
        cfg.limits.processes = Some(n.max(1));
        cfg.cgroup = Some(true);
    }
    if a.cgroup {
        cfg.cgroup = Some(true);
    }
    if cfg.timeout.is_zero() {
        cfg.timeout = Duration::from_millis(1);
    }
    Ok(cfg)
}

/// The receipt JSON `medin exec` prints.
pub fn exec_receipt(command: &str, cfg: &SandboxConfig, o: &CommandOutcome) -> serde_json::Value {
    let (code, signal) = match o.exit {
        ExitKind::Code(c) => (Some(c), None),
        ExitKind::Signal(s) => (None, Some(s)),
    };
    serde_json::json!({
        "command": command,
        "workspace": cfg.workspace,
        "isolation": o.isolation,
        "network": cfg.network,
        "exit_code": code,
        "signal": signal,
        "limit": o.limit,
        "timed_out": o.timed_out,
        "duration_ms": o.duration_ms,
        "usage": o.usage,
        "stdout": o.stdout,
        "stderr": o.stderr,
        "truncated": o.stdout.truncated || o.stderr.truncated,
    })
}

/// `medin exec`: runs the command, prints the receipt, returns the exit status to use: the
/// command's code, 128 + signal, or 2 when the sandbox itself failed (message on stderr).
pub fn exec_main(a: &ExecArgs) -> u8 {
    let cfg = match exec_config(a) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("medin exec: {e}");
            return 2;
        }
    };
    let command: Vec<String> = a.command.iter().map(|w| shell_quote(w)).collect();
    // `exec` so the program replaces the shell and its own exit status or signal is reported.
    let command = format!("exec {}", command.join(" "));
    match run_shell(&cfg, &command, None) {
        Ok(o) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&exec_receipt(&command, &cfg, &o)).unwrap_or_default()
            );
            match o.exit {
                ExitKind::Code(c) => (c & 0xff) as u8,
                ExitKind::Signal(s) => (128 + s).clamp(0, 255) as u8,
            }
        }
        Err(e) => {
            eprintln!("medin exec: {e}");
            2
        }
    }
}

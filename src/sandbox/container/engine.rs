//! The container engine: which program (podman preferred, docker accepted,
//! `MEDIN_CONTAINER_ENGINE` overrides), probed once per process; how it is called with a time
//! limit; the start fixes this machine needs (found by the first start, kept for the process);
//! and the leftovers of dead medin processes, removed by label when the engine is first used.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::ContainerError;

/// The variable that names the engine (a program on `PATH` or a path).
pub const ENGINE_VAR: &str = "MEDIN_CONTAINER_ENGINE";

/// The label every container medin starts carries (value `1`).
pub(super) const LABEL: &str = "medin";

/// The command that gives a machine an engine, for messages.
pub const ENGINE_FIX: &str = "bash scripts/setup.sh --containers (or, as root: apt-get install -y podman runc)";

/// How long an engine call that is not a build, a pull or a command may take.
pub(super) const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Which command-line dialect the engine speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    Podman,
    /// The docker CLI (against dockerd, or against podman's docker-compatible socket).
    Docker,
}

impl Flavour {
    pub fn as_str(self) -> &'static str {
        match self {
            Flavour::Podman => "podman",
            Flavour::Docker => "docker",
        }
    }
}

/// What this machine's engine needs at `run` that the defaults do not give, found by the first
/// start that failed without it (see the README's container section for the machine this was
/// measured on: a VM that withholds `CAP_SYS_RESOURCE`, cgroups in hybrid mode).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct StartFixes {
    /// `--ulimit nproc=N:N`: the engine's default process limit is above what it may set.
    pub nproc: Option<u64>,
    /// `--runtime runc`: the default runtime (crun) refuses cgroups in hybrid mode.
    pub runc: bool,
}

/// A usable engine.
#[derive(Debug)]
pub struct Engine {
    program: PathBuf,
    flavour: Flavour,
    /// `podman version 4.3.1`, `Docker version 28.2.2, …`.
    version: String,
    fixes: Mutex<StartFixes>,
}

impl Engine {
    /// The engine of this process, probed once (then leftovers of dead medin processes are
    /// removed): the program [`ENGINE_VAR`] names, else podman, else docker.
    pub fn get() -> Result<&'static Engine, ContainerError> {
        static ENGINE: OnceLock<Result<Engine, ContainerError>> = OnceLock::new();
        ENGINE
            .get_or_init(|| {
                let engine = Engine::probe(std::env::var(ENGINE_VAR).ok().as_deref())?;
                engine.remove_dead_leftovers();
                Ok(engine)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Probes for an engine without caching: `setting` is what [`ENGINE_VAR`] says (empty or
    /// `None`: podman, then docker, from `PATH`). An engine must answer `version` (docker: its
    /// daemon must be reachable).
    pub fn probe(setting: Option<&str>) -> Result<Engine, ContainerError> {
        let named = setting.map(str::trim).filter(|s| !s.is_empty());
        let candidates: Vec<String> = match named {
            Some(name) => vec![name.to_string()],
            None => vec!["podman".into(), "docker".into()],
        };
        let mut reasons = Vec::new();
        for candidate in &candidates {
            match Engine::try_program(candidate) {
                Ok(engine) => return Ok(engine),
                Err(reason) => reasons.push(reason),
            }
        }
        let reason = match named {
            Some(name) => format!("{ENGINE_VAR}={name}: {}", reasons.join("; ")),
            None => reasons.join("; "),
        };
        Err(ContainerError::NoEngine { reason })
    }

    fn try_program(candidate: &str) -> Result<Engine, String> {
        let program = resolve(candidate).ok_or_else(|| {
            if candidate.contains('/') {
                format!("`{candidate}` is not an executable file")
            } else {
                format!("no `{candidate}` on PATH")
            }
        })?;
        let said = call(&program, ["--version"], CALL_TIMEOUT).map_err(|e| format!("`{candidate} --version` {e}"))?;
        let version = String::from_utf8_lossy(&said.stdout).trim().to_string();
        let flavour = if version.to_ascii_lowercase().starts_with("podman") {
            Flavour::Podman
        } else if version.to_ascii_lowercase().starts_with("docker") {
            Flavour::Docker
        } else {
            return Err(format!(
                "`{candidate} --version` printed `{}`, which is neither podman nor docker",
                first_line(&version)
            ));
        };
        // docker needs its daemon; podman answers `version` on its own.
        let server = call(&program, ["version"], CALL_TIMEOUT).map_err(|e| format!("`{candidate} version` {e}"))?;
        if !server.status.success() {
            return Err(format!(
                "`{candidate} version` failed ({}): {}",
                server.status,
                tail(&server.stderr, 3)
            ));
        }
        Ok(Engine {
            program,
            flavour,
            version,
            fixes: Mutex::new(StartFixes::default()),
        })
    }

    pub fn program(&self) -> &Path {
        &self.program
    }

    pub fn flavour(&self) -> Flavour {
        self.flavour
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    /// The engine, for `args`, with stdin closed and output captured.
    pub(super) fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = Command::new(&self.program);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs the engine with `args`, at most `limit`.
    pub(super) fn call<I, S>(&self, args: I, limit: Duration) -> Result<Output, String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        call(&self.program, args, limit)
    }

    pub(super) fn fixes(&self) -> StartFixes {
        *self.fixes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Learns from a failed `run` what this machine needs; `true` when there is something new
    /// to try.
    pub(super) fn learn_from(&self, stderr: &str) -> bool {
        let mut fixes = self.fixes.lock().unwrap_or_else(|p| p.into_inner());
        let before = *fixes;
        let text = stderr.to_ascii_lowercase();
        // crun: `setrlimit RLIMIT_NPROC`; runc: `error setting rlimit type 6`.
        let nproc = text.contains("rlimit_nproc") || text.contains("rlimit type 6");
        if nproc && fixes.nproc.is_none() {
            // The engine's own limit: podman lowers its process limit to 32768 and cannot hand a
            // container more without CAP_SYS_RESOURCE.
            #[cfg(any(target_os = "linux", target_os = "freebsd"))]
            let own = own_hard_limit(nix::sys::resource::Resource::RLIMIT_NPROC);
            #[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
            let own = 32768;
            fixes.nproc = Some(own.min(32768));
        }
        if text.contains("hybrid mode") && self.flavour == Flavour::Podman && resolve("runc").is_some() {
            fixes.runc = true;
        }
        *fixes != before
    }

    /// Removes containers whose medin process is dead (their names carry its owner tag, see
    /// `sandbox::reclaim`): what a harness killed mid-attempt left running. Best effort.
    fn remove_dead_leftovers(&self) {
        let listed = self.call(
            [
                "ps",
                "-a",
                "--filter",
                &format!("label={LABEL}"),
                "--format",
                "{{.Names}}",
            ],
            CALL_TIMEOUT,
        );
        let Ok(listed) = listed else { return };
        let dead: Vec<String> = String::from_utf8_lossy(&listed.stdout)
            .split_whitespace()
            .filter(|name| crate::sandbox::reclaim::owner_of_name_is_dead(name))
            .map(str::to_string)
            .collect();
        if !dead.is_empty() {
            let mut args = vec!["rm".to_string(), "-f".to_string()];
            args.extend(dead);
            let _ = self.call(args, CALL_TIMEOUT);
        }
    }
}

/// `name` as an executable: a path when it has a slash, else the first on `PATH`.
fn resolve(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if name.contains('/') {
        let p = PathBuf::from(name);
        return executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| executable(p))
}

/// The hard limit this process has for `resource` (`u64::MAX` when unlimited or unknown).
#[allow(clippy::useless_conversion)] // rlim_t is u64 on Linux, i64 on FreeBSD
pub(super) fn own_hard_limit(resource: nix::sys::resource::Resource) -> u64 {
    nix::sys::resource::getrlimit(resource).map_or(u64::MAX, |(_, hard)| u64::try_from(hard).unwrap_or(u64::MAX))
}

/// Runs `program` with `args`, stdin closed, output captured, killed after `limit`.
pub(super) fn call<I, S>(program: &Path, args: I, limit: Duration) -> Result<Output, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start: {e}"))?;
    let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
    let readers = [
        std::thread::spawn(move || drain(out.as_mut())),
        std::thread::spawn(move || drain(err.as_mut())),
    ];
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < limit => std::thread::sleep(poll_interval(started)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("did not finish within {}s", limit.as_secs()));
            }
            Err(e) => return Err(format!("could not be waited for: {e}")),
        }
    };
    let [stdout, stderr] = readers.map(|r| r.join().unwrap_or_default());
    Ok(Output { status, stdout, stderr })
}

/// How long to sleep between checks on a child that started at `started`: short at first
/// (most engine calls end within a few hundred milliseconds), longer for long ones.
pub(super) fn poll_interval(started: Instant) -> Duration {
    (started.elapsed() / 20).clamp(Duration::from_millis(1), Duration::from_millis(50))
}

fn drain(stream: Option<&mut impl Read>) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(s) = stream {
        let _ = s.read_to_end(&mut buf);
    }
    buf
}

/// The last `lines` non-empty lines of `bytes`, joined with ` | `.
pub(super) fn tail(bytes: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut kept: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .rev()
        .take(lines)
        .collect();
    kept.reverse();
    kept.join(" | ")
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_engine_that_is_missing_says_so_and_names_the_variable() {
        let e = Engine::probe(Some("/nonexistent/podman")).unwrap_err().to_string();
        assert!(e.contains("MEDIN_CONTAINER_ENGINE=/nonexistent/podman"), "{e}");
        assert!(e.contains("is not an executable file"), "{e}");
        assert!(e.contains("scripts/setup.sh --containers"), "{e}");
    }

    #[test]
    fn a_program_that_is_no_engine_is_refused() {
        let e = Engine::probe(Some("true")).unwrap_err().to_string();
        assert!(e.contains("neither podman nor docker"), "{e}");
    }

    #[test]
    fn a_failed_start_teaches_the_fix_once() {
        let engine = Engine {
            program: PathBuf::from("/bin/false"),
            flavour: Flavour::Podman,
            version: "podman version 0".into(),
            fixes: Mutex::new(StartFixes::default()),
        };
        let runc = "Error: runc: runc create failed: unable to start container process: error during container init: error setting rlimits for ready process: error setting rlimit type 6: operation not permitted";
        assert!(engine.learn_from(runc));
        assert!(engine.fixes().nproc.is_some_and(|n| n <= 32768));
        assert!(!engine.learn_from(runc), "nothing new to try the second time");
        assert!(!engine.learn_from("Error: image not known"));
    }

    #[test]
    fn tails_keep_the_last_lines() {
        assert_eq!(tail(b"a\n\nb\nc\n", 2), "b | c");
    }
}

//! The `docker` validator: a container's state as the installed container engine reports it
//! (`<engine> container inspect --format '{{json .State}}' -- NAME`).
//!
//! The engine is `MEDIN_CONTAINER_ENGINE` when set (a name on PATH or a path), else the first
//! of `podman` and `docker` on PATH. medin starts the engine's CLI itself, with fixed arguments
//! and no shell (the container name is checked against the engines' own name rule first): it is
//! an observation of the host, like a TCP connect, not a workspace command.
//!
//! - the container's state matches (`running`, and `healthy` when asked) → passed;
//! - it exists but is stopped (or running when `running: false`), unhealthy or without a health
//!   check when `healthy: true`, or it does not exist → failed;
//! - no engine installed, the daemon unreachable, the engine's answer unreadable, or no answer
//!   within the timeout → pending, with the reason: nothing was observed.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{first_chars, human, Observation};
use crate::spec::DockerCheck;

/// The environment variable that names the container engine's CLI.
pub const ENGINE_VAR: &str = "MEDIN_CONTAINER_ENGINE";
/// The engines looked for on PATH, in order.
pub const ENGINES: &[&str] = &["podman", "docker"];
/// Confidence of a state the engine reported: medin reads the engine's answer.
const CONFIDENCE: u8 = 95;
/// Bytes of the engine's stdout and stderr kept.
const OUTPUT_CAP: u64 = 256 * 1024;

/// The container engine's CLI to ask, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Engine {
    Cli(PathBuf),
    /// No engine: why, and what to do (the check is pending).
    Missing(String),
}

impl Engine {
    /// `MEDIN_CONTAINER_ENGINE`, else `podman`, else `docker` on PATH.
    pub fn from_env() -> Engine {
        let path = std::env::var_os("PATH").unwrap_or_default();
        match std::env::var(ENGINE_VAR) {
            Ok(named) if !named.trim().is_empty() => Engine::named(named.trim(), &path),
            _ => ENGINES
                .iter()
                .find_map(|name| find_on_path(name, &path))
                .map(Engine::Cli)
                .unwrap_or_else(|| {
                    Engine::Missing(
                        "no container engine: neither podman nor docker is on PATH; install one, or name it in MEDIN_CONTAINER_ENGINE".into(),
                    )
                }),
        }
    }

    /// The engine `named` (a path, or a name looked up on `path`).
    pub fn named(named: &str, path: &std::ffi::OsStr) -> Engine {
        let found = if named.contains('/') {
            Some(PathBuf::from(named)).filter(|p| p.is_file())
        } else {
            find_on_path(named, path)
        };
        found.map(Engine::Cli).unwrap_or_else(|| {
            Engine::Missing(format!(
                "the container engine `{named}` ({ENGINE_VAR}) is not installed or not on PATH; install it or fix {ENGINE_VAR}"
            ))
        })
    }
}

fn find_on_path(name: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Whether `name` is a container name or id as the engines accept it
/// (`[a-zA-Z0-9][a-zA-Z0-9_.-]*`): never an option, never a path.
pub fn valid_container_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && name.len() <= 255
}

/// Checks the container of `check` with `engine`, waiting at most `timeout` for its answer.
pub(crate) fn check(engine: &Engine, check: &DockerCheck, timeout: Duration) -> Observation {
    let name = &check.container;
    if !valid_container_name(name) {
        return Observation::failed(
            format!("`{}` is not a container name", crate::inert::line(&first_chars(name, 80))),
            100,
            "a container name is letters, digits, `_`, `.` and `-`, starting with a letter or digit; fix `container:` in the task",
            "a container name",
            crate::inert::line(&first_chars(name, 80)).into_owned(),
        );
    }
    let cli = match engine {
        Engine::Cli(cli) => cli,
        Engine::Missing(why) => {
            return Observation::pending(format!("container {name} was not looked at"), why.clone())
        }
    };
    let shown = cli
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let answer = match inspect(cli, name, timeout) {
        Ok(a) => a,
        Err(why) => return Observation::pending(format!("`{shown} container inspect {name}` did not answer"), why),
    };
    if !answer.success {
        let said = last_line(&answer.stderr);
        if said.to_ascii_lowercase().contains("no such") {
            return Observation::failed(
                format!("container {name} does not exist ({shown}: {said})"),
                CONFIDENCE,
                format!("no container named {name}"),
                expected(check),
                "no such container",
            );
        }
        return Observation::pending(
            format!("`{shown} container inspect {name}` failed: {said}"),
            format!("the container engine could not be asked (is its daemon or service running?): {said}"),
        );
    }
    match serde_json::from_str::<Value>(answer.stdout.trim()) {
        Ok(state @ Value::Object(_)) => judge(check, &shown, &state),
        _ => Observation::pending(
            format!("`{shown}` answered something other than a container state"),
            format!(
                "cannot read the engine's answer as a JSON state: {}",
                crate::inert::line(&first_chars(answer.stdout.trim(), 200))
            ),
        ),
    }
}

fn expected(check: &DockerCheck) -> String {
    match (check.running, check.healthy) {
        (true, true) => "running and healthy".into(),
        (true, false) => "running".into(),
        (false, _) => "stopped".into(),
    }
}

/// The verdict on a container's `.State` object.
fn judge(check: &DockerCheck, shown: &str, state: &Value) -> Observation {
    let name = &check.container;
    let status = state.get("Status").and_then(Value::as_str).unwrap_or("unknown");
    let running = state
        .get("Running")
        .and_then(Value::as_bool)
        .unwrap_or(status == "running");
    // Docker and newer podman say `Health`, podman 4 before 4.4 `Healthcheck`.
    let health = ["Health", "Healthcheck"]
        .iter()
        .find_map(|k| state.get(*k))
        .and_then(|h| h.get("Status"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let health_word = health.unwrap_or("no health check");
    let seen = crate::inert::line(&format!("{status}, health: {health_word}")).into_owned();
    let evidence = format!("container {name} is {seen} ({shown})");
    let fail = |error: String| Observation::failed(evidence.clone(), CONFIDENCE, error, expected(check), seen.clone());
    if running != check.running {
        return fail(if check.running {
            format!("container {name} is not running (status {status})")
        } else {
            format!("container {name} is running, but `running: false` wants it stopped")
        });
    }
    if check.running && check.healthy && health != Some("healthy") {
        return fail(match health {
            None => format!("container {name} has no health check, but `healthy: true` asks for one; add a HEALTHCHECK or drop `healthy`"),
            Some(h) => format!("container {name} is {h}, not healthy"),
        });
    }
    Observation::passed(evidence, CONFIDENCE)
}

/// What the engine's CLI said.
struct Answer {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Runs `<cli> container inspect --format '{{json .State}}' -- <name>` with a deadline.
fn inspect(cli: &Path, name: &str, timeout: Duration) -> Result<Answer, String> {
    let mut child = Command::new(cli)
        .args(["container", "inspect", "--format", "{{json .State}}", "--", name])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the container engine {}: {e}", cli.display()))?;
    let drain = |stream: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(s) = stream {
                let _ = s.take(OUTPUT_CAP).read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let out = drain(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "timed out after {}: the container engine did not answer",
                    human(timeout)
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("cannot wait for the container engine: {e}")),
        }
    };
    Ok(Answer {
        success: status.success(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// The last non-empty line of `text`, inert and short.
fn last_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("(no message)");
    crate::inert::line(&first_chars(line, 300)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::ValidationStatus;
    use std::os::unix::fs::PermissionsExt;

    fn spec(container: &str, running: bool, healthy: bool) -> DockerCheck {
        DockerCheck {
            container: container.into(),
            running,
            healthy,
        }
    }

    /// An engine CLI that prints `stdout` and `stderr` and exits `code`.
    fn fake_engine(dir: &Path, stdout: &str, stderr: &str, code: i32) -> Engine {
        // A new file each time: rewriting a script another thread may be starting is ETXTBSY.
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!("engine-{n}"));
        let script = format!(
            "#!/bin/sh\nprintf '%s' '{}'\nprintf '%s\\n' '{}' >&2\nexit {code}\n",
            stdout.replace('\'', "'\\''"),
            stderr.replace('\'', "'\\''")
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        Engine::Cli(path)
    }

    const T: Duration = Duration::from_secs(5);

    #[test]
    fn states_are_judged_as_asked() {
        let dir = tempfile::tempdir().unwrap();
        let healthy = r#"{"Status":"running","Running":true,"Health":{"Status":"healthy"}}"#;
        let e = fake_engine(dir.path(), healthy, "", 0);
        let o = check(&e, &spec("web", true, true), T);
        assert_eq!(o.status, ValidationStatus::Passed, "{o:?}");
        assert!(o.evidence.contains("running, health: healthy"), "{}", o.evidence);
        assert_eq!(
            check(&e, &spec("web", false, false), T).status,
            ValidationStatus::Failed
        );

        let starting = r#"{"Status":"running","Running":true,"Healthcheck":{"Status":"starting"}}"#;
        let e = fake_engine(dir.path(), starting, "", 0);
        assert_eq!(check(&e, &spec("web", true, false), T).status, ValidationStatus::Passed);
        let o = check(&e, &spec("web", true, true), T);
        assert_eq!(o.status, ValidationStatus::Failed);
        assert!(o.error.unwrap().contains("is starting, not healthy"));

        let exited = r#"{"Status":"exited","Running":false,"ExitCode":1}"#;
        let e = fake_engine(dir.path(), exited, "", 0);
        let o = check(&e, &spec("web", true, false), T);
        assert_eq!(o.status, ValidationStatus::Failed);
        assert!(o.error.unwrap().contains("not running (status exited)"));
        assert_eq!(
            check(&e, &spec("web", false, false), T).status,
            ValidationStatus::Passed
        );

        let no_health = r#"{"Status":"running","Running":true}"#;
        let e = fake_engine(dir.path(), no_health, "", 0);
        let o = check(&e, &spec("web", true, true), T);
        assert!(o.error.unwrap().contains("has no health check"));
    }

    #[test]
    fn a_missing_container_fails_and_a_missing_engine_or_daemon_is_pending() {
        let dir = tempfile::tempdir().unwrap();
        let e = fake_engine(dir.path(), "", "Error: no such container web", 125);
        let o = check(&e, &spec("web", true, false), T);
        assert_eq!(o.status, ValidationStatus::Failed, "{o:?}");
        assert!(o.error.unwrap().contains("no container named web"));

        let daemon =
            "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?";
        let e = fake_engine(dir.path(), "", daemon, 1);
        let o = check(&e, &spec("web", true, false), T);
        assert_eq!(o.status, ValidationStatus::Pending, "{o:?}");
        assert!(o.error.unwrap().contains("Cannot connect to the Docker daemon"));

        let missing = Engine::named("no-such-engine-medin", std::ffi::OsStr::new("/nonexistent"));
        let o = check(&missing, &spec("web", true, false), T);
        assert_eq!(o.status, ValidationStatus::Pending);
        assert!(o.error.unwrap().contains(ENGINE_VAR));

        let garbage = fake_engine(dir.path(), "\u{1b}[2Jnot json", "", 0);
        let o = check(&garbage, &spec("web", true, false), T);
        assert_eq!(o.status, ValidationStatus::Pending);
        assert!(crate::inert::is_inert(o.error.as_deref().unwrap()));
    }

    #[test]
    fn a_hung_engine_is_pending_after_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("engine");
        std::fs::write(&path, "#!/bin/sh\nexec sleep 30\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let started = Instant::now();
        let o = check(
            &Engine::Cli(path),
            &spec("web", true, false),
            Duration::from_millis(300),
        );
        assert_eq!(o.status, ValidationStatus::Pending);
        assert!(o.error.unwrap().contains("timed out"));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn names_that_could_be_options_or_paths_are_refused_before_any_engine_runs() {
        for bad in ["-v", "--help", "", "a/b", "a b", "$(x)", "../x"] {
            assert!(!valid_container_name(bad), "{bad}");
            let o = check(&Engine::Missing("unused".into()), &spec(bad, true, false), T);
            assert_eq!(o.status, ValidationStatus::Failed, "{bad}");
        }
        for good in ["web", "medin_db-1", "3f2a9c", "a.b"] {
            assert!(valid_container_name(good), "{good}");
        }
    }
}

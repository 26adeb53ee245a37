//! The `docker` validator against a real container engine (podman here; `MEDIN_CONTAINER_ENGINE`
//! picks another). Skipped, with a message saying why, where no engine is installed or it
//! cannot start a container; the engine-less and daemon-less paths are unit tests of
//! `validate::docker`.

use std::path::{Path, PathBuf};
use std::process::Command;

use medin::internal::spec::{DockerCheck, ValidatorSpec};
use medin::internal::validate::{run_all, ValidateContext, ValidationResult, ValidationStatus};

/// An image made here from the host's static busybox, so the test needs no registry.
const IMAGE: &str = "localhost/medin-validate-busybox:1";

fn engine() -> Option<PathBuf> {
    let named = std::env::var("MEDIN_CONTAINER_ENGINE")
        .ok()
        .filter(|e| !e.trim().is_empty());
    let candidates: Vec<String> = match named {
        Some(e) => vec![e],
        None => vec!["podman".into(), "docker".into()],
    };
    let path = std::env::var_os("PATH").unwrap_or_default();
    candidates.iter().find_map(|name| {
        if name.contains('/') {
            Some(PathBuf::from(name)).filter(|p| p.is_file())
        } else {
            std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
        }
    })
}

fn run(engine: &Path, args: &[&str]) -> Result<String, String> {
    let o = Command::new(engine)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", engine.display()))?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
    } else {
        Err(format!(
            "`{} {}` failed: {}",
            engine.display(),
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

/// The test image, imported from a two-file root (busybox and `sh`) when missing.
fn ensure_image(engine: &Path) -> Result<(), String> {
    if run(engine, &["image", "inspect", IMAGE]).is_ok() {
        return Ok(());
    }
    let busybox = ["/bin/busybox", "/usr/bin/busybox"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .ok_or("no static busybox on the host to build the test image from")?;
    let root = tempfile::tempdir().map_err(|e| e.to_string())?;
    let bin = root.path().join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| e.to_string())?;
    std::fs::copy(busybox, bin.join("busybox")).map_err(|e| e.to_string())?;
    for applet in ["sh", "sleep", "true"] {
        std::os::unix::fs::symlink("busybox", bin.join(applet)).map_err(|e| e.to_string())?;
    }
    let tar = root.path().join("root.tar");
    let made = Command::new("tar")
        .arg("-C")
        .arg(root.path())
        .arg("-cf")
        .arg(&tar)
        .arg("bin")
        .status()
        .map_err(|e| e.to_string())?;
    if !made.success() {
        return Err("tar could not pack the test image".into());
    }
    run(engine, &["import", &tar.to_string_lossy(), IMAGE]).map(|_| ())
}

/// A running container with a health check run by hand (`healthcheck run`); removed on drop.
struct Container {
    engine: PathBuf,
    name: String,
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = run(&self.engine, &["rm", "-f", "-t", "0", &self.name]);
    }
}

fn start(engine: &Path) -> Result<Container, String> {
    ensure_image(engine)?;
    let name = format!("medin-validate-{}", std::process::id());
    let container = Container {
        engine: engine.to_path_buf(),
        name: name.clone(),
    };
    // The flags this machine's engine needs (see the project's podman notes): runc, and
    // rlimits within what the VM grants.
    run(
        engine,
        &[
            "run",
            "-d",
            "--name",
            &name,
            "--runtime",
            "runc",
            "--ulimit",
            "nofile=20000:20000",
            "--ulimit",
            "nproc=32768:32768",
            "--network",
            "none",
            "--health-cmd",
            "true",
            "--health-interval",
            "disable",
            IMAGE,
            "sleep",
            "300",
        ],
    )?;
    Ok(container)
}

fn docker(container: &str, running: bool, healthy: bool) -> ValidationResult {
    let spec = ValidatorSpec::Docker(DockerCheck {
        container: container.into(),
        running,
        healthy,
    });
    let dir = tempfile::tempdir().unwrap();
    run_all(&[spec.into()], &ValidateContext::new(dir.path())).remove(0)
}

#[test]
fn a_real_container_is_judged_running_healthy_and_stopped() {
    let Some(engine) = engine() else {
        eprintln!("skipped: no container engine (podman or docker) on PATH; install podman to run this test");
        return;
    };
    let c = match start(&engine) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("skipped: the container engine cannot start the test container here: {why}");
            return;
        }
    };
    let r = docker(&c.name, true, false);
    assert_eq!(r.status, ValidationStatus::Passed, "{r:#?}");
    assert_eq!(r.check, format!("docker {}", c.name));
    assert!(r.evidence.contains("running"), "{}", r.evidence);

    // The health check has not run yet: starting, not healthy.
    let r = docker(&c.name, true, true);
    assert_eq!(r.status, ValidationStatus::Failed, "{r:#?}");
    run(&engine, &["healthcheck", "run", &c.name]).unwrap();
    let r = docker(&c.name, true, true);
    assert_eq!(r.status, ValidationStatus::Passed, "{r:#?}");
    assert!(r.evidence.contains("healthy"), "{}", r.evidence);

    let r = docker("medin-no-such-container-here", true, false);
    assert_eq!(r.status, ValidationStatus::Failed, "{r:#?}");
    assert!(r.error.unwrap().contains("no container named"));

    run(&engine, &["stop", "-t", "0", &c.name]).unwrap();
    let r = docker(&c.name, true, false);
    assert_eq!(r.status, ValidationStatus::Failed, "{r:#?}");
    assert!(r.error.unwrap().contains("not running"));
    assert_eq!(docker(&c.name, false, false).status, ValidationStatus::Passed);
}

//! Installing a CLI agent at its pinned version, once, into medin's cache.
//!
//! Each adapter names one [`Pin`]: the registry package, its exact version and the program it
//! puts on disk. [`install`] builds `<cache>/<name>@<version>/` the way a task's packages are
//! built (`runner::environment`): in place under an exclusive lock, counted only once a
//! completion mark is written, a half-built entry removed and built again — so parallel trials
//! and processes wait for the first install and a crash never leaves a broken CLI behind.
//! npm packages are installed with `npm install --prefix`, pip packages into a venv made from
//! the host's `python3`. The cache is `$MEDIN_AGENTS_DIR`, else `<target>/medin/agents` (the
//! cargo target directory: `CARGO_TARGET_DIR`, else `target/` of the current directory).
//!
//! Installing is the harness's act, before the agent starts and outside its sandbox, with the
//! network the host has. A failure is infrastructure ([`InstallError`]): it names the command
//! that fixes it and is never blamed on the agent.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::runner::environment::{self, EnvironmentError};

/// Where a CLI comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ecosystem {
    Npm,
    Pip,
}

/// A CLI agent at a pinned version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pin {
    /// medin's name for it (`claude-code`).
    pub name: &'static str,
    pub ecosystem: Ecosystem,
    /// The registry package (`@anthropic-ai/claude-code`, `aider-chat`).
    pub package: &'static str,
    pub version: &'static str,
    /// The program it installs (`claude`).
    pub program: &'static str,
}

impl Pin {
    /// `package@version` (npm) or `package==version` (pip).
    pub fn requirement(&self) -> String {
        match self.ecosystem {
            Ecosystem::Npm => format!("{}@{}", self.package, self.version),
            Ecosystem::Pip => format!("{}=={}", self.package, self.version),
        }
    }

    /// The cache entry of this pin.
    pub fn entry(&self, cache: &Path) -> PathBuf {
        cache.join(format!("{}@{}", self.name, self.version))
    }

    /// The program inside an entry.
    pub fn program_in(&self, entry: &Path) -> PathBuf {
        match self.ecosystem {
            Ecosystem::Npm => entry.join("node_modules/.bin").join(self.program),
            Ecosystem::Pip => entry.join("bin").join(self.program),
        }
    }

    /// The command that installs it by hand, for messages.
    pub fn install_command(&self) -> String {
        format!("medin agents install {}", self.name)
    }
}

/// An installed CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub pin: Pin,
    /// The cache entry (read-only for the agent's sandbox).
    pub entry: PathBuf,
    /// The program to run.
    pub program: PathBuf,
}

/// Why a CLI could not be installed. Every message names what fixes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstallError {
    #[error("{name} is installed with {tool}, which is not on this machine's PATH; install it (`apt-get install -y {package}`) or run `bash scripts/setup.sh`")]
    MissingTool {
        name: &'static str,
        tool: &'static str,
        package: &'static str,
    },
    #[error("installing {name} ({requirement}) failed: {detail}; retry with `{command}` (the package registry must be reachable)")]
    Failed {
        name: &'static str,
        requirement: String,
        detail: String,
        command: String,
    },
    #[error("{name} was installed into {} but its program {} is missing; remove the folder and run `{command}`", entry.display(), program.display())]
    NoProgram {
        name: &'static str,
        entry: PathBuf,
        program: PathBuf,
        command: String,
    },
}

/// The CLI cache: `$MEDIN_AGENTS_DIR`, else `<cargo target dir>/medin/agents`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MEDIN_AGENTS_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target"));
    let target = if target.is_relative() {
        std::env::current_dir().map(|d| d.join(&target)).unwrap_or(target)
    } else {
        target
    };
    target.join("medin").join("agents")
}

/// The installed CLI of `pin` in `cache`, if it is there and complete (nothing is installed).
pub fn find(pin: &Pin, cache: &Path) -> Option<Installed> {
    let entry = pin.entry(cache);
    let program = pin.program_in(&entry);
    (entry.join(environment::COMPLETE).is_file() && program.is_file()).then_some(Installed {
        pin: *pin,
        entry,
        program,
    })
}

/// Installs `pin` into `cache` unless it is there (idempotent; safe to call from parallel
/// trials and processes).
pub fn install(pin: &Pin, cache: &Path) -> Result<Installed, InstallError> {
    if let Some(found) = find(pin, cache) {
        return Ok(found);
    }
    let entry = pin.entry(cache);
    let failed = |e: EnvironmentError| InstallError::Failed {
        name: pin.name,
        requirement: pin.requirement(),
        detail: e.to_string(),
        command: pin.install_command(),
    };
    let requirement = vec![pin.requirement()];
    match pin.ecosystem {
        Ecosystem::Npm => {
            let npm = environment::which("npm").ok_or(InstallError::MissingTool {
                name: pin.name,
                tool: "npm",
                package: "npm",
            })?;
            environment::build_once(&entry, |dir| {
                environment::run(
                    "npm",
                    &requirement,
                    Command::new(&npm)
                        .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"])
                        .arg(dir)
                        .arg(pin.requirement()),
                )
            })
            .map_err(failed)?;
        }
        Ecosystem::Pip => {
            let python = environment::host_python().ok_or(InstallError::MissingTool {
                name: pin.name,
                tool: "python3",
                package: "python3 python3-venv",
            })?;
            environment::build_once(&entry, |dir| {
                environment::run(
                    "Python",
                    &requirement,
                    Command::new(&python).args(["-m", "venv"]).arg(dir),
                )?;
                environment::run(
                    "Python",
                    &requirement,
                    Command::new(dir.join("bin/python"))
                        .args([
                            "-m",
                            "pip",
                            "install",
                            "--quiet",
                            "--disable-pip-version-check",
                            "--no-input",
                        ])
                        .arg(pin.requirement()),
                )
            })
            .map_err(failed)?;
        }
    }
    find(pin, cache).ok_or_else(|| InstallError::NoProgram {
        name: pin.name,
        program: pin.program_in(&entry),
        entry,
        command: pin.install_command(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NPM: Pin = Pin {
        name: "x",
        ecosystem: Ecosystem::Npm,
        package: "@scope/x",
        version: "1.2.3",
        program: "x",
    };

    #[test]
    fn pins_name_their_entry_program_and_requirement() {
        let cache = Path::new("/c");
        assert_eq!(NPM.requirement(), "@scope/x@1.2.3");
        assert_eq!(NPM.entry(cache), Path::new("/c/x@1.2.3"));
        assert_eq!(
            NPM.program_in(&NPM.entry(cache)),
            Path::new("/c/x@1.2.3/node_modules/.bin/x")
        );
        let pip = Pin {
            ecosystem: Ecosystem::Pip,
            package: "x-chat",
            ..NPM
        };
        assert_eq!(pip.requirement(), "x-chat==1.2.3");
        assert_eq!(pip.program_in(&pip.entry(cache)), Path::new("/c/x@1.2.3/bin/x"));
    }

    #[test]
    fn an_entry_counts_only_when_complete_and_its_program_exists() {
        let cache = tempfile::tempdir().unwrap();
        let entry = NPM.entry(cache.path());
        std::fs::create_dir_all(entry.join("node_modules/.bin")).unwrap();
        std::fs::write(NPM.program_in(&entry), "#!/bin/sh\n").unwrap();
        assert_eq!(find(&NPM, cache.path()), None, "no completion mark: half-built");
        std::fs::write(entry.join(environment::COMPLETE), "").unwrap();
        assert_eq!(
            find(&NPM, cache.path()).map(|i| i.program),
            Some(NPM.program_in(&entry))
        );
        std::fs::remove_file(NPM.program_in(&entry)).unwrap();
        assert_eq!(find(&NPM, cache.path()), None, "a complete entry without its program");
    }
}

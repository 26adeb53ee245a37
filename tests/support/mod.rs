//! What several test files share: running the `medin` binary, writing files, finding live
//! processes by their command line. Each test file includes it with `mod support;` and uses
//! what it needs.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs the `medin` binary with `args` in `cwd` (no inherited `MEDIN_AGENT` or `MEDIN_RUN_ID`,
/// no colour).
pub fn medin(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_medin"))
        .args(args)
        .current_dir(cwd)
        .env_remove("MEDIN_AGENT")
        .env_remove("MEDIN_RUN_ID")
        .env("NO_COLOR", "1")
        .output()
        .expect("medin runs")
}

/// Writes `content` to `path`, creating its parent directories.
/// What a process printed, stdout then stderr, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A suite in a temp dir: `medin.yaml` holding `config`, and `files` (path, content).
pub fn suite_with(config: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("medin.yaml"), config);
    for (name, body) in files {
        write(&dir.path().join(name), body);
    }
    dir
}

pub fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().expect("a path with a parent")).expect("mkdir");
    std::fs::write(path, content).expect("write");
}

/// Runs `spec`, written as `<dir>/<category>/task.yaml` (fixtures relative to it), once with
/// the oracle, through the library; the run writes below `<dir>/out`.
pub fn run_task(dir: &Path, category: &str, spec: &str) -> medin::internal::runner::TaskResult {
    let path = dir.join(category).join("task.yaml");
    write(&path, spec);
    let mut settings = medin::internal::runner::RunSettings::new(
        dir.join("out"),
        medin::internal::agent::AgentSource {
            spec: medin::internal::spec::AgentSpec::oracle(),
            base_dir: dir.to_path_buf(),
        },
    );
    // The runner writes no report itself: the activity log is a reporter on its events.
    let log = medin::internal::report::reporters::ActivityLogReporter::new(
        medin::internal::log::ActivityLog::new(dir.join("out/ACTIVITY_LOG.md")),
        settings.run_id.clone(),
    );
    settings.events = medin::internal::report::EventSink::new(vec![std::sync::Arc::new(log)]);
    let file = medin::internal::spec::SpecFile {
        category: category.into(),
        name: "task".into(),
        path,
    };
    medin::internal::runner::run_spec_file(&file, &settings, 1)
}

/// Live (non-zombie) processes other than this one whose command line contains `needle`.
pub fn pids_with(needle: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
        if cmd.contains(needle) && !zombie {
            out.push(pid);
        }
    }
    out
}

/// A task the oracle passes: it writes `ok.txt` and a validator checks it.
pub const GOOD: &str = r#"
description: writes a file
prompt: write ok.txt
solution:
  - write_file: { path: ok.txt, content: "ok\n" }
  - final: { result: success }
expect:
  validate: [ { file_contains: { path: ok.txt, pattern: "^ok$" } } ]
"#;

/// The same task where the oracle claims success but writes the wrong content: a failure.
pub const WRONG: &str = r#"
description: claims success but writes the wrong content
prompt: write ok.txt
solution:
  - write_file: { path: ok.txt, content: "nope\n" }
  - final: { result: success }
expect:
  validate: [ { file_contains: { path: ok.txt, pattern: "^ok$" } } ]
"#;

pub mod cli_server;

/// The installed program of CLI agent `name` (`claude-code`, `codex`, `gemini-cli`, `aider`),
/// installed by medin itself (`medin agents install`) into its cache when missing. `None`, with
/// a message naming what is missing, when it cannot be installed here — unless
/// `MEDIN_REQUIRE_CLI_AGENTS=1` (CI as root), which makes that a failure.
pub fn cli_agent(name: &str) -> Option<std::path::PathBuf> {
    let out = Command::new(env!("CARGO_BIN_EXE_medin"))
        .args(["agents", "install", name])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("medin runs");
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        if let Some(program) = printed.lines().last() {
            return Some(std::path::PathBuf::from(program.trim()));
        }
    }
    let why = String::from_utf8_lossy(&out.stderr).into_owned();
    if std::env::var("MEDIN_REQUIRE_CLI_AGENTS").is_ok_and(|v| v == "1") {
        panic!("{name} is required here (MEDIN_REQUIRE_CLI_AGENTS=1) but cannot be installed: {why}");
    }
    println!("skipped: {name} cannot be installed on this machine: {why}");
    None
}

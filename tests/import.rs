//! `medin import terminal-bench|harbor DIR`, driven through the binary: the bundled benchmark
//! fixtures (`fixtures/benchmarks/`) are imported, the written task directories checked key by
//! key, then run with `medin run` — the oracle (their own solution) passes, an agent whose
//! solution does nothing fails; hostile paths never leave the output folder; what cannot be
//! carried over is listed and exits 100.
//!
//! `environment.root` (the Dockerfile's `WORKDIR /app`) is written by the importer whether or
//! not this medin's loader knows the key yet; where it does not, the tasks that need it import
//! with a note (exit 100) and are not run here.

mod support;

use std::path::{Path, PathBuf};

use serde_yaml_ng::Value;
use support::{medin, text, write};

fn fixtures(format: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/benchmarks")
        .join(format)
}

/// Imports `input` as `format` into `<dir>/<format>`; the process output.
fn import(format: &str, input: &Path, dir: &Path) -> std::process::Output {
    let out = dir.join(format);
    medin(
        &[
            "import",
            format,
            input.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        dir,
    )
}

fn task_yaml(dir: &Path) -> (String, Value) {
    let text = std::fs::read_to_string(dir.join("task.yaml")).unwrap();
    let value = serde_yaml_ng::from_str(&text).unwrap();
    (text, value)
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_sequence()
        .map(|s| s.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether this medin's loader takes `environment.root` (it lands from another branch).
fn root_supported(dir: &Path) -> bool {
    let spec = dir.join("probe/root.yaml");
    write(&spec, "description: probe\nprompt: p\nenvironment: { root: /app }\n");
    medin(&["check", spec.to_str().unwrap()], dir).status.code() == Some(0)
}

#[test]
fn terminal_bench_tasks_import_with_prompt_tags_timeouts_environment_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_supported(dir.path());
    let out = import("terminal-bench", &fixtures("terminal-bench"), dir.path());
    let said = text(&out);
    assert_eq!(out.status.code(), Some(100), "{said}");
    let clean = if root { 2 } else { 1 };
    assert!(
        said.contains(&format!("imported {clean} of 3 task(s) without hand edits")),
        "{said}"
    );

    let hello = dir.path().join("terminal-bench/hello-file");
    let (text, yaml) = task_yaml(&hello);
    assert!(!text.contains("# medin import:"), "{text}");
    assert!(yaml["prompt"].as_str().unwrap().contains("hello, bench"));
    assert_eq!(
        strs(&yaml["tags"]),
        ["files", "shell", "difficulty:easy", "category:file-operations"]
    );
    assert_eq!(yaml["limits"]["timeout"].as_str(), Some("120s"));
    assert_eq!(yaml["verify"]["timeout"].as_str(), Some("60s"));
    assert_eq!(yaml["verify"]["framework"].as_str(), Some("pytest"));
    // The usual run-tests.sh (install pytest, run it) becomes the pytest command itself.
    assert_eq!(
        yaml["verify"]["command"].as_str(),
        Some("cd \"$MEDIN_WORKSPACE\" && python3 -m pytest tests/test_outputs.py -rA")
    );
    assert_eq!(strs(&yaml["environment"]["python"]), ["pytest==8.3.5"]);
    assert!(hello.join("tests/test_outputs.py").is_file());
    assert!(hello.join("solution/solve.sh").is_file());

    // WORKDIR /app → root; what the Dockerfile COPYs from the task → workspace/, and nothing else.
    let fix = dir.path().join("terminal-bench/fix-add");
    let (text, yaml) = task_yaml(&fix);
    assert_eq!(yaml["environment"]["root"].as_str(), Some("/app"));
    assert_eq!(
        std::fs::read_to_string(fix.join("workspace/calc.py")).unwrap(),
        "def add(a, b):\n    return a - b\n"
    );
    assert!(fix.join("workspace/README.md").is_file());
    let workspace: Vec<_> = std::fs::read_dir(fix.join("workspace")).unwrap().collect();
    assert_eq!(workspace.len(), 2);
    assert_eq!(text.contains("# medin import:"), !root, "{text}");

    // What cannot be carried over is listed, on the terminal and atop the task file.
    let needs = dir.path().join("terminal-bench/needs-edits");
    let (text, yaml) = task_yaml(&needs);
    for reason in ["run_tests_in_same_shell", "2 services"] {
        assert!(said.contains(reason), "{reason}: {said}");
        assert!(text.contains(reason), "{reason}: {text}");
    }
    // A base that is not the host's kind of system: the Dockerfile itself comes along, built by
    // medin with its context (the task's files, without the benchmark's own), so its ENV and
    // base are no longer notes.
    assert_eq!(
        yaml["environment"]["dockerfile"].as_str(),
        Some("environment/Dockerfile")
    );
    assert_eq!(yaml["environment"]["root"].as_str(), Some("/app"));
    assert!(yaml["environment"]["apt"].is_null(), "{text}");
    let carried = std::fs::read_to_string(needs.join("environment/Dockerfile")).unwrap();
    assert!(carried.starts_with("FROM nvidia/cuda:12.4.0"), "{carried}");
    for own in ["task.yaml", "solution.sh", "tests", "docker-compose.yaml"] {
        assert!(
            !needs.join("environment").join(own).exists(),
            "{own} is the benchmark's, not the image's"
        );
    }
    assert!(!said.contains("PGHOST"), "{said}");
    assert!(!said.contains("not a plain Debian"), "{said}");
    assert!(
        text.starts_with("# Imported by `medin import terminal-bench`"),
        "{text}"
    );
}

#[test]
fn harbor_tasks_import_with_their_reward_file_and_verifier_paths_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_supported(dir.path());
    let out = import("harbor", &fixtures("harbor"), dir.path());
    let said = text(&out);
    assert_eq!(out.status.code(), Some(100), "{said}");
    let clean = if root { 2 } else { 1 };
    assert!(
        said.contains(&format!("imported {clean} of 3 task(s) without hand edits")),
        "{said}"
    );

    let hello = dir.path().join("harbor/hello-reward");
    let (_, yaml) = task_yaml(&hello);
    assert_eq!(
        strs(&yaml["tags"]),
        ["files", "reward", "difficulty:easy", "category:file-operations"]
    );
    assert_eq!(yaml["limits"]["timeout"].as_str(), Some("120s"));
    assert_eq!(yaml["verify"]["timeout"].as_str(), Some("60s"));
    assert_eq!(
        yaml["verify"]["reward"]["file"].as_str(),
        Some("logs/verifier/reward.txt")
    );
    assert_eq!(strs(&yaml["environment"]["apt"]), ["python3"]);
    let script = std::fs::read_to_string(hello.join("tests/test.sh")).unwrap();
    assert!(
        script.contains("> $MEDIN_WORKSPACE/logs/verifier/reward.txt"),
        "{script}"
    );
    assert!(script.contains("$MEDIN_WORKSPACE/tests/test_state.py"), "{script}");

    let fix = dir.path().join("harbor/fix-add");
    let (_, yaml) = task_yaml(&fix);
    assert_eq!(
        yaml["description"].as_str(),
        Some("Fix the add function of a tiny calculator")
    );
    assert_eq!(yaml["environment"]["root"].as_str(), Some("/app"));
    assert!(fix.join("workspace/calc.py").is_file());
    assert!(!fix.join("workspace/Dockerfile").exists());

    let needs = dir.path().join("harbor/needs-edits");
    let (text, yaml) = task_yaml(&needs);
    for reason in [
        "[verifier].env",
        "2 services",
        "../secrets.txt",
        "astral.sh",
        "reward.json",
    ] {
        assert!(said.contains(reason), "{reason}: {said}");
        assert!(text.contains(reason), "{reason}: {text}");
    }
    // `FROM node:20` is carried over as the Dockerfile, with its context, minus the compose file.
    assert_eq!(
        yaml["environment"]["dockerfile"].as_str(),
        Some("environment/Dockerfile")
    );
    assert!(std::fs::read_to_string(needs.join("environment/Dockerfile"))
        .unwrap()
        .starts_with("FROM node:20"));
    assert!(!needs.join("environment/docker-compose.yaml").exists());
}

/// Imports both formats into one suite, runs the oracle on the importable tasks and on copies
/// whose solution does nothing; the oracle passes, the do-nothing agent fails.
#[test]
fn imported_tasks_pass_with_their_solution_and_fail_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = root_supported(dir.path());
    for format in ["terminal-bench", "harbor"] {
        import(format, &fixtures(format), dir.path());
    }
    // The environments (pytest) are provisioned once, into a cache shared by runs of this test.
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("import-runs");
    write(
        &dir.path().join("medin.yaml"),
        &format!(
            "suites: [terminal-bench, harbor]\nagent: oracle\noutput: {}\n",
            cache.display()
        ),
    );
    let mut runnable = vec!["terminal-bench/hello-file", "harbor/hello-reward"];
    if root {
        runnable.extend(["terminal-bench/fix-add", "harbor/fix-add"]);
    } else {
        eprintln!("environment.root is not in this medin yet: the fix-add tasks (WORKDIR /app) are not run");
    }
    let mut args = vec!["run"];
    args.extend(&runnable);
    let out = medin(&args, dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("{} passed, 0 failed", runnable.len())),
        "{}",
        text(&out)
    );
    // The benchmarks' difficulty and category break the metrics down.
    let shown = text(&out);
    let row = |start: &str| shown.lines().find(|l| l.starts_with(start)).unwrap_or_default();
    assert!(row("  by difficulty  easy").ends_with("100.0%  (2/2)"), "{shown}");
    if root {
        assert!(row("                 medium").ends_with("100.0%  (2/2)"), "{shown}");
    }
    assert!(row("  by category    ").contains("100.0%"), "{shown}");
    let folder = shown
        .lines()
        .find_map(|l| l.trim().strip_prefix("run folder"))
        .map(|p| PathBuf::from(p.trim()))
        .expect("the run folder is printed");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("summary.json")).unwrap()).unwrap();
    let by_tag = &summary["metrics"]["by_tag"];
    assert_eq!(by_tag["difficulty:easy"]["trials"]["passed"], 2, "{by_tag:#}");
    assert_eq!(by_tag["category:file-operations"]["trials"]["passed"], 2, "{by_tag:#}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["metrics"]["by_tag"], *by_tag);

    let mut wrong = Vec::new();
    for task in &runnable {
        let copy = format!("{task}-wrong");
        let from = dir.path().join(task);
        let to = dir.path().join(&copy);
        copy_dir(&from, &to);
        std::fs::write(to.join("solution/solve.sh"), "#!/bin/bash\ntrue\n").unwrap();
        wrong.push(copy);
    }
    let mut args = vec!["run".to_string()];
    args.extend(wrong.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = medin(&args, dir.path());
    assert_eq!(out.status.code(), Some(100), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("0 passed, {} failed", wrong.len())),
        "{}",
        text(&out)
    );
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[cfg(unix)]
#[test]
fn hostile_paths_never_leave_the_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    write(&outside.join("secret.txt"), "secret\n");
    let task = dir.path().join("in/evil");
    write(&task.join("task.yaml"), "instruction: do it\n");
    write(
        &task.join("Dockerfile"),
        "FROM debian:12\nWORKDIR /app\nCOPY ../../outside/secret.txt /app/\nCOPY /etc/passwd /app/\nCOPY link.txt /app/\nCOPY linkdir/secret.txt /app/\nCOPY data/ /app/../../escape/\nCOPY data/ /app/data/\n",
    );
    write(&task.join("data/ok.txt"), "ok\n");
    std::os::unix::fs::symlink(outside.join("secret.txt"), task.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, task.join("linkdir")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), task.join("data/leak.txt")).unwrap();
    write(&task.join("tests/test_outputs.py"), "def test_x():\n    pass\n");
    std::os::unix::fs::symlink(&outside, task.join("tests/more")).unwrap();

    let out = import("terminal-bench", &task, dir.path());
    let said = text(&out);
    assert_eq!(out.status.code(), Some(100), "{said}");
    for refused in [
        "`../../outside/secret.txt` climbs out",
        "`/etc/passwd` is absolute",
        "`link.txt` goes through a symbolic link",
        "`linkdir/secret.txt` goes through a symbolic link",
        "`../../escape` climbs out",
    ] {
        assert!(said.contains(refused), "{refused}: {said}");
    }
    let written = dir.path().join("terminal-bench/evil");
    assert_eq!(
        std::fs::read_to_string(written.join("workspace/data/ok.txt")).unwrap(),
        "ok\n"
    );
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir.path().join("terminal-bench")) {
        let entry = entry.unwrap();
        assert!(!entry.path_is_symlink(), "{}", entry.path().display());
        if entry.file_type().is_file() {
            let body = std::fs::read_to_string(entry.path()).unwrap_or_default();
            assert_ne!(body, "secret\n", "{}", entry.path().display());
            assert!(!body.contains("root:x:0"), "{}", entry.path().display());
            files.push(entry.path().strip_prefix(&written).unwrap().display().to_string());
        }
    }
    files.sort();
    assert_eq!(
        files,
        ["task.yaml", "tests/test_outputs.py", "workspace/data/ok.txt"],
        "{said}"
    );
    assert!(!dir.path().join("escape").exists());

    // A task file that is a link out of the task is not read: the task is not imported (2).
    let linked = dir.path().join("in2/linked");
    std::fs::create_dir_all(&linked).unwrap();
    write(&linked.join("task.yaml"), "instruction: x\n");
    std::os::unix::fs::symlink(outside.join("secret.txt"), linked.join("solution.sh")).unwrap();
    let out = import("terminal-bench", &linked, dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("symbolic link is not followed"), "{}", text(&out));
}

#[test]
fn usage_unreadable_input_and_existing_output_have_their_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let out = medin(&["import", "swe-bench", "x"], dir.path());
    assert_eq!(out.status.code(), Some(64), "{}", text(&out));
    let out = medin(&["import", "harbor"], dir.path());
    assert_eq!(out.status.code(), Some(64), "{}", text(&out));

    let out = import("harbor", &dir.path().join("missing"), dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let out = import("harbor", &dir.path().join("empty"), dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("holds no harbor task"), "{}", text(&out));

    let task = dir.path().join("bad/broken");
    write(&task.join("task.yaml"), "instruction: [unclosed\n");
    let out = import("terminal-bench", &task, dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("not YAML"), "{}", text(&out));

    // An existing task directory is never overwritten.
    let hello = fixtures("terminal-bench").join("hello-file");
    assert_eq!(import("terminal-bench", &hello, dir.path()).status.code(), Some(0));
    let marker = dir.path().join("terminal-bench/hello-file/mine.txt");
    write(&marker, "keep\n");
    let out = import("terminal-bench", &hello, dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("already exists"), "{}", text(&out));
    assert!(marker.is_file());
}

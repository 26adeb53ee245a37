//! `medin watch` driven from outside, as a person or a script would: the real binary on a
//! temporary suite of oracle tasks, files edited on disk, its stdout read line by line, its
//! `ACTIVITY_LOG.md` read back.
//!
//! Latencies are measured from the edit to the line that says the re-run started, printed
//! (`cargo test --test watch -- --nocapture`) and held to a generous bound: the watch itself
//! acts within a second (200 ms debounce), a loaded CI machine may take longer to schedule it.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use support::{pids_with, suite_with, write};

/// What a change must have been acted on within, on a loaded machine.
const BOUND: Duration = Duration::from_secs(5);
/// How long a first run (or a task that sleeps) may take.
const RUN: Duration = Duration::from_secs(60);

const CONFIG: &str = "suites: [golden]\nagent: oracle\nisolation: process\n";

/// An oracle task that reads `a.txt` from the `base` fixture and passes.
const T1: &str = r#"description: reads the fixture
prompt: read a.txt
workspace: ../fixtures/base
solution:
  - bash: cat a.txt
  - final: { result: success, message: read }
expect:
  outcome: success
  validate: [ { file_exists: a.txt } ]
"#;

/// An oracle task with an empty workspace.
const T2: &str = r#"description: writes a file
prompt: write x.txt
solution:
  - write_file: { path: x.txt, content: "x\n" }
  - final: { result: success, message: written }
expect:
  outcome: success
  validate: [ { file_exists: x.txt } ]
"#;

/// A PRD in the headings form, version `version`, with requirements `(id, description)`.
fn prd(version: &str, reqs: &[(&str, &str)]) -> String {
    let mut s = format!("# Product\n\nVersion: {version}\nLast updated: 2026-11-20\n");
    for (id, text) in reqs {
        s.push_str(&format!(
            "\n## {id}: {id}\n\nPriority: high\n\n{text}\n\nAcceptance criteria:\n\n- it holds\n"
        ));
    }
    s
}

fn prd_v1() -> String {
    prd("1.0.0", &[("REQ-1", "Users log in."), ("REQ-2", "Users log out.")])
}

fn prd_v2() -> String {
    prd(
        "1.1.0",
        &[
            ("REQ-1", "Users log in with a key."),
            ("REQ-3", "Every action is logged."),
        ],
    )
}

const PRD_CONFIG: &str = "suites: [golden]\nagent: oracle\nisolation: process\nprd: PRD.md\n";

/// A running `medin watch`: its stdout as timed lines, its stdin for commands; killed when
/// dropped, so a failing test leaves no watch behind.
struct Watch {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<(Instant, String)>,
    seen: Vec<String>,
}

impl Watch {
    fn start(root: &Path, args: &[&str]) -> Watch {
        let mut command = Command::new(env!("CARGO_BIN_EXE_medin"));
        // The watch is ended with Ctrl-C as a person would, so SIGINT must be at its default:
        // a test run started in the background by a non-interactive shell (`cargo test &`)
        // ignores SIGINT, and a child inherits that.
        // SAFETY: only `signal`, async-signal-safe, between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, || {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut child = command
            .arg("watch")
            .arg(root)
            .args(args)
            .env_remove("MEDIN_AGENT")
            .env_remove("MEDIN_RUN_ID")
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("medin watch starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        Watch {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The next line (after those already taken) that `wanted` accepts, and when it was
    /// printed; fails after `within`, showing everything printed.
    fn expect(&mut self, within: Duration, what: &str, wanted: impl Fn(&str) -> bool) -> (Instant, String) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((at, line)) => {
                    self.seen.push(line.clone());
                    if wanted(&line) {
                        return (at, line);
                    }
                }
                Err(_) => panic!(
                    "no line {what} within {within:?}; medin watch printed:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Fails if a line `unwanted` accepts is printed within `during`.
    fn expect_none(&mut self, during: Duration, what: &str, unwanted: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + during;
        while let Ok((_, line)) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            self.seen.push(line.clone());
            assert!(
                !unwanted(&line),
                "{what}: `{line}`; medin watch printed:\n{}",
                self.seen.join("\n")
            );
        }
    }

    fn send(&mut self, command: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{command}").expect("write to medin watch");
        stdin.flush().expect("flush");
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn log_text(root: &Path) -> String {
    std::fs::read_to_string(root.join("target/medin/ACTIVITY_LOG.md")).unwrap_or_default()
}

/// The run id of a `run ID: ...` summary line.
fn run_id(summary: &str) -> String {
    summary
        .strip_prefix("run ")
        .and_then(|r| r.split(':').next())
        .expect("a run summary line")
        .to_string()
}

fn is_summary(line: &str) -> bool {
    line.starts_with("run ") && line.contains(" passed, ")
}

/// Saves `path` as an editor does: a new file renamed over the old one.
fn save(path: &Path, text: &str) {
    let tmp = path.with_extension("medin-test-tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn task_fixture_new_deleted_and_broken_files_are_acted_on_each_rerun_a_run_of_its_own() {
    let dir = suite_with(
        CONFIG,
        &[
            ("golden/t1.yaml", T1),
            ("golden/t2.yaml", T2),
            ("fixtures/base/a.txt", "a\n"),
        ],
    );
    let root = dir.path();
    let mut watch = Watch::start(root, &[]);
    let (_, first) = watch.expect(RUN, "summing up the first run", is_summary);
    assert!(first.contains(": 2 passed, 0 failed, 0 errors"), "{first}");
    let mut runs = vec![run_id(&first)];

    // A task file edited in place: that task alone runs again.
    let edited = Instant::now();
    write(&root.join("golden/t1.yaml"), &format!("{T1}# edited\n"));
    let (at, line) = watch.expect(BOUND, "starting the re-run of t1", |l| l.starts_with("re-running"));
    let latency = at - edited;
    println!("task file edit → re-run started: {latency:?}");
    assert!(line.starts_with("re-running 1 task "), "{line}");
    assert!(latency < BOUND, "{latency:?}");
    watch.expect(RUN, "with t1's result", |l| l.contains("golden::t1 ... ok"));
    let (_, summary) = watch.expect(RUN, "summing up t1's re-run", is_summary);
    assert!(summary.contains(": 1 passed, 0 failed"), "{summary}");
    runs.push(run_id(&summary));

    // A task file saved by renaming over it, as editors do.
    let edited = Instant::now();
    save(&root.join("golden/t2.yaml"), &format!("{T2}# saved\n"));
    let (at, line) = watch.expect(BOUND, "re-running t2", |l| l.starts_with("re-running"));
    println!("task file replaced → re-run started: {:?}", at - edited);
    assert!(line.starts_with("re-running 1 task "), "{line}");
    watch.expect(RUN, "with t2's result", |l| l.contains("golden::t2 ... ok"));
    runs.push(run_id(&watch.expect(RUN, "summing up", is_summary).1));

    // A fixture file: the task whose workspace comes from it.
    let edited = Instant::now();
    write(&root.join("fixtures/base/a.txt"), "b\n");
    let (_, changed) = watch.expect(BOUND, "seeing the fixture change", |l| l.starts_with("changed:"));
    assert!(changed.contains("fixtures/base/a.txt"), "{changed}");
    let (at, line) = watch.expect(BOUND, "re-running t1", |l| l.starts_with("re-running"));
    println!("fixture edit → re-run started: {:?}", at - edited);
    assert!(line.starts_with("re-running 1 task "), "{line}");
    watch.expect(RUN, "with t1's result", |l| l.contains("golden::t1 ... ok"));
    runs.push(run_id(&watch.expect(RUN, "summing up", is_summary).1));

    // A broken task file: its error with file:line:col, and the watch goes on.
    write(&root.join("golden/t1.yaml"), "description: [broken\n");
    let (_, error) = watch.expect(BOUND, "saying t1 does not load", |l| l.starts_with("error: golden::t1"));
    let (_, located) = watch.expect(BOUND, "locating the error", |l| l.contains("t1.yaml:"));
    assert!(
        regex_like_location(&located),
        "`{located}` (after `{error}`) names no file:line:col"
    );
    write(&root.join("golden/t2.yaml"), &format!("{T2}# again\n"));
    watch.expect(BOUND, "re-running t2 after t1 broke", |l| {
        l.starts_with("re-running 1 task")
    });
    watch.expect(RUN, "with t2's result", |l| l.contains("golden::t2 ... ok"));
    runs.push(run_id(&watch.expect(RUN, "summing up", is_summary).1));

    // Fixed again: it runs. A new task file runs; a deleted one is said.
    write(&root.join("golden/t1.yaml"), T1);
    watch.expect(RUN, "with t1's result once fixed", |l| l.contains("golden::t1 ... ok"));
    runs.push(run_id(&watch.expect(RUN, "summing up", is_summary).1));
    write(&root.join("golden/t3.yaml"), T2);
    watch.expect(BOUND, "seeing the new task", |l| l == "new task: golden::t3");
    watch.expect(RUN, "with t3's result", |l| l.contains("golden::t3 ... ok"));
    runs.push(run_id(&watch.expect(RUN, "summing up", is_summary).1));
    std::fs::remove_file(root.join("golden/t3.yaml")).unwrap();
    watch.expect(BOUND, "saying t3 is gone", |l| l.starts_with("deleted: golden::t3"));

    // Each run has its own id and run folder, and wrote its trials to the activity log.
    let mut distinct = runs.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), runs.len(), "run ids repeat: {runs:?}");
    let log = log_text(root);
    for id in &runs {
        assert!(
            root.join("target/medin/runs").join(id).is_dir(),
            "no run folder for {id}"
        );
        assert!(
            log.contains(&format!("run_id: {id}")),
            "no activity-log entry of run {id}"
        );
    }
    assert!(watch.child.try_wait().unwrap().is_none(), "the watch ended");
}

/// `file:line:col` somewhere in `line`.
fn regex_like_location(line: &str) -> bool {
    line.split(".yaml:").nth(1).is_some_and(|rest| {
        let mut parts = rest.split(':');
        let line_no = parts.next().is_some_and(|p| p.parse::<u32>().is_ok());
        let col = parts.next().is_some_and(|p| p.parse::<u32>().is_ok());
        line_no && col
    })
}

#[test]
fn a_prd_edit_is_reloaded_and_logged_with_its_diff_and_an_invalid_prd_holds_tasks_back() {
    let dir = suite_with(PRD_CONFIG, &[("golden/t2.yaml", T2), ("PRD.md", &prd_v1())]);
    let root = dir.path();
    let mut watch = Watch::start(root, &[]);
    watch.expect(RUN, "summing up the first run", is_summary);

    let edited = Instant::now();
    save(&root.join("PRD.md"), &prd_v2());
    let (at, line) = watch.expect(BOUND, "reloading the PRD", |l| l.starts_with("PRD reloaded"));
    println!("PRD edit → reloaded: {:?}", at - edited);
    let summary = "1.0.0 → 1.1.0: added REQ-3; removed REQ-2; changed REQ-1";
    assert!(line.contains(summary), "{line}");
    let log = log_text(root);
    let entry = log
        .split("<!-- medin:end -->")
        .find(|e| e.contains("PRD reloaded"))
        .unwrap_or_else(|| panic!("no reload entry in ACTIVITY_LOG.md:\n{log}"));
    assert!(
        entry.contains("kind: prd") && entry.contains("status: passed") && entry.contains(summary),
        "{entry}"
    );

    // A PRD that does not load holds new tasks back, and says so, until it loads again.
    save(&root.join("PRD.md"), "## no version\n");
    watch.expect(BOUND, "saying the PRD does not load", |l| {
        l.starts_with("error: the PRD does not load")
    });
    write(
        &root.join("golden/t2.yaml"),
        &format!("{T2}# while the PRD is broken\n"),
    );
    watch.expect(BOUND, "seeing the task edit", |l| l == "changed: golden/t2.yaml");
    watch.expect_none(
        Duration::from_secs(2),
        "a task started while the PRD does not load",
        |l| l.starts_with("re-running"),
    );
    assert!(log_text(root).contains("PRD changed and is invalid"));
    save(&root.join("PRD.md"), &prd_v1());
    let (_, reloaded) = watch.expect(BOUND, "reloading the fixed PRD", |l| l.starts_with("PRD reloaded"));
    // Compared with the last PRD that loaded.
    assert!(reloaded.contains("1.1.0 → 1.0.0"), "{reloaded}");
    watch.expect(BOUND, "running the held task", |l| l.starts_with("re-running 1 task"));
    watch.expect(RUN, "with its result", |l| l.contains("golden::t2 ... ok"));
}

#[test]
fn with_freeze_prd_edits_are_ignored_until_unfrozen_by_stdin_or_the_unfreeze_file() {
    let dir = suite_with(PRD_CONFIG, &[("golden/t2.yaml", T2), ("PRD.md", &prd_v1())]);
    let root = dir.path();
    let mut watch = Watch::start(root, &["--freeze"]);
    watch.expect(RUN, "summing up the first run", is_summary);

    save(&root.join("PRD.md"), &prd_v2());
    let (_, ignored) = watch.expect(BOUND, "ignoring the PRD edit", |l| l.starts_with("changed: PRD.md"));
    assert!(ignored.contains("ignored (frozen)"), "{ignored}");
    watch.expect_none(Duration::from_secs(1), "a reload while frozen", |l| {
        l.starts_with("PRD reloaded")
    });
    // A run started while frozen does not reload it either.
    write(&root.join("golden/t2.yaml"), &format!("{T2}# while frozen\n"));
    watch.expect(RUN, "with t2's result", |l| l.contains("golden::t2 ... ok"));
    watch.expect(RUN, "summing up", is_summary);
    assert!(!log_text(root).contains("PRD reloaded"), "a frozen PRD was reloaded");

    // `unfreeze` on stdin takes in the change made while frozen.
    watch.send("unfreeze");
    let (_, line) = watch.expect(BOUND, "reloading on unfreeze", |l| l.starts_with("PRD reloaded"));
    assert!(line.contains("1.0.0 → 1.1.0"), "{line}");
    assert!(log_text(root).contains("1.0.0 → 1.1.0: added REQ-3"));

    // Frozen again from stdin; the unfreeze file, for a watch nobody types to.
    watch.send("freeze");
    watch.expect(BOUND, "freezing", |l| l.starts_with("PRD frozen"));
    save(&root.join("PRD.md"), &prd_v1());
    watch.expect(BOUND, "ignoring the PRD edit", |l| l.contains("ignored (frozen)"));
    write(&root.join(".medin-unfreeze"), "");
    let (_, line) = watch.expect(BOUND, "reloading on the unfreeze file", |l| {
        l.starts_with("PRD reloaded")
    });
    assert!(line.contains("1.1.0 → 1.0.0"), "{line}");
    assert!(
        !root.join(".medin-unfreeze").exists(),
        "the unfreeze file is removed once taken"
    );

    // Frozen, a PRD edited into an invalid state does not hold runs back: they run under the
    // frozen copy, never reading the file.
    watch.send("freeze");
    watch.expect(BOUND, "freezing", |l| l.starts_with("PRD frozen"));
    save(&root.join("PRD.md"), "# no version, no requirements\n");
    watch.expect(BOUND, "ignoring the broken PRD", |l| l.contains("ignored (frozen)"));
    write(&root.join("golden/t2.yaml"), &format!("{T2}# frozen, PRD broken\n"));
    watch.expect(RUN, "t2 re-run under the frozen PRD", |l| {
        l.contains("golden::t2 ... ok")
    });
    watch.expect(RUN, "summing up", is_summary);

    watch.send("quit");
    watch.expect(BOUND, "stopping", |l| l == "medin watch: stopped");
    let status = watch.child.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// An oracle task that runs `sleep SECONDS` (the tag makes its process findable), naming the
/// PRD requirements `requirements` (a YAML list).
fn sleeper(seconds: &str, requirements: &str) -> String {
    format!(
        r#"description: sleeps
prompt: sleep
requirements: {requirements}
limits: {{ timeout: 2m }}
solution:
  - bash: {{ command: "sleep {seconds}", timeout_ms: 120000 }}
  - final: {{ result: success, message: slept }}
expect:
  outcome: success
  validate: [ {{ command: "true" }} ]
"#
    )
}

fn wait_until(within: Duration, what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + within;
    while !cond() {
        assert!(Instant::now() < deadline, "{what} within {within:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_task_running_when_a_requirement_it_names_changes_finishes_and_a_decision_is_logged_as_pending() {
    let tag = format!("3.{}", std::process::id() % 100_000);
    let dir = suite_with(
        PRD_CONFIG,
        &[("golden/slow.yaml", &sleeper(&tag, "[REQ-1]")), ("PRD.md", &prd_v1())],
    );
    let root = dir.path();
    let mut watch = Watch::start(root, &[]);
    watch.expect(RUN, "starting the first run", |l| l.starts_with("running 1 task"));
    let needle = format!("sleep {tag}");
    wait_until(RUN, "the task's sleep starts", || !pids_with(&needle).is_empty());
    save(&root.join("PRD.md"), &prd_v2());
    watch.expect(BOUND, "reloading the PRD", |l| l.starts_with("PRD reloaded"));
    let (_, caught) = watch.expect(BOUND, "naming the running task", |l| {
        l.contains("started under the earlier PRD")
    });
    assert!(caught.contains("golden::slow"), "{caught}");
    // The running task is not stopped: it finishes, and its run asks for a decision.
    watch.expect(RUN, "with its result", |l| l.contains("golden::slow ... ok"));
    let log = log_text(root);
    let entry = log
        .split("<!-- medin:end -->")
        .find(|e| e.contains("taskId: golden::slow") && e.contains("kind: prd"))
        .unwrap_or_else(|| panic!("no decision entry in ACTIVITY_LOG.md:\n{log}"));
    assert!(
        entry.contains("status: pending") && entry.contains("human decision requested") && entry.contains("REQ-1"),
        "{entry}"
    );
    // Nothing re-ran it on its own.
    watch.expect_none(Duration::from_secs(1), "a re-run nobody asked for", |l| {
        l.starts_with("re-running")
    });
}

#[test]
fn killing_the_watch_mid_run_leaves_no_process_behind() {
    let tag = format!("97.{}", std::process::id() % 100_000);
    let dir = suite_with(CONFIG, &[("golden/slow.yaml", &sleeper(&tag, "[]"))]);
    let root = dir.path();
    let watch = Watch::start(root, &[]);
    let needle = format!("sleep {tag}");
    wait_until(RUN, "the task's sleep starts", || !pids_with(&needle).is_empty());
    // Ctrl-C, as a person ends a watch.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(watch.pid()),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let mut watch = watch;
    let status = watch.child.wait().unwrap();
    assert!(!status.success(), "{status}");
    wait_until(Duration::from_secs(5), "everything the watch started is gone", || {
        pids_with(&needle).is_empty()
    });
}

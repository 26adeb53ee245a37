//! Tasks that name `environment.image` or `environment.dockerfile`, with the machine's real
//! engine (podman here) and medin's test image `localhost/medin-busybox:1`, which
//! `bash scripts/setup.sh` imports from the host's busybox-static (no registry is reached):
//! an image task whose oracle passes and whose do-nothing agent fails, judged by hidden tests
//! in the container; a Dockerfile built once; a timed-out command killed inside the container;
//! no network unless allowed; no container left after an attempt, nor after a killed harness
//! once the next one starts; no engine → pending; a missing image → an infrastructure error
//! naming it; and the spec's refusals.
//!
//! Where the machine has no engine or no test image, the tests that need one print
//! `SKIPPED (no container engine)` with the command that installs it, and pass; with
//! `MEDIN_REQUIRE_CONTAINERS=1` (CI, as root, where setup.sh installs podman) they fail instead.
//! The spec and no-engine tests need no engine and always run.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use medin::internal::sandbox::{
    ready_image, run_shell, Container, ContainerEngine, ContainerRequest, ExitKind, FixedPath, ImageSource, Isolation,
    LimitHit, ResourceLimits, SandboxConfig,
};
use support::{medin, suite_with, text, write};

const IMAGE: &str = "localhost/medin-busybox:1";

/// The engine with the test image, or `None` after saying why the test is skipped.
fn engine() -> Option<&'static ContainerEngine> {
    let skip = |why: String| {
        if std::env::var("MEDIN_REQUIRE_CONTAINERS").as_deref() == Ok("1") {
            panic!("MEDIN_REQUIRE_CONTAINERS=1, but {why}");
        }
        eprintln!(
            "SKIPPED (no container engine): {why}; `bash scripts/setup.sh --containers` (as root) installs podman and the test image"
        );
        None
    };
    match ContainerEngine::get() {
        Ok(engine) => match ready_image(engine, &ImageSource::Named(IMAGE.into())) {
            Ok(_) => Some(engine),
            Err(e) => skip(format!("the test image is missing: {e}")),
        },
        Err(e) => skip(e.to_string()),
    }
}

/// The engine's program, for looking at containers from outside.
fn engine_cmd(engine: &ContainerEngine, args: &[&str]) -> String {
    let out = Command::new(engine.program())
        .args(args)
        .output()
        .expect("the engine runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Names of containers (running or not) carrying `label`.
fn containers_labelled(engine: &ContainerEngine, label: &str) -> Vec<String> {
    engine_cmd(
        engine,
        &[
            "ps",
            "-a",
            "--filter",
            &format!("label={label}"),
            "--format",
            "{{.Names}}",
        ],
    )
    .split_whitespace()
    .map(str::to_string)
    .collect()
}

/// Runs `medin` with `args` in `dir` under run id `run_id`.
fn medin_run(dir: &Path, run_id: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_medin"))
        .args(args)
        .current_dir(dir)
        .env_remove("MEDIN_AGENT")
        .env("MEDIN_RUN_ID", run_id)
        .env("NO_COLOR", "1")
        .output()
        .expect("medin runs")
}

fn unique(name: &str) -> String {
    format!("{name}-{}-{:08x}", std::process::id(), fastrand::u32(..))
}

/// The attempt folder of `trial` (`<category>/<name>`) in run `run_id` of the suite in `dir`.
fn attempt(dir: &Path, run_id: &str, trial: &str) -> PathBuf {
    dir.join("target/medin/runs").join(run_id).join(trial).join("attempt-1")
}

fn receipts(attempt: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(attempt.join("receipts.jsonl"))
        .expect("receipts.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a receipt is JSON"))
        .collect()
}

fn metrics(attempt: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(attempt.join("metrics.json")).expect("metrics.json")).unwrap()
}

/// A task in the test image: write `greeting.txt`; judged by hidden TAP tests run in the
/// container (reward = the fraction passed) and by a validator.
fn greeting_task(solution: &str) -> String {
    format!(
        r#"description: greet in a container
prompt: Write "hello" to greeting.txt.
limits: {{ timeout: 60s }}
environment: {{ image: "{IMAGE}" }}
verify: {{ command: "sh check.sh", framework: tap, timeout: 30s }}
solution:
{solution}
  - final: {{ result: success }}
expect:
  validate: [ {{ command: "grep -qx hello greeting.txt" }} ]
"#
    )
}

const CHECK_SH: &str = "cd \"$MEDIN_WORKSPACE\"\necho 1..2\n\
if [ \"$(cat greeting.txt 2>/dev/null)\" = hello ]; then echo 'ok 1 - greeting'; else echo 'not ok 1 - greeting'; fi\n\
if [ \"$(readlink /bin/sh)\" = busybox ] && [ \"$(pwd)\" = /app ]; then echo 'ok 2 - in the image at /app'; else echo 'not ok 2 - in the image at /app'; fi\n";

#[test]
fn an_image_task_passes_with_its_solution_and_fails_with_a_do_nothing_agent() {
    let Some(engine) = engine() else { return };
    // The hidden tests are not in the workspace while the agent acts; the oracle checks.
    let good = greeting_task("  - bash: \"test ! -e tests && echo hello > /app/greeting.txt\"");
    let idle = greeting_task("  - bash: \"true\"");
    let dir = suite_with(
        "suites: [golden]\nagent: oracle\n",
        &[
            ("golden/good/task.yaml", &good),
            ("golden/good/tests/check.sh", CHECK_SH),
            ("golden/idle/task.yaml", &idle),
            ("golden/idle/tests/check.sh", CHECK_SH),
        ],
    );
    let run_id = unique("image");
    let out = medin_run(dir.path(), &run_id, &["run"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(100), "{said}");
    assert!(said.contains("ok     golden::good"), "{said}");
    assert!(
        said.contains("FAILED golden::idle") || said.contains("golden::idle failed"),
        "{said}"
    );

    let good = attempt(dir.path(), &run_id, "golden/good");
    let m = metrics(&good);
    assert_eq!(m["outcome"], "success", "{m}");
    assert_eq!(m["verification"]["reward"], 1.0, "{m}");
    assert_eq!(m["verification"]["passed"], 2, "{m}");
    let r = receipts(&good);
    let container = r
        .iter()
        .find(|r| r["tool"] == "medin.container")
        .expect("the container's receipt");
    assert_eq!(container["receipt"]["data"]["image"], IMAGE);
    // Every command — the agent's, the validator, the verifier — ran in the container.
    let commands: Vec<&serde_json::Value> = r.iter().filter(|r| r["ran"] == true).collect();
    assert!(commands.len() >= 3, "{r:?}");
    for c in commands {
        assert_eq!(c["receipt"]["data"]["isolation"], "container", "{c}");
    }
    assert!(
        !good.join("workspace/tests").exists(),
        "the hidden tests are taken out again"
    );

    let idle = attempt(dir.path(), &run_id, "golden/idle");
    let m = metrics(&idle);
    assert_eq!(m["outcome"], "failure", "{m}");
    assert_eq!(m["verification"]["reward"], 0.5, "{m}");
    // Nothing of the run's containers is left.
    assert_eq!(
        containers_labelled(engine, &format!("medin.run={run_id}")),
        Vec::<String>::new()
    );
}

#[test]
fn a_dockerfile_is_built_before_the_agent_starts_and_once_per_content() {
    let Some(engine) = engine() else { return };
    // A context of its own (a nonce), so the first run really builds.
    let nonce = unique("nonce");
    let dockerfile = format!("FROM {IMAGE}\nCOPY nonce.txt /etc/medin-nonce\nRUN echo built > /etc/medin-built\n");
    let task = r#"description: a task whose image is built from its Dockerfile
prompt: copy what the image says into built.txt
environment: { dockerfile: environment/Dockerfile }
solution:
  - bash: "cat /etc/medin-built /etc/medin-nonce > built.txt"
  - final: { result: success }
expect:
  validate: [ { command: "grep -qx built built.txt" } ]
"#;
    let dir = suite_with(
        "suites: [golden]\nagent: oracle\n",
        &[
            ("golden/built/task.yaml", task),
            ("golden/built/environment/Dockerfile", &dockerfile),
            ("golden/built/environment/nonce.txt", &nonce),
        ],
    );
    let mut readied = Vec::new();
    let mut image = String::new();
    for round in ["first", "second"] {
        let run_id = unique(round);
        let out = medin_run(dir.path(), &run_id, &["run"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let at = attempt(dir.path(), &run_id, "golden/built");
        let built = std::fs::read_to_string(at.join("workspace/built.txt")).unwrap();
        assert_eq!(built, format!("built\n{nonce}"));
        let r = receipts(&at);
        let data = &r.iter().find(|r| r["tool"] == "medin.container").unwrap()["receipt"]["data"];
        readied.push(data["image_readied"].as_str().unwrap().to_string());
        image = data["image"].as_str().unwrap().to_string();
    }
    assert_eq!(readied, ["built", "present"], "built once, then found by its content");
    assert!(image.starts_with("localhost/medin-build:"), "{image}");
    engine_cmd(engine, &["rmi", "-f", &image]);
}

/// A container of the test image and a sandbox configuration pointing at it.
fn container(engine: &'static ContainerEngine, network: bool) -> (tempfile::TempDir, SandboxConfig) {
    let ws = tempfile::tempdir().unwrap();
    let root = FixedPath::parse("/app").unwrap();
    let limits = ResourceLimits::default();
    let started = Container::start(
        engine,
        &ContainerRequest {
            image: IMAGE,
            workspace: ws.path(),
            root: &root,
            mounts: &[],
            host_folders: &[],
            network,
            limits: &limits,
            grace: Duration::from_secs(1),
            run_id: "containers-test",
            trial: "library",
        },
    )
    .expect("the test image starts");
    let mut cfg = SandboxConfig::new(ws.path());
    cfg.root = Some(root);
    cfg.network = network;
    cfg.grace = Duration::from_secs(1);
    cfg.container = Some(Arc::new(started));
    (ws, cfg)
}

#[test]
fn a_timed_out_command_is_killed_inside_the_container() {
    let Some(engine) = engine() else { return };
    let (_ws, mut cfg) = container(engine, false);
    cfg.timeout = Duration::from_millis(1500);
    let started = Instant::now();
    // A child that ignores SIGTERM, and a grandchild in the background: the whole group goes.
    let out = run_shell(&cfg, "sh -c 'trap \"\" TERM; sleep 171' & sleep 172; echo never", None).unwrap();
    assert!(out.timed_out, "{out:?}");
    assert_eq!(out.limit, Some(LimitHit::Timeout));
    assert_eq!(out.isolation, Isolation::Container);
    assert!(!out.stdout.text.contains("never"));
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    cfg.timeout = Duration::from_secs(10);
    let ps = run_shell(&cfg, "ps -o pid,args", None).unwrap();
    assert!(
        !ps.stdout.text.contains("sleep 171") && !ps.stdout.text.contains("sleep 172"),
        "left running in the container:\n{}",
        ps.stdout.text
    );
    // The limits are the container's: the next command runs as usual.
    let ok = run_shell(&cfg, "echo fine; exit 3", None).unwrap();
    assert_eq!(ok.exit, ExitKind::Code(3));
    assert_eq!(ok.stdout.text, "fine\n");
}

#[test]
fn commands_see_the_workspace_at_the_root_and_cannot_leave_it_by_cwd() {
    let Some(engine) = engine() else { return };
    let (ws, cfg) = container(engine, false);
    std::fs::create_dir(ws.path().join("sub")).unwrap();
    let out = run_shell(&cfg, "pwd; echo made > made.txt", Some(Path::new("sub"))).unwrap();
    assert_eq!(out.stdout.text, "/app/sub\n");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("sub/made.txt")).unwrap(),
        "made\n"
    );
    std::os::unix::fs::symlink("/etc", ws.path().join("out")).unwrap();
    assert!(run_shell(&cfg, "true", Some(Path::new("out"))).is_err());
    assert!(run_shell(&cfg, "true", Some(Path::new(".."))).is_err());
    // The output cap holds as on the host, with the hash of the whole.
    let mut capped = cfg.clone();
    capped.output_cap = 10;
    let big = run_shell(&capped, "yes | head -c 5000", None).unwrap();
    assert!(big.stdout.truncated);
    assert_eq!(big.stdout.total_bytes, 5000);
    assert_eq!(big.stdout.text.len(), 10);
}

#[test]
fn the_network_is_none_unless_the_task_allows_it() {
    let Some(engine) = engine() else { return };
    let interfaces = |cfg: &SandboxConfig| {
        let out = run_shell(cfg, "ls /sys/class/net", None).unwrap();
        let mut names: Vec<String> = out.stdout.text.split_whitespace().map(str::to_string).collect();
        names.sort();
        names
    };
    let (_ws, offline) = container(engine, false);
    assert_eq!(interfaces(&offline), ["lo"]);
    let (_ws2, online) = container(engine, true);
    assert!(interfaces(&online).len() > 1, "{:?}", interfaces(&online));
}

#[test]
fn a_killed_harness_leaves_a_container_that_the_next_start_removes() {
    let Some(engine) = engine() else { return };
    let task = format!(
        "description: waits\nprompt: wait\nlimits: {{ timeout: 120s, command_timeout: 100s }}\nenvironment: {{ image: \"{IMAGE}\" }}\nsolution:\n  - bash: \"sleep 90\"\n  - final: {{ result: success }}\n"
    );
    let quick = greeting_task("  - bash: \"echo hello > greeting.txt\"");
    let dir = suite_with(
        "suites: [golden]\nagent: oracle\n",
        &[
            ("golden/waits.yaml", &task),
            ("golden/quick/task.yaml", &quick),
            ("golden/quick/tests/check.sh", CHECK_SH),
        ],
    );
    let killed_run = unique("killed");
    let mut harness = Command::new(env!("CARGO_BIN_EXE_medin"))
        .args(["run", "golden/waits.yaml"])
        .current_dir(dir.path())
        .env("MEDIN_RUN_ID", &killed_run)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let label = format!("medin.run={killed_run}");
    let until = Instant::now() + Duration::from_secs(30);
    while containers_labelled(engine, &label).is_empty() {
        assert!(Instant::now() < until, "no container appeared");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Give the agent's command time to start in it, then kill the harness outright.
    std::thread::sleep(Duration::from_millis(500));
    harness.kill().unwrap();
    harness.wait().unwrap();
    let left = containers_labelled(engine, &label);
    assert_eq!(left.len(), 1, "a killed harness cannot remove its container: {left:?}");

    let out = medin_run(dir.path(), &unique("next"), &["run", "golden/quick"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        containers_labelled(engine, &label),
        Vec::<String>::new(),
        "the next medin removed the dead one's container"
    );
}

#[test]
fn a_missing_image_is_an_infrastructure_error_naming_it() {
    if engine().is_none() {
        return;
    }
    let task = "description: no such image\nprompt: p\nenvironment: { image: \"localhost/medin-no-such-image:1\" }\nsolution:\n  - final: { result: success }\n";
    let dir = suite_with("suites: [golden]\nagent: oracle\n", &[("golden/missing.yaml", task)]);
    let out = medin_run(dir.path(), &unique("missing"), &["run"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("localhost/medin-no-such-image:1"), "{said}");
    assert!(said.contains("harness error, cause infrastructure"), "{said}");
}

#[test]
fn without_an_engine_the_task_is_pending_with_the_fix_never_failed() {
    let dir = suite_with(
        "suites: [golden]\nagent: oracle\n",
        &[(
            "golden/boxed.yaml",
            &greeting_task("  - bash: \"echo hello > greeting.txt\""),
        )],
    );
    let run_id = unique("pending");
    let out = Command::new(env!("CARGO_BIN_EXE_medin"))
        .args(["run"])
        .current_dir(dir.path())
        .env("MEDIN_RUN_ID", &run_id)
        .env("MEDIN_CONTAINER_ENGINE", "/nonexistent")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let said = text(&out);
    // Not the agent's failure: counted as infrastructure (exit 2), the outcome pending.
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("no container engine"), "{said}");
    assert!(said.contains("MEDIN_CONTAINER_ENGINE=/nonexistent"), "{said}");
    assert!(said.contains("bash scripts/setup.sh --containers"), "{said}");
    assert!(said.contains("apt-get install -y podman runc"), "{said}");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("target/medin/runs").join(&run_id).join("summary.json")).unwrap(),
    )
    .unwrap();
    let trial = &summary["trials"][0];
    assert_eq!(trial["status"], "infrastructure", "{trial}");
    assert_eq!(trial["outcome"], "pending", "{trial}");
    let log = std::fs::read_to_string(dir.path().join("target/medin/ACTIVITY_LOG.md")).unwrap();
    assert!(log.contains("status: pending"), "{log}");
}

#[test]
fn the_spec_refuses_what_a_container_cannot_mean_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("environment/Dockerfile"), "FROM scratch\n");
    let cases: &[(&str, &str, &str)] = &[
        (
            "both.yaml",
            "description: d\nprompt: p\nenvironment:\n  image: debian\n  dockerfile: environment/Dockerfile\n",
            "both.yaml:5:",
        ),
        (
            "packages.yaml",
            "description: d\nprompt: p\nenvironment:\n  image: debian\n  python: [pytest]\n",
            "environment.python cannot be combined with `image:`",
        ),
        (
            "option.yaml",
            "description: d\nprompt: p\nenvironment: { image: \"--privileged\" }\n",
            "is not an image name",
        ),
        (
            "nofile.yaml",
            "description: d\nprompt: p\nenvironment: { dockerfile: nowhere/Dockerfile }\n",
            "is not a file",
        ),
        (
            "level.yaml",
            "description: d\nprompt: p\nisolation: container\nenvironment: { image: debian }\n",
            "level.yaml:3:",
        ),
        (
            "toolchain.yaml",
            "description: d\nprompt: p\ntoolchains: [rust]\nenvironment: { image: debian }\n",
            "`toolchains:` cannot be combined",
        ),
    ];
    for (name, body, said) in cases {
        let path = dir.path().join(name);
        write(&path, body);
        let out = medin(&["check", path.to_str().unwrap()], dir.path());
        assert_ne!(out.status.code(), Some(0), "{name}: {}", text(&out));
        assert!(text(&out).contains(said), "{name}: {}", text(&out));
    }
    // What a container allows: an image with fixed paths at any host level, and the Dockerfile.
    for (name, body) in [
        (
            "fine.yaml",
            "description: d\nprompt: p\nisolation: process\nenvironment: { image: \"debian:bookworm-slim\", root: /srv/app }\n",
        ),
        (
            "built.yaml",
            "description: d\nprompt: p\nenvironment: { dockerfile: environment/Dockerfile }\n",
        ),
    ] {
        let path = dir.path().join(name);
        write(&path, body);
        let out = medin(&["check", path.to_str().unwrap()], dir.path());
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out));
    }
}

/// A Harbor task on a base that is not the host's kind of system imports as a Dockerfile task
/// (its context without the benchmark's files), and runs in the image medin builds from it:
/// the oracle passes, a solution that does nothing fails.
#[test]
fn an_imported_dockerfile_task_is_built_and_judged_in_its_container() {
    let Some(engine) = engine() else { return };
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("bench/boxed");
    write(
        &task.join("task.toml"),
        "version = \"1.0\"\n[verifier]\ntimeout_sec = 60.0\n[agent]\ntimeout_sec = 120.0\n",
    );
    write(
        &task.join("instruction.md"),
        "Write the word the image keeps in /etc/word into answer.txt.\n",
    );
    // A nonce makes the context new, so this run builds.
    let nonce = unique("word");
    write(
        &task.join("environment/Dockerfile"),
        &format!("FROM {IMAGE}\nRUN echo {nonce} > /etc/word\nWORKDIR /app\nCOPY data.txt /app/\n"),
    );
    write(&task.join("environment/data.txt"), "given\n");
    write(
        &task.join("solution/solve.sh"),
        "#!/bin/bash\ncat /etc/word > answer.txt\n",
    );
    write(
        &task.join("tests/test.sh"),
        "#!/bin/bash\nmkdir -p /logs/verifier\nif [ \"$(cat /app/answer.txt)\" = \"$(cat /etc/word)\" ] && [ -f /app/data.txt ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n",
    );
    let out = medin(
        &[
            "import",
            "harbor",
            task.to_str().unwrap(),
            "--out",
            dir.path().join("suite").to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "imported without hand edits: {}",
        text(&out)
    );
    let imported = dir.path().join("suite/boxed");
    let yaml = std::fs::read_to_string(imported.join("task.yaml")).unwrap();
    assert!(yaml.contains("dockerfile: environment/Dockerfile"), "{yaml}");
    assert!(imported.join("environment/data.txt").is_file());
    assert!(imported.join("workspace/data.txt").is_file());

    let idle = dir.path().join("suite/idle");
    for entry in walkdir::WalkDir::new(&imported) {
        let entry = entry.unwrap();
        let to = idle.join(entry.path().strip_prefix(&imported).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
    write(&idle.join("solution/solve.sh"), "#!/bin/bash\ntrue\n");
    write(&dir.path().join("suite/medin.yaml"), "suites: [.]\nagent: oracle\n");
    let run_id = unique("imported");
    let out = medin_run(&dir.path().join("suite"), &run_id, &["run", "boxed", "idle"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(100), "{said}");
    assert!(said.contains("1 passed, 1 failed"), "{said}");
    assert!(said.contains("FAILED") && said.contains("idle"), "{said}");
    // Both attempts ran the one image built for the context; it goes again.
    let at = walkdir::WalkDir::new(dir.path().join("suite/target/medin/runs").join(&run_id))
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.path().ends_with("boxed/attempt-1"))
        .expect("the attempt folder of boxed");
    let r = receipts(at.path());
    let image = r.iter().find(|r| r["tool"] == "medin.container").unwrap()["receipt"]["data"]["image"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(image.starts_with("localhost/medin-build:"), "{image}");
    engine_cmd(engine, &["rmi", "-f", &image]);
}

/// A `process:` agent's own program stays on the host — at `isolation: process`, where it sees
/// the workspace at its host path — while its tool calls run in the container at `/app`.
#[test]
fn a_process_agent_on_the_host_drives_a_container_task() {
    if engine().is_none() {
        return;
    }
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agent.py");
    let task = format!(
        "description: a process agent drives a container task\nprompt: \"Run `echo hello > /app/greeting.txt && pwd`\"\nisolation: process\nagent: {{ process: \"python3 {}\" }}\nenvironment: {{ image: \"{IMAGE}\" }}\nexpect:\n  final: {{ result: success, message: \"^/app$\" }}\n  validate: [ {{ command: \"grep -qx hello /app/greeting.txt\" }} ]\n  receipts: [ {{ tool: bash, data: {{ isolation: container }} }} ]\n",
        agent.display()
    );
    let dir = suite_with("suites: [golden]\n", &[("golden/driven.yaml", &task)]);
    let out = medin_run(dir.path(), &unique("driven"), &["run"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

//! `medin exec` and `medin doctor` as a user runs them: the real binary, real processes.

use std::process::Command;

fn medin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_medin"))
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

#[test]
fn exec_prints_the_receipt_and_exits_with_the_command_status() {
    let ws = tempfile::tempdir().unwrap();
    let out = medin()
        .args(["exec", "--workspace"])
        .arg(ws.path())
        .args(["--", "sh", "-c", "echo 'it''s'; echo oops >&2; exit 3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let r = json(&out.stdout);
    assert_eq!(r["exit_code"], 3);
    assert_eq!(r["signal"], serde_json::Value::Null);
    assert_eq!(r["stdout"]["text"], "its\n");
    assert_eq!(r["stderr"]["text"], "oops\n");
    // Unasked, the level is the strongest this machine supports, the one doctor names.
    let doctor = medin().args(["doctor", "--json"]).output().unwrap();
    let best = json(&doctor.stdout)["best"].clone();
    assert!(best == "strict" || best == "process", "{best}");
    assert_eq!(r["isolation"], best);
    assert_eq!(r["limit"], serde_json::Value::Null);
    assert!(r["duration_ms"].is_u64());
    assert!(r["usage"]["user_ms"].is_u64());
    assert_eq!(r["truncated"], false);
}

#[test]
fn exec_names_limits_and_signals() {
    let ws = tempfile::tempdir().unwrap();
    let out = medin()
        .args(["exec", "--timeout", "300ms", "--workspace"])
        .arg(ws.path())
        .args(["--", "sleep", "5"])
        .output()
        .unwrap();
    let r = json(&out.stdout);
    assert_eq!(r["limit"], "TIMEOUT", "{r}");
    assert_eq!(r["timed_out"], true);
    assert_eq!(out.status.code(), Some(128 + 15));

    let out = medin()
        .args(["exec", "--cpu", "1s", "--workspace"])
        .arg(ws.path())
        .args(["--", "sh", "-c", "while :; do :; done"])
        .output()
        .unwrap();
    let r = json(&out.stdout);
    assert_eq!(r["limit"], "CPU_LIMIT", "{r}");
    assert_eq!(r["signal"], 24);
    assert_eq!(out.status.code(), Some(128 + 24));
}

#[test]
fn exec_strict_confines_or_fails_loudly() {
    let ws = tempfile::tempdir().unwrap();
    let out = medin()
        .args([
            "exec",
            "--isolation",
            "strict",
            "--max-procs",
            "32",
            "--memory",
            "256MiB",
            "--workspace",
        ])
        .arg(ws.path())
        .args(["--", "sh", "-c", "echo hi > f && cat /proc/1/environ; hostname"])
        .output()
        .unwrap();
    if medin::internal::sandbox::probe().strict.is_ok() {
        let r = json(&out.stdout);
        assert_eq!(r["isolation"], "strict", "{r}");
        assert_eq!(r["stdout"]["text"], "medin-sandbox\n", "{r}");
        assert_eq!(std::fs::read_to_string(ws.path().join("f")).unwrap(), "hi\n");
    } else {
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("isolation `strict` is not available here"), "{err}");
    }
}

#[test]
fn exec_rejects_bad_limits() {
    let out = medin()
        .args(["exec", "--memory", "lots", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--memory: invalid size"));
    let out = medin()
        .args(["exec", "--isolation", "jail", "--", "true"])
        .output()
        .unwrap();
    // A value the command-line parser rejects is a usage error (the exit-code table).
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("strict"));
}

#[test]
fn doctor_reports_the_machine() {
    let out = medin().arg("doctor").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for key in [
        "running as root",
        "namespaces",
        "landlock",
        "seccomp",
        "cgroups",
        "process limit",
        "strict",
    ] {
        assert!(text.contains(key), "missing {key}: {text}");
    }
    let out = medin().args(["doctor", "--json"]).output().unwrap();
    let r = json(&out.stdout);
    let caps = medin::internal::sandbox::probe();
    assert_eq!(r["root"], caps.root);
    assert_eq!(r["strict_ok"], caps.strict.is_ok());
    assert_eq!(r["best"], if caps.strict.is_ok() { "strict" } else { "process" });
}

fn task(isolation_line: &str, expected: &str) -> String {
    format!(
        "description: isolation reaches the commands\nagent: oracle\n{isolation_line}\nsolution:\n  - bash: hostname; cat /proc/self/cgroup | grep -c medin- || true\n  - final: {{ result: success, message: ok }}\nexpect:\n  receipts:\n    - {{ tool: bash, data: {{ isolation: {expected} }} }}\n  validate:\n    - command: \"true\"\n"
    )
}

#[test]
fn suite_isolation_applies_to_tasks_that_do_not_set_their_own() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("medin.yaml"), "suites: [golden]\nisolation: strict\n").unwrap();
    std::fs::create_dir(dir.path().join("golden")).unwrap();
    std::fs::write(dir.path().join("golden/inherits.yaml"), task("", "strict")).unwrap();
    std::fs::write(
        dir.path().join("golden/overrides.yaml"),
        task("isolation: process", "process"),
    )
    .unwrap();
    let out = medin().arg("--suite").arg(dir.path()).arg("run").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if medin::internal::sandbox::probe().strict.is_ok() {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("2 passed, 0 failed"), "{stdout}");
    } else {
        // Strict cannot be had: the inheriting task fails loudly as a harness error.
        assert_eq!(out.status.code(), Some(2), "{stdout}");
        assert!(stdout.contains("isolation `strict` is not available here"), "{stdout}");
    }
}

/// Runs `medin` as the unprivileged user `nobody` (uid 65534) with `setpriv`, from a copy of
/// the binary that user can execute. None when this test does not run as root or has no
/// `setpriv` (then the whole suite already runs unprivileged, strict tests included).
fn as_nobody(dir: &std::path::Path) -> Option<Command> {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 || Command::new("setpriv").arg("--version").output().is_err() {
        return None;
    }
    let bin = dir.join("medin");
    std::fs::copy(env!("CARGO_BIN_EXE_medin"), &bin).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(bin)
        .env("HOME", dir)
        .current_dir(dir);
    Some(c)
}

#[test]
fn strict_without_root_confines_through_a_user_namespace_or_fails_loudly() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut doctor) = as_nobody(dir.path()) else {
        return;
    };
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::os::unix::fs::chown(&ws, Some(65534), Some(65534)).unwrap();
    let caps = json(&doctor.args(["doctor", "--json"]).output().unwrap().stdout);
    assert_eq!(caps["root"], false, "{caps}");
    let outside = dir.path().join("outside.txt");
    let exec = |args: &[&str], script: &str| {
        let mut c = as_nobody(dir.path()).unwrap();
        c.args(["exec", "--isolation", "strict", "--workspace"])
            .arg(&ws)
            .args(args)
            .args(["--", "sh", "-c", script]);
        c.output().unwrap()
    };
    let out = exec(
        &[],
        &format!(
            "id -u; echo in > f; cat f; echo out > {}; echo out > /etc/medin-nobody; \
             test -e /dev/kmsg && echo host-dev; test -e /root && echo host-root; \
             python3 -c 'import pty; pty.openpty()' || echo no-pty; ps -e | wc -l",
            outside.display()
        ),
    );
    if caps["strict_ok"] != true {
        // Unprivileged user namespaces are off here: the request fails with the reason.
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            err.contains("not available here") && err.contains("user namespace"),
            "{err}"
        );
        return;
    }
    let r = json(&out.stdout);
    assert_eq!(r["isolation"], "strict", "{r}");
    let lines: Vec<&str> = r["stdout"]["text"].as_str().unwrap().lines().map(str::trim).collect();
    // Still nobody inside (no capability after exec), the workspace writable, nothing outside,
    // and only its own processes in sight (ps, sh, wc, the reaper and the header line).
    // The built view holds in a user namespace too: no host device or home, a private devpts.
    assert_eq!(lines[..2], ["65534", "in"], "{r}");
    assert_eq!(lines.len(), 3, "{r}");
    assert!(lines[2].parse::<u32>().unwrap() <= 6, "{r}");
    // A path beside the workspace lies in the view's private /tmp (the host file never
    // appears); the system trees are read-only.
    assert!(!outside.exists(), "wrote outside the workspace: {r}");
    let stderr = r["stderr"]["text"].as_str().unwrap();
    assert!(
        stderr.contains("/etc/medin-nobody: Read-only file system")
            || stderr.contains("/etc/medin-nobody: Permission denied"),
        "{r}"
    );
    assert!(!std::path::Path::new("/etc/medin-nobody").exists());
    // A fork bomb in a program meets the process limit, named, and leaves nothing behind.
    if caps["nproc_in_user_namespace"] == true {
        // A tag in the program text (it stays in every fork's command line) finds exactly this
        // test's processes, whatever else runs as nobody on the machine.
        let tag = format!("medin-nproc-{}", std::process::id());
        let out = exec(
            &["--max-procs", "40"],
            &format!(
                "python3 -c 'import os, time # {tag}\nfor i in range(500):\n    if os.fork() == 0:\n        time.sleep(30); os._exit(0)'"
            ),
        );
        let r = json(&out.stdout);
        assert_eq!(r["limit"], "PROCESS_LIMIT", "{r}");
        let left: Vec<String> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
            .filter(|e| {
                let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
                let alive = stat
                    .rsplit_once(')')
                    .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'));
                alive
                    && String::from_utf8_lossy(&std::fs::read(e.path().join("cmdline")).unwrap_or_default())
                        .contains(&tag)
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

#[test]
fn exec_strict_works_wherever_the_harness_keeps_its_temporary_files() {
    // The harness's TMPDIR decides where each command's private TMPDIR (and the probe's
    // workspace) lies; the built view must show it at that path, also through /var/tmp, which
    // the view makes a link to its /tmp, and outside both.
    if medin::internal::sandbox::probe().strict.is_err() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let var_tmp = std::path::Path::new("/var/tmp");
    let mut homes = vec![elsewhere.path().to_path_buf()];
    let under_var_tmp = var_tmp.is_dir().then(|| tempfile::tempdir_in(var_tmp).unwrap());
    homes.extend(under_var_tmp.as_ref().map(|d| d.path().to_path_buf()));
    for tmp in homes {
        let out = medin()
            .env("TMPDIR", &tmp)
            .args(["exec", "--isolation", "strict", "--workspace"])
            .arg(ws.path())
            .args([
                "--",
                "sh",
                "-c",
                "echo kept > \"$TMPDIR/f\" && cat \"$TMPDIR/f\" && echo \"$TMPDIR\"",
            ])
            .output()
            .unwrap();
        let r = json(&out.stdout);
        let text = r["stdout"]["text"].as_str().unwrap_or_default();
        assert!(
            text.starts_with(&format!("kept\n{}/medin-", tmp.display())),
            "{}: {r} {}",
            tmp.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

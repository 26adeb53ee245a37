//! The guard against bash itself: what bash would run is what the guard must judge.
//!
//! A hostile agent writes lines that one shell parser reads one way and bash another (a line
//! that starts with a backslash, a backslash before a newline inside a word, an escaped carriage
//! return, `$((` that is not arithmetic). This test generates such lines from fragments, each
//! holding a recursive deletion of a path outside the workspace in some spelling, and asks
//! bash what it would run: bash is started with an empty `PATH` and a `command_not_found_handle`
//! that records each command it was about to run and runs nothing (no fragment names a program
//! by its path, and the path deleted does not exist). Every line for which bash would run `rm`
//! on that path must be blocked.
//!
//! The lines come from a fixed seed, so a failure names lines that reproduce. Known gap, left
//! out of the fragments: constructs tree-sitter-bash rejects but bash accepts (`! f(){ :; }`)
//! are only warned (`parse.unparseable`), not blocked.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use medin::internal::guard::{check_command, GuardContext, Recommendation};

/// What the lines delete: outside the workspace, and not there.
const TARGET: &str = "/etc/medin-differential-none";

/// Deterministic pseudo-random choices (a 64-bit LCG): the same lines on every run.
struct Lcg(u64);

impl Lcg {
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        xs[((self.0 >> 33) as usize) % xs.len()]
    }
}

/// `count` distinct lines, each running (or seeming to run) `rm -rf TARGET` amid other text.
fn lines(count: usize) -> Vec<String> {
    let rm = [
        "rm",
        "\\rm",
        "r\\m",
        "\"rm\"",
        "'rm'",
        "r\"\"m",
        "r''m",
        "$'rm'",
        "${x:-rm}",
        "command rm",
        "\\\nrm",
        "r\\\nm",
    ];
    let target = TARGET;
    let (e, tail) = target.split_at(6);
    let args_owned = [
        format!("-rf {target}"),
        format!("-rf \"{target}\""),
        format!("-rf '{target}'"),
        format!("-r\\f {target}"),
        format!("-rf {e}\\\n{tail}"),
        format!("-rf {target}\\\n"),
        format!("-rf \\\n{target}"),
    ];
    let args: Vec<&str> = args_owned.iter().map(String::as_str).collect();
    let before = [
        "ls",
        "echo a",
        "true",
        "x=1",
        "echo \"a\"",
        "echo 'a'",
        "#c",
        "ls #c",
        "echo a\\",
        "echo \\#",
        ": ",
        "echo $((1))",
        "echo ${y}",
        "[[ -n x ]]",
        "echo a >/dev/null",
        "cat <<<x",
        "(ls)",
        "{ ls; }",
        "echo $(ls)",
        "echo `ls`",
        "echo a;",
        "echo \"a\nb\"",
        "echo 'a\nb'",
        "if true; then ls; fi",
        "case x in x) ls;; esac",
        "echo \\\\",
        "printf %s\\\\n a",
        "echo a\\\r",
    ];
    let between = [
        "\n", "\n\n", ";", "; ", "&&", "||", "|", "&", "\n\t", "\n ", "\r\n", " \\\n", "\\\n", " ;\n", "\n#c\n",
        "\n\\\n",
    ];
    let mut r = Lcg(0x6d65_6469_6e21);
    let mut out: Vec<String> = Vec::new();
    let mut tries = 0;
    while out.len() < count && tries < count * 20 {
        tries += 1;
        let (p, s, w, a) = (r.pick(&before), r.pick(&between), r.pick(&rm), r.pick(&args));
        let core = if r.pick(&["a", "b", "c"]) == "a" {
            format!("{w} {a}{s}{p}")
        } else {
            format!("{p}{s}{w} {a}")
        };
        let line = match r.pick(&[
            "plain", "subshell", "group", "subst", "back", "if", "assign", "quoted", "for", "and",
        ]) {
            "subshell" => format!("({core})"),
            "group" => format!("{{ {core}; }}"),
            "subst" => format!("$({core})"),
            "back" => format!("`{core}`"),
            "if" => format!("if true; then\n{core}\nfi"),
            "assign" => format!("x=$({core})"),
            "quoted" => format!("echo \"$({core})\""),
            "for" => format!("for i in 1; do {core}; done"),
            "and" => format!("true && {core}"),
            _ => core,
        };
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

/// The commands bash would run for `line`, one per line of the log, as its words joined by
/// spaces; None when bash cannot be started here.
fn bash_would_run(line: &str, dir: &Path, index: usize) -> Option<String> {
    // A log per line: nothing of an earlier line's can land in it.
    let log = dir.join(format!("log-{index}"));
    let handler =
        "command_not_found_handle() { printf '%s ' \"$@\" >> \"$LOG\"; printf '\\n' >> \"$LOG\"; return 0; }; x=; y=\n";
    let mut child = Command::new("/bin/bash")
        .args(["--noprofile", "--norc", "-c"])
        // `wait`: what the line put in the background is logged before bash ends.
        .arg(format!("{handler}{line}\nwait"))
        .env_clear()
        .env("PATH", "/nonexistent-medin-path")
        .env("LOG", &log)
        .env("HOME", dir)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
        }
    }
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(&log) {
        let _ = f.read_to_string(&mut text);
    }
    Some(text)
}

#[test]
fn every_line_bash_would_run_rm_on_is_blocked() {
    // Without bash there is no oracle: that is the machine's to fix, never a pass.
    assert!(
        Path::new("/bin/bash").exists(),
        "/bin/bash is missing: install bash (apt-get install bash) to judge the guard against it"
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ws = Path::new("/work/medin-ws/task-1");
    let ctx = GuardContext { workspace: ws };
    let mut ran = 0;
    let mut missed = Vec::new();
    let all = lines(600);
    for (index, line) in all.iter().enumerate() {
        let Some(log) = bash_would_run(line, dir.path(), index) else {
            panic!("bash could not be started");
        };
        let runs = log.lines().any(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words.first() == Some(&"rm")
                && words.contains(&TARGET)
                && words.iter().any(|w| w.contains('r') && w.starts_with('-'))
        });
        if runs {
            ran += 1;
            let v = check_command(line, &ctx);
            if v.recommendation != Recommendation::Block {
                missed.push(format!(
                    "{line:?} -> {:?} {:?}",
                    v.recommendation,
                    v.violations.first().map(|x| &x.rule)
                ));
            }
        }
    }
    // The oracle works: most generated lines do run the deletion in bash.
    assert!(
        ran > all.len() / 2,
        "bash ran the deletion for only {ran} of {} lines",
        all.len()
    );
    assert!(
        missed.is_empty(),
        "{} of {ran} lines bash would run `rm -rf {TARGET}` for are not blocked:\n{}",
        missed.len(),
        missed.join("\n")
    );
}

//! Validators over generated workspaces and checks: every kind runs and answers with a whole
//! result, failures say expected against actual, slow checks are flagged, checks run in
//! parallel and within their timeouts, and the cache never returns a stale result. Real
//! files, real commands through the sandbox, real TCP listeners and a tiny HTTP server.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use medin::internal::spec::{
    CommandCheck, CustomCheck, DockerCheck, DurationSpec, FileContainsCheck, HttpCheck, PortCheck, Validator,
    ValidatorSpec,
};
use medin::internal::validate::{
    run_all, run_all_cached, ValidateContext, ValidationCache, ValidationResult, ValidationStatus,
};
use proptest::prelude::*;

/// A port with a tiny HTTP server behind it that answers every request with `status`, and
/// one that accepts and never answers; both live as long as the test binary.
fn server(status: u16) -> u16 {
    static PORTS: OnceLock<std::sync::Mutex<HashMap<u16, u16>>> = OnceLock::new();
    let ports = PORTS.get_or_init(Default::default);
    let mut ports = ports.lock().unwrap_or_else(|p| p.into_inner());
    *ports.entry(status).or_insert_with(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("an address").port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                let mut stream = stream;
                if status == 0 {
                    held.push(stream); // accepted, never answered
                    continue;
                }
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf);
                let body = format!("status {status}");
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        port
    })
}

/// A port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("an address").port()
}

fn secs(d: Duration) -> Option<DurationSpec> {
    Some(DurationSpec(d))
}

fn command(run: &str, exit_code: i32) -> ValidatorSpec {
    ValidatorSpec::Command(CommandCheck {
        run: run.into(),
        exit_code,
        stdout: None,
        timeout: secs(Duration::from_secs(10)),
    })
}

/// A generated check and what it must find (`None`: the machine decides, e.g. a container
/// engine's answer).
#[derive(Debug, Clone)]
struct Case {
    spec: ValidatorSpec,
    kind: &'static str,
    expect: Option<ValidationStatus>,
}

/// Files the workspace may hold: `f0.txt` .. `f2.txt`, `alpha` or `beta`.
fn workspace() -> impl Strategy<Value = Vec<Option<bool>>> {
    prop::collection::vec(prop::option::of(any::<bool>()), 3)
}

/// A check of any kind; `docker` weighs 0 or 1 (it asks the installed engine: slow).
fn case(files: Vec<Option<bool>>, docker_weight: u32) -> impl Strategy<Value = Case> {
    use ValidationStatus::{Failed, Passed, Pending};
    fn verdict(ok: bool) -> Option<ValidationStatus> {
        Some(if ok { Passed } else { Failed })
    }
    let f = files.clone();
    let exists = (0usize..3).prop_map(move |i| Case {
        spec: ValidatorSpec::FileExists(format!("f{i}.txt")),
        kind: "file_exists",
        expect: verdict(f[i].is_some()),
    });
    let f = files.clone();
    let contains = (0usize..3, any::<bool>()).prop_map(move |(i, alpha)| Case {
        spec: ValidatorSpec::FileContains(FileContainsCheck {
            path: format!("f{i}.txt"),
            pattern: if alpha { "^alpha$".into() } else { "^beta$".into() },
        }),
        kind: "file_contains",
        expect: verdict(f[i] == Some(alpha)),
    });
    let f = files;
    let cmd = (0usize..3, 0i32..3).prop_map(move |(i, expected)| Case {
        spec: command(&format!("test -f f{i}.txt"), expected),
        kind: "command",
        expect: verdict((f[i].is_some() && expected == 0) || (f[i].is_none() && expected == 1)),
    });
    let port = any::<bool>().prop_map(|open| Case {
        spec: ValidatorSpec::PortListening(PortCheck {
            port: if open { server(200) } else { closed_port() },
            host: None,
        }),
        kind: "port_listening",
        expect: verdict(open),
    });
    let http = (
        prop::sample::select(vec![200u16, 404, 500]),
        prop::option::of(prop::sample::select(vec![200u16, 404])),
    )
        .prop_map(|(status, want)| Case {
            spec: ValidatorSpec::Http(HttpCheck {
                url: format!("http://127.0.0.1:{}/health", server(status)),
                status: want,
                body_contains: None,
                timeout: secs(Duration::from_secs(5)),
            }),
            kind: "http",
            expect: verdict(want.map_or((200..300).contains(&status), |w| w == status)),
        });
    let custom = prop::sample::select(vec!["passed", "failed", "pending"]).prop_map(|status| Case {
        spec: ValidatorSpec::Custom(CustomCheck {
            command: format!("echo '{{\"status\": \"{status}\", \"message\": \"said {status}\"}}'"),
            timeout: secs(Duration::from_secs(10)),
        }),
        kind: "custom",
        expect: Some(match status {
            "passed" => Passed,
            "failed" => Failed,
            _ => Pending,
        }),
    });
    let docker = Just(Case {
        spec: ValidatorSpec::Docker(DockerCheck {
            container: "medin-properties-no-such-container".into(),
            running: true,
            healthy: false,
        }),
        kind: "docker",
        expect: None,
    });
    prop_oneof![3 => exists, 3 => contains, 3 => cmd, 2 => port, 2 => http, 2 => custom, docker_weight => docker]
}

fn checks(docker_weight: u32) -> impl Strategy<Value = (Vec<Option<bool>>, Vec<Case>)> {
    workspace().prop_flat_map(move |files| {
        (
            Just(files.clone()),
            prop::collection::vec(case(files, docker_weight), 1..6),
        )
    })
}

/// What a run of checks answered, and the time window it ran in.
struct Answered {
    results: Vec<ValidationResult>,
    took: Duration,
    before: chrono::DateTime<chrono::Utc>,
    after: chrono::DateTime<chrono::Utc>,
}

/// Runs `cases` in a workspace holding `files`.
fn answer(files: &[Option<bool>], cases: &[Case]) -> Answered {
    let dir = tempfile::tempdir().expect("a temp dir");
    write_files(dir.path(), files);
    let before = chrono::Utc::now();
    let started = Instant::now();
    let results = run_all(&validators(cases), &ValidateContext::new(dir.path()));
    Answered {
        took: started.elapsed(),
        after: chrono::Utc::now(),
        before,
        results,
    }
}

fn write_files(dir: &Path, files: &[Option<bool>]) {
    for (i, f) in files.iter().enumerate() {
        if let Some(alpha) = f {
            std::fs::write(dir.join(format!("f{i}.txt")), if *alpha { "alpha\n" } else { "beta\n" }).expect("write");
        }
    }
}

fn validators(cases: &[Case]) -> Vec<Validator> {
    cases.iter().map(|c| Validator::from(c.spec.clone())).collect()
}

proptest! {
    #![proptest_config(crate::cases(16))]

    /// **Property 12: Validation Type Completeness.** *For any* validation request, the
    /// Validator must support docker, network, API, and file system validation types.
    ///
    /// medin's kinds: `file_exists`, `file_contains` (file system), `command` and `custom`
    /// (a script's verdict), `port_listening` (network), `http` (API), `docker`. Over generated
    /// workspaces and lists of checks of every kind, each check answers with one result, in
    /// order, labelled by its kind, with the status the end state calls for (a container's is
    /// the engine's to give). 16 cases: commands and scripts run in the sandbox, the docker
    /// check asks the installed engine.
    #[test]
    fn p12_validation_type_completeness((files, cases) in checks(1)) {
        let answered = answer(&files, &cases);
        prop_assert_eq!(answered.results.len(), cases.len());
        for (r, c) in answered.results.iter().zip(&cases) {
            prop_assert!(r.check.starts_with(c.kind), "{} is not labelled as {}", r.check, c.kind);
            if let Some(expect) = c.expect {
                prop_assert_eq!(r.status, expect, "{:?}", r);
            }
        }
    }

    /// **Property 14: Validation Result Structure.** *For any* validation execution, the result
    /// must contain passed (boolean), evidence (string), confidence (0-100), duration (ms), and
    /// timestamp (ISO 8601).
    ///
    /// Over generated checks of every kind but `docker` (property 12 has it): `passed` is
    /// exactly `status == passed`, the evidence is not empty, confidence is at most 100, above
    /// 0 when something was observed and 0 when nothing was (pending), the duration is within
    /// the call's, the timestamp is RFC 3339 and within the call. 16 cases (sandboxed
    /// commands).
    #[test]
    fn p14_validation_result_structure((files, cases) in checks(0)) {
        let answered = answer(&files, &cases);
        for r in &answered.results {
            prop_assert_eq!(r.passed, r.status == ValidationStatus::Passed);
            prop_assert!(!r.evidence.trim().is_empty(), "{:?}", r);
            prop_assert!(r.confidence <= 100);
            if r.status == ValidationStatus::Pending {
                prop_assert_eq!(r.confidence, 0);
            } else {
                prop_assert!(r.confidence > 0, "{:?}", r);
            }
            prop_assert!(r.duration_ms <= answered.took.as_millis() as u64 + 1, "{:?}", r);
            let at = chrono::DateTime::parse_from_rfc3339(&r.timestamp).expect("an RFC 3339 timestamp");
            prop_assert!(
                at >= answered.before - chrono::Duration::milliseconds(1) && at <= answered.after,
                "{}", r.timestamp
            );
        }
    }

    /// **Property 15: Validation Error Detail.** *For any* failed validation, the error
    /// information must include expected state and actual state.
    ///
    /// Over generated checks of every kind but `docker`: every failed result has an error, an
    /// expected and an actual state, none of them empty; a pending one says why it could not
    /// decide; a passed one carries no error. 16 cases (sandboxed commands).
    #[test]
    fn p15_validation_error_detail((files, cases) in checks(0)) {
        for r in &answer(&files, &cases).results {
            match r.status {
                ValidationStatus::Failed => {
                    for part in [&r.error, &r.expected, &r.actual] {
                        prop_assert!(part.as_ref().is_some_and(|p| !p.trim().is_empty()), "{:?}", r);
                    }
                }
                ValidationStatus::Pending => prop_assert!(r.error.is_some(), "{:?}", r),
                ValidationStatus::Passed => prop_assert!(r.error.is_none(), "{:?}", r),
            }
        }
    }

    /// **Property 13: Validation Performance Monitoring.** *For any* validation that takes
    /// longer than 100ms, the Validator must log a performance warning.
    ///
    /// medin puts the warning on the result (`warnings`), which the run's reporters show and
    /// log. Over generated checks that take from 0 to 250 ms (commands that sleep, and file
    /// checks), a result that took more than 100 ms carries a warning naming the check and its
    /// time, and one that took less carries none. 16 cases (commands in the sandbox).
    #[test]
    fn p13_validation_performance_monitoring(sleeps in prop::collection::vec(prop::option::of(0u64..250), 1..4)) {
        let dir = tempfile::tempdir().expect("a temp dir");
        let specs: Vec<Validator> = sleeps
            .iter()
            .map(|s| match s {
                Some(ms) => command(&format!("sleep {}.{:03}", ms / 1000, ms % 1000), 0),
                None => ValidatorSpec::FileExists("nothing-here".into()),
            })
            .map(Validator::from)
            .collect();
        for r in run_all(&specs, &ValidateContext::new(dir.path())) {
            if r.duration_ms > 100 {
                prop_assert_eq!(r.warnings.len(), 1, "{:?}", r);
                prop_assert!(r.warnings[0].contains(&r.check) && r.warnings[0].contains("ms"), "{:?}", r.warnings);
            } else if r.duration_ms < 100 {
                prop_assert!(r.warnings.is_empty(), "{:?}", r);
            }
        }
    }
}

proptest! {
    #![proptest_config(crate::cases(8))]

    /// **Property 35: Validation Parallel Execution.** *For any* set of independent validation
    /// checks, they must execute in parallel when possible.
    ///
    /// Over generated sets of 2–6 checks that each take 400 ms (commands through the sandbox)
    /// mixed with file checks, the whole set takes well under the sum of its checks' times,
    /// and the results come back in the order of the checks. 8 cases (each takes ~0.4 s).
    #[test]
    fn p35_validation_parallel_execution(slow in 2usize..7, files in prop::collection::vec(any::<bool>(), 0..3)) {
        let dir = tempfile::tempdir().expect("a temp dir");
        let mut specs: Vec<ValidatorSpec> =
            (0..slow).map(|i| command(&format!("sleep 0.4; echo {i}"), 0)).collect();
        for (i, exists) in files.iter().enumerate() {
            let path = if *exists { "." } else { "none" };
            specs.insert(i.min(specs.len()), ValidatorSpec::FileExists(path.into()));
        }
        let specs: Vec<Validator> = specs.into_iter().map(Validator::from).collect();
        let started = Instant::now();
        let results = run_all(&specs, &ValidateContext::new(dir.path()));
        let took = started.elapsed();
        let serial = Duration::from_millis(400) * slow as u32;
        prop_assert!(took >= Duration::from_millis(400));
        prop_assert!(took < serial.mul_f64(0.75), "{} checks of 400 ms took {:?}", slow, took);
        let labels: Vec<&str> = results.iter().map(|r| r.check.as_str()).collect();
        let expected: Vec<String> = specs.iter().map(|v| match &v.check {
            ValidatorSpec::Command(c) => format!("command {}", c.run),
            ValidatorSpec::FileExists(p) => format!("file_exists {p}"),
            _ => unreachable!("only commands and file checks here"),
        }).collect();
        prop_assert_eq!(labels, expected.iter().map(String::as_str).collect::<Vec<_>>());
    }

    /// **Property 36: Validation Timeout Enforcement.** *For any* validation execution, it must
    /// timeout after 5 seconds and return a timeout error.
    ///
    /// medin: each check has a timeout of its own (`timeout:`), else the run's default (60 s,
    /// so that a real test suite can finish; `medin check` warns about a command that relies
    /// on it), and a check that runs out of time is `pending` ("timed out after ..."), never a
    /// pass or a failure. Over generated timeouts (100–600 ms) given by the check or by the
    /// default, on a command, a script and an HTTP endpoint that never answer: every result is
    /// pending with the timeout named, and comes back within its timeout plus the sandbox's
    /// grace period. 8 cases.
    #[test]
    fn p36_validation_timeout_enforcement(timeout_ms in 100u64..600, own in any::<bool>()) {
        let dir = tempfile::tempdir().expect("a temp dir");
        let timeout = Duration::from_millis(timeout_ms);
        let own_timeout = if own { secs(timeout) } else { None };
        let specs: Vec<Validator> = vec![
            ValidatorSpec::Command(CommandCheck {
                run: "sleep 30".into(),
                exit_code: 0,
                stdout: None,
                timeout: own_timeout,
            }),
            ValidatorSpec::Custom(CustomCheck { command: "sleep 30".into(), timeout: own_timeout }),
            ValidatorSpec::Http(HttpCheck {
                url: format!("http://127.0.0.1:{}/", server(0)),
                status: None,
                body_contains: None,
                timeout: own_timeout,
            }),
        ]
        .into_iter()
        .map(Validator::from)
        .collect();
        let mut ctx = ValidateContext::new(dir.path());
        ctx.default_timeout = if own { Duration::from_secs(60) } else { timeout };
        let grace = ctx.pipeline.sandbox().grace;
        let started = Instant::now();
        let results = run_all(&specs, &ctx);
        let took = started.elapsed();
        prop_assert!(took < timeout + grace + Duration::from_millis(1500), "took {:?}", took);
        for r in &results {
            prop_assert_eq!(r.status, ValidationStatus::Pending, "{:?}", r);
            let error = r.error.as_deref().unwrap_or_default();
            prop_assert!(error.contains("timed out after"), "{:?}", r);
            prop_assert!(r.duration_ms + 5 >= timeout_ms, "{:?}", r);
        }
    }
}

/// One step of a generated sequence of actions and checks.
#[derive(Debug, Clone)]
enum Step {
    /// Writes `f<i>.txt` (`alpha` or `beta`).
    Write(usize, bool),
    Remove(usize),
    /// Runs check `j` through the cache (and once without, to compare).
    Check(usize),
    /// Runs the check that ran last again (a duplicate request).
    Again,
    /// Waits past the cache's racy window, so stamps can be trusted.
    Settle,
    /// An action through the pipeline: the cache forgets everything.
    Invalidate,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => (0usize..2, any::<bool>()).prop_map(|(i, a)| Step::Write(i, a)),
        1 => (0usize..2).prop_map(Step::Remove),
        4 => (0usize..4).prop_map(Step::Check),
        3 => Just(Step::Again),
        2 => Just(Step::Settle),
        1 => Just(Step::Invalidate),
    ]
}

/// Check `j`: `file_exists f<j/2>.txt` or `file_contains f<j/2>.txt /^alpha$/`.
fn cached_check(j: usize) -> Validator {
    let path = format!("f{}.txt", j / 2);
    Validator::from(if j.is_multiple_of(2) {
        ValidatorSpec::FileExists(path)
    } else {
        ValidatorSpec::FileContains(FileContainsCheck {
            path,
            pattern: "^alpha$".into(),
        })
    })
}

proptest! {
    #![proptest_config(crate::cases(12))]

    /// **Property 34: Validation Result Caching.** *For any* duplicate validation request
    /// within 5 seconds, the cached result must be returned without re-execution.
    ///
    /// medin keys a result by the state it depends on, not by time alone: a duplicate within
    /// the cache's time (5 s) is returned without running again *when nothing it depends on
    /// changed*; otherwise it runs again (a stale result is worse than a slow one). Over
    /// generated workspaces and sequences of writes, removals, checks, repeated checks, pauses
    /// and pipeline actions: every
    /// cached answer equals what running the check afresh says at that moment (never stale),
    /// and a repeated check whose file was not touched since it last ran on settled stamps
    /// returns that earlier result unchanged — same timestamp: it did not run again. 12 cases
    /// (each pause waits past the 100 ms racy window).
    #[test]
    fn p34_validation_result_caching(start in workspace(), steps in prop::collection::vec(step(), 1..10)) {
        let dir = tempfile::tempdir().expect("a temp dir");
        // The sequence starts from a workspace written a while ago.
        write_files(dir.path(), &start[..2]);
        std::thread::sleep(Duration::from_millis(130));
        let ctx = ValidateContext::new(dir.path());
        let cache = ValidationCache::new(Duration::from_secs(60));
        // Per check: its last cached result, and whether it must still be reused.
        let mut last: Vec<Option<(ValidationResult, bool)>> = vec![None; 4];
        let mut settled = true;
        let mut latest = 0;
        for step in &steps {
            let step = match step {
                Step::Again => &Step::Check(latest),
                other => other,
            };
            match step {
                Step::Write(i, alpha) => {
                    let content = if *alpha { "alpha\n" } else { "beta\n" };
                    std::fs::write(dir.path().join(format!("f{i}.txt")), content).expect("write");
                    settled = false;
                    last.iter_mut().for_each(|l| *l = None);
                }
                Step::Remove(i) => {
                    let _ = std::fs::remove_file(dir.path().join(format!("f{i}.txt")));
                    settled = false;
                    last.iter_mut().for_each(|l| *l = None);
                }
                Step::Settle => {
                    std::thread::sleep(Duration::from_millis(130));
                    settled = true;
                }
                Step::Invalidate => {
                    cache.invalidate();
                    last.iter_mut().for_each(|l| *l = None);
                }
                Step::Again => unreachable!("replaced by the check it repeats"),
                Step::Check(j) => {
                    latest = *j;
                    let v = cached_check(*j);
                    let got = run_all_cached(std::slice::from_ref(&v), &ctx, &cache).remove(0);
                    let fresh = run_all(std::slice::from_ref(&v), &ctx).remove(0);
                    prop_assert_eq!(got.status, fresh.status, "a stale result after {:?}", steps);
                    if let Some((previous, true)) = &last[*j] {
                        prop_assert_eq!(&got, previous, "not reused after {:?}", steps);
                    }
                    last[*j] = Some((got, settled));
                }
            }
        }
    }
}

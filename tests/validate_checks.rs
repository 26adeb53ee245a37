//! Validators against real files, real listeners and a tiny real HTTP server.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use medin::internal::spec::{DurationSpec, FileContainsCheck, HttpCheck, PortCheck, Validator, ValidatorSpec};
use medin::internal::validate::{
    run_all, run_all_cached, ValidateContext, ValidationCache, ValidationResult, ValidationStatus,
};

fn ctx(dir: &Path) -> ValidateContext {
    ValidateContext::new(dir)
}

fn one(spec: ValidatorSpec, ctx: &ValidateContext) -> ValidationResult {
    let mut r = run_all(&[spec.into()], ctx);
    assert_eq!(r.len(), 1);
    r.remove(0)
}

fn http(url: &str) -> HttpCheck {
    HttpCheck {
        url: url.to_string(),
        status: None,
        body_contains: None,
        timeout: None,
    }
}

fn assert_status(r: &ValidationResult, status: ValidationStatus) {
    assert_eq!(r.status, status, "{r:#?}");
    assert_eq!(r.passed, status == ValidationStatus::Passed);
    assert!(
        chrono::DateTime::parse_from_rfc3339(&r.timestamp).is_ok(),
        "{}",
        r.timestamp
    );
}

/// A server on 127.0.0.1:0 that answers every connection (each on its own thread) after
/// `delay` with `response`, then closes unless `keep_open`.
fn serve(response: &'static str, delay: Duration, keep_open: bool) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            thread::spawn(move || {
                let mut req = Vec::new();
                let mut buf = [0u8; 1024];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                assert!(req.starts_with(b"GET /"), "{}", String::from_utf8_lossy(&req));
                thread::sleep(delay);
                let _ = conn.write_all(response.as_bytes());
                if keep_open {
                    thread::sleep(Duration::from_secs(5));
                }
            });
        }
    });
    port
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

// ---------------------------------------------------------------- files

#[test]
fn file_exists_sees_real_files_and_directories() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hello\n").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let c = ctx(dir.path());

    let r = one(ValidatorSpec::FileExists("hello.txt".into()), &c);
    assert_status(&r, ValidationStatus::Passed);
    assert_eq!(r.check, "file_exists hello.txt");
    assert_eq!(r.confidence, 100);
    assert!(r.evidence.contains("6 bytes"), "{}", r.evidence);
    assert!(r.error.is_none());

    let r = one(ValidatorSpec::FileExists("sub/../sub".into()), &c);
    assert_status(&r, ValidationStatus::Passed);
    assert!(r.evidence.contains("directory"));

    let r = one(ValidatorSpec::FileExists("missing.txt".into()), &c);
    assert_status(&r, ValidationStatus::Failed);
    assert_eq!(r.expected.as_deref(), Some("missing.txt exists"));
    assert_eq!(r.actual.as_deref(), Some("not found"));
    assert!(r.error.is_some());
}

#[test]
fn paths_escaping_the_workspace_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(root.path().join("secret"), "s3cret").unwrap();
    std::os::unix::fs::symlink(root.path().join("secret"), ws.join("link")).unwrap();
    let c = ctx(&ws);
    for path in ["../secret", "link", "/etc/hostname", "a/../../secret"] {
        let r = one(ValidatorSpec::FileExists(path.into()), &c);
        assert_status(&r, ValidationStatus::Failed);
        let err = r.error.clone().unwrap();
        assert!(
            err.contains("outside the workspace") || err.contains("leaves the workspace") || err.contains("symlink"),
            "{path}: {err}"
        );
        assert!(
            !format!("{r:?}").contains("s3cret"),
            "{path}: the secret reached the result"
        );
        let r = one(
            ValidatorSpec::FileContains(FileContainsCheck {
                path: path.into(),
                pattern: "s3".into(),
            }),
            &c,
        );
        assert_status(&r, ValidationStatus::Failed);
    }
}

#[test]
fn file_contains_matches_a_regex_and_reports_the_start_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let long: String = "abcdefghij".repeat(50);
    std::fs::write(dir.path().join("out.txt"), format!("{long}\nversion = 1.2.3\n")).unwrap();
    let c = ctx(dir.path());
    let check = |pattern: &str| {
        one(
            ValidatorSpec::FileContains(FileContainsCheck {
                path: "out.txt".into(),
                pattern: pattern.into(),
            }),
            &c,
        )
    };

    let r = check(r"version = \d+\.\d+\.\d+");
    assert_status(&r, ValidationStatus::Passed);
    assert!(r.evidence.contains("1.2.3"), "{}", r.evidence);

    // Multi-line mode, as grep: `^` and `$` match at line boundaries.
    let r = check(r"^version = [\d.]+$");
    assert_status(&r, ValidationStatus::Passed);

    let r = check(r"version = 2\.");
    assert_status(&r, ValidationStatus::Failed);
    assert_eq!(r.expected.as_deref(), Some(r"version = 2\."));
    let actual = r.actual.unwrap();
    assert!(actual.starts_with(&long[..200]));
    assert_eq!(actual.trim_end_matches('…').chars().count(), 200);

    let r = check("(unclosed");
    assert_status(&r, ValidationStatus::Failed);
    assert!(r.error.unwrap().contains("invalid regex"));

    let r = one(
        ValidatorSpec::FileContains(FileContainsCheck {
            path: "nope".into(),
            pattern: "x".into(),
        }),
        &c,
    );
    assert_status(&r, ValidationStatus::Failed);
    assert_eq!(r.actual.as_deref(), Some("file not found"));
}

// ---------------------------------------------------------------- ports

#[test]
fn port_listening_connects_to_a_real_listener() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let r = one(
        ValidatorSpec::PortListening(PortCheck { port, host: None }),
        &ctx(dir.path()),
    );
    assert_status(&r, ValidationStatus::Passed);
    assert_eq!(r.check, format!("port_listening 127.0.0.1:{port}"));
    assert!(r.evidence.contains(&format!("127.0.0.1:{port}")), "{}", r.evidence);
    drop(listener);
}

#[test]
fn a_refused_port_is_a_failure_not_pending() {
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let r = one(
        ValidatorSpec::PortListening(PortCheck {
            port,
            host: Some("127.0.0.1".into()),
        }),
        &ctx(dir.path()),
    );
    assert_status(&r, ValidationStatus::Failed);
    assert!(r.evidence.contains("refused"), "{}", r.evidence);
    assert_eq!(r.actual.as_deref(), Some("connection refused"));
}

#[test]
fn an_unresolvable_host_is_pending() {
    let dir = tempfile::tempdir().unwrap();
    let r = one(
        ValidatorSpec::PortListening(PortCheck {
            port: 80,
            host: Some("no-such-host.invalid".into()),
        }),
        &ctx(dir.path()),
    );
    assert_status(&r, ValidationStatus::Pending);
    assert_eq!(r.confidence, 0);
    assert!(r.error.unwrap().contains("cannot resolve"));
}

// ---------------------------------------------------------------- http

#[test]
fn http_checks_status_and_body() {
    let port = serve(
        "HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{\"status\":\"up\"}",
        Duration::ZERO,
        false,
    );
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let url = format!("http://127.0.0.1:{port}/health");

    let r = one(ValidatorSpec::Http(http(&url)), &c);
    assert_status(&r, ValidationStatus::Passed);
    assert_eq!(r.check, format!("http GET {url}"));
    assert_eq!(r.confidence, 100);
    assert!(r.evidence.contains("200 OK"), "{}", r.evidence);

    let r = one(
        ValidatorSpec::Http(HttpCheck {
            body_contains: Some("\"up\"".into()),
            ..http(&url)
        }),
        &c,
    );
    assert_status(&r, ValidationStatus::Passed);
    assert_eq!(r.confidence, 90);

    let r = one(
        ValidatorSpec::Http(HttpCheck {
            body_contains: Some("down".into()),
            ..http(&url)
        }),
        &c,
    );
    assert_status(&r, ValidationStatus::Failed);
    assert_eq!(r.expected.as_deref(), Some("down"));
    assert_eq!(r.actual.as_deref(), Some("{\"status\":\"up\"}"));

    let r = one(
        ValidatorSpec::Http(HttpCheck {
            status: Some(204),
            ..http(&url)
        }),
        &c,
    );
    assert_status(&r, ValidationStatus::Failed);
    assert_eq!(r.expected.as_deref(), Some("status 204"));
    assert_eq!(r.actual.as_deref(), Some("status 200 OK"));
}

#[test]
fn http_reads_a_404_a_chunked_body_and_a_kept_open_connection() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());

    let port = serve(
        "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found",
        Duration::ZERO,
        false,
    );
    let url = format!("http://127.0.0.1:{port}/x");
    let r = one(ValidatorSpec::Http(http(&url)), &c);
    assert_status(&r, ValidationStatus::Failed);
    assert_eq!(r.actual.as_deref(), Some("status 404 Not Found"));
    let r = one(
        ValidatorSpec::Http(HttpCheck {
            status: Some(404),
            ..http(&url)
        }),
        &c,
    );
    assert_status(&r, ValidationStatus::Passed);

    let port = serve(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
        Duration::ZERO,
        true,
    );
    let started = Instant::now();
    let r = one(
        ValidatorSpec::Http(HttpCheck {
            body_contains: Some("hello world".into()),
            ..http(&format!("http://127.0.0.1:{port}/"))
        }),
        &c,
    );
    assert_status(&r, ValidationStatus::Passed);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "waited for the server to close: {:?}",
        started.elapsed()
    );

    // Content-Length ends the body even when the server keeps the connection open.
    let port = serve("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", Duration::ZERO, true);
    let started = Instant::now();
    let r = one(ValidatorSpec::Http(http(&format!("http://127.0.0.1:{port}/"))), &c);
    assert_status(&r, ValidationStatus::Passed);
    assert!(started.elapsed() < Duration::from_secs(2));

    // Something listens but does not speak HTTP.
    let port = serve("SSH-2.0-OpenSSH_9.6\r\n\r\n", Duration::ZERO, false);
    let r = one(ValidatorSpec::Http(http(&format!("http://127.0.0.1:{port}/"))), &c);
    assert_status(&r, ValidationStatus::Failed);
    assert!(r.error.unwrap().contains("no valid HTTP response"));
}

#[test]
fn http_refused_is_failed_https_and_timeouts_are_pending() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());

    let r = one(
        ValidatorSpec::Http(http(&format!("http://127.0.0.1:{}/", free_port()))),
        &c,
    );
    assert_status(&r, ValidationStatus::Failed);
    assert_eq!(r.actual.as_deref(), Some("connection refused"));

    let r = one(ValidatorSpec::Http(http("https://127.0.0.1:1/")), &c);
    assert_status(&r, ValidationStatus::Pending);
    assert_eq!(
        r.error.as_deref(),
        Some("https is not supported by the built-in http validator; use a command validator with curl")
    );

    let port = serve(
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        Duration::from_secs(3),
        false,
    );
    let started = Instant::now();
    let r = one(
        ValidatorSpec::Http(HttpCheck {
            timeout: Some(DurationSpec(Duration::from_millis(300))),
            ..http(&format!("http://127.0.0.1:{port}/"))
        }),
        &c,
    );
    assert_status(&r, ValidationStatus::Pending);
    assert_eq!(r.error.as_deref(), Some("timed out after 300ms"));
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );

    let r = one(ValidatorSpec::Http(http("not a url")), &c);
    assert_status(&r, ValidationStatus::Failed);
}

#[test]
fn the_default_timeout_applies_when_the_spec_gives_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ctx(dir.path());
    c.default_timeout = Duration::from_millis(200);
    let port = serve(
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        Duration::from_secs(3),
        false,
    );
    let r = one(ValidatorSpec::Http(http(&format!("http://127.0.0.1:{port}/"))), &c);
    assert_status(&r, ValidationStatus::Pending);
    assert_eq!(r.error.as_deref(), Some("timed out after 200ms"));
}

// ---------------------------------------------------------------- run_all

#[test]
fn validators_run_in_parallel_and_keep_their_order() {
    let port = serve(
        "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nslow",
        Duration::from_millis(300),
        false,
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let c = ctx(dir.path());
    let url = format!("http://127.0.0.1:{port}/");
    let mut specs: Vec<ValidatorSpec> = (0..4).map(|_| ValidatorSpec::Http(http(&url))).collect();
    specs.insert(2, ValidatorSpec::FileExists("a.txt".into()));
    specs.push(ValidatorSpec::FileExists("b.txt".into()));
    let specs: Vec<Validator> = specs.into_iter().map(Validator::from).collect();

    let started = Instant::now();
    let results = run_all(&specs, &c);
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_millis(800),
        "4 × 300 ms ran serially? took {elapsed:?}"
    );
    assert!(elapsed >= Duration::from_millis(300));

    let checks: Vec<&str> = results.iter().map(|r| r.check.as_str()).collect();
    let h = format!("http GET {url}");
    assert_eq!(
        checks,
        [h.as_str(), &h, "file_exists a.txt", &h, &h, "file_exists b.txt"]
    );
    let passed: Vec<bool> = results.iter().map(|r| r.passed).collect();
    assert_eq!(passed, [true, true, true, true, true, false]);
    assert!(results[0].duration_ms >= 290, "{}", results[0].duration_ms);
    assert!(run_all(&[], &c).is_empty());
}

// ---------------------------------------------------------------- cache

#[test]
fn the_cache_returns_a_recent_result_without_running_again_and_never_a_stale_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    // A stamp younger than the racy window is not trusted (see `validate::cache`).
    thread::sleep(Duration::from_millis(150));
    let c = ctx(dir.path());
    let cache = ValidationCache::new(Duration::from_millis(400));
    let specs: [Validator; 2] = [
        ValidatorSpec::FileExists("a.txt".into()).into(),
        ValidatorSpec::Http(http("https://x/")).into(),
    ];

    let first = run_all_cached(&specs, &c, &cache);
    assert!(first[0].passed);
    assert_eq!(first[1].status, ValidationStatus::Pending);
    assert_eq!(cache.len(), 1, "pending results are never cached");

    // Nothing changed: the earlier result comes back unchanged (same timestamp).
    let second = run_all_cached(&specs, &c, &cache);
    assert_eq!(second[0], first[0]);

    // The file goes away: the cached pass is stale and never returned.
    std::fs::remove_file(dir.path().join("a.txt")).unwrap();
    let third = run_all_cached(&specs, &c, &cache);
    assert_eq!(third[0].status, ValidationStatus::Failed, "{:#?}", third[0]);

    // Another workspace is another key.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("a.txt"), "a").unwrap();
    let r = run_all_cached(&specs[..1], &ctx(other.path()), &cache);
    assert!(r[0].passed);

    // Past the TTL, the check runs again.
    thread::sleep(Duration::from_millis(450));
    let fourth = run_all_cached(&specs, &c, &cache);
    assert_eq!(fourth[0].status, ValidationStatus::Failed);
    assert_ne!(fourth[0].timestamp, third[0].timestamp);
    assert_eq!(fourth.len(), 2);
}

#[test]
fn a_port_check_does_not_block_on_a_listener_that_never_accepts() {
    // The kernel completes the handshake from the backlog; the check passes without accept().
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let results = run_all(
        &vec![Validator::from(ValidatorSpec::PortListening(PortCheck { port, host: None })); 3],
        &ctx(dir.path()),
    );
    assert!(results.iter().all(|r| r.passed));
}

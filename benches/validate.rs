//! Validation latency: `file_exists`, `file_contains`, `command` (through the sandbox) and
//! `http` against a local server, each through `validate::run_all` as the runner calls it.
//! Criterion measures each; before it does, 100 timed runs per check print their p50 and p95,
//! the figures the latency target is stated in (95 of 100 checks under 100 ms; a slower check
//! carries a warning, see `validate::SLOW_CHECK`).
//!
//! Run: `cargo bench --bench validate`.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use medin::internal::spec::{Validator, ValidatorSpec};
use medin::internal::validate::{run_all, ValidateContext};

fn validator(json: serde_json::Value) -> Validator {
    serde_json::from_value::<ValidatorSpec>(json)
        .expect("a validator")
        .into()
}

/// A local HTTP server answering every request with `200 ok`, on its own thread.
fn serve() -> u16 {
    let server = tiny_http::Server::http("127.0.0.1:0").expect("a local server");
    let port = server.server_addr().to_ip().expect("an IP address").port();
    std::thread::spawn(move || {
        for request in server.incoming_requests() {
            let _ = request.respond(tiny_http::Response::from_string("ok"));
        }
    });
    port
}

/// p50 and p95 of `n` runs of `check`.
fn percentiles(check: &Validator, ctx: &ValidateContext, n: usize) -> (Duration, Duration) {
    let mut took: Vec<Duration> = (0..n)
        .map(|i| {
            let started = Instant::now();
            let results = run_all(std::slice::from_ref(check), ctx);
            assert!(results[0].passed, "run {i}: {:?}", results[0]);
            started.elapsed()
        })
        .collect();
    took.sort();
    (took[n / 2], took[(n * 95).div_ceil(100) - 1])
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let text: String = (0..2000).map(|i| format!("line {i}\n")).collect::<String>() + "version = 42\n";
    std::fs::write(dir.path().join("config.txt"), text).expect("write");
    let ctx = ValidateContext::new(dir.path());
    let port = serve();
    let checks = [
        (
            "file_exists",
            validator(serde_json::json!({ "file_exists": "config.txt" })),
        ),
        (
            "file_contains",
            validator(serde_json::json!({ "file_contains": { "path": "config.txt", "pattern": "^version = \\d+$" } })),
        ),
        (
            "command",
            validator(
                serde_json::json!({ "command": { "run": "grep -q 'version = 42' config.txt", "timeout": "10s" } }),
            ),
        ),
        (
            "http",
            validator(
                serde_json::json!({ "http": { "url": format!("http://127.0.0.1:{port}/"), "body_contains": "ok" } }),
            ),
        ),
    ];
    for (name, check) in &checks {
        let (p50, p95) = percentiles(check, &ctx, 100);
        eprintln!("validate/{name}: p50 {p50:?}, p95 {p95:?} (100 runs)");
    }
    let mut group = c.benchmark_group("validate");
    group.sample_size(30);
    for (name, check) in &checks {
        group.bench_function(*name, |b| b.iter(|| run_all(std::slice::from_ref(check), &ctx)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Cost of a task's container (`environment.image`): one command `exec`'d into the attempt's
//! container against the same command under `strict` on the host, and an attempt's start and
//! end (`run -d` until it runs, then `rm -f`), with podman and medin's test image.
//!
//! Run: `cargo bench --bench container` (`bash scripts/setup.sh --containers` installs podman
//! and imports `localhost/medin-busybox:1`; without them the bench says so and measures only
//! the strict command).
//!
//! Measured on the 2-core development machine (podman 4.3.1, runc, cgroups v1), shared with
//! other builds (load ~5.5), medians: `true` under `strict` 18 ms; the engine's own
//! `podman exec <c> true` 236 ms; `true` through medin's `run_shell` into the container 225 ms
//! (the wrapper that records the command's process group, the capture and the timeout add
//! nothing measurable against the engine's own cost); an attempt's container started and
//! removed 410 ms. Quiet (load ~1), by hand: `podman exec` 0.09-0.15 s, `run -d` 0.10 s,
//! `rm -f -t 2` 0.14 s.

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use medin::internal::sandbox::{
    self, ready_image, Container, ContainerEngine, ContainerRequest, FixedPath, ImageSource, Isolation, ResourceLimits,
    SandboxConfig,
};

const IMAGE: &str = "localhost/medin-busybox:1";

fn bench(c: &mut Criterion) {
    let ws = tempfile::tempdir().expect("tempdir");
    let mut g = c.benchmark_group("container");
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(8));
    if sandbox::check_isolation(Isolation::Strict).is_ok() {
        let mut cfg = SandboxConfig::new(ws.path());
        cfg.isolation = Isolation::Strict;
        g.bench_function("strict_true", |b| {
            b.iter(|| assert!(sandbox::run_shell(&cfg, "true", None).unwrap().success()))
        });
    }
    let engine = match ContainerEngine::get() {
        Ok(engine) if ready_image(engine, &ImageSource::Named(IMAGE.into())).is_ok() => engine,
        Ok(_) => {
            eprintln!("container bench: {IMAGE} is missing; run `bash scripts/setup.sh --containers`");
            return;
        }
        Err(e) => {
            eprintln!("container bench: {e}");
            return;
        }
    };
    let root = FixedPath::parse("/app").expect("a fixed path");
    let limits = ResourceLimits::default();
    let request = ContainerRequest {
        image: IMAGE,
        workspace: ws.path(),
        root: &root,
        mounts: &[],
        host_folders: &[],
        network: false,
        limits: &limits,
        grace: Duration::from_secs(2),
        run_id: "bench",
        trial: "container",
    };
    let container = Arc::new(Container::start(engine, &request).expect("the test image starts"));
    // The engine's own `exec`, without medin's wrapper, output capture or timeout.
    let name = container.name().to_string();
    g.bench_function("engine_exec_true", |b| {
        b.iter(|| {
            let status = std::process::Command::new(engine.program())
                .args(["exec", name.as_str(), "true"])
                .stdin(std::process::Stdio::null())
                .output()
                .map(|o| o.status.success());
            assert!(matches!(status, Ok(true)));
        })
    });
    let mut cfg = SandboxConfig::new(ws.path());
    cfg.root = Some(root.clone());
    cfg.container = Some(container);
    g.bench_function("exec_true", |b| {
        b.iter(|| assert!(sandbox::run_shell(&cfg, "true", None).unwrap().success()))
    });
    g.bench_function("start_and_remove", |b| {
        b.iter(|| Container::start(engine, &request).expect("starts").remove())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

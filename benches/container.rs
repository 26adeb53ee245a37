//! Cost of a task's container (`environment.image`): one command `exec`'d into the attempt's
//! container against the same command under `strict` on the host, and an attempt's start and
//! end (`run -d` until it runs, then `rm -f`), with podman and medin's test image.
//!
//! Run: `cargo bench --bench container` (`bash scripts/setup.sh --containers` installs podman
//! and imports `localhost/medin-busybox:1`; without them the bench says so and measures only
//! the strict command).
//!
//! Measured on the 2-core development machine (podman 4.3.1, runc, cgroups v1, load ~2),
//! median: `true` under `strict` 4.5 ms; `true` `exec`'d into the container 109 ms (the
//! `podman exec` client itself: conmon, runc exec, the exec session's bookkeeping; the wrapper
//! that records the command's process group adds no measurable time); an attempt's container
//! start 119 ms and its removal 123 ms (SIGTERM answered at once by the keeper). So a container
//! task pays about a quarter of a second per attempt and about 0.1 s per command on top of the
//! host's path: a 30-command attempt about 3.5 s.

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

//! Cost of judging: a real `python3 -m unittest` run through the sandbox plainly against the
//! same run as a judged run (the runner shims, a fresh report folder, reading the report), and
//! putting protected files back in a workspace of 2,000 files.
//!
//! Run: `cargo bench --bench judged`. What a user would pick instead is the plain run (and
//! trusting its output): the difference is what medin's verdict costs.
//!
//! Measured on the 2-core development machine under load (other builds running), strict
//! isolation, median: plain 122.8 ms, judged 130.7 ms (+6%, within the run-to-run spread; most
//! of both is the pyenv `python3` shim starting Python); restoring the protected files of a
//! 2,000-file workspace when nothing changed: 8.1 ms.

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use medin::internal::runner::toolchain::toolchain_setup;
use medin::internal::sandbox::{self, Beneath, SandboxConfig};
use medin::internal::spec::Toolchain;
use medin::internal::validate::judged::{Protection, RunnerShims};

const CALC: &str = "def add(a, b):\n    return a + b\n";
const TESTS: &str = "import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn bench(c: &mut Criterion) {
    let run = tempfile::tempdir().expect("tempdir");
    let ws = run.path().join("workspace");
    write(&ws.join("calc.py"), CALC);
    write(&ws.join("test_calc.py"), TESTS);
    let ws = ws.canonicalize().expect("canonical");
    let mut cfg = SandboxConfig::new(&ws);
    cfg.isolation = sandbox::default_isolation();
    let tools = toolchain_setup(&[Toolchain::Python], sandbox::SANDBOX_PATH);
    cfg.env.extend(tools.env);
    cfg.read_paths.extend(tools.read_paths);
    let shims = RunnerShims::install(run.path()).expect("shims");

    let mut g = c.benchmark_group("python_unittest");
    g.sample_size(30);
    g.bench_function("plain", |b| {
        b.iter(|| {
            let o = sandbox::run_shell(&cfg, "python3 -m unittest -q", None).expect("runs");
            assert!(o.success(), "{o:?}");
        })
    });
    g.bench_function("judged", |b| {
        b.iter(|| {
            let j = shims.run(&cfg, "python3 -m unittest -q").expect("runs");
            assert!(j.evidence.all_passed(None), "{j:?}");
        })
    });
    g.finish();

    // Protected files put back in a workspace of 2,000 files, 200 of them tests.
    let big = tempfile::tempdir().expect("tempdir");
    for i in 0..1800 {
        write(&big.path().join(format!("src/m{}/f{i}.py", i % 40)), "x = 1\n");
    }
    for i in 0..200 {
        write(
            &big.path().join(format!("tests/test_{i}.py")),
            "def test_x():\n    assert True\n",
        );
    }
    let b = Beneath::open(big.path()).expect("open");
    let protection = Protection::capture(&b, None).expect("capture");
    let mut g = c.benchmark_group("protected_files");
    g.sample_size(30);
    g.bench_function("restore_2000_files_nothing_changed", |bench| {
        bench.iter(|| assert!(protection.restore(&b).is_empty()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

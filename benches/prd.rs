//! PRD reading and reloading: parse a PRD of 10 and 200 requirements (heading form), and the
//! per-task reload check of a run (`LivePrd::before_task`) when the file did not change and
//! when it did. Reference 000's target is a PRD reload under 50 ms.
//!
//! Run: `cargo bench --bench prd`.

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use medin::internal::prd::{parse, LivePrd};

fn prd(n: usize, version: &str) -> String {
    let mut out = format!("# Product\n\nVersion: {version}\nLast updated: 2026-11-20\n\n");
    for i in 1..=n {
        out.push_str(&format!(
            "## REQ-{i}: Requirement number {i} of the product\n\nPriority: high\nKeywords: area{i}, feature\n\nThe system does thing {i} for its users, and does it well, every time it is asked.\n\nAcceptance criteria:\n\n- criterion one of {i}\n- criterion two of {i}\n\nChecks:\n\n```yaml\n- file_exists: out{i}.txt\n```\n\n"
        ));
    }
    out
}

fn bench(c: &mut Criterion) {
    for n in [10usize, 200] {
        let text = prd(n, "1.0.0");
        c.bench_function(&format!("parse {n} requirements ({} KiB)", text.len() / 1024), |b| {
            b.iter(|| parse(&text, Path::new("PRD.md")).expect("valid"))
        });
    }
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("PRD.md");
    std::fs::write(&path, prd(200, "1.0.0")).expect("written");
    let live = LivePrd::open(&path).expect("valid");
    c.bench_function("before_task, 200 requirements, unchanged", |b| {
        b.iter(|| live.before_task().0.expect("valid"))
    });
    let (a, b_text) = (prd(200, "1.0.0"), prd(200, "1.1.0"));
    let mut flip = false;
    c.bench_function("before_task, 200 requirements, changed (reload + diff)", |b| {
        b.iter(|| {
            flip = !flip;
            std::fs::write(&path, if flip { &b_text } else { &a }).expect("written");
            live.before_task().0.expect("valid")
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

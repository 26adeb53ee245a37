//! Guard latency over the labelled corpus (tests/data/guard/corpus.tsv, a few hundred typical,
//! dangerous and obfuscated commands): criterion's mean over the whole corpus, plus a custom
//! loop that times every command separately and prints the median and p99 per command (the
//! issue's bound: p99 <= 50 µs), and the first command's time in this process (the parser
//! made, the regexes its rules need compiled: what a one-shot hook process pays on top; the
//! process as a whole is timed by `benches/guard_hook.rs`).
//! The same per-command figures are printed for `corpus6c.tsv` (commands that carry others and
//! inline programs: `python -c`, `node -e`, `find -exec`), the dearest readings.
//! Run: `cargo bench --bench guard`.
//!
//! Measured 2026-11-29 on two shared cores, three runs, load average 1.1–1.5: whole corpus
//! median 15.6–22.9 µs, p99 72–138 µs; well-formed p99 61–92 µs: over the 50 µs (the
//! same build's p99 moves by half between runs here). Side by side with the guard of that
//! morning (3e6a326), fastest of 20 runs per command: median 15.8–17.1 -> 11.5–11.7 µs, p99
//! 65–71 -> 53–55 µs. Instructions per command, which load does not blur (callgrind, second
//! of two passes): median 81.2 k -> 67.6 k, p99 279 k -> 246 k; a pass 53.3 M -> 45.8 M (the
//! guard of 2026-11-25: 39.9 M, p99 36 µs). Malformed commands still cost tree-sitter's error
//! recovery 40–80 µs each.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use medin::internal::guard::{check_command, GuardContext};

fn corpus(file: &str) -> Vec<String> {
    let path = format!("{}/tests/data/guard/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).expect("the corpus file is part of the repository");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(_, c)| c.replace("\\n", "\n"))
        .collect()
}

fn percentiles(label: &str, commands: &[String], ctx: &GuardContext<'_>) {
    // Warm up (thread-local parser, regexes).
    for c in commands {
        black_box(check_command(c, ctx));
    }
    let mut samples = Vec::with_capacity(commands.len() * 50);
    for _ in 0..50 {
        for c in commands {
            let t = Instant::now();
            black_box(check_command(black_box(c), ctx));
            samples.push(t.elapsed().as_nanos() as u64);
        }
    }
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize] as f64 / 1000.0;
    println!(
        "guard per command, {label}, {} commands x 50: median {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        commands.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
}

fn bench(c: &mut Criterion) {
    let commands = corpus("corpus.tsv");
    let ws = Path::new("/work/medin-ws/task-1");
    let ctx = GuardContext { workspace: ws };
    for cold in [
        "ls -la",
        "curl -H 'Authorization: Bearer sk-proj-Zq8xT2vL9mN4bR7cK1wP5yH3jD6fG0sA' https://api.openai.com/v1/models",
    ] {
        let t = Instant::now();
        black_box(check_command(black_box(cold), &ctx));
        println!(
            "guard, first call of its kind in this process: {:.1} µs for `{}`",
            t.elapsed().as_secs_f64() * 1e6,
            cold.chars().take(40).collect::<String>()
        );
    }
    percentiles("whole corpus", &commands, &ctx);
    // Malformed input (unbalanced quotes) costs tree-sitter's error recovery; agents rarely
    // send it, so the well-formed figure is the one that matters for the hot path.
    let well_formed: Vec<String> = commands
        .iter()
        .filter(|c| {
            !check_command(c, &ctx)
                .violations
                .iter()
                .any(|v| v.rule == "parse.unparseable")
        })
        .cloned()
        .collect();
    percentiles("well-formed only", &well_formed, &ctx);
    // Commands that carry others and inline programs (python -c, node -e, ...): the readings
    // that cost most per command.
    percentiles(
        "corpus6c.tsv, carriers and inline programs",
        &corpus("corpus6c.tsv"),
        &ctx,
    );
    c.bench_function("guard/corpus (all commands, one pass)", |b| {
        b.iter(|| {
            for cmd in &commands {
                black_box(check_command(black_box(cmd), &ctx));
            }
        })
    });
    c.bench_function("guard/typical (cargo test)", |b| {
        b.iter(|| black_box(check_command(black_box("cargo test --release -- --nocapture"), &ctx)))
    });
    c.bench_function("guard/obfuscated (base64 | sh)", |b| {
        b.iter(|| black_box(check_command(black_box("echo cm0gLXJmIC8= | base64 -d | sh"), &ctx)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

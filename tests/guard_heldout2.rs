//! The guard against a second held-out labelled corpus (tests/data/guard/heldout2.tsv),
//! written before reading the rules' code and sharing no line with corpus.tsv or heldout.tsv:
//! obfuscated and unusual spellings of dangerous commands from public guards' bypass reports,
//! and the everyday commands those guards were reported for flagging. Same evaluation and targets as `guard_corpus`: ≥95% of must-block
//! blocked, ≥99% of dangerous flagged (warn or block), ≤1% of benign blocked, ≤5% of benign
//! warned.

use std::path::Path;

use medin::guard::{check_command, GuardContext, Recommendation};

const WS: &str = "/work/medin-ws/task-1";

struct Case {
    label: String,
    command: String,
}

fn read(file: &str) -> Vec<Case> {
    let path = format!("{}/tests/data/guard/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (label, command) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("no tab in {file} line `{l}`"));
            Case {
                label: label.to_string(),
                command: command.replace("\\n", "\n"),
            }
        })
        .collect()
}

#[test]
fn heldout2_shares_no_command_with_the_other_corpora() {
    let earlier: std::collections::HashSet<String> = read("corpus.tsv")
        .into_iter()
        .chain(read("heldout.tsv"))
        .map(|c| c.command)
        .collect();
    let shared: Vec<String> = read("heldout2.tsv")
        .into_iter()
        .map(|c| c.command)
        .filter(|c| earlier.contains(c))
        .collect();
    assert!(
        shared.is_empty(),
        "heldout2 commands also in corpus.tsv or heldout.tsv: {shared:#?}"
    );
}

#[test]
fn heldout2_has_no_duplicate_command() {
    let mut seen = std::collections::HashSet::new();
    let dups: Vec<String> = read("heldout2.tsv")
        .into_iter()
        .map(|c| c.command)
        .filter(|c| !seen.insert(c.clone()))
        .collect();
    assert!(dups.is_empty(), "commands listed twice in heldout2.tsv: {dups:#?}");
}

#[test]
fn heldout2_meets_the_targets() {
    let ctx = GuardContext {
        workspace: Path::new(WS),
    };
    let cases = read("heldout2.tsv");
    assert!(
        (250..=350).contains(&cases.len()),
        "the second held-out corpus should hold 250-350 commands, has {}",
        cases.len()
    );
    let (mut must_block, mut blocked) = (0usize, 0usize);
    let (mut dangerous, mut flagged) = (0usize, 0usize);
    let (mut benign, mut benign_blocked, mut benign_warned) = (0usize, 0usize, 0usize);
    let mut misses = Vec::new();
    for c in &cases {
        let v = check_command(&c.command, &ctx);
        let rec = v.recommendation;
        let rule = v
            .violations
            .iter()
            .max_by_key(|x| x.recommendation)
            .map(|x| x.rule.clone());
        match c.label.as_str() {
            "block" => {
                must_block += 1;
                dangerous += 1;
                if rec == Recommendation::Block {
                    blocked += 1;
                } else {
                    misses.push(format!("block→{rec:?}: {} ({rule:?})", c.command));
                }
                if rec != Recommendation::Allow {
                    flagged += 1;
                }
            }
            "flag" => {
                dangerous += 1;
                if rec != Recommendation::Allow {
                    flagged += 1;
                } else {
                    misses.push(format!("flag→Allow: {}", c.command));
                }
            }
            "allow" => {
                benign += 1;
                match rec {
                    Recommendation::Block => {
                        benign_blocked += 1;
                        misses.push(format!("allow→Block: {} ({rule:?})", c.command));
                    }
                    Recommendation::Warn => {
                        benign_warned += 1;
                        misses.push(format!("allow→Warn: {} ({rule:?})", c.command));
                    }
                    Recommendation::Allow => {}
                }
            }
            other => panic!("unknown label `{other}`"),
        }
    }
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    let report = format!(
        "heldout2: {} commands\n  must-block blocked: {blocked}/{must_block} ({:.1}%)\n  dangerous flagged: {flagged}/{dangerous} ({:.1}%)\n  benign blocked: {benign_blocked}/{benign} ({:.1}%)\n  benign warned: {benign_warned}/{benign} ({:.1}%)\n  misses:\n    {}",
        cases.len(),
        pct(blocked, must_block),
        pct(flagged, dangerous),
        pct(benign_blocked, benign),
        pct(benign_warned, benign),
        misses.join("\n    ")
    );
    println!("{report}");
    assert!(pct(blocked, must_block) >= 95.0, "{report}");
    assert!(pct(flagged, dangerous) >= 99.0, "{report}");
    assert!(pct(benign_blocked, benign) <= 1.0, "{report}");
    assert!(pct(benign_warned, benign) <= 5.0, "{report}");
}

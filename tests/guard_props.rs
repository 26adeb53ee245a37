//! Property tests of the guard: no input panics; quoting that bash removes never turns a
//! block into an allow; wrapping a command in sudo, env, nice, timeout, `sh -c` or a subshell
//! never lowers its verdict. Commands come from the labelled corpus.

use std::path::Path;

use medin::internal::guard::{check_command, GuardContext, Recommendation};
use proptest::prelude::*;

const WS: &str = "/work/medin-ws/task-1";

fn check(cmd: &str) -> Recommendation {
    check_command(
        cmd,
        &GuardContext {
            workspace: Path::new(WS),
        },
    )
    .recommendation
}

fn corpus(label: &str) -> Vec<String> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/guard/corpus.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .filter(|(l, _)| label == "*" || *l == label)
        .map(|(_, c)| c.replace("\\n", "\n"))
        .collect()
}

const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "for", "in", "do", "done", "while", "until", "case", "esac", "function",
    "time", "select", "{", "}", "!",
];

/// Applies bash-transparent quoting to the plain words of `cmd` (words outside quotes made of
/// `[A-Za-z0-9_./-]` only): `r''m`, `"rm"`, `\rm`. Bash reads the same argv afterwards.
fn requote(cmd: &str, seed: u64) -> String {
    let mut out = Vec::new();
    let mut in_single = false;
    let mut in_double = false;
    let mut s = seed;
    for (i, tok) in cmd.split(' ').enumerate() {
        let plain = !tok.is_empty()
            && tok
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
            && !RESERVED.contains(&tok);
        let mut t = tok.to_string();
        if plain && !in_single && !in_double {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407 + i as u64);
            let n = tok.chars().count();
            match (s >> 33) % 4 {
                0 if n > 1 => {
                    let k = 1 + ((s >> 40) as usize % (n - 1));
                    let (a, b) = tok.split_at(tok.char_indices().nth(k).map(|(i, _)| i).unwrap_or(0));
                    t = format!("{a}''{b}");
                }
                1 => t = format!("\"{tok}\""),
                2 if tok.starts_with(|c: char| c.is_ascii_alphabetic()) => t = format!("\\{tok}"),
                _ => {}
            }
        }
        // Track quote state through the original token.
        let mut esc = false;
        for c in tok.chars() {
            if esc {
                esc = false;
                continue;
            }
            match c {
                '\\' if !in_single => esc = true,
                '\'' if !in_double => in_single = !in_single,
                '"' if !in_single => in_double = !in_double,
                _ => {}
            }
        }
        out.push(t);
    }
    out.join(" ")
}

fn wrap(cmd: &str, how: u8) -> Option<String> {
    Some(match how % 6 {
        0 => format!("sudo {cmd}"),
        1 => format!("env {cmd}"),
        2 => format!("nice -n 5 {cmd}"),
        3 => format!("timeout 10 {cmd}"),
        4 if !cmd.contains("<<") => format!("({cmd})"),
        5 if !cmd.contains('\'') => format!("sh -c '{cmd}'"),
        _ => return None,
    })
}

/// Simple commands only: wrappers apply to the first command of a line, and `sudo if ..` or
/// `sudo f() {..}` are not commands bash runs.
fn wrappable(cmd: &str) -> bool {
    let first = cmd.split_whitespace().next().unwrap_or("");
    !RESERVED.contains(&first) && !cmd.contains("()") && !cmd.starts_with('(') && !cmd.contains('\n')
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn no_input_panics(text in "\\PC{0,80}") {
        if std::env::var("GUARD_PROPS_TRACE").is_ok() { eprintln!("{text:?}"); }
        let _ = check(&text);
    }

    #[test]
    fn no_shell_shaped_input_panics(text in "[-a-z /~$(){}`'\"\\\\;|&<>\\n#*.=0-9]{0,60}") {
        let _ = check(&text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn quoting_never_turns_a_block_into_an_allow(i in 0usize..10_000, seed in any::<u64>()) {
        let blocked = corpus("block");
        let cmd = &blocked[i % blocked.len()];
        prop_assume!(!cmd.contains('\n'));
        prop_assume!(check(cmd) == Recommendation::Block);
        let quoted = requote(cmd, seed);
        prop_assert_eq!(check(&quoted), Recommendation::Block, "`{}` became `{}`", cmd, quoted);
    }

    #[test]
    fn wrapping_never_lowers_a_verdict(i in 0usize..10_000, how in any::<u8>()) {
        let all = corpus("*");
        let cmd = &all[i % all.len()];
        prop_assume!(wrappable(cmd));
        let Some(wrapped) = wrap(cmd, how) else { return Ok(()) };
        let (before, after) = (check(cmd), check(&wrapped));
        prop_assert!(after >= before, "`{}` is {:?} but `{}` is {:?}", cmd, before, wrapped, after);
    }
}

#[test]
fn requote_keeps_argv_for_bash() {
    // The transform itself: only plain words outside quotes change.
    let q = requote("rm -rf /opt/x", 7);
    assert!(q.contains("rm") || q.contains("r''m") || q.contains("\\rm"), "{q}");
    assert_eq!(requote("echo 'a b'", 3).matches('\'').count() % 2, 0);
}

#[test]
fn code_points_that_crash_tree_sitter_bash_are_masked() {
    // `{` followed by U+E01B5 made tree-sitter-bash 0.25's scanner segfault.
    let _ = check("{\u{e01b5}");
    assert_eq!(check("rm -rf /opt/caf\u{e9}"), Recommendation::Block);
    assert_eq!(check("echo \u{e01b5} && rm -rf ~"), Recommendation::Block);
}

//! Edits made from the command line, whatever the editor: what each change does to the file
//! it lands in.
//!
//! Every in-place editor comes down to the same few changes: a substitution (a pattern and
//! its replacement: `sed -i 's/P/R/'`, `perl -pi -e 's/P/R/'`, `ruby -pi -e 'gsub(/P/, "R")'`,
//! `vim -c '%s/P/R/' -c wq`, `ex`/`ed` scripts, `awk -i inplace '{gsub(/P/,"R")}1'`, `sd P R`,
//! `yq -i`), a deletion of the lines a pattern matches (`/P/d`, `g/P/d`), or text inserted
//! (`/P/a TEXT`, `>>`). [`read`] turns a command into those changes, and [`judge`] decides on
//! a change by where it lands:
//! - a **test file**: skip or disable markers added, tests renamed or removed so the runner no
//!   longer collects them, an assertion rewritten (commented out, turned into `pass`, `t.Logf`,
//!   `let _ =`, a weaker matcher, another expected value), lines deleted, the collection
//!   emptied: blocked; a time limit raised: warned; an import path fixed or an assertion
//!   renamed to another spelling of the same check (`assertEquals(` → `assertEqual(`): passes;
//!   anything else is warned (an expected value may have changed).
//! - **CI configuration**: failures made to pass (`allow_failure: true`, `continue-on-error:
//!   true`, `|| true`, a job switched off) or a test step removed: blocked.
//! - the **test runner's configuration**: coverage thresholds lowered, the test script set to
//!   something that only prints a pass: blocked; time limits raised, tests excluded: warned.
//! - **any file**: test attributes removed (`#[test]`, `@Test`): Rust and others keep tests
//!   beside the code.
//!
//! The texts are regular expressions or code: [`plain`] reads them loosely (escapes and
//! whitespace classes dropped), which is enough to see which words a change adds or removes.
//! [`judge_text`] judges a whole text written or appended to a file (a redirect, `tee`).
//! Inline programs that rewrite a file (`re.sub` in `python -c`, `.replace` in `node -e`) are
//! not read yet: [`call_changes`] reads their calls, but no carrier hands their code here.

use std::borrow::Cow;

use super::runners::only_claims_success;
use super::{is_test_path, CI_WEAKENED, RELAXED_LIMIT, SHADOWED_RUNNER, SKIP_MARKER, WEAKEN_ASSERTIONS};
use crate::guard::effects::{check_place, CheckPlace};
use crate::guard::verdict::Recommendation;
use crate::guard::{basename, SimpleCommand};

/// What a change does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `pattern` replaced by `text`.
    Substitute,
    /// The lines `pattern` matches deleted (an empty pattern: lines by number or range).
    Delete,
    /// `text` inserted (or appended).
    Insert,
    /// A script the reader could not follow; `text` holds it whole.
    Unknown,
}

/// One change an edit makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub kind: Kind,
    pub pattern: String,
    pub text: String,
}

impl Change {
    fn new(kind: Kind, pattern: impl Into<String>, text: impl Into<String>) -> Self {
        Change {
            kind,
            pattern: pattern.into(),
            text: text.into(),
        }
    }
}

/// An in-place edit: the files it changes and the changes.
#[derive(Debug, Default)]
pub struct Edit<'a> {
    pub files: Vec<&'a str>,
    pub changes: Vec<Change>,
}

/// A decision on a change: the rule, block or warn, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub recommendation: Recommendation,
    pub what: String,
}

fn block(rule: &'static str, what: impl Into<String>) -> Option<Finding> {
    Some(Finding {
        rule,
        recommendation: Recommendation::Block,
        what: what.into(),
    })
}

fn warn(rule: &'static str, what: impl Into<String>) -> Option<Finding> {
    Some(Finding {
        rule,
        recommendation: Recommendation::Warn,
        what: what.into(),
    })
}

// ---------------------------------------------------------------------------------------------
// Reading: a command → the changes it makes.

/// The in-place edit `cmd` makes, if it is one.
pub fn read(cmd: &SimpleCommand) -> Option<Edit<'_>> {
    let args = cmd.argv.get(1..).unwrap_or_default();
    match cmd.name() {
        "sed" | "gsed" => sed(args),
        "perl" => script_editor(args, perl_changes),
        "ruby" => script_editor(args, call_changes),
        "awk" | "gawk" => awk(args),
        "vi" | "vim" | "nvim" | "ex" | "view" => vim(args, cmd.stdin_text.as_deref(), cmd.name() == "ex"),
        "ed" => ed(args, cmd.stdin_text.as_deref()),
        "sd" | "rpl" => pattern_then_replacement(args),
        "yq" => yq(args),
        _ => None,
    }
}

/// `sed -i [-E] [-e SCRIPT].. [SCRIPT] FILES`.
fn sed(args: &[String]) -> Option<Edit<'_>> {
    let in_place = args.iter().any(|a| {
        a == "--in-place"
            || a.starts_with("--in-place=")
            || (a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].starts_with(|c: char| c.is_ascii_alphabetic())
                && {
                    // `-i`, `-i.bak`, `-Ei`, `-ni`: the `i` among the flags before any suffix.
                    let flags: String = a[1..].chars().take_while(|c| "nrsuzEi".contains(*c)).collect();
                    flags.contains('i')
                })
    });
    if !in_place {
        return None;
    }
    let mut scripts: Vec<&str> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut from_file = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-e" | "--expression" => {
                scripts.extend(args.get(i + 1).map(String::as_str));
                i += 1;
            }
            "-f" | "--file" => {
                from_file = true;
                i += 1;
            }
            "-l" | "--line-length" => i += 1,
            "--" => {
                operands.extend(args[i + 1..].iter().map(String::as_str));
                break;
            }
            _ if a.starts_with("--expression=") => scripts.push(&a["--expression=".len()..]),
            _ if a.starts_with('-') && a.len() > 1 => {}
            _ => operands.push(a),
        }
        i += 1;
    }
    if scripts.is_empty() && !from_file && !operands.is_empty() {
        scripts.push(operands.remove(0));
    }
    let mut changes = Vec::new();
    for s in scripts {
        changes.extend(sed_script(s));
    }
    if from_file {
        changes.push(Change::new(Kind::Unknown, "", ""));
    }
    Some(Edit {
        files: operands,
        changes,
    })
}

/// The commands of a sed script (also ex commands, which share their shape).
fn sed_script(script: &str) -> Vec<Change> {
    let mut out = Vec::new();
    let mut rest = script.trim_start();
    while !rest.is_empty() {
        let (change, after) = sed_command(rest);
        out.push(change);
        rest = after.trim_start_matches(|c: char| c.is_whitespace() || c == ';' || c == '}' || c == '{');
    }
    out
}

/// One sed command at the start of `text`: the change and the text after it.
fn sed_command(text: &str) -> (Change, &str) {
    let (pattern, rest) = address(text);
    let mut chars = rest.chars();
    let Some(cmd) = chars.next() else {
        return (Change::new(Kind::Unknown, "", text), "");
    };
    let after = chars.as_str();
    match cmd {
        's' => match substitution(after) {
            Some((p, r, rest)) => (Change::new(Kind::Substitute, p, r), rest),
            None => (Change::new(Kind::Unknown, "", text), ""),
        },
        'd' | 'D' => (Change::new(Kind::Delete, pattern, ""), after),
        'a' | 'i' | 'c' => {
            // `a\` newline TEXT, `a TEXT`, `a\TEXT`: the text runs to the end of the line.
            let body = after.strip_prefix('\\').unwrap_or(after);
            let body = body.strip_prefix('\n').unwrap_or(body).trim_start();
            let (line, rest) = body.split_once('\n').unwrap_or((body, ""));
            let kind = if cmd == 'c' { Kind::Substitute } else { Kind::Insert };
            (Change::new(kind, pattern, line.replace("\\n", "\n")), rest)
        }
        // Printing, labels, branches, hold space: no change of their own.
        'p' | 'P' | 'n' | 'N' | 'h' | 'H' | 'g' | 'G' | 'x' | '=' | 'l' | 'q' | 'Q' | 'b' | 't' | 'T' | ':' => {
            let end = after.find([';', '\n']).unwrap_or(after.len());
            (Change::new(Kind::Unknown, "", ""), &after[end..])
        }
        _ => (Change::new(Kind::Unknown, "", text), ""),
    }
}

/// The address before a sed or ex command: `/re/`, `\cREc`, `N`, `$`, `%`, ranges: the regex
/// it names (empty for numbers), and the text after it.
fn address(text: &str) -> (String, &str) {
    let mut rest = text;
    let mut pattern = String::new();
    loop {
        rest = rest
            .trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '$' | '%' | ',' | '.' | '+' | '~' | ' '));
        if let Some(body) = rest.strip_prefix('/') {
            match delimited(body, '/') {
                Some((re, after)) => {
                    pattern = re;
                    rest = after;
                }
                None => return (pattern, rest),
            }
        } else if let Some(body) = rest.strip_prefix('\\') {
            let Some(d) = body.chars().next() else {
                return (pattern, rest);
            };
            match delimited(&body[d.len_utf8()..], d) {
                Some((re, after)) => {
                    pattern = re;
                    rest = after;
                }
                None => return (pattern, rest),
            }
        } else {
            // `/re/!d`: the negation still deletes lines.
            return (pattern, rest.trim_start_matches('!').trim_start());
        }
    }
}

/// The text up to an unescaped `delim`, and what follows it.
fn delimited(text: &str, delim: char) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some((_, d)) if d == delim => out.push(d),
                Some((_, d)) => {
                    out.push('\\');
                    out.push(d);
                }
                None => out.push('\\'),
            }
        } else if c == delim {
            return Some((out, &text[i + c.len_utf8()..]));
        } else {
            out.push(c);
        }
    }
    None
}

/// `<d>P<d>R<d>flags` after an `s`: pattern, replacement and the text after the flags. Perl's
/// bracketed form `{P}{R}` too.
fn substitution(text: &str) -> Option<(String, String, &str)> {
    let d = text
        .chars()
        .next()
        .filter(|c| !c.is_alphanumeric() && !c.is_whitespace() && *c != '\\')?;
    let body = &text[d.len_utf8()..];
    let close = match d {
        '{' => '}',
        '(' => ')',
        '[' => ']',
        '<' => '>',
        _ => d,
    };
    let (pattern, rest) = delimited(body, close)?;
    let rest = if close != d {
        let r = rest.trim_start();
        r.strip_prefix(d)?
    } else {
        rest
    };
    let (replacement, rest) = delimited(rest, close)?;
    let flags_end = rest.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(rest.len());
    Some((pattern, replacement, &rest[flags_end..]))
}

/// `perl`/`ruby` with `-i` among their flags (`-pi`, `-i.bak`, `-0pi`) and the script after
/// the flag bundle that ends in `e` (`-e`, `-pe`, `-ple`): the files are the words after it.
fn script_editor(args: &[String], changes: fn(&str) -> Vec<Change>) -> Option<Edit<'_>> {
    let bundle = |a: &str| a.len() > 1 && a.starts_with('-') && !a.starts_with("--");
    let flags = |a: &str| {
        a[1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
    };
    if !args.iter().any(|a| bundle(a) && flags(a).contains('i')) {
        return None;
    }
    let e = args
        .iter()
        .position(|a| bundle(a) && a[1..].chars().all(|c| c.is_ascii_alphanumeric()) && a.ends_with(['e', 'E']))?;
    let script = args.get(e + 1)?;
    let files = args[e + 2..]
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    Some(Edit {
        files,
        changes: changes(script),
    })
}

/// The substitutions of a Perl program: `s/P/R/`, `s{P}{R}`, `s#P#R#`.
fn perl_changes(code: &str) -> Vec<Change> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i] == b's'
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b'$'));
        if starts {
            if let Some((p, r, rest)) = substitution(&code[i + 1..]) {
                out.push(Change::new(Kind::Substitute, p, r));
                i = code.len() - rest.len();
                continue;
            }
        }
        i += 1;
    }
    if out.is_empty() {
        out.push(Change::new(Kind::Unknown, "", code));
    }
    out
}

/// The substitutions written as calls in Ruby, awk, JavaScript or Python: `gsub(/P/, "R")`,
/// `sub!(..)`, `.replace(/P/g, 'R')`, `.replaceAll(..)`, `re.sub(r'P', r'R', ..)`.
pub fn call_changes(code: &str) -> Vec<Change> {
    const CALLS: &[&str] = &["gsub!(", "sub!(", "gsub(", "sub(", "replaceAll(", "replace(", "re.sub("];
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let Some((at, call)) = CALLS
            .iter()
            .filter_map(|c| code[i..].find(c).map(|k| (i + k, *c)))
            .min_by_key(|(k, c)| (*k, std::cmp::Reverse(c.len())))
        else {
            break;
        };
        let args = &code[at + call.len()..];
        if let Some((p, rest)) = literal(args) {
            let rest = rest.trim_start();
            if let Some((r, _)) = rest.strip_prefix(',').and_then(|r| literal(r)) {
                out.push(Change::new(Kind::Substitute, p, r));
            }
        }
        i = at + call.len();
    }
    if out.is_empty() {
        out.push(Change::new(Kind::Unknown, "", code));
    }
    out
}

/// A literal at the start of `text` (after spaces): a regex `/../flags`, a string in `'..'` or
/// `".."` (with Python's `r` prefix), unescaped loosely; and the text after it.
fn literal(text: &str) -> Option<(String, &str)> {
    let t = text.trim_start();
    let t = t.strip_prefix('r').filter(|r| r.starts_with(['\'', '"'])).unwrap_or(t);
    let q = t.chars().next().filter(|c| matches!(c, '/' | '\'' | '"'))?;
    let (body, rest) = delimited(&t[1..], q)?;
    if q == '/' {
        return Some((body, rest.trim_start_matches(|c: char| c.is_ascii_alphabetic())));
    }
    // In a string, `\\` is one backslash (`"\\1xit"` is the back-reference `\1`).
    Some((body.replace("\\\\", "\\"), rest))
}

/// `awk -i inplace 'PROGRAM' FILES`: `gsub`/`sub` calls, and `!/P/` (print every line but
/// those: a deletion).
fn awk(args: &[String]) -> Option<Edit<'_>> {
    let inplace = args.windows(2).any(|w| w[0] == "-i" && w[1] == "inplace")
        || args.iter().any(|a| a == "-iinplace" || a == "--include=inplace");
    if !inplace {
        return None;
    }
    let mut i = 0;
    let mut positional: Vec<&str> = Vec::new();
    while i < args.len() {
        let a = args[i].as_str();
        if matches!(a, "-i" | "-v" | "-F" | "-f" | "--include" | "-e" | "--source") {
            i += 2;
            continue;
        }
        if !a.starts_with('-') || a == "-" {
            positional.push(a);
        }
        i += 1;
    }
    let (program, files) = positional.split_first()?;
    let program = program.trim();
    let changes = match program.strip_prefix("!/").and_then(|p| delimited(p, '/')) {
        Some((p, rest)) if rest.trim().is_empty() => vec![Change::new(Kind::Delete, p, "")],
        _ => call_changes(program),
    };
    Some(Edit {
        files: files.to_vec(),
        changes,
    })
}

/// `vim -c '%s/P/R/' -c wq FILE`, `vim +'g/P/d' +wq FILE`, `ex -s FILE <<< $'%s/P/R/\nwq'`:
/// the ex commands, from the options and (for ex) stdin.
fn vim<'a>(args: &'a [String], stdin: Option<&str>, ex: bool) -> Option<Edit<'a>> {
    let ex_mode = ex
        || args
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(['e', 'E']));
    let mut commands: Vec<&str> = Vec::new();
    let mut files = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-c" | "--cmd" => {
                commands.extend(args.get(i + 1).map(String::as_str));
                i += 1;
            }
            // `-s FILE` reads keystrokes from a file, except in ex mode, where it is silence.
            "-s" if !ex_mode => i += 1,
            "-u" | "-U" | "-i" | "-T" | "-w" | "-W" | "-S" | "-t" | "-q" | "--servername" | "--remote" => i += 1,
            _ if a.starts_with('+') && a.len() > 1 && !a[1..].chars().all(|c| c.is_ascii_digit()) => {
                commands.push(&a[1..])
            }
            _ if a.starts_with('-') => {}
            _ => files.push(a),
        }
        i += 1;
    }
    let stdin_lines = stdin.filter(|_| ex_mode).into_iter().flat_map(str::lines);
    let changes: Vec<Change> = commands
        .into_iter()
        .flat_map(|c| c.split('|'))
        .chain(stdin_lines)
        .filter_map(ex_command)
        .collect();
    if changes.is_empty() {
        return None;
    }
    Some(Edit { files, changes })
}

/// `ed FILE <<EOF ... EOF`: the script on stdin, in ex's shape (`a`/`i` blocks insert text up
/// to a lone `.`).
fn ed<'a>(args: &'a [String], stdin: Option<&str>) -> Option<Edit<'a>> {
    let script = stdin?;
    let files: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut changes = Vec::new();
    let mut lines = script.lines();
    while let Some(line) = lines.next() {
        let bare = line
            .trim()
            .trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '$' | ',' | '.'));
        if matches!(bare, "a" | "i" | "c") {
            let text: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != ".").collect();
            changes.push(Change::new(Kind::Insert, "", text.join("\n")));
        } else if let Some(c) = ex_command(line) {
            changes.push(c);
        }
    }
    (!changes.is_empty()).then_some(Edit { files, changes })
}

/// One ex command: `%s/P/R/g`, `g/P/d`, `v/P/d`, `g/P/s//R/`, `5,9d`; writes, quits and
/// settings change nothing (None).
fn ex_command(line: &str) -> Option<Change> {
    let c = line.trim().trim_start_matches(':').trim_start();
    let word: String = c.chars().take_while(|c| c.is_ascii_alphabetic() || *c == '!').collect();
    if matches!(
        word.as_str(),
        "w" | "wq"
            | "x"
            | "q"
            | "q!"
            | "wq!"
            | "x!"
            | "wqa"
            | "xa"
            | "wa"
            | "qa"
            | "qa!"
            | "update"
            | "set"
            | "se"
            | "e"
            | "e!"
            | "write"
            | "quit"
            | "exit"
            | "syntax"
            | "filetype"
            | "let"
    ) || c.is_empty()
        || c.starts_with('"')
    {
        return None;
    }
    let (_, rest) = address(c);
    // `g/P/CMD`, `g!/P/CMD`, `v/P/CMD`: CMD on the lines P matches (or does not).
    if let Some(body) = rest
        .strip_prefix("g!")
        .or_else(|| rest.strip_prefix('g'))
        .or_else(|| rest.strip_prefix('v'))
    {
        if let Some(d) = body
            .chars()
            .next()
            .filter(|c| !c.is_alphanumeric() && !c.is_whitespace())
        {
            if let Some((p, cmd)) = delimited(&body[d.len_utf8()..], d) {
                let cmd = cmd.trim();
                if cmd.starts_with('d') {
                    return Some(Change::new(Kind::Delete, p, ""));
                }
                if let Some(s) = cmd.strip_prefix('s') {
                    if let Some((sp, r, _)) = substitution(s) {
                        return Some(Change::new(Kind::Substitute, if sp.is_empty() { p } else { sp }, r));
                    }
                }
                return Some(Change::new(Kind::Unknown, p, cmd));
            }
        }
    }
    Some(sed_command(c).0)
}

/// `sd [-F] PATTERN REPLACEMENT FILES`, `rpl OLD NEW FILES`: with no file, a filter on stdin.
fn pattern_then_replacement(args: &[String]) -> Option<Edit<'_>> {
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if matches!(a, "-f" | "--flags" | "-n" | "--max-replacements") {
            i += 2;
            continue;
        }
        if !a.starts_with('-') || a == "-" {
            positional.push(a);
        }
        i += 1;
    }
    if positional.len() < 3 {
        return None;
    }
    Some(Edit {
        files: positional[2..].to_vec(),
        changes: vec![Change::new(Kind::Substitute, positional[0], positional[1])],
    })
}

/// `yq -i 'EXPR' FILE`, `yq e -i ..`: an assignment sets text, `del(..)` deletes.
fn yq(args: &[String]) -> Option<Edit<'_>> {
    if !args
        .iter()
        .any(|a| a == "-i" || a == "--inplace" || a.starts_with("-i="))
    {
        return None;
    }
    let mut positional: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if matches!(positional.first(), Some(&("e" | "eval" | "ea" | "eval-all"))) {
        positional.remove(0);
    }
    let (expr, files) = positional.split_first()?;
    let change = match expr.find("del(") {
        Some(k) => Change::new(Kind::Delete, &expr[k + 4..], ""),
        None => Change::new(Kind::Insert, "", *expr),
    };
    Some(Edit {
        files: files.to_vec(),
        changes: vec![change],
    })
}

// ---------------------------------------------------------------------------------------------
// Judging: a change → what it does to the file.

/// Test attributes and declarations: removing one (or renaming the function so it no longer
/// starts with `test`) takes a test out of the run. Lower-case.
const TEST_MARKS: &[&str] = &[
    "#[test]",
    "#[tokio::test",
    "#[cfg(test)]",
    "@test",
    "@parameterizedtest",
    "[fact]",
    "[theory]",
    "[testmethod]",
    "[test]",
    "def test",
    "func test",
    "fn test",
    "it(",
    "it \"",
    "it '",
    "test(",
    "describe(",
    "context(",
    "specify(",
];

/// Skip and disable markers, and the ways a test file empties its own collection. Lower-case,
/// compared without whitespace.
const DISABLERS: &[&str] = &[
    "#[ignore",
    "@pytest.mark.skip",
    "pytestmark=pytest.mark.skip",
    "collect_ignore",
    "@pytest.mark.xfail",
    "@unittest.skip",
    "pytest.skip(",
    "unittest.skip(",
    ".skip(",
    ".skip`",
    "xit(",
    "xit\"",
    "xit'",
    "xdescribe(",
    "xdescribe\"",
    "xcontext(",
    "xspecify(",
    "xtest(",
    "t.skip(",
    "t.skipnow(",
    "@disabled",
    "@ignore",
    "[ignore",
    "[fact(skip",
    "skip(\"",
    "this.skip()",
    ".todo(",
    "pending(",
    "items.clear()",
    "items[:]=[]",
    "del items[:]",
    "pytest_ignore_collect",
    "markers.skip",
    "skip:true",
];

/// Code that rewrites what the test framework reports rather than what a test checks, in the
/// squashed lower-case form of [`count_squashed`]: a report's outcome set to passed in a
/// conftest hook, the framework's own run or failure bookkeeping replaced.
const VERDICT_FORGERS: &[&str] = &[
    ".outcome='passed'",
    ".outcome=\"passed\"",
    ".force_result(",
    "testcase.run=",
    "testresult.addfailure=",
    "testresult.adderror=",
    "addfailure=lambda",
    "adderror=lambda",
    "wassuccessful=lambda",
    "testprogram.runtests=",
];

/// Words of assertions, lower-case: a change whose pattern holds one rewrites what a test
/// checks.
const ASSERTION_WORDS: &[&str] = &[
    "assert",
    "expect",
    "should",
    "require.",
    "t.error",
    "t.fatal",
    "t.fail",
    "self.fail",
    "refute",
    "verify(",
    "check(",
    "must_",
    "must.",
    "to eq",
    "to be",
    "not_to",
    "to_not",
    ".to(",
    "raises(",
    "#[should_panic",
];

/// What CI is told when failures are to pass, compared lower-case without whitespace or quotes
/// and with `=` read as `:` (YAML and yq expressions alike).
const FAILURES_PASS: &[&str] = &[
    "allow_failure:true",
    "continue-on-error:true",
    "continue_on_error:true",
    "||true",
    "||exit0",
    "||:",
    "testfailureignore:true",
    "failure.ignore:true",
    "ignore_errors:true",
    "if:false",
    "when:never",
    "set+e",
];

/// Text read loosely: regex escapes and whitespace classes dropped (`t\.Fatalf` → `t.Fatalf`,
/// `^\(\s*\)assert ` → `assert `, `\1pass  # assert ` → `pass  # assert `).
pub fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                // Classes, anchors, back-references: nothing of the text.
                Some('s' | 'S' | 'w' | 'W' | 'd' | 'D' | 'b' | 'B' | 'A' | 'z' | 'Z' | '<' | '>') => {}
                Some(d) if d.is_ascii_digit() => {}
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(d) => out.push(d),
                None => {}
            },
            '$' if chars.peek().is_some_and(|d| d.is_ascii_digit() || *d == '{') => {
                while chars
                    .peek()
                    .is_some_and(|d| d.is_ascii_digit() || matches!(d, '{' | '}'))
                {
                    chars.next();
                }
            }
            '^' if out.trim().is_empty() => {}
            _ => out.push(c),
        }
    }
    // Groups left empty by dropped classes (`(\s*)`, `\(\s*\)`).
    for g in ["(*)", "(+)", "(*?)", "(+?)"] {
        while let Some(k) = out.find(g) {
            out.replace_range(k..k + g.len(), "");
        }
    }
    out
}

/// The code part of a line: up to a comment (`# `, `//`, `/*`); `#[..]` and `#!` are Rust
/// attributes, not comments.
fn code_part(text: &str) -> &str {
    let bytes = text.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        let next = bytes.get(i + 1).copied();
        let comment = match b {
            b'#' => !matches!(next, Some(b'[' | b'!' | b'{' | b'i' | b'd')),
            b'/' => matches!(next, Some(b'/' | b'*')) && (i == 0 || bytes[i - 1] != b':'),
            _ => false,
        };
        if comment {
            return &text[..i];
        }
    }
    text
}

fn squashed(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '"' | '\''))
        .map(|c| match c.to_ascii_lowercase() {
            '=' => ':',
            c => c,
        })
        .collect()
}

/// How many times the needles occur in `text`; a needle that starts with a letter only where
/// a word starts (`it(` is not in `submit(`, `pending(` not in `appending(`).
fn count(text: &str, needles: &[&str]) -> usize {
    needles
        .iter()
        .map(|n| {
            let word = n.starts_with(|c: char| c.is_ascii_alphabetic());
            text.match_indices(n)
                .filter(|(at, _)| {
                    !word
                        || !text[..*at]
                            .chars()
                            .next_back()
                            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                })
                .count()
        })
        .sum()
}

/// [`count`] on `text` lower-cased, with whitespace dropped where it touches punctuation and
/// kept as one space between words (`items[:] = []` is `items[:]=[]`, `import pytest
/// pytestmark` keeps its words apart); the needles are written that way.
fn count_squashed(text: &str, needles: &[&str]) -> usize {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut s = String::with_capacity(text.len());
    let mut gap = false;
    for c in text.chars() {
        if c.is_whitespace() {
            gap = true;
            continue;
        }
        if gap && word(c) && s.chars().next_back().is_some_and(word) {
            s.push(' ');
        }
        gap = false;
        s.push(c.to_ascii_lowercase());
    }
    count(&s, needles)
}

/// Whether the code part of `text` holds an assertion (also a matcher: `.toEqual(`,
/// `.Should()`).
fn holds_assertion(text: &str) -> bool {
    let code = code_part(text);
    let lower = code.to_ascii_lowercase();
    count(&lower, ASSERTION_WORDS) > 0
        || code
            .as_bytes()
            .windows(4)
            .any(|w| w[0] == b'.' && w[1] == b't' && w[2] == b'o' && w[3].is_ascii_uppercase())
}

/// An import, a `use` or a `require`: both sides of a change that only moves where a name
/// comes from.
fn import_line(text: &str) -> bool {
    let t = text.trim_start().trim_start_matches('^').trim_start();
    [
        "import ", "from ", "use ", "#include", "using ", "@import", "require(", "require ", "library(",
    ]
    .iter()
    .any(|p| t.starts_with(p))
        || (t.starts_with("const ") || t.starts_with("let ") || t.starts_with("var ")) && t.contains("require(")
}

/// `assertEquals(` → `assertEqual(`, `Assert.assertEquals` → `Assertions.assertEquals`,
/// `toBeCalledWith` → `toHaveBeenCalledWith`: one spelling of a check replaced by another of
/// the same check.
fn assertion_alias(pattern: &str, replacement: &str) -> bool {
    fn spelling(s: &str) -> Option<&str> {
        let s = s.trim().trim_end_matches('(');
        let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '!';
        (!s.is_empty() && s.chars().all(ident)).then(|| s.rsplit('.').next().unwrap_or(s))
    }
    fn canon(s: &str) -> String {
        let l = s.to_ascii_lowercase().replace("regexp", "regex").replace('_', "");
        l.strip_suffix('s').map(str::to_string).unwrap_or(l)
    }
    const ALIASES: &[(&str, &str)] = &[
        ("assert_", "asserttrue"),
        ("failunless", "asserttrue"),
        ("failif", "assertfalse"),
        ("failunlessequal", "assertequal"),
        ("failifequal", "assertnotequal"),
        ("assertitemsequal", "assertcountequal"),
        ("assertregexmatche", "assertregex"),
        ("assertnotregexmatche", "assertnotregex"),
        ("tobecalled", "tohavebeencalled"),
        ("tobecalledwith", "tohavebeencalledwith"),
        ("lastcalledwith", "tohavebeenlastcalledwith"),
        ("tothrowerror", "tothrow"),
        ("toreturn", "tohavereturned"),
    ];
    let (Some(a), Some(b)) = (spelling(pattern), spelling(replacement)) else {
        return false;
    };
    let (a, b) = (canon(a), canon(b));
    let assertion =
        |w: &str| w.contains("assert") || w.contains("expect") || w.starts_with("to") || w.starts_with("fail");
    assertion(&a)
        && assertion(&b)
        && (a == b
            || ALIASES
                .iter()
                .any(|(x, y)| (a == *x && b == *y) || (a == *y && b == *x)))
}

/// The numbers of `a` and `b` when the two texts differ only in them.
fn numbers_changed(a: &str, b: &str) -> Option<(f64, f64)> {
    let shape = |s: &str| -> (String, Vec<f64>) {
        let mut text = String::new();
        let mut nums = Vec::new();
        let mut cur = String::new();
        for c in s.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_digit() || (c == '.' && !cur.is_empty()) {
                cur.push(c);
            } else {
                if !cur.is_empty() {
                    nums.push(cur.trim_end_matches('.').parse().unwrap_or(0.0));
                    text.push('#');
                    cur.clear();
                }
                text.push(c);
            }
        }
        (text, nums)
    };
    let (ta, na) = shape(a);
    let (tb, nb) = shape(b);
    if ta != tb || na.len() != nb.len() {
        return None;
    }
    na.into_iter().zip(nb).find(|(x, y)| x != y)
}

/// A time limit raised: `testTimeout: 5000` → `120000`, `timeout(10)` → `timeout(600)`.
fn relaxed_limit(pattern: &str, replacement: &str) -> bool {
    let lower = pattern.to_ascii_lowercase();
    ["timeout", "time_limit", "timelimit", "deadline", "slow"]
        .iter()
        .any(|w| lower.contains(w))
        && numbers_changed(pattern, replacement).is_some_and(|(a, b)| b > a)
}

/// A coverage or quality threshold lowered: `fail_under = 90` → `0`, `--cov-fail-under=80` →
/// `10`, `coverageThreshold` branches `80` → `0`.
fn lowered_threshold(pattern: &str, replacement: &str) -> bool {
    let lower = pattern.to_ascii_lowercase();
    [
        "fail_under",
        "fail-under",
        "failunder",
        "threshold",
        "min_coverage",
        "minimum_coverage",
        "coverage",
    ]
    .iter()
    .any(|w| lower.contains(w))
        && numbers_changed(pattern, replacement).is_some_and(|(a, b)| b < a)
}

/// A test renamed so the runner no longer collects it: `def test_x` → `def _test_x`, `func
/// TestX(` → `func _TestX(` (also a name taken from a list: `func {}(` → `func _{}(`).
fn renamed_out(pattern: &str, replacement: &str) -> bool {
    fn name_after<'a>(text: &'a str, kw: &str) -> Option<&'a str> {
        let at = text.find(kw)? + kw.len();
        let rest = &text[at..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '{' | '}' | '%' | '$')))
            .unwrap_or(rest.len());
        Some(&rest[..end]).filter(|n| !n.is_empty())
    }
    ["def ", "func ", "fn ", "function "].iter().any(|kw| {
        let (Some(old), Some(new)) = (name_after(pattern, kw), name_after(replacement, kw)) else {
            return false;
        };
        let test = |n: &str| n.to_ascii_lowercase().starts_with("test");
        old != new && (new.ends_with(old) || (test(old) && !test(new)))
    })
}

/// Tests taken out of the run: a test attribute or declaration the replacement no longer has
/// (removed, or commented out), or a test renamed out of collection.
fn hides_tests(pattern: &str, replacement: &str) -> bool {
    let marks = |t: &str| count(&code_part(t).to_ascii_lowercase(), TEST_MARKS);
    marks(replacement) < marks(pattern) || renamed_out(pattern, replacement)
}

/// The decision on `change` to the file at `path`, if any.
pub fn judge(path: &str, change: &Change) -> Option<Finding> {
    let place = check_place(path);
    if place == Some(CheckPlace::CiConfig) {
        return ci_change(path, change);
    }
    if is_test_path(path) {
        return test_change(path, change);
    }
    if place == Some(CheckPlace::TestConfig) {
        return config_change(path, change);
    }
    // Tests kept beside the code (`#[test]` in `src/lib.rs`).
    let (p, r) = (plain(&change.pattern), plain(&change.text));
    let hides = match change.kind {
        Kind::Substitute | Kind::Delete => hides_tests(&p, &r),
        Kind::Unknown => {
            count(
                &change.text.to_ascii_lowercase(),
                &["#[test]", "#\\[test\\]", "#[cfg(test)]", "@test"],
            ) > 0
        }
        Kind::Insert => false,
    };
    hides
        .then(|| block(WEAKEN_ASSERTIONS, format!("removes or renames tests in `{path}`")))
        .flatten()
}

/// A change to a test file.
fn test_change(path: &str, change: &Change) -> Option<Finding> {
    let (p, r) = (plain(&change.pattern), plain(&change.text));
    match change.kind {
        Kind::Insert => inserted_into_test(path, &r)
            .or_else(|| warn(WEAKEN_ASSERTIONS, format!("edits the test file `{path}` in place"))),
        Kind::Delete if !p.is_empty() && import_line(&p) => None,
        Kind::Delete => block(WEAKEN_ASSERTIONS, format!("deletes lines of the test file `{path}`")),
        Kind::Substitute => substituted_in_test(path, &p, &r),
        Kind::Unknown => {
            let lower = change.text.to_ascii_lowercase();
            if ["assert", "expect", "skip", "ignore"].iter().any(|w| lower.contains(w)) {
                block(
                    WEAKEN_ASSERTIONS,
                    format!("edits assertions or skip markers in `{path}` in place"),
                )
            } else {
                warn(WEAKEN_ASSERTIONS, format!("edits the test file `{path}` in place"))
            }
        }
    }
}

/// Text added to a test file: a skip or disable marker, a collection emptied, an early
/// `return`.
fn inserted_into_test(path: &str, text: &str) -> Option<Finding> {
    if count_squashed(text, DISABLERS) > 0 {
        return block(SKIP_MARKER, format!("writes a skip or disable marker into `{path}`"));
    }
    if count_squashed(text, VERDICT_FORGERS) > 0 {
        return block(
            WEAKEN_ASSERTIONS,
            format!(
                "writes code into `{path}` that rewrites what the test framework reports: failures reported as passes"
            ),
        );
    }
    if text
        .lines()
        .any(|l| matches!(l.trim(), "return" | "return;" | "return nil" | "return None"))
    {
        return block(
            WEAKEN_ASSERTIONS,
            format!("makes tests in `{path}` return before they check anything"),
        );
    }
    None
}

/// A substitution `p` → `r` (read loosely) in a test file.
fn substituted_in_test(path: &str, p: &str, r: &str) -> Option<Finding> {
    if import_line(p) && import_line(r) {
        return None;
    }
    if assertion_alias(p, r) {
        return None;
    }
    if count_squashed(r, DISABLERS) > count_squashed(p, DISABLERS) {
        return block(SKIP_MARKER, format!("adds a skip or disable marker in `{path}`"));
    }
    if hides_tests(p, r) {
        return block(
            WEAKEN_ASSERTIONS,
            format!("renames or removes tests in `{path}` so the runner no longer collects them"),
        );
    }
    if relaxed_limit(p, r) {
        return warn(RELAXED_LIMIT, format!("raises a time limit in `{path}`"));
    }
    if lowered_threshold(p, r) {
        return block(
            WEAKEN_ASSERTIONS,
            format!("lowers a threshold the tests in `{path}` check"),
        );
    }
    if holds_assertion(p) {
        return block(
            WEAKEN_ASSERTIONS,
            format!("rewrites what the assertions in `{path}` check"),
        );
    }
    warn(WEAKEN_ASSERTIONS, format!("edits the test file `{path}` in place"))
}

/// A change to CI configuration: failures made to pass, a job switched off, a test step
/// removed or replaced by one that only prints.
fn ci_change(path: &str, change: &Change) -> Option<Finding> {
    let (p, r) = (plain(&change.pattern), plain(&change.text));
    let passes = |t: &str| count(&squashed(t), FAILURES_PASS);
    let runs_tests = |t: &str| {
        let l = t.to_ascii_lowercase();
        l.contains("test") || super::runners::RUNNERS.iter().any(|n| l.contains(n))
    };
    let what = match change.kind {
        Kind::Substitute | Kind::Insert | Kind::Unknown if passes(&r) > passes(&p) => "makes failing CI jobs pass",
        Kind::Substitute if runs_tests(&p) && (!runs_tests(&r) || only_claims_success(&r)) => {
            "takes the test run out of CI"
        }
        Kind::Delete if runs_tests(&p) || p.is_empty() => "deletes the test steps of CI",
        _ => return None,
    };
    block(CI_WEAKENED, format!("{what} (`{path}`)"))
}

/// A change to the test runner's or coverage tool's configuration.
fn config_change(path: &str, change: &Change) -> Option<Finding> {
    let (p, r) = (plain(&change.pattern), plain(&change.text));
    if matches!(change.kind, Kind::Substitute) && lowered_threshold(&p, &r) {
        return block(
            WEAKEN_ASSERTIONS,
            format!("lowers a coverage or quality threshold in `{path}`"),
        );
    }
    if matches!(change.kind, Kind::Substitute | Kind::Insert) && neutered_test_script(&r) {
        return block(
            SHADOWED_RUNNER,
            format!("sets the test script in `{path}` to one that only prints a pass"),
        );
    }
    if matches!(change.kind, Kind::Substitute) && relaxed_limit(&p, &r) {
        return warn(RELAXED_LIMIT, format!("raises the tests' time limit in `{path}`"));
    }
    let excludes = |t: &str| count_squashed(t, &["ignore", "skip", "exclude", "omit", "deselect", "passwithnotests"]);
    (matches!(change.kind, Kind::Substitute | Kind::Insert) && excludes(&r) > excludes(&p))
        .then(|| {
            warn(
                RELAXED_LIMIT,
                format!("excludes tests or files from the checks in `{path}`"),
            )
        })
        .flatten()
}

/// `"test": "exit 0"`, `test = "true"`: a test script whose command only prints a pass.
fn neutered_test_script(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let Some(at) = lower.find("\"test") else {
        return false;
    };
    let rest = &text[at + 1..];
    let Some(colon) = rest.find(':') else {
        return false;
    };
    let value = rest[colon + 1..].trim_start();
    value
        .strip_prefix('"')
        .and_then(|v| v.split_once('"'))
        .is_some_and(|(v, _)| only_claims_success(v))
}

/// The decision on writing or appending `text` to `path` (a redirect, `tee`, an inline
/// program's write): a skip marker or an emptied collection in a test file, failures made to
/// pass in CI, a neutered test script. None for other text: a new test or fixture is ordinary
/// work.
pub fn judge_text(path: &str, text: &str) -> Option<Finding> {
    let place = check_place(path);
    if place == Some(CheckPlace::CiConfig) {
        return ci_change(path, &Change::new(Kind::Insert, "", text));
    }
    if is_test_path(path) {
        return inserted_into_test(path, text);
    }
    // `sitecustomize.py`, `usercustomize.py`: code Python runs at every start, the test run's
    // included.
    if matches!(basename(path), "sitecustomize.py" | "usercustomize.py") && count_squashed(text, VERDICT_FORGERS) > 0 {
        return block(
            WEAKEN_ASSERTIONS,
            format!("writes code into `{path}`, which every Python start runs, that rewrites what the test framework reports"),
        );
    }
    (place == Some(CheckPlace::TestConfig) && neutered_test_script(text))
        .then(|| {
            block(
                SHADOWED_RUNNER,
                format!("sets the test script in `{path}` to one that only prints a pass"),
            )
        })
        .flatten()
}

/// The files an edit that runs once per found file (`find tests -name 'test_*.py' -exec sed -i
/// .. {} +`) changes, as one stand-in path: `{}` stands for what find matches.
pub fn stand_in<'a>(root: &'a str, name: Option<&'a str>) -> Cow<'a, str> {
    match name {
        Some(n) => Cow::Owned(format!("{}/{}", root.trim_end_matches('/'), basename(n))),
        None => Cow::Borrowed(root),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(line: &str) -> Vec<Change> {
        let argv: Vec<String> = crate::guard::parse_shell(line, None).pipelines[0][0].argv.clone();
        let cmd = SimpleCommand {
            argv,
            ..SimpleCommand::default()
        };
        read(&cmd).map(|e| e.changes).unwrap_or_default()
    }

    fn judge_rewrite(path: &str, pattern: &str, replacement: &str) -> Option<Finding> {
        judge(path, &Change::new(Kind::Substitute, pattern, replacement))
    }

    fn sub(p: &str, r: &str) -> Change {
        Change::new(Kind::Substitute, p, r)
    }

    #[test]
    fn editors_are_read_as_the_same_changes() {
        assert_eq!(changes("sed -i 's/a/b/g' f"), [sub("a", "b")]);
        assert_eq!(
            changes("sed -i -e 's#a#b#' -e '/x/d' f"),
            [sub("a", "b"), Change::new(Kind::Delete, "x", "")]
        );
        assert_eq!(changes("perl -pi -e 's{a}{b}g' f"), [sub("a", "b")]);
        assert_eq!(changes(r#"ruby -pi -e 'gsub(/a/, "b")' f"#), [sub("a", "b")]);
        assert_eq!(changes("vim -Es -c '%s/a/b/g' -c wq f"), [sub("a", "b")]);
        assert_eq!(
            changes("vim -c 'g/a/d' -c 'wq' f"),
            [Change::new(Kind::Delete, "a", "")]
        );
        assert_eq!(changes(r#"awk -i inplace '{gsub(/a/, "b")}1' f"#), [sub("a", "b")]);
        assert_eq!(changes("sd 'a' 'b' f"), [sub("a", "b")]);
        assert!(changes("sed 's/a/b/' f").is_empty());
        assert!(changes("sd a b").is_empty());
    }

    #[test]
    fn plain_reads_regexes_loosely() {
        assert_eq!(plain(r"t\.Fatalf"), "t.Fatalf");
        assert_eq!(plain(r"^\(\s*\)assert "), "assert ");
        assert_eq!(plain(r"\1pass  # assert "), "pass  # assert ");
        assert_eq!(plain(r"\bit\("), "it(");
    }

    #[test]
    fn substitutions_in_test_files() {
        let rule = |p: &str, r: &str| judge_rewrite("tests/test_a.py", p, r).map(|f| (f.rule, f.recommendation));
        let blocked = |p: &str, r: &str| rule(p, r).is_some_and(|(_, rec)| rec == Recommendation::Block);
        assert!(blocked(r"^\(\s*\)assert ", r"\1pass  # assert "));
        assert!(blocked(r"t\.Fatalf", "t.Logf"));
        assert!(blocked(r"def test_", "def _test_"));
        assert!(blocked("func {}(", "func _{}("));
        assert!(blocked(r"\bit\(", "it.skip("));
        assert!(blocked("assertEqual(", "assertTrue("));
        assert!(blocked("== 200", "in (200, 500)") || rule("== 200", "in (200, 500)").is_some());
        assert_eq!(rule("assertEquals(", "assertEqual("), None);
        assert_eq!(
            rule("from app.utils import slugify", "from app.text import slugify"),
            None
        );
        assert_eq!(rule("import unittest.mock", "from unittest import mock"), None);
        assert_eq!(
            rule("timeout(10)", "timeout(600)"),
            Some((RELAXED_LIMIT, Recommendation::Warn))
        );
    }
}

//! Shell text → canonical commands, with tree-sitter-bash.
//!
//! [`parse_shell`] parses a command line once (one parser per thread), then visits every
//! command node: pipelines, lists, subshells, `{ }` groups, control flow, function bodies,
//! `$( )`, backticks and process substitutions. Each command becomes a [`SimpleCommand`]
//! whose argv has quotes and escapes resolved (`r''m`, `"rm"`, `\rm` → `rm`), `$'..'` decoded,
//! here-documents and here-strings kept as its stdin text, and redirections recorded apart
//! from its arguments.
//!
//! The walker models the shell language, not the commands: what `sudo`, `sh -c`, `find
//! -exec`, `python -c` or `docker run` do with the rest of their words is `carriers`'
//! knowledge. For each command the walker asks it for the real command word behind wrappers
//! (`carriers::unwrap_command`) and for the scripts the command carries
//! (`carriers::carried`), which it parses as commands of their own one level deeper
//! (at most `MAX_DEPTH`), in the directory each one runs in; once the line is parsed it asks
//! which scripts each pipeline feeds a shell on stdin, and which commands its `xargs` /
//! `parallel` build from known input (`carriers::scripts_fed_on_stdin`).
//!
//! What bash itself does indirectly is the walker's: aliases and functions defined earlier in
//! the line run at their call (`$1`/`"$@"` replaced by the call's words), unquoted brace lists
//! are expanded with their prefix and suffix (`{rm,-rf,/}`, `/{etc,tmp}/x`, bounded), `for`
//! bodies are walked once per literal value, variables given a literal value earlier in the
//! line are expanded (`d=/; rm -rf $d`), a command word that is a variable holding a shell
//! (`$SHELL -c ..`, see `carriers::shell_variable`) is that shell, `cd`/`pushd` move the
//! lexically tracked directory, and files written earlier in the line are remembered
//! (`WrittenFiles`) for the commands that later run or read them.
//!
//! Commands inside `$( )` or `<( )` are marked [`SimpleCommand::captured`]; `d=$(mktemp ..)`
//! makes `$d` a temporary path.
//!
//! Words that are not literal keep their source text (`$HOME`, `$(..)`), so rules can tell a
//! literal path from an expansion. A command word that is not literal sets
//! [`SimpleCommand::dynamic_name`].
//!
//! Input that is malformed, nested too deeply (brackets, scripts or syntax) or that the parser
//! gives up on sets [`ParsedShell::error`]; the guard fails closed on it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use tree_sitter::{Node, Parser, Tree};

use super::carriers::{self, Carried, Runs, WrittenFiles};
use super::{normalize, ParsedShell, Pipeline, ShellParseError, SimpleCommand};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Scripts nested deeper than this (`sh -c "sh -c '..'"`) are a parse error.
const MAX_DEPTH: usize = 8;

/// Most bytes of text read again beyond the line itself: a script carried, fed or evaluated,
/// a function or alias read at every call. An alias of a few kilobytes called a few thousand
/// times had the guard read megabytes (10 KB of line: 25 s, 5 GB); past the budget the line is
/// a parse error, which blocks it.
const MAX_READ_AGAIN: usize = 64 * 1024;

/// Most bytes expansions may add to a line's words, all counted: a long value used at each of
/// thousands of places (`a="ls; ..(9 KB)"; eval "$a"; eval "$a"; ..`) gave the rules megabytes
/// of words to read.
const MAX_EXPANDED: usize = 256 * 1024;

/// The longest value a variable is followed to: `a=$a$a` doubles it at every step (26 steps
/// took 13 s and 1.5 GB). A longer one is a parse error, which blocks the line.
const MAX_VALUE: usize = 64 * 1024;

/// Most stages copied in front of the pipelines of a carried script, the stages upstream of
/// its carrier (see `Walker::feed_upstream`); past it the line is not judged but refused.
const MAX_FED_STAGES: usize = 4096;

/// Brackets nested deeper than this (`$(`, `(`, `{`, `[`, counted without regard to quoting)
/// are not handed to the parser: tree-sitter's time grows faster than linearly with nesting
/// (3,000 nested `$(echo …)` took ~10 s), and no real command nests this deep. Such input fails
/// to parse, which the guard treats as a block.
const MAX_BRACKET_NESTING: usize = 100;

/// Backquotes cost tree-sitter-bash time and memory in proportion to the text before each one
/// when what they open reads as a redirection (`` `<f ``, `` `2>f ``, `` `-1<f ``, `` `&>f ``,
/// and more spellings than a list would keep up with): 2,000 of them (6 KB) took 1.8 s and
/// 1 GB, 16 KB more than 4 GB, inside parser steps the parse-time budget cannot interrupt.
/// A line with more backquotes than this is not handed to the parser; 512 of the dearest kind
/// take about 0.13 s and 80 MB. They are counted wherever they stand, in quotes and
/// here-documents too (a count a quote could hide would be a count an agent could fool), so
/// a document with more than 256 code spans is better written with the file tool.
const MAX_BACKQUOTES: usize = 512;

/// Whether the parser would take too long on `bytes`: brackets nested deeper than
/// [`MAX_BRACKET_NESTING`], or more than [`MAX_BACKQUOTES`] backquotes.
fn too_costly_to_parse(bytes: &[u8]) -> bool {
    nested_too_deep(bytes) || bytes.iter().filter(|&&b| b == b'`').count() > MAX_BACKQUOTES
}

/// Whether `bytes` nests brackets deeper than [`MAX_BRACKET_NESTING`].
fn nested_too_deep(bytes: &[u8]) -> bool {
    let mut depth = 0usize;
    for &b in bytes {
        match b {
            b'(' | b'{' | b'[' => {
                depth += 1;
                if depth > MAX_BRACKET_NESTING {
                    return true;
                }
            }
            b')' | b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Parses `text`.
///
/// Two rewrites keep the parse safe and cheap; both keep the length, so byte offsets still
/// point into the original text (which is where words are read from):
/// - non-ASCII bytes are given to the grammar as `x`: tree-sitter-bash 0.25's scanner
///   crashes on some code points (e.g. `{` followed by U+E01B5), and bash treats such bytes
///   as word characters anyway;
/// - single `|` pipe operators become `;` when there are two or more of them: the grammar's
///   pipeline rule costs ~50-100 µs per extra stage, `;` costs nothing. Siblings separated by
///   a `|` in the original text are joined into one pipeline again by the walker. When the
///   rewritten text does not parse cleanly (or uses `case`, `[[`, `|&`, `>|`, where `|` means
///   something else), the original text is parsed instead.
fn parse_tree(text: &str) -> Result<Tree, NotParsed> {
    let bytes = text.as_bytes();
    if too_costly_to_parse(bytes) {
        return Err(NotParsed::TooCostly);
    }
    let singles = (0..bytes.len()).filter(|&i| single_pipe(bytes, i)).count();
    let mask_pipes =
        singles >= 2 && !text.contains("case") && !text.contains("[[") && !text.contains("|&") && !text.contains(">|");
    let needs_copy = mask_pipes || !text.is_ascii();
    let masked: Vec<u8>;
    let input: &[u8] = if needs_copy {
        masked = bytes
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                if b >= 0x80 {
                    b'x'
                } else if mask_pipes && single_pipe(bytes, i) {
                    b';'
                } else {
                    b
                }
            })
            .collect();
        &masked
    } else {
        bytes
    };
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().map_err(|_| NotParsed::Unavailable)?;
        if slot.is_none() {
            let mut p = Parser::new();
            p.set_language(&tree_sitter_bash::LANGUAGE.into())
                .map_err(|_| NotParsed::Unavailable)?;
            *slot = Some(p);
        }
        let parser = slot.as_mut().ok_or(NotParsed::Unavailable)?;
        let tree = parse_in_time(parser, input).ok_or(NotParsed::OutOfTime)?;
        if mask_pipes && tree.root_node().has_error() {
            let plain: Vec<u8> = bytes.iter().map(|&b| if b >= 0x80 { b'x' } else { b }).collect();
            return parse_in_time(parser, &plain).ok_or(NotParsed::OutOfTime);
        }
        Ok(tree)
    })
}

/// Why [`parse_tree`] has no tree: each is a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NotParsed {
    /// The text has a shape the parser spends superlinear time on ([`too_costly_to_parse`]).
    TooCostly,
    /// The check's parser time ran out ([`super::budget::parse_time_left`]).
    OutOfTime,
    /// The grammar could not be loaded (or the parser is in use further up the stack).
    Unavailable,
}

impl NotParsed {
    /// What the guard says about it.
    fn reason(self) -> &'static str {
        match self {
            NotParsed::TooCostly => "nested or backquoted more heavily than the parser is given",
            NotParsed::OutOfTime => "the parser's time for this check ran out",
            NotParsed::Unavailable => "the shell parser could not be loaded",
        }
    }
}

/// `input` parsed, or None when the check's parser time ran out first
/// ([`super::budget::parse_time_left`]).
fn parse_in_time(parser: &mut Parser, input: &[u8]) -> Option<Tree> {
    let left = super::budget::parse_time_left();
    let started = Instant::now();
    let mut in_time = |_: &tree_sitter::ParseState| {
        if started.elapsed() < left {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    };
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut in_time);
    let len = input.len();
    let mut read = |at: usize, _: tree_sitter::Point| if at < len { &input[at..] } else { &[] };
    let tree = parser.parse_with_options(&mut read, None, Some(options));
    super::budget::spend_parse_time(started.elapsed(), tree.is_none());
    if tree.is_none() {
        // A cancelled parse would be resumed by the next one.
        parser.reset();
    }
    tree
}

/// Words that tree-sitter-bash reads as more than a plain word in some position: reserved
/// words and the declaration commands (`export`, `local`, `unset`, ...).
const GRAMMAR_WORDS: &[&str] = &[
    "case", "coproc", "declare", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function", "if", "in",
    "local", "readonly", "select", "then", "time", "typeset", "unset", "unsetenv", "until", "while",
];

/// The words of a line that is one plain command, which tree-sitter-bash reads as a
/// `command` of plain words: words separated by spaces, each made of
/// - bare runs of ASCII letters, digits and `-_./:=@+,`,
/// - single-quoted runs of printable ASCII but `$` (`'*'`, `'import os; os.system("x")'`),
/// - double-quoted runs of printable ASCII without `$`, `` ` ``, `\`, `"` or `!` (nothing in
///   them expands),
/// - the escaped `\;` (find's `-exec .. \;`),
///
/// each word read as bash reads it, quotes removed. None of the words, as written, is a
/// [`GRAMMAR_WORDS`] entry; the first is written bare, without `=` (an assignment), starting
/// with a letter, digit, `_`, `.` or `/`; after the first, `{}` (find's placeholder, which the
/// grammar reads as `{` and `}` joined) is a word too. None for anything else (`$`, operators,
/// `~`, bare `*`, other braces, other escapes, tabs, newlines, other bytes, and a `((`
/// anywhere, which [`double_paren_command`] reads twice), which is parsed.
///
/// Most lines an agent sends (`ls -la`, `cargo test --release`, `git status`, `python3 -c
/// '..'`) and most scripts carriers hand over (`find -exec rm -rf {}` carries `rm -rf`) are
/// this shape, and parsing was a third of the guard's time. The unit test
/// `plain_lines_read_as_the_grammar_reads_them` holds both readings equal over the corpora.
fn plain_command_words(text: &str) -> Option<Vec<String>> {
    // A `((` anywhere, quoted or not, has the walk read the line a second way.
    if double_paren_command(text) {
        return None;
    }
    let bare = |b: u8| b.is_ascii_alphanumeric() || b"-_./:=@+,{}".contains(&b);
    let printable = |b: u8| (b' '..=b'~').contains(&b);
    let b = text.as_bytes();
    // Each word as written (for the checks below) and as read.
    let mut written: Vec<&str> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b' ' {
            i += 1;
            continue;
        }
        let start = i;
        let mut word = String::new();
        while i < b.len() && b[i] != b' ' {
            match b[i] {
                c if bare(c) => {
                    word.push(char::from(c));
                    i += 1;
                }
                q @ (b'\'' | b'"') => {
                    let close = i + 1 + b[i + 1..].iter().position(|&c| c == q)?;
                    let inside = &b[i + 1..close];
                    // No `$` even in single quotes: the walk expands `${..}`, `$(..)` and
                    // `$IFS` wherever they are written (see `push_command`), and marks quoted
                    // `IFS` words as it reads them.
                    let literal = match q {
                        b'\'' => inside.iter().all(|&c| printable(c) && c != b'$'),
                        _ => inside.iter().all(|&c| printable(c) && !b"$`\\\"!".contains(&c)),
                    };
                    if !literal {
                        return None;
                    }
                    word.push_str(&text[i + 1..close]);
                    i = close + 1;
                }
                b'\\' if b.get(i + 1) == Some(&b';') => {
                    word.push(';');
                    i += 2;
                }
                _ => return None,
            }
        }
        let as_written = &text[start..i];
        // `a ==`: the grammar reads a word of `=` signs as an operator, not an argument.
        if (as_written.contains("IFS") && as_written.contains(['\'', '"'])) || as_written.starts_with('=') {
            return None;
        }
        written.push(as_written);
        words.push(word);
    }
    let first = written.first()?;
    let braces = |w: &&str| w.contains(['{', '}']);
    if braces(first) || written.iter().any(|w| braces(w) && *w != "{}") {
        return None;
    }
    let starts_plain = first
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/'));
    let first_bare = first.bytes().all(bare);
    let plain =
        starts_plain && first_bare && !first.contains('=') && !written.iter().any(|w| GRAMMAR_WORDS.contains(w));
    plain.then_some(words)
}

/// `which python || which python3 || which python2`: lookups of one program under the
/// versions it may be installed as, the first found printed. Whichever is found, that program
/// runs, so the first name stands for all. None when any alternative is not a plain lookup
/// or names another program (`which vim || which nano`).
fn same_program_lookups(inner: &str) -> Option<&str> {
    let family = |w: &str| w.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.').to_string();
    let mut first: Option<&str> = None;
    let mut alternatives = 0;
    for alternative in inner.split("||") {
        let words: Vec<&str> = alternative.split_whitespace().collect();
        let w = match words.as_slice() {
            ["command", "-v", w] | ["which", w] | ["type", "-P", w] => *w,
            _ => return None,
        };
        if w.contains('/') || !w.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) {
            return None;
        }
        match first {
            None => first = Some(w),
            Some(f) if family(f) == family(w) && !family(w).is_empty() => {}
            Some(_) => return None,
        }
        alternatives += 1;
    }
    first.filter(|_| alternatives >= 2)
}

/// A `|` that is a pipe operator candidate: not part of `||`.
fn single_pipe(b: &[u8], i: usize) -> bool {
    b[i] == b'|' && (i == 0 || b[i - 1] != b'|') && b.get(i + 1) != Some(&b'|')
}

/// The original text between two sibling statements is a pipe: they form one pipeline.
fn pipe_between(src: &[u8], a: usize, b: usize) -> bool {
    if a >= b || b > src.len() {
        return false;
    }
    let gap = &src[a..b];
    let mut pipes = 0;
    for &c in gap {
        match c {
            b'|' => pipes += 1,
            b' ' | b'\t' | b'\n' | b'\r' | b'\\' => {}
            _ => return false,
        }
    }
    pipes == 1
}

/// The words a `while` (or `until !`) condition's `read` makes of each line, as a loop body
/// spells them: `read f` → `$f`, `${f}`; `read a b` → each name; `read` → `$REPLY`; `read -a
/// arr` → `${arr[0]}`, `${arr[@]}`, `$arr`. Empty for any other condition.
fn read_words(condition: Node<'_>, src: &[u8]) -> Vec<String> {
    // `until ! read f`: the same loop, spelled the other way round; `read -r f || [ -n "$f" ]`
    // (a last line without a newline), `read f && [ -n "$f" ]`: the read comes first.
    let mut condition = condition;
    while matches!(condition.kind(), "negated_command" | "list") {
        match condition.named_child(0) {
            Some(inner) => condition = inner,
            None => return Vec::new(),
        }
    }
    if condition.kind() != "command"
        || condition
            .child_by_field_name("name")
            .is_none_or(|n| text(n, src) != "read")
    {
        return Vec::new();
    }
    let mut cursor = condition.walk();
    let args: Vec<&str> = condition
        .children_by_field_name("argument", &mut cursor)
        .map(|a| text(a, src))
        .collect();
    let identifier = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    // Options come first; `-d DELIM`, `-n N`, `-p PROMPT`, `-t T`, `-u FD`, `-i TEXT` and
    // `-a ARRAY` take a value, glued or as the next word (`-rd ''`).
    const VALUED: &[u8] = b"adinNptu";
    let (mut names, mut arrays) = (Vec::new(), Vec::new());
    let mut k = 0;
    while k < args.len() {
        let a = args[k];
        if a == "--" {
            names.extend(args[k + 1..].iter().copied().filter(|w| identifier(w)));
            break;
        }
        match a.strip_prefix('-').filter(|l| !l.is_empty()) {
            Some(letters) => {
                if let Some(at) = letters.bytes().position(|l| VALUED.contains(&l)) {
                    let glued = &letters[at + 1..];
                    let value = if glued.is_empty() {
                        k += 1;
                        args.get(k).copied().unwrap_or("")
                    } else {
                        glued
                    };
                    if letters.as_bytes()[at] == b'a' && identifier(value) {
                        arrays.push(value);
                    }
                }
            }
            None if identifier(a) => names.push(a),
            None => {}
        }
        k += 1;
    }
    if names.is_empty() && arrays.is_empty() {
        names.push("REPLY");
    }
    let mut words: Vec<String> = names
        .iter()
        .flat_map(|n| [format!("${n}"), format!("${{{n}}}")])
        .collect();
    for a in arrays {
        words.extend([
            format!("${a}"),
            format!("${{{a}}}"),
            format!("${{{a}[0]}}"),
            format!("${{{a}[@]}}"),
            format!("${{{a}[*]}}"),
        ]);
    }
    words
}

/// Parses a shell command line into pipelines of simple commands (see the module doc).
/// `cwd` is the directory the line starts in (lexically tracked through `cd`).
pub fn parse_shell(text: &str, cwd: Option<PathBuf>) -> ParsedShell {
    parse_shell_with(text, cwd, true)
}

/// [`parse_shell`]; `plain_lines` lets lines of one plain command skip tree-sitter (see
/// [`plain_command_words`]), which only the tests turn off, to compare both readings.
fn parse_shell_with(text: &str, cwd: Option<PathBuf>, plain_lines: bool) -> ParsedShell {
    let mut out = ParsedShell::default();
    let mut w = Walker {
        out: &mut out,
        plain_lines,
        cwd,
        nest: 0,
        captured: 0,
        vars: HashMap::new(),
        arrays: HashMap::new(),
        fetched: HashMap::new(),
        positional: None,
        quoted_ifs: Vec::new(),
        unquoted_expansions: Vec::new(),
        listing_argument: None,
        computed_argument: None,
        assigned: Vec::new(),
        written: WrittenFiles::default(),
        aliases: HashMap::new(),
        functions: HashMap::new(),
        root: 0,
        carrying: 0,
        feeding: 0,
        piped_in: false,
        calling: Vec::new(),
        expanding: Vec::new(),
        read_budget: text.len().saturating_add(MAX_READ_AGAIN),
        expanded: std::cell::Cell::new(0),
    };
    w.parse_into(text, 0);
    // Text piped or fed into a shell (`echo 'rm -rf /' | sh`, `sh <<EOF`, `echo .. | at now`)
    // is a script of its own: parse it too, wherever it sits in the line.
    let mut k = 0;
    while k < w.out.pipelines.len() && k < 256 {
        // `echo 'import os; os.system(..)' | python3 | tee log`: an interpreter reading its
        // program on stdin runs what the stages before it print (read once the pipeline is
        // whole: the walker joins the stages of a long one after their commands are made).
        for program in carriers::read_piped_programs(&mut w.out.pipelines[k]) {
            let saved = std::mem::replace(&mut w.cwd, program.cwd);
            w.root += usize::from(program.as_root);
            w.carrying += 1;
            w.parse_into(&program.script, 1);
            w.carrying -= 1;
            w.root -= usize::from(program.as_root);
            w.cwd = saved;
        }
        for fed in carriers::scripts_fed_on_stdin(&w.out.pipelines[k]) {
            let saved = std::mem::replace(&mut w.cwd, fed.cwd);
            w.root += usize::from(fed.as_root);
            w.parse_into(&fed.script, 1);
            w.root -= usize::from(fed.as_root);
            w.cwd = saved;
        }
        k += 1;
    }
    if w.expanded.get() > MAX_EXPANDED {
        w.fail("variables expand to more text than the guard follows", true);
    }
    out
}

struct Walker<'o> {
    out: &'o mut ParsedShell,
    /// Lines of one plain command are built without tree-sitter ([`plain_command_words`]).
    plain_lines: bool,
    cwd: Option<PathBuf>,
    /// Current depth of the tree walk (bounded by [`MAX_NODE_DEPTH`]).
    nest: usize,
    /// How many command or process substitutions enclose the current command.
    captured: usize,
    /// Variables given a literal value earlier in the line (`d=/; rm -rf $d`).
    vars: HashMap<String, String>,
    /// Arrays given literal elements earlier in the line (`a=(rm -rf /); "${a[@]}"`): their
    /// elements are words.
    arrays: HashMap<String, Vec<String>>,
    /// Every literal value given to a variable so far, in order (bounded): which values a
    /// name took inside a branch.
    assigned: Vec<(String, String)>,
    /// Variables that hold what a download printed (`c=$(curl -s URL)`), with that
    /// substitution's text: using one is using the download (`eval "$c"` is `eval "$(curl -s
    /// URL)"`).
    fetched: HashMap<String, String>,
    /// The positional parameters `set -- WORDS` gave, for `"$@"`, `$1`, .. read after it.
    positional: Option<Vec<String>>,
    /// The argv positions of the command being built whose `$IFS` is quoted (`sh -c
    /// 'rm$IFS-rf'`): the shell does not split them.
    quoted_ifs: Vec<usize>,
    /// Indices of the current command's arguments with an unquoted expansion (`$x`, `a$x`):
    /// bash splits their values at blanks.
    unquoted_expansions: Vec<usize>,
    /// The pipeline an unquoted substitution among the current command's arguments pushed,
    /// when it pushed one (`rm -f $(find ~ -type f)`): its words are the command's arguments.
    listing_argument: Option<usize>,
    /// An unquoted substitution among the current command's arguments whose output is plain
    /// to compute (`rm $(echo LXJmIC8= | base64 -d)`): its pipeline and the argument's index.
    computed_argument: Option<(usize, usize)>,
    /// Files written earlier in the line by `echo`/`printf`/`cat <<EOF` (`echo .. > x.sh`):
    /// running or reading one of them runs or reads that text.
    written: WrittenFiles,
    /// Aliases and shell functions defined earlier in the line, by name, with their text:
    /// calling one runs that text (`alias x='rm -rf'; x ~`, `f() { rm -rf "$1"; }; f /`).
    aliases: HashMap<String, String>,
    functions: HashMap<String, String>,
    /// How many scripts carried by a command with another user's rights enclose the current
    /// command (`sudo sh -c '..'`, `echo .. | sudo m4`, `sudo -s <<EOF`): what they run has
    /// those rights too.
    root: usize,
    /// How many commands carry the script the current command is part of (`sh -c '..'`,
    /// `foo --shell=/bin/sh`): zero for a line of its own.
    carrying: usize,
    /// The statement being visited is a later stage of a pipeline (`find ~ | while read f;
    /// ..`): set by [`Walker::visit_children`] before each child, taken by the `while` loop.
    piped_in: bool,
    /// How many scripts, function bodies or aliases being read are fed a pipe by the stage
    /// that runs them: a function called inside one is read again where it is called (`g()
    /// { bash; }; f() { g; }; curl .. | f`).
    feeding: usize,
    /// The functions whose bodies are being read again at a call, innermost last.
    calling: Vec<String>,
    /// The aliases whose text is being read at a call: bash does not expand an alias again
    /// inside its own text (`alias rm='rm -i'; rm x` runs `rm -i x`).
    expanding: Vec<String>,
    /// Bytes [`Walker::parse_into`] may still read: the line once, and
    /// [`MAX_READ_AGAIN`] more of the text it reads again (scripts carried, fed or evaluated,
    /// functions and aliases at every call).
    read_budget: usize,
    /// Bytes [`Walker::expand`] has added to the line's words so far; past
    /// [`MAX_EXPANDED`] it expands nothing more and the line is a parse error.
    expanded: std::cell::Cell<usize>,
}

/// Syntax trees deeper than this are a parse error (and never a stack overflow).
const MAX_NODE_DEPTH: usize = 150;

/// The text as bash reads it before splitting it into words, where tree-sitter-bash reads
/// otherwise; None when nothing differs:
/// - a backslash before a newline, outside single quotes and comments, continues the line and
///   is removed with the newline (`r\<newline>m -rf /` runs `rm`), in double quotes too;
/// - a line that starts with a backslash (`ls`, newline, `\rm -rf /etc`) is a command of its
///   own, where the grammar read it as more words of the line before: a blank is put before it.
fn as_bash_reads(text: &str) -> Option<String> {
    if !text.contains("\\\n") && !text.contains("\n\\") && !text.contains("\\\r") {
        return None;
    }
    let b = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len() + 8);
    let mut single = false;
    // Per open level (the text, then each `$(..)` inside it): in double quotes, and how many
    // of its own parentheses are open (a subshell's `)` does not close the level).
    let mut levels: Vec<(bool, usize)> = vec![(false, 0)];
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        i += 1;
        let double = levels.last().is_some_and(|l| l.0);
        match c {
            b'\'' if !double => single = !single,
            _ if single => {}
            b'\\' => match b.get(i) {
                Some(b'\n') => {
                    i += 1;
                    continue;
                }
                // An escaped carriage return is that character, not a line continued before
                // a Windows line end (which the grammar took it for): quoted instead.
                Some(b'\r') if !double => {
                    out.extend(b"\"\r\"");
                    i += 1;
                    continue;
                }
                // Any other escaped character is taken as it is.
                Some(&next) => {
                    out.extend([c, next]);
                    i += 1;
                    continue;
                }
                None => {}
            },
            b'$' if b.get(i) == Some(&b'(') => {
                out.extend(b"$(");
                i += 1;
                levels.push((false, 0));
                continue;
            }
            b'(' if !double => {
                if let Some(l) = levels.last_mut() {
                    l.1 += 1;
                }
            }
            b')' if !double => {
                let depth = levels.len();
                match levels.last_mut() {
                    Some(l) if l.1 > 0 => l.1 -= 1,
                    Some(_) if depth > 1 => {
                        levels.pop();
                    }
                    _ => {}
                }
            }
            b'"' => {
                if let Some(l) = levels.last_mut() {
                    l.0 = !l.0;
                }
            }
            // A comment runs to the end of its line, backslashes and quotes included.
            b'#' if !double
                && out
                    .last()
                    .is_none_or(|p| p.is_ascii_whitespace() || b";&|(".contains(p)) =>
            {
                let end = b[i..].iter().position(|&x| x == b'\n').map_or(b.len(), |e| i + e);
                out.push(c);
                out.extend_from_slice(&b[i..end]);
                i = end;
                continue;
            }
            b'\n' if !double && b.get(i) == Some(&b'\\') => {
                out.extend(b"\n ");
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    String::from_utf8(out).ok()
}

/// Whether a `$((` in `text` is closed other than by `))`: a command substitution whose
/// command starts with a subshell (`$((ls); rm x)`), which bash runs as commands.
fn substitution_opening_a_subshell(text: &str) -> bool {
    text.match_indices("$((").any(|(at, _)| {
        let b = &text.as_bytes()[at + 3..];
        let mut depth = 2usize;
        let mut inner_closed_at = None;
        for (k, &c) in b.iter().enumerate() {
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 1 {
                        inner_closed_at = Some(k);
                    }
                    if depth == 0 {
                        return inner_closed_at != k.checked_sub(1);
                    }
                }
                _ => {}
            }
        }
        false
    })
}

/// Whether `text` holds a `((` that does not open an arithmetic expansion (`$((`).
fn double_paren_command(text: &str) -> bool {
    text.match_indices("((").any(|(i, _)| !text[..i].ends_with('$'))
}

impl Walker<'_> {
    /// Records why the line could not be read whole. The first reason is kept, unless a later
    /// one is clear where it was not: a bound the line ran past blocks it whatever the grammar
    /// stumbled on before.
    fn fail(&mut self, msg: impl Into<String>, clear: bool) {
        if self.out.error.is_none() || (clear && !self.out.clear_error) {
            self.out.error = Some(ShellParseError(msg.into()));
            self.out.clear_error = clear;
        }
    }

    fn parse_into(&mut self, text: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.fail("commands nested too deeply", true);
            return;
        }
        let Some(left) = self.read_budget.checked_sub(text.len()) else {
            self.read_budget = 0;
            self.fail("the line makes the guard read more text again than it reads", true);
            return;
        };
        self.read_budget = left;
        // `{rm,-rf,/}`: bash expands a braced word into words before running it.
        let expanded = match brace_words_bounded(text) {
            Ok(e) => e,
            Err(()) => {
                self.fail(
                    "more brace lists than the guard expands (bash would run words it did not see)",
                    true,
                );
                None
            }
        };
        let text = expanded.as_deref().unwrap_or(text);
        let as_read = as_bash_reads(text);
        let text = as_read.as_deref().unwrap_or(text);
        // `ls -la`, `cargo test`, the `rm -rf {}` of `find -exec`: the command the tree walk
        // would build, built directly, at the depth the walk would be at (`program`, then
        // `command`; the walk's depth checks go two levels further, to its words).
        if self.plain_lines && self.nest + 3 <= MAX_NODE_DEPTH {
            if let Some(words) = plain_command_words(text) {
                let cmd = SimpleCommand {
                    argv: words,
                    ..SimpleCommand::default()
                };
                let mut pipeline = Vec::new();
                self.nest += 2;
                self.push_command(cmd, depth, &mut pipeline);
                self.nest -= 2;
                if !pipeline.is_empty() {
                    self.out.pipelines.push(pipeline);
                }
                return;
            }
        }
        let tree = match parse_tree(text) {
            Ok(tree) => tree,
            Err(why) => {
                self.fail(why.reason(), true);
                return;
            }
        };
        let root = tree.root_node();
        if root.has_error() {
            let clear = unbalanced(text).is_some();
            let msg = unbalanced(text).unwrap_or_else(|| "a construct the bash grammar does not accept".into());
            self.fail(msg, clear);
        }
        // `((…))` is arithmetic to bash, but dash (`/bin/sh`, which runs every command) has no
        // arithmetic command: it runs `((rm -rf /))`, `(('mkfs.ext4' /dev/sda1))` and even
        // `((reboot))` as two nested subshells. So a `((` that is not `$((` is read that way
        // as well, whether or not bash's grammar accepted it; a second reading can only add
        // what the rules see.
        if double_paren_command(text) {
            let spaced = text.replace('(', "( ");
            if let Ok(nested) = parse_tree(&spaced) {
                self.visit(nested.root_node(), spaced.as_bytes(), depth);
            }
        }
        // `$((ls); rm -rf /etc)`: not arithmetic (its parentheses do not close as `))`), so
        // bash runs it as a command substitution holding a subshell; the grammar read it as
        // arithmetic. Read that way as well.
        if substitution_opening_a_subshell(text) {
            let spaced = text.replace("$((", "$( (");
            if let Ok(nested) = parse_tree(&spaced) {
                self.visit(nested.root_node(), spaced.as_bytes(), depth);
            }
        }
        let src = text.as_bytes();
        self.visit(root, src, depth);
    }

    /// Visits a statement-level node.
    fn visit(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        if self.nest > MAX_NODE_DEPTH {
            self.fail("commands nested too deeply", true);
            return;
        }
        self.nest += 1;
        self.visit_inner(node, src, depth);
        self.nest -= 1;
    }

    fn visit_inner(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        match node.kind() {
            "declaration_command" | "unset_command" | "variable_assignment" => {
                let mut cmd = SimpleCommand::default();
                self.quoted_ifs.clear();
                if node.kind() == "variable_assignment" {
                    self.visit_subs(node, src, depth);
                    let w = word(node, src);
                    if !self.assign_array(node, src) {
                        self.assign(&w);
                    }
                    cmd.argv.push(w);
                } else {
                    if let Some(kw) = node.child(0) {
                        cmd.argv.push(text(kw, src).to_string());
                    }
                    let mut tail = Vec::new();
                    self.fill(node, src, depth, &mut cmd, &mut tail);
                    for w in cmd.argv.iter().skip(1) {
                        if node.kind() == "unset_command" {
                            // `unset DIR; rm -rf "$DIR/"`: the name no longer holds its value.
                            self.vars.remove(w.as_str());
                        } else {
                            self.assign(w);
                        }
                    }
                }
                let mut p = Vec::new();
                self.push_command(cmd, depth, &mut p);
                if !p.is_empty() {
                    self.out.pipelines.push(p);
                }
            }
            "command" | "redirected_statement" if is_simple(node) => {
                let mut p = Vec::new();
                self.command_of(node, src, depth, &mut p);
                if !p.is_empty() {
                    self.out.pipelines.push(p);
                }
            }
            "pipeline" => {
                let mut p: Pipeline = Vec::new();
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    if is_simple(child) {
                        self.command_of(child, src, depth, &mut p);
                    } else {
                        // `a | while read x; do ..; done`: the compound part reads stdin too.
                        let before = self.out.pipelines.len();
                        self.piped_in = !p.is_empty();
                        self.visit(child, src, depth);
                        self.piped_in = false;
                        if child.kind() != "comment" {
                            let inner: Vec<SimpleCommand> = self.out.pipelines.drain(before..).flatten().collect();
                            p.extend(inner);
                        }
                    }
                }
                if !p.is_empty() {
                    self.out.pipelines.push(p);
                }
            }
            // `a && b < f`: the grammar hangs the redirect on the whole list, bash on its last
            // command; `{ ..; } > f`, `while ..; done < f`: on every command of the body.
            "redirected_statement" => {
                // `git 2>/dev/null reset --hard`: the grammar takes every word after the
                // redirect's target as more targets; bash passes them to the command. Read the
                // statement again with those words moved before the redirect.
                if let Some(moved) = interleaved_redirect(node, src) {
                    self.parse_into(&moved, depth + 1);
                    return;
                }
                let before = self.out.pipelines.len();
                let mut redirs = SimpleCommand::default();
                if self.fed_by_process_substitution(node, src, depth, &mut redirs) {
                    return;
                }
                let mut list = false;
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind() {
                        "file_redirect" => self.add_redirect(child, src, depth, &mut redirs),
                        "herestring_redirect" | "heredoc_redirect" => self.visit_subs(child, src, depth),
                        kind => {
                            list |= kind == "list";
                            self.visit(child, src, depth);
                        }
                    }
                }
                let start = before.min(self.out.pipelines.len());
                let added = &mut self.out.pipelines[start..];
                let targets: Vec<&mut SimpleCommand> = if list {
                    added.last_mut().and_then(|p| p.last_mut()).into_iter().collect()
                } else {
                    added.iter_mut().flatten().collect()
                };
                for cmd in targets {
                    cmd.redirects.extend(redirs.redirects.iter().cloned());
                    cmd.appends.extend(redirs.appends.iter().cloned());
                    cmd.inputs.extend(redirs.inputs.iter().cloned());
                }
            }
            "command_substitution" | "process_substitution" | "subshell" => {
                let saved = self.cwd.clone();
                let before = self.out.pipelines.len();
                self.visit_children(node, src, depth);
                self.cwd = saved;
                // `bash <(echo 'rm -rf ~')`: the file a process substitution names holds what
                // its command prints, when that is known.
                if node.kind() == "process_substitution" && self.out.pipelines.len() == before + 1 {
                    if let Some(printed) = self.out.pipelines.last().and_then(|p| carriers::printed_by(p)) {
                        self.written.record_text(text(node, src), printed);
                    }
                }
            }
            "function_definition" => {
                if let (Some(n), Some(body)) = (node.child_by_field_name("name"), node.child_by_field_name("body")) {
                    let b = text(body, src).trim();
                    let b = b.strip_prefix('{').and_then(|x| x.strip_suffix('}')).unwrap_or(b);
                    self.functions.insert(text(n, src).to_string(), b.to_string());
                }
                self.visit_children(node, src, depth);
            }
            // `for d in / ~; do rm -rf $d; done`: the body once per literal value.
            "for_statement" => {
                let var = node.child_by_field_name("variable").map(|v| text(v, src).to_string());
                let mut cursor = node.walk();
                let values: Vec<String> = node
                    .children_by_field_name("value", &mut cursor)
                    .map(|v| word(v, src))
                    .collect();
                let body = node.child_by_field_name("body");
                // `for i in $(cat f | base64); do dig $i.x.io; done`: each value is a piece of
                // what the substitution prints, so the body reads the substitution in its place
                // (the substitution itself runs once, read where it stands).
                let printed = values.len() == 1 && (values[0].starts_with("$(") || values[0].starts_with('`'));
                match (var, body) {
                    (Some(var), Some(body))
                        if !values.is_empty()
                            && values.len() <= 8
                            && (printed || values.iter().all(|v| is_literal(v))) =>
                    {
                        // The substitution runs first, once.
                        let feeder = self.out.pipelines.len();
                        if printed {
                            let mut cursor = node.walk();
                            let lists: Vec<Node<'_>> = node.children_by_field_name("value", &mut cursor).collect();
                            for list in lists {
                                self.visit_subs(list, src, depth);
                            }
                        }
                        // `for f in $(find ~ -type f); do rm "$f"; done`: one pipeline prints the
                        // words, and a command handed one of them whole is fed them as a `while
                        // read` loop's body is: its pipeline joins the printing one's.
                        let lister = printed && self.out.pipelines.len() == feeder + 1;
                        let saved = self.vars.get(&var).cloned();
                        for v in values {
                            self.vars.insert(var.clone(), v.clone());
                            if lister {
                                let start = self.out.pipelines.len();
                                self.visit_fed(body, src, depth, std::slice::from_ref(&v));
                                let mut k = start;
                                while k < self.out.pipelines.len() {
                                    if self.out.pipelines[k].iter().any(|c| c.args_from_stdin) {
                                        let fed = self.out.pipelines.remove(k);
                                        self.out.pipelines[feeder].extend(fed);
                                    } else {
                                        k += 1;
                                    }
                                }
                            } else {
                                self.visit(body, src, depth);
                            }
                        }
                        match saved {
                            Some(v) => self.vars.insert(var, v),
                            None => self.vars.remove(&var),
                        };
                    }
                    _ => self.visit_children(node, src, depth),
                }
            }
            // `find ~ -type f | while read -r f; do gpg -c "$f"; done`: the loop runs its body
            // once per line the pipe brings, with the line as `$f`, which is what `xargs` does
            // with the same words. The body's commands handed the line are read as `xargs`
            // stages (more arguments from stdin), in the pipeline of what feeds them, so every
            // rule that reads a fed command reads this one (see [`Walker::visit_fed`]). The
            // condition itself (`read f`, `until ! read f`) does nothing to judge.
            "while_statement" if self.piped_in => {
                self.piped_in = false;
                let words = node
                    .child_by_field_name("condition")
                    .map(|c| read_words(c, src))
                    .unwrap_or_default();
                match node.child_by_field_name("body") {
                    Some(body) if !words.is_empty() => self.visit_fed(body, src, depth, &words),
                    _ => self.visit_children(node, src, depth),
                }
            }
            // A branch may or may not run: a variable it assigns afterwards holds one value or
            // another (`if ..; then c=a; else c=b; fi; $c`), which the walker does not know.
            // A value assigned in a branch is kept when it is the only one the name can have
            // (`if [ -d x ]; then d=/; fi; rm -rf $d` may run `rm -rf /`).
            "if_statement" | "case_statement" => {
                let before = self.vars.clone();
                let from = self.assigned.len();
                self.visit_children(node, src, depth);
                let assigned = &self.assigned[from.min(self.assigned.len())..];
                self.vars.retain(|name, value| {
                    let unchanged = before.get(name) == Some(value);
                    let one_value = !before.contains_key(name)
                        && assigned.iter().filter(|(n, _)| n == name).all(|(_, v)| v == value);
                    unchanged || one_value
                });
            }
            "comment" | "heredoc_body" => {}
            _ => self.visit_children(node, src, depth),
        }
    }

    /// Visits the statements under `node` in order; siblings separated by a `|` in the
    /// original text (see [`parse_tree`]) are joined into one pipeline.
    fn visit_children(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        // `find ~ | { while read f; do ..; done; }`, `find ~ | (while ..)`: what is piped into
        // a group reaches its first command.
        let mut group_fed =
            std::mem::take(&mut self.piped_in) && matches!(node.kind(), "compound_statement" | "subshell");
        let mut cursor = node.walk();
        let mut prev_end: Option<usize> = None;
        let mut group_start = self.out.pipelines.len();
        for child in node.named_children(&mut cursor) {
            if child.kind() == "comment" {
                continue;
            }
            let piped = prev_end.is_some_and(|e| pipe_between(src, e, child.start_byte()));
            let before = self.out.pipelines.len();
            self.piped_in = piped || std::mem::take(&mut group_fed);
            self.visit(child, src, depth);
            self.piped_in = false;
            if piped {
                // Joined in place: collecting the whole pipeline again at each `|` made a
                // pipeline of n stages cost n² copies (8,000 stages took 2 s).
                let pipelines = &mut self.out.pipelines;
                let start = group_start.min(pipelines.len());
                if start < pipelines.len() {
                    let rest: Vec<SimpleCommand> = pipelines.drain(start + 1..).flatten().collect();
                    pipelines[start].extend(rest);
                    if pipelines[start].is_empty() {
                        pipelines.remove(start);
                    }
                }
            } else {
                group_start = before;
            }
            prev_end = Some(child.end_byte());
        }
    }

    /// `rm -f $(find ~ -type f)`, `` gpg -c `ls ~` ``: an unquoted substitution's words become
    /// the command's arguments, which is what `find ~ -type f | xargs rm -f` does. Read so for
    /// the first stage of a pipeline whose program, wrappers unwrapped, deletes, empties or
    /// encrypts each file it is named ([`crate::guard::effects::acts_on_each_named_file`]) and
    /// is fed no here-document: the substitution's pipeline is put in front of it, and it
    /// takes more arguments from what that prints. The words must reach that program (`sudo -u
    /// $(logname) ..` hands them to the wrapper).
    /// `rm $(echo LXJmIC8= | base64 -d)`, `rm $(printf -- '-rf /')`: an unquoted substitution
    /// whose output is plain to compute (literal text, through filters such as `base64 -d` or
    /// `tr`) is the words it prints, split as bash splits them. The substitution's own
    /// commands are still judged where they stand.
    fn computed_into(&mut self, cmd: &mut SimpleCommand) {
        let Some((at, index)) = self.computed_argument.take() else {
            return;
        };
        // What an evaluator or a shell is handed stays as written: running decoded text is
        // judged as hidden execution whatever it decodes to (`eval $(echo .. | base64 -d)`).
        // The runner is the word wrappers leave (`timeout 5 sh -c $(..)` hands `sh` the text).
        let mut probe = cmd.argv.clone();
        carriers::unwrap_command_keeping(&mut probe, &mut None);
        let runner = probe.first().map(|w| crate::guard::basename(w)).unwrap_or("");
        if matches!(runner, "eval" | "source" | ".") || carriers::is_shell(runner) {
            return;
        }
        // `head`/`tail` are taken whole where a script is read (a part of it runs no less),
        // which is not the words a part of it would be; a line that set `IFS` splits
        // otherwise than at blanks.
        let Some(stages) = self.out.pipelines.get(at) else {
            return;
        };
        if self.vars.contains_key("IFS") || stages.iter().any(|c| matches!(c.name(), "head" | "tail")) {
            return;
        }
        let Some(text) = carriers::printed_by(stages) else {
            return;
        };
        let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
        // An escape or a format directive left in the text (`printf '\057'`) is not plain.
        let plain = is_literal(&text) && !text.contains(['\\', '%']);
        if words.is_empty() || words.len() > MAX_COMPUTED_WORDS || index >= cmd.argv.len() || !plain {
            return;
        }
        let added = words.len() - 1;
        cmd.argv.splice(index..=index, words);
        for indices in [&mut self.unquoted_expansions, &mut self.quoted_ifs] {
            indices.retain(|&k| k != index);
            for k in indices.iter_mut().filter(|k| **k > index) {
                *k += added;
            }
        }
        // The words are known now: they are no longer a listing fed to the command.
        self.listing_argument = None;
    }

    fn listing_into(&mut self, cmd: &mut SimpleCommand, pipeline: &mut Pipeline) {
        let Some(at) = self.listing_argument.take() else {
            return;
        };
        if !pipeline.is_empty()
            || self.piped_in
            || cmd.stdin_text.is_some()
            || self
                .out
                .pipelines
                .get(at)
                .is_none_or(|p| p.iter().any(|c| c.argv.is_empty()))
        {
            return;
        }
        let mut unwrapped = SimpleCommand {
            argv: cmd.argv.clone(),
            ..SimpleCommand::default()
        };
        carriers::unwrap_command_keeping(&mut unwrapped.argv, &mut None);
        let reaches = unwrapped
            .argv
            .iter()
            .skip(1)
            .any(|w| w.starts_with("$(") || w.starts_with('`'));
        if !reaches || !crate::guard::effects::acts_on_each_named_file(&unwrapped) {
            return;
        }
        let listing = self.out.pipelines.remove(at);
        pipeline.extend(listing);
        cmd.args_from_stdin = true;
    }

    /// Visits a loop body run once per line fed to the loop, with the line in one of `words`
    /// (`$f`, `${f}`): its commands handed the line are read as `xargs` stages (more arguments
    /// from stdin), so every rule that reads a fed command reads them. A path built from the
    /// line (`rm -rf "$d/target"`) is another file. The word stays where it stood, as `xargs
    /// -I{}` keeps `{}`: a rule that needs a local source (`scp "$f" host:`) still has one. A
    /// command whose output replaces the named file (`: > "$f"`) is marked so.
    fn visit_fed(&mut self, body: Node<'_>, src: &[u8], depth: usize, words: &[String]) {
        let before = self.out.pipelines.len();
        self.visit(body, src, depth);
        let fed = |w: &String| words.contains(w);
        for cmd in self.out.pipelines[before..].iter_mut().flatten() {
            // `dd if=/dev/zero of="$f"`: dd names its output by `of=`.
            let dd_output = cmd.argv.first().is_some_and(|w| crate::guard::basename(w) == "dd")
                && cmd
                    .argv
                    .iter()
                    .any(|a| a.strip_prefix("of=").is_some_and(|o| words.iter().any(|w| w == o)));
            let replaced = dd_output || cmd.redirects.iter().any(|r| fed(r) && !cmd.appends.contains(r));
            cmd.overwrites_fed_files |= replaced;
            cmd.args_from_stdin |= replaced || cmd.argv.iter().skip(1).any(fed);
        }
    }

    /// `while read f; do rm "$f"; done < <(find ~ -type f)` (or `<<< "$(find ~ -type f)"`, or a
    /// group around the loop): the loop reads what the substitution prints, as if piped from it. The substitution's pipeline and the loop's
    /// fed body are read as one pipeline (see [`Walker::visit_fed`]); false, with nothing
    /// visited, for any other redirected statement.
    fn fed_by_process_substitution(
        &mut self,
        node: Node<'_>,
        src: &[u8],
        depth: usize,
        redirs: &mut SimpleCommand,
    ) -> bool {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let [looped, redirect] = children.as_slice() else {
            return false;
        };
        // `< <(find ~)`, `0< <(find ~)`, `<<< "$(find ~)"`.
        let op = match redirect.child(0).map(|c| text(c, src)) {
            Some(fd) if !fd.is_empty() && fd.bytes().all(|b| b.is_ascii_digit()) => {
                (fd == "0").then(|| redirect.child(1).map(|c| text(c, src))).flatten()
            }
            op => op,
        };
        let from_substitution = match redirect.kind() {
            "file_redirect" => {
                op == Some("<")
                    && redirect
                        .child_by_field_name("destination")
                        .is_some_and(|d| d.kind() == "process_substitution")
            }
            "herestring_redirect" => {
                let here = text(*redirect, src);
                here.contains("$(") || here.contains('`')
            }
            _ => false,
        };
        let looping = matches!(looped.kind(), "while_statement" | "compound_statement" | "subshell");
        if !looping || !from_substitution {
            return false;
        }
        let feeder = self.out.pipelines.len();
        if redirect.kind() == "file_redirect" {
            self.add_redirect(*redirect, src, depth, redirs);
        } else {
            self.visit_subs(*redirect, src, depth);
        }
        if self.out.pipelines.len() != feeder + 1 {
            // Not one pipeline to read the lines of: the loop's commands read the file.
            let start = self.out.pipelines.len();
            self.visit(*looped, src, depth);
            for cmd in self.out.pipelines[start..].iter_mut().flatten() {
                cmd.inputs.extend(redirs.inputs.iter().cloned());
            }
            return true;
        }
        self.piped_in = true;
        self.visit(*looped, src, depth);
        self.piped_in = false;
        let body: Vec<SimpleCommand> = self.out.pipelines.drain(feeder + 1..).flatten().collect();
        self.out.pipelines[feeder].extend(body);
        true
    }

    /// Visits the substitutions inside a word (they run before the command).
    fn visit_subs(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        if self.nest > MAX_NODE_DEPTH {
            self.fail("commands nested too deeply", true);
            return;
        }
        match node.kind() {
            "command_substitution" | "process_substitution" => {
                // What runs here prints into the outer command, not the screen.
                self.captured += 1;
                self.visit(node, src, depth);
                self.captured -= 1;
            }
            // A leaf (most words) holds no substitution: no cursor is made for it.
            _ if node.named_child_count() == 0 => {}
            _ => {
                self.nest += 1;
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    self.visit_subs(child, src, depth);
                }
                self.nest -= 1;
            }
        }
    }

    /// Builds the command of a `command` or `redirected_statement` node and pushes it (and
    /// the commands of the scripts it hands to a shell) to `pipeline`.
    fn command_of(&mut self, node: Node<'_>, src: &[u8], depth: usize, pipeline: &mut Pipeline) {
        let mut cmd = SimpleCommand::default();
        let mut tail = Vec::new();
        self.quoted_ifs.clear();
        self.unquoted_expansions.clear();
        self.listing_argument = None;
        self.computed_argument = None;
        self.fill(node, src, depth, &mut cmd, &mut tail);
        self.computed_into(&mut cmd);
        self.listing_into(&mut cmd, pipeline);
        self.push_command(cmd, depth, pipeline);
        for part in tail {
            match part.kind() {
                "pipeline" => {
                    let mut cursor = part.walk();
                    for child in part.named_children(&mut cursor) {
                        if is_simple(child) {
                            self.command_of(child, src, depth, pipeline);
                        } else {
                            self.visit(child, src, depth);
                        }
                    }
                }
                _ if is_simple(part) => self.command_of(part, src, depth, pipeline),
                _ => self.visit(part, src, depth),
            }
        }
    }

    /// `NAME=(a b c)`: remembers the elements when every one is literal (and forgets the name
    /// otherwise). False when the assignment is not of an array.
    fn assign_array(&mut self, node: Node<'_>, src: &[u8]) -> bool {
        let (Some(name), Some(value)) = (node.child_by_field_name("name"), node.child_by_field_name("value")) else {
            return false;
        };
        if value.kind() != "array" {
            return false;
        }
        let name = text(name, src).to_string();
        let mut cursor = value.walk();
        let elements: Vec<String> = value
            .named_children(&mut cursor)
            .filter(|e| e.kind() != "comment")
            .map(|e| self.expand(&word(e, src)))
            .collect();
        self.vars.remove(&name);
        self.fetched.remove(&name);
        if elements.iter().all(|e| is_literal(e)) && elements.len() <= 256 {
            self.arrays.insert(name, elements);
        } else {
            self.arrays.remove(&name);
        }
        true
    }

    /// The words `${NAME[@]}`, `${NAME[*]}` and `${NAME[N]}` stand for, for an array given
    /// literal elements earlier in the line; other words as they are.
    fn array_words(&self, argv: Vec<String>) -> Vec<String> {
        if self.arrays.is_empty() {
            return argv;
        }
        let mut out = Vec::with_capacity(argv.len());
        for w in argv {
            let inner = w.strip_prefix("${").and_then(|r| r.strip_suffix("]}"));
            let Some((name, index)) = inner.and_then(|r| r.split_once('[')) else {
                out.push(w);
                continue;
            };
            match (self.arrays.get(name), index) {
                (Some(elements), "@" | "*") => out.extend(elements.iter().cloned()),
                (Some(elements), n) => match n.parse::<usize>().ok().and_then(|n| elements.get(n)) {
                    Some(e) => out.push(e.clone()),
                    None => out.push(w),
                },
                (None, _) => out.push(w),
            }
        }
        out
    }

    /// Records `NAME=value` (a standalone assignment or `export`/`declare`): a literal value
    /// is remembered, anything else forgets the name.
    fn assign(&mut self, w: &str) {
        if let Some((name, value)) = w.split_once('=') {
            if super::is_assignment(w) {
                self.arrays.remove(name);
                self.fetched.remove(name);
                // `c=$(curl -s URL)`: the variable holds what the download printed.
                if is_single_substitution(value) && super::rules::FETCHERS.iter().any(|f| names_program(value, f)) {
                    self.vars.remove(name);
                    self.fetched.insert(name.to_string(), value.to_string());
                    return;
                }
                let value = self.expand(value);
                // `a=$a$a; a=$a$a; ..` doubles a value at every step.
                if value.len() > MAX_VALUE {
                    self.vars.remove(name);
                    self.fail("a variable's value grows longer than the guard follows", true);
                    return;
                }
                // `d=$(mktemp -d)`: a fresh directory under the temporary directory.
                let subst = (value.starts_with("$(mktemp") && value.ends_with(')') && value.matches(')').count() == 1)
                    || (value.starts_with("`mktemp") && value.ends_with('`') && value.matches('`').count() == 2);
                if subst {
                    self.vars.insert(name.to_string(), "/tmp/tmp.mktemp".to_string());
                    return;
                }
                if is_literal(&value) {
                    if self.assigned.len() < 4096 {
                        self.assigned.push((name.to_string(), value.clone()));
                    }
                    self.vars.insert(name.to_string(), value);
                } else {
                    self.vars.remove(name);
                }
            }
        }
    }

    /// Expands what is known at parse time: variables given a literal value earlier in the
    /// line, `$(echo WORD)`; `${NAME:-x}` of an unknown name becomes `$NAME`,
    /// `${NAME:?msg}` becomes `${NAME:?}` (never empty; `$HOME`/`$TMPDIR` for those two).
    fn expand(&self, w: &str) -> String {
        if (!w.contains('$') && !w.contains('`')) || self.expanded.get() > MAX_EXPANDED {
            return w.to_string();
        }
        let out = self.expand_known(w);
        self.expanded
            .set(self.expanded.get() + out.len().saturating_sub(w.len()));
        out
    }

    /// [`Walker::expand`]'s reading of one word.
    fn expand_known(&self, w: &str) -> String {
        let mut out = String::new();
        let b: Vec<char> = w.chars().collect();
        let mut i = 0;
        while i < b.len() {
            if b[i] == '$' && b.get(i + 1) == Some(&'{') {
                if let Some(len) = b[i + 2..].iter().position(|c| *c == '}') {
                    let inner: String = b[i + 2..i + 2 + len].iter().collect();
                    let name_len = inner
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(inner.len());
                    let (name, op) = inner.split_at(name_len);
                    // `${1:-rm}`: a positional parameter with a default stays as written (a
                    // script's, filled by its carrier, or a whole word's, read by
                    // [`parameter_words`]), unless `set --` gave it.
                    let default = [":-", "-"].iter().any(|o| op.starts_with(o));
                    let nth = name
                        .parse::<usize>()
                        .ok()
                        .filter(|_| name.bytes().all(|c| c.is_ascii_digit()));
                    if let (true, Some(n)) = (default, nth) {
                        let given = self.positional.as_ref().and_then(|p| p.get(n.wrapping_sub(1)));
                        match given.filter(|v| !v.is_empty() && n > 0) {
                            Some(v) => out.push_str(v),
                            None => out.extend(b[i..i + len + 3].iter()),
                        }
                        i += len + 3;
                        continue;
                    }
                    // `${x:-rm}`, `${DIR-/}`: a variable the line gives no value stands for its
                    // default, as it does in a shell where it is unset (the usual case).
                    let default = [":-", ":=", "-", "="]
                        .iter()
                        .find_map(|o| op.strip_prefix(o))
                        .filter(|d| !d.is_empty() && is_literal(d) && !d.contains(char::is_whitespace));
                    if let (Some(d), false, None) = (default, name.is_empty(), self.vars.get(name)) {
                        if !matches!(name, "HOME" | "TMPDIR") {
                            out.push_str(d.trim_matches(|c| c == '"' || c == '\''));
                            i += len + 3;
                            continue;
                        }
                    }
                    // `${PATH:0:1}`, `${HOME::1}`: the first character of a variable that always
                    // holds an absolute path (or a list of them) is `/`.
                    // `${HOME%%[!/]*}`: everything from its first character that is not a
                    // slash cut away, which leaves the leading `/`.
                    if !self.vars.contains_key(name)
                        && matches!(name, "HOME" | "PATH" | "PWD" | "OLDPWD" | "SHELL" | "BASH")
                        && matches!(
                            op.replace([' ', '(', ')'], "").as_str(),
                            ":0:1" | "::1" | "%%[!/]*" | "%%[^/]*"
                        )
                    {
                        out.push('/');
                        i += len + 3;
                        continue;
                    }
                    let plain = op.is_empty() || [":?", ":-", "?", ":="].iter().any(|o| op.starts_with(o));
                    if !name.is_empty() && plain {
                        let guarded = op.starts_with(":?") || op.starts_with('?');
                        match self.vars.get(name) {
                            Some(v) => out.push_str(v),
                            // `${DIR:?}`: bash refuses to expand it unset or empty, so it is kept
                            // apart from `$DIR` (which may expand to nothing); home and the temp
                            // directory stay as spelled for the path rules.
                            None if guarded && !matches!(name, "HOME" | "TMPDIR") => {
                                out.push_str("${");
                                out.push_str(name);
                                out.push_str(":?}");
                            }
                            // `${10}` is the tenth parameter; `$10` would be the first and a 0.
                            None if name.len() > 1 && name.starts_with(|c: char| c.is_ascii_digit()) => {
                                out.push_str("${");
                                out.push_str(name);
                                out.push('}');
                            }
                            None => {
                                out.push('$');
                                out.push_str(name);
                            }
                        }
                        i += len + 3;
                        continue;
                    }
                }
            } else if b[i] == '$' && b.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic() || *c == '_') {
                let name: String = b[i + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                    .collect();
                if let Some(v) = self.vars.get(&name).or_else(|| self.fetched.get(&name)) {
                    out.push_str(v);
                    i += 1 + name.len();
                    continue;
                }
            } else if b[i] == '`' {
                // `` `echo /` ``: the old spelling of `$(echo /)`.
                if let Some(len) = b[i + 1..].iter().position(|c| *c == '`') {
                    let inner: String = b[i + 1..i + 1 + len].iter().collect();
                    if let Some(text) = self.substituted(&inner) {
                        out.push_str(&text);
                        i += len + 2;
                        continue;
                    }
                }
            } else if b[i] == '$' && b.get(i + 1) == Some(&'(') {
                if let Some(len) = b[i + 2..].iter().position(|c| *c == ')') {
                    let inner: String = b[i + 2..i + 2 + len].iter().collect();
                    if let Some(text) = self.substituted(&inner) {
                        out.push_str(&text);
                        i += len + 3;
                        continue;
                    }
                }
            }
            out.push(b[i]);
            i += 1;
        }
        out
    }

    /// What the command substitution `inner` prints, where the guard can tell without running
    /// it: a literal word printed by echo (`$(echo /)`), printf's and `echo -e`'s escapes
    /// decoded, the program a lookup finds (`$(command -v python3)`, `$(which rm)`: the
    /// program's path, which is what runs), a literal path's parent or normal form (`$(dirname
    /// /x)`, `$(realpath /tmp/..)`, `$(cd / && pwd)`), or what a literal prints through
    /// filters whose output is plain to compute (`$(echo Lw== | base64 -d)`, `$(tr a / <<<
    /// a)`). The text is a word of plain path characters, or None.
    fn substituted(&self, inner: &str) -> Option<String> {
        let simple = |x: &str| x.chars().all(|c| c.is_ascii_alphanumeric() || "/._~-*".contains(c));
        let words: Vec<&str> = inner.split_whitespace().collect();
        // `$(printf '\057')`, `$(echo -e "\x2f")`, `$(printf %b '\057')`: the escapes decoded,
        // as printf (in its format and `%b` words) and `echo -e` decode them; the substitution
        // drops the trailing newlines.
        let decoded = printed_by_printf(&words).filter(|t| !t.is_empty());
        let absolute = |p: &str| {
            let p = p.trim_matches(|c| c == '"' || c == '\'');
            (p.starts_with('/') && simple(p)).then(|| super::normalize(std::path::Path::new(p)))
        };
        let path_text = |p: std::path::PathBuf| p.to_str().map(String::from);
        let computed = match words.as_slice() {
            _ if decoded.is_some() => decoded,
            ["echo", w] => Some((*w).to_string()),
            ["command", "-v", w] | ["which", w] | ["type", "-P", w] if !w.contains('/') => {
                Some(format!("/usr/bin/{w}"))
            }
            ["command", "-v", w] | ["which", w] | ["type", "-P", w] => Some((*w).to_string()),
            ["dirname", p] => absolute(p)
                .map(|p| p.parent().map(|d| d.to_path_buf()).unwrap_or(p))
                .and_then(path_text),
            ["realpath" | "readlink", "-f" | "-m" | "-e", p] | ["realpath", p] | ["cd", p, "&&" | ";", "pwd"] => {
                absolute(p).and_then(path_text)
            }
            _ => same_program_lookups(inner)
                .map(|w| format!("/usr/bin/{w}"))
                .or_else(|| self.filtered_literal(inner)),
        };
        computed.filter(|t| !t.is_empty() && simple(t))
    }

    /// `echo Lw== | base64 -d`, `tr a / <<< a`, `xxd -r -p <<< 2f`: a literal passed through
    /// filters whose output is plain to compute (see `carriers::output_of`), when the result
    /// is a path; None for anything else.
    fn filtered_literal(&self, inner: &str) -> Option<String> {
        if inner.len() > 512 || !(inner.contains('|') || inner.contains("<<<")) {
            return None;
        }
        // Only a literal printed (`echo`, `printf`) or read (`<<<`, `<<`) inside the
        // substitution can give known text, and a command word that could turn out to be one
        // of those without being written so needs `$`, a quote, an escape, a brace or a
        // backquote: without any of them (`cat ~/.ssh/id_rsa | base64`) the substitution is
        // not parsed a second time here (the walker reads its commands anyway).
        let may_print_literal = ["echo", "printf", "<<"].iter().any(|k| inner.contains(k))
            || inner.contains(['$', '\'', '"', '\\', '{', '`']);
        if !may_print_literal {
            return None;
        }
        let parsed = parse_shell(inner, None);
        match parsed.pipelines.as_slice() {
            [pipeline] if parsed.error.is_none() => super::carriers::printed_by(pipeline)
                .map(|t| t.trim_end_matches('\n').to_string())
                .filter(|t| t.starts_with('/')),
            _ => None,
        }
    }

    fn push_command(&mut self, mut cmd: SimpleCommand, depth: usize, pipeline: &mut Pipeline) {
        let mut quoted_ifs = std::mem::take(&mut self.quoted_ifs);
        let mut unquoted = std::mem::take(&mut self.unquoted_expansions);
        // `set -- /bin/rm -rf ~; "$@"`: the parameters `set` gave stand for `$@`, `$1`, ..
        if self.positional.is_some() || cmd.argv.iter().any(|w| w.starts_with("${")) {
            let params = self.positional.as_deref();
            let mut argv = Vec::with_capacity(cmd.argv.len());
            // Where each word now stands, when it is still one word: the indices noted while
            // the words were read follow it.
            let mut moved_to = Vec::with_capacity(cmd.argv.len());
            for w in &cmd.argv {
                let words = parameter_words(w, params);
                moved_to.push((words.len() == 1).then_some(argv.len()));
                argv.extend(words);
            }
            cmd.argv = argv;
            for indices in [&mut quoted_ifs, &mut unquoted] {
                *indices = indices
                    .iter()
                    .filter_map(|&k| moved_to.get(k).copied().flatten())
                    .collect();
            }
        }
        if cmd.argv.first().is_some_and(|w| w == "set") {
            match set_parameters(&cmd.argv[1..]) {
                Some(words) => self.positional = Some(words),
                // Too many to follow: what `$@` holds is no longer known.
                None if cmd.argv.len() > MAX_PARAMETERS => self.positional = None,
                None => {}
            }
        }
        // The command word as written, before expansion: only expansion can make it differ
        // from the word that runs, so without expansion it is not computed (it would be
        // dropped below as equal to `argv[0]`).
        let expands = !self.vars.is_empty()
            || !self.fetched.is_empty()
            || cmd
                .argv
                .iter()
                .any(|w| w.contains("${") || w.contains("$(") || w.contains('`') || w.contains("$IFS"));
        let written_word = if expands {
            let mut as_written = cmd.argv.clone();
            carriers::unwrap_command(&mut as_written);
            as_written.first().filter(|w| !is_literal(w)).cloned()
        } else {
            None
        };
        if expands {
            // `x='a /'; rm -rf $x`: an unquoted value is split at blanks into words, or at the
            // characters the line made IFS (`IFS=,; x=curl,-s,URL; $x`).
            let separators: Vec<char> = match self.vars.get("IFS") {
                Some(ifs) => ifs.chars().collect(),
                None => BLANKS.to_vec(),
            };
            for &k in unquoted.iter().rev() {
                let Some(w) = cmd.argv.get(k) else { continue };
                let value = self.expand(w);
                if value != *w && is_literal(&value) && value.contains(separators.as_slice()) {
                    let words: Vec<String> = value
                        .split(separators.as_slice())
                        .filter(|p| !p.is_empty())
                        .map(String::from)
                        .collect();
                    cmd.argv.splice(k..=k, words);
                }
            }
            cmd.argv = self.array_words(split_at_ifs(std::mem::take(&mut cmd.argv), &self.vars, &quoted_ifs));
            cmd.argv = cmd.argv.iter().map(|w| self.expand(w)).collect();
            cmd.redirects = cmd.redirects.iter().map(|w| self.expand(w)).collect();
        }
        // `$CMD` holding a whole command line (`c="rm -rf /"; $CMD`): its words are split.
        if cmd.argv.first().is_some_and(|w| w.contains(' ') && is_literal(w))
            && self.vars.values().any(|v| Some(v) == cmd.argv.first())
        {
            let first = cmd.argv.remove(0);
            let mut words: Vec<String> = first.split_whitespace().map(String::from).collect();
            words.append(&mut cmd.argv);
            cmd.argv = words;
        }
        // A file written earlier in the line and read here (`psql < x.sql`, `cat x.sql | psql`):
        // its text is what this command reads (and, for `cat`, prints).
        if cmd.stdin_text.is_none() {
            cmd.stdin_text = self.written.read_by(&cmd);
        }
        // `$SHELL -c '..'`, `sudo "$BASH" -s`: a variable that holds a shell names one.
        let shell_word = self.shell_variable_word(&mut cmd.argv);
        let before = cmd.argv.len();
        let mut original = None;
        // `/???/?m -rf ~`, `/usr/bin/e?v rm ..`: a command word that globs names whichever
        // program matches it when it runs: read as the first watched program it matches (a
        // wrapper among them, unwrapped next).
        let globbed = resolve_globbed_name(&mut cmd.argv);
        // Fed an unquoted listing already ([`Walker::listing_into`]), or by an `xargs` unwrapped.
        cmd.args_from_stdin |= carriers::unwrap_command_keeping(&mut cmd.argv, &mut original);
        let globbed = globbed.or_else(|| resolve_globbed_name(&mut cmd.argv));
        if cmd.args_from_stdin {
            cmd.unwrapped_from = original.clone();
        }
        // `env --split-string='rm -rf ~'` can leave more words than it removed.
        let removed = before.saturating_sub(cmd.argv.len());
        // `curl -so FILE`: one option per word, for the programs whose options bundle.
        super::options::split_bundles(&mut cmd.argv);
        let original = original.unwrap_or_default();
        // A wrapper runs a program, never a shell function (`command pytest` inside `pytest()
        // { command pytest "$@"; }`, `sudo f`); assignments and bash's `time` and `coproc`
        // keywords do not change that the word names the function.
        let calls_functions = original[..removed.min(original.len())]
            .iter()
            .all(|w| matches!(w.as_str(), "time" | "coproc") || w.starts_with('-') || super::is_assignment(w));
        // `env -C / rm -rf home/dev`: a wrapper that starts the command in another directory.
        let moved_to = carriers::chdir(&original[..removed.min(original.len())]).map(String::from);
        cmd.carried = self.carrying > 0;
        // A wrapper that switches to root's account, among the words unwrapped: each one's own
        // words run up to the command.
        let wrappers = &original[..removed.min(original.len())];
        let last_switch = (0..wrappers.len())
            .rev()
            .find(|&k| carriers::switches_account(&wrappers[k..]));
        cmd.as_root = self.root > 0 || last_switch.is_some_and(|k| carriers::runs_as_root(&wrappers[k..]));
        // `strace -o F cmd`: the wrapper's own output file is written as a redirect is; the
        // command line of `strace -o '|cmd'` is carried as `sh -c` text is.
        let mut output_commands = Vec::new();
        for output in carriers::wrapper_outputs(wrappers) {
            match output {
                carriers::WrapperOutput::File(file) => cmd.redirects.push(file),
                carriers::WrapperOutput::Command(line) => output_commands.push(line),
            }
        }
        cmd.other_account = !cmd.as_root && last_switch.is_some();
        cmd.wrapper_reads_password = carriers::wrapper_reads_password(wrappers);
        cmd.assignments = original
            .into_iter()
            .take(removed)
            .filter(|w| super::is_assignment(w))
            .collect();
        cmd.dynamic_name = cmd.argv.first().is_some_and(|w| !is_literal(w));
        if let Some(pattern) = globbed {
            cmd.dynamic_name = true;
            cmd.name_as_written = Some(pattern);
        }
        if let Some(w) = written_word.filter(|w| cmd.argv.first() != Some(w)) {
            cmd.dynamic_name = true;
            cmd.name_as_written = Some(w);
        }
        if let Some(w) = shell_word {
            cmd.dynamic_name = cmd.argv.first().is_some_and(|w| !is_literal(w));
            cmd.name_as_written = Some(w);
        }
        self.copied_program(&mut cmd);
        if cmd.argv.is_empty() && cmd.stdin_text.is_none() && cmd.assignments.is_empty() && cmd.redirects.is_empty() {
            return;
        }
        cmd.cwd = match moved_to {
            Some(dir) => resolve_cd(self.cwd.as_deref(), Some(&dir)),
            None => self.cwd.clone(),
        };
        cmd.captured = self.captured > 0;
        if cmd.name() == "alias" {
            for a in cmd.argv.iter().skip(1) {
                if let Some((n, v)) = a.split_once('=') {
                    self.aliases.insert(n.to_string(), v.to_string());
                }
            }
        }
        // An alias or a function called here runs its text here, fed what the stages before
        // it print (`f() { bash -s; }; curl .. | f`).
        let alias = cmd.argv.first().filter(|n| !self.expanding.contains(n));
        if let Some((name, text)) = alias.and_then(|n| Some((n.clone(), self.aliases.get(n)?.clone()))) {
            let args: Vec<String> = cmd.argv.iter().skip(1).map(|a| shell_quote(a)).collect();
            let first = self.out.pipelines.len();
            self.feeding += usize::from(!pipeline.is_empty());
            self.expanding.push(name);
            self.parse_into(&format!("{text} {}", args.join(" ")), depth + 1);
            self.expanding.pop();
            self.feeding -= usize::from(!pipeline.is_empty());
            self.feed_upstream(first, pipeline);
        }
        let function = cmd.argv.first().filter(|_| calls_functions);
        cmd.function_body = function.and_then(|n| self.functions.get(n)).cloned();
        if let Some((name, body)) = function.and_then(|n| Some((n.clone(), self.functions.get(n)?.clone()))) {
            // The body was read where it was defined; it is read again when the call gives
            // it other words (`f / ` inside `f() { rm -rf "$1"; f "$2"; }`, to the depth
            // limit), or input, but not as it stands inside its own re-reading (`:(){ :|:&
            // };:` calls itself fed by a pipe: reading it again would add nothing, a level at
            // a time).
            let call = positional(&body, None, &cmd.argv[1..]);
            let new_words = call != body;
            let fed = (!pipeline.is_empty() || self.feeding > 0) && !self.calling.contains(&name);
            if new_words || fed {
                let first = self.out.pipelines.len();
                self.feeding += usize::from(!pipeline.is_empty());
                self.calling.push(name);
                self.parse_into(&call, depth + 1);
                self.calling.pop();
                self.feeding -= usize::from(!pipeline.is_empty());
                self.feed_upstream(first, pipeline);
            }
        }
        // `sh -c '..'`, `find -exec ..`, `GIT_SSH_COMMAND=..`, `python -c 'os.system(..)'`, a
        // script written earlier and run here, ...: the commands it carries are parsed too.
        cmd.inline = carriers::code::read(&cmd);
        for carried in carriers::carried(&cmd, &self.written)
            .into_iter()
            .chain(output_commands)
        {
            // A remote script runs with the remote user's rights, not these.
            // `su -c '..'`, `sudo sh -c '..'`: a script run as root, unless on another machine.
            // A carrier that switches accounts itself decides (`sudo su bob -c ..` runs as bob).
            let as_root = if carriers::switches_account(&cmd.argv) {
                carriers::runs_as_root(&cmd.argv)
            } else {
                cmd.as_root
            };
            let root = as_root && carried.runs != Runs::Remote;
            self.root += usize::from(root);
            let first = self.out.pipelines.len();
            self.feeding += usize::from(!pipeline.is_empty());
            self.parse_carried(carried, depth + 1);
            self.feeding -= usize::from(!pipeline.is_empty());
            self.feed_upstream(first, pipeline);
            self.root -= usize::from(root);
        }
        self.written.record(&cmd);
        if cmd.name() == "cd" || cmd.name() == "pushd" {
            // `cd -P ..`, `cd -- ..`: the options (`-L`, `-P`, `-e`, `-@`) and `--` come first.
            let dir = cmd.argv[1..]
                .iter()
                .skip_while(|a| matches!(a.as_str(), "-L" | "-P" | "-e" | "-@" | "-Pe" | "-LP" | "-PL"))
                .find(|a| *a != "--")
                .map(String::as_str);
            self.cwd = resolve_cd(self.cwd.as_deref(), dir);
        }
        pipeline.push(cmd);
    }

    /// `cp /bin/rm /tmp/cleanup && /tmp/cleanup -rf ~`, `ln -s /bin/dd ./copy && ./copy ..`: a
    /// command word that names a copy or link of a program made earlier in the line is that
    /// program (see [`WrittenFiles::program_at`]), judged by its own name; the word as written
    /// is kept in [`SimpleCommand::name_as_written`]. A copy of a wrapper is unwrapped too.
    fn copied_program(&self, cmd: &mut SimpleCommand) {
        let Some(program) = cmd.argv.first().and_then(|w| self.written.program_at(w)) else {
            return;
        };
        let as_written = std::mem::replace(&mut cmd.argv[0], program.to_string());
        cmd.name_as_written.get_or_insert(as_written);
        cmd.as_root |= carriers::is_root_wrapper(cmd.name());
        cmd.args_from_stdin |= carriers::unwrap_command(&mut cmd.argv);
    }

    /// Replaces a command word that is a variable holding a shell (`$SHELL`, `"${BASH}"`, not
    /// given another value earlier in the line) with `bash`, and returns it as written. Only
    /// the word that is the command once wrappers are removed counts (`echo $SHELL` is left
    /// alone).
    fn shell_variable_word(&self, argv: &mut [String]) -> Option<String> {
        if !argv.iter().any(|w| carriers::shell_variable(w)) {
            return None;
        }
        let mut probe = argv.to_vec();
        carriers::unwrap_command(&mut probe);
        let word = probe.first().filter(|w| carriers::shell_variable(w))?;
        let at = argv
            .len()
            .checked_sub(probe.len())
            .filter(|at| argv.get(*at) == Some(word))?;
        Some(std::mem::replace(&mut argv[at], "bash".to_string()))
    }

    /// `curl .. | sh -c 'bash -s'`, `curl .. | flock -c 'bash -s' f`, `tar c ~/.ssh | ssh h
    /// 'cat > k'`: a script carried by a stage of a pipeline reads what the stages before it
    /// print, as its carrier would. Each pipeline the script made (from `first` on) starts
    /// with copies of those stages ([`SimpleCommand::upstream_copy`]), so the rules that read
    /// what flows into a command see it there too.
    fn feed_upstream(&mut self, first: usize, upstream: &[SimpleCommand]) {
        if upstream.is_empty() {
            return;
        }
        // More stages to copy than the guard follows: what reads the pipe is not known.
        let copies = self.out.pipelines.len().saturating_sub(first) * upstream.len();
        if copies > MAX_FED_STAGES {
            self.fail("a pipe feeds more commands than the guard follows", true);
            return;
        }
        for fed in self.out.pipelines.iter_mut().skip(first) {
            let mut stages: Pipeline = upstream
                .iter()
                .map(|c| SimpleCommand {
                    upstream_copy: true,
                    ..c.clone()
                })
                .collect();
            stages.append(fed);
            *fed = stages;
        }
    }

    /// Parses a script `cmd` carries, in the directory it runs in: a `cd` in a process of its
    /// own ends with it, and a remote script has no local directory.
    fn parse_carried(&mut self, carried: Carried, depth: usize) {
        let saved = match carried.runs {
            Runs::ThisShell => None,
            Runs::Child => Some(self.cwd.clone()),
            Runs::Remote => Some(self.cwd.take()),
        };
        self.carrying += 1;
        self.parse_into(&carried.script, depth);
        self.carrying -= 1;
        if let Some(cwd) = saved {
            self.cwd = cwd;
        }
    }

    /// Records a `file_redirect` node on `cmd`: output targets (and which append), inputs.
    fn add_redirect(&mut self, child: Node<'_>, src: &[u8], depth: usize, cmd: &mut SimpleCommand) {
        self.visit_subs(child, src, depth);
        let op = child.child(0).map(|c| text(c, src)).unwrap_or("");
        let op = if op.chars().all(|c| c.is_ascii_digit()) {
            child.child(1).map(|c| text(c, src)).unwrap_or("")
        } else {
            op
        };
        let mut c = child.walk();
        let dests: Vec<Node<'_>> = child.children_by_field_name("destination", &mut c).collect();
        // `cmd -a 2>/dev/null b c`: words after the target are the command's arguments.
        cmd.argv.extend(dests.iter().skip(1).map(|d| word(*d, src)));
        if let Some(dest) = dests.first().copied() {
            let target = word(dest, src);
            let descriptor = target.chars().all(|c| c.is_ascii_digit()) || target == "-";
            if descriptor {
            } else if op.contains('>') {
                if op.contains(">>") {
                    cmd.appends.push(target.clone());
                }
                cmd.redirects.push(target);
            } else if op.contains('<') {
                cmd.inputs.push(target);
            }
        }
    }

    fn fill<'t>(
        &mut self,
        node: Node<'t>,
        src: &[u8],
        depth: usize,
        cmd: &mut SimpleCommand,
        tail: &mut Vec<Node<'t>>,
    ) {
        let mut cursor = node.walk();
        let mut previous_end = None;
        for child in node.named_children(&mut cursor) {
            // The grammar drops a bare word written just before a here-document (`make -f -
            // <<EOF`, `make -f - 2>/dev/null <<EOF`: the `-` is in no node): bash passes it
            // on, so it is read back from the text between the command and a redirect.
            let redirect = matches!(
                child.kind(),
                "heredoc_redirect" | "file_redirect" | "herestring_redirect"
            );
            if let Some(end) = previous_end.filter(|_| redirect) {
                let gap = slice(src, end, child.start_byte());
                if !gap.contains(['#', '\\', '\'', '"', '$', '`']) {
                    cmd.argv.extend(gap.split_whitespace().map(str::to_string));
                }
            }
            previous_end = Some(child.end_byte());
            match child.kind() {
                "command" => self.fill(child, src, depth, cmd, tail),
                "variable_assignment" => {
                    self.visit_subs(child, src, depth);
                    let resolved = word(child, src);
                    note_literal_dollar(child, &resolved, cmd);
                    cmd.argv.push(resolved);
                }
                "command_name" => {
                    self.visit_subs(child, src, depth);
                    if let Some(w) = child.named_child(0) {
                        // `$c` as the command word splits like any unquoted expansion.
                        let raw = text(w, src);
                        if raw.contains('$') && !raw.contains(['\'', '"', '\\']) {
                            self.unquoted_expansions.push(cmd.argv.len());
                        }
                        let resolved = word(w, src);
                        note_literal_dollar(w, &resolved, cmd);
                        cmd.argv.push(resolved);
                    }
                }
                "file_redirect" => self.add_redirect(child, src, depth, cmd),
                "heredoc_redirect" => {
                    let mut body = String::new();
                    collect_heredoc(child, src, &mut body);
                    cmd.stdin_text = Some(body);
                    // `cat <<EOF | psql`: the rest of the line hangs under the redirect, and
                    // so do the redirects and words written after the marker (`cat <<EOF >
                    // ~/.bashrc`, `tee <<EOF FILE`): they are the command's own.
                    let mut c2 = child.walk();
                    for part in child.named_children(&mut c2) {
                        match part.kind() {
                            "heredoc_start" | "heredoc_end" | "heredoc_body" => self.visit_subs(part, src, depth),
                            "file_redirect" => self.add_redirect(part, src, depth, cmd),
                            "word" | "string" | "raw_string" | "concatenation" | "simple_expansion" | "expansion"
                            | "ansi_c_string" | "translated_string" | "number" => {
                                self.visit_subs(part, src, depth);
                                cmd.argv.push(word(part, src));
                            }
                            _ => tail.push(part),
                        }
                    }
                }
                "herestring_redirect" => {
                    self.visit_subs(child, src, depth);
                    if let Some(w) = child.named_child(0) {
                        cmd.stdin_text = Some(word(w, src));
                    }
                }
                "comment" => {}
                // `/bin/sh 0<&2`: the grammar reads a digit glued to a redirect that follows
                // as an argument; bash reads it as the redirect's descriptor.
                "number" if matches!(src.get(child.end_byte()), Some(b'<' | b'>')) => {}
                _ => {
                    let before = self.out.pipelines.len();
                    self.visit_subs(child, src, depth);
                    if child.kind() == "command_substitution" && self.out.pipelines.len() == before + 1 {
                        self.listing_argument = Some(before);
                        self.computed_argument = Some((before, cmd.argv.len()));
                    }
                    let raw = text(child, src);
                    if raw.contains("IFS") && raw.contains(['\'', '"']) {
                        self.quoted_ifs.push(cmd.argv.len());
                    }
                    if raw.contains('$') && !raw.contains(['\'', '"', '\\']) {
                        self.unquoted_expansions.push(cmd.argv.len());
                    }
                    let resolved = word(child, src);
                    note_literal_dollar(child, &resolved, cmd);
                    cmd.argv.push(resolved);
                }
            }
        }
    }
}

/// Records `resolved` as a word whose `$` is literal when the word holds one and no expansion
/// (`'hK8$wq3Zr'`, `"a\$b"`, `pa\$s`).
fn note_literal_dollar(node: Node<'_>, resolved: &str, cmd: &mut SimpleCommand) {
    fn expands(node: Node<'_>) -> bool {
        if matches!(
            node.kind(),
            "simple_expansion" | "expansion" | "command_substitution" | "arithmetic_expansion" | "process_substitution"
        ) {
            return true;
        }
        let mut cursor = node.walk();
        let found = node.named_children(&mut cursor).any(expands);
        found
    }
    if resolved.contains('$') && !expands(node) {
        cmd.literal_dollar_words.push(resolved.to_string());
    }
}

/// The text of a `redirected_statement` whose redirect took more than one target word, with
/// the words after the first target moved before the redirect (`git 2>/dev/null reset --hard`
/// → `git reset --hard 2>/dev/null`); None when no redirect did.
fn interleaved_redirect(node: Node<'_>, src: &[u8]) -> Option<String> {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if child.kind() != "file_redirect" {
            continue;
        }
        let mut c = child.walk();
        let dests: Vec<Node<'_>> = child.children_by_field_name("destination", &mut c).collect();
        if dests.len() < 2 {
            continue;
        }
        let start = node.start_byte();
        let head = slice(src, start, child.start_byte());
        let redirect = slice(src, child.start_byte(), dests[0].end_byte());
        let extra = slice(src, dests[1].start_byte(), child.end_byte());
        let tail = slice(src, child.end_byte(), node.end_byte());
        return Some(format!("{head} {extra} {redirect}{tail}"));
    }
    None
}

fn collect_heredoc(node: Node<'_>, src: &[u8], out: &mut String) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if child.kind() == "heredoc_body" {
            out.push_str(text(child, src));
        } else {
            collect_heredoc(child, src, out);
        }
    }
}

/// A command node (possibly redirected) that is one simple command.
fn is_simple(node: Node<'_>) -> bool {
    match node.kind() {
        "command" => true,
        "redirected_statement" => node.child_by_field_name("body").is_none_or(|b| b.kind() == "command"),
        _ => false,
    }
}

fn text<'s>(node: Node<'_>, src: &'s [u8]) -> &'s str {
    std::str::from_utf8(&src[node.start_byte().min(src.len())..node.end_byte().min(src.len())]).unwrap_or("")
}

/// A word with quotes and escapes resolved; expansions keep their source text.
pub(crate) fn word(node: Node<'_>, src: &[u8]) -> String {
    // Resolving quotes and escapes only shortens a word (expansions keep their text).
    let mut out = String::with_capacity(node.byte_range().len());
    push_word(node, src, &mut out);
    out
}

fn push_word(node: Node<'_>, src: &[u8], out: &mut String) {
    let raw = text(node, src);
    match node.kind() {
        "word" | "command_name" | "number" => {
            if node.named_child_count() > 0 && node.kind() != "word" {
                let mut cursor = node.walk();
                for c in node.named_children(&mut cursor) {
                    push_word(c, src, out);
                }
            } else {
                unescape_bare(raw, out);
            }
        }
        "raw_string" => out.push_str(raw.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')).unwrap_or(raw)),
        "ansi_c_string" => decode_ansi_c(
            raw.strip_prefix("$'").and_then(|r| r.strip_suffix('\'')).unwrap_or(raw),
            out,
        ),
        "string" | "translated_string" => {
            // Gaps between children are literal text; children are content or expansions.
            let start = node.start_byte() + if node.kind() == "string" { 1 } else { 2 };
            let end = node.end_byte().saturating_sub(1).max(start);
            let mut pos = start;
            let mut cursor = node.walk();
            for c in node.named_children(&mut cursor) {
                if c.start_byte() > pos {
                    unescape_double(slice(src, pos, c.start_byte()), out);
                }
                if c.kind() == "string_content" {
                    unescape_double(text(c, src), out);
                } else {
                    out.push_str(text(c, src));
                }
                pos = c.end_byte();
            }
            if end > pos {
                unescape_double(slice(src, pos, end), out);
            }
        }
        "concatenation" => {
            let mut pos = node.start_byte();
            let mut cursor = node.walk();
            for c in node.children(&mut cursor) {
                if c.start_byte() > pos {
                    unescape_bare(slice(src, pos, c.start_byte()), out);
                }
                push_word(c, src, out);
                pos = c.end_byte();
            }
        }
        "variable_assignment" => {
            if let Some(n) = node.child_by_field_name("name") {
                out.push_str(text(n, src));
            }
            out.push('=');
            if let Some(v) = node.child_by_field_name("value") {
                push_word(v, src, out);
            }
        }
        _ => out.push_str(raw),
    }
}

fn slice(src: &[u8], a: usize, b: usize) -> &str {
    std::str::from_utf8(&src[a.min(src.len())..b.min(src.len()).max(a.min(src.len()))]).unwrap_or("")
}

/// Unquoted text: `\x` is `x`, `\<newline>` is nothing.
fn unescape_bare(raw: &str, out: &mut String) {
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
}

/// Double-quoted text: only `\$`, `` \` ``, `\"`, `\\` and `\<newline>` are escapes.
fn unescape_double(raw: &str, out: &mut String) {
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some(&n @ ('$' | '`' | '"' | '\\')) => {
                    out.push(n);
                    chars.next();
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
}

/// What `printf FORMAT [WORD]` or `echo -e WORD` print (a path prefix, `command`, `--` and a
/// stderr redirect aside), when the words are quoted literals and the format one of `%s`,
/// `%b`, `%c` or plain text with escapes: the text the shell substitutes, its trailing
/// newlines dropped. None for anything else (a plain `echo WORD` is read where this is called).
fn printed_by_printf(words: &[&str]) -> Option<String> {
    let unquote = |w: &str| {
        let quoted =
            w.len() >= 2 && ((w.starts_with('\'') && w.ends_with('\'')) || (w.starts_with('"') && w.ends_with('"')));
        if quoted {
            w[1..w.len() - 1].to_string()
        } else {
            w.to_string()
        }
    };
    let words: Vec<&str> = words
        .iter()
        .copied()
        .skip_while(|w| matches!(*w, "command" | "builtin"))
        .filter(|w| !w.starts_with("2>"))
        .collect();
    let (program, rest) = words.split_first()?;
    let decode = |raw: &str| {
        let mut text = String::new();
        decode_ansi_c(raw, &mut text);
        text
    };
    let text = match super::basename(program) {
        "printf" => {
            let rest = rest.strip_prefix(&["--"][..]).unwrap_or(rest);
            match rest {
                [format] if format.contains('\\') && !format.contains('%') => decode(&unquote(format)),
                [format, word] => match unquote(format).as_str() {
                    "%b" | "%b\\n" => decode(&unquote(word)),
                    "%s" | "%s\\n" => unquote(word),
                    "%c" => unquote(word).chars().next()?.to_string(),
                    _ => return None,
                },
                _ => return None,
            }
        }
        "echo" => match rest {
            // echo's octal escapes are `\0NNN`.
            ["-e" | "-ne" | "-en", word] if word.contains('\\') => decode(&unquote(word).replace("\\0", "\\")),
            _ => return None,
        },
        _ => return None,
    };
    Some(text.trim_end_matches('\n').to_string())
}

/// `$'..'`: C escapes (`\n`, `\x41`, `\101`, `\u0041`).
fn decode_ansi_c(raw: &str, out: &mut String) {
    let b: Vec<char> = raw.chars().collect();
    let mut i = 0;
    let num = |b: &[char], i: usize, max: usize, radix: u32| {
        let mut n = 0u32;
        let mut len = 0;
        while len < max {
            match b.get(i + len).and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    n = n * radix + d;
                    len += 1;
                }
                None => break,
            }
        }
        (n, len)
    };
    while i < b.len() {
        if b[i] != '\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let e = b[i + 1];
        i += 2;
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let (n, len) = num(&b, i, max, 16);
                i += len;
                out.extend(char::from_u32(n));
            }
            '0'..='7' => {
                let (n, len) = num(&b, i - 1, 3, 8);
                i += len - 1;
                out.extend(char::from_u32(n));
            }
            other => out.push(other),
        }
    }
}

/// `echo${IFS}hello`: the words a word splits into at an unquoted `$IFS` / `${IFS}` (a
/// blank, unless the line gave IFS a value of its own), which is how bash runs it. The words
/// at the positions in `quoted` had their `$IFS` quoted and stay whole.
fn split_at_ifs(argv: Vec<String>, vars: &HashMap<String, String>, quoted: &[usize]) -> Vec<String> {
    if vars.contains_key("IFS") || !argv.iter().any(|w| w.contains("IFS")) {
        return argv;
    }
    // `rm$IFS-rf$IFS/`: the grammar ends a word at a `$` that a name follows after a `-`
    // (`-rf$`, `IFS/`); bash reads one word.
    let mut joined: Vec<(String, bool)> = Vec::with_capacity(argv.len());
    for (i, w) in argv.into_iter().enumerate() {
        let keep = quoted.contains(&i);
        match joined.last_mut() {
            Some((prev, false)) if !keep && prev.ends_with('$') && w.starts_with("IFS") => prev.push_str(&w),
            _ => joined.push((w, keep)),
        }
    }
    let mut out = Vec::with_capacity(joined.len() + 2);
    for (w, keep) in joined {
        if keep || (!w.contains("$IFS") && !w.contains("${IFS")) {
            out.push(w);
            continue;
        }
        let mut spaced = String::with_capacity(w.len());
        let mut rest = w.as_str();
        while let Some((at, len)) = ifs_reference(rest) {
            spaced.push_str(&rest[..at]);
            spaced.push('\u{1}');
            rest = &rest[at + len..];
        }
        spaced.push_str(rest);
        out.extend(spaced.split('\u{1}').filter(|p| !p.is_empty()).map(String::from));
    }
    out
}

/// The first reference to IFS in `word` (`$IFS`, `${IFS}`, `${IFS%?}`, ..): where it starts
/// and how long it is.
fn ifs_reference(word: &str) -> Option<(usize, usize)> {
    let plain = word
        .match_indices("$IFS")
        .find(|(at, _)| !word[at + 4..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'));
    let braced = word
        .match_indices("${IFS")
        .find(|(at, _)| !word[at + 5..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        .and_then(|(at, _)| Some((at, word[at..].find('}')? + 1)));
    match (plain.map(|(at, _)| (at, 4)), braced) {
        (Some(p), Some(b)) => Some(if p.0 < b.0 { p } else { b }),
        (p, b) => p.or(b),
    }
}

/// A value that is one command substitution from end to end (`$(curl -s URL)`, `` `curl
/// URL` ``): not `$(:); rm -rf ~; $(:)`, which only starts and ends like one.
pub(crate) fn is_single_substitution(value: &str) -> bool {
    let v = value.trim();
    let opens = (v.starts_with("$(") && !v.starts_with("$((")) || (v.len() > 1 && v.starts_with('`'));
    opens && skip_quoted(v.as_bytes(), 0) == v.len() && v.ends_with([')', '`'])
}

/// Whether `text` runs `program` as a command word (at its start or after `$(`, `|`, `;`, `&`).
fn names_program(text: &str, program: &str) -> bool {
    text.split(['(', '|', ';', '&', '`'])
        .filter_map(|part| part.split_whitespace().next())
        .any(|w| super::basename(w) == program)
}

/// A word is literal when no expansion survives in it.
pub fn is_literal(w: &str) -> bool {
    !w.contains('$') && !w.contains('`') && !w.starts_with("<(") && !w.starts_with(">(")
}

/// Why a command line is clearly malformed (unbalanced quotes or substitutions), if it is.
fn unbalanced(text: &str) -> Option<String> {
    let mut chars = text.chars().peekable();
    let (mut single, mut double, mut back) = (false, false, false);
    let mut parens: i64 = 0;
    while let Some(c) = chars.next() {
        match c {
            '\\' if !single => {
                chars.next();
            }
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '`' if !single => back = !back,
            '(' if !single && !double => parens += 1,
            ')' if !single && !double => parens -= 1,
            '$' if !single && chars.peek() == Some(&'(') => {
                chars.next();
                parens += 1;
            }
            _ => {}
        }
    }
    if single {
        Some("unbalanced single quote".into())
    } else if double {
        Some("unbalanced double quote".into())
    } else if back {
        Some("unbalanced backtick".into())
    } else if parens != 0 {
        Some("unbalanced parentheses or `$(`".into())
    } else {
        None
    }
}

/// `sh -c SCRIPT NAME ARGS..`: SCRIPT with its positional parameters (`$0` as `zero`, `$1`..,
/// `${N}`, `$@`, `$*`) replaced by the words the shell would put there, quoted so the walker
/// reads them as exactly those words:
/// - unquoted, a value is split at blanks into words, as bash splits it (`rm -rf $1` with
///   `1 = "x /*"` removes `x` and `/*`), and an empty one leaves nothing;
/// - inside double quotes it stays one piece of the word (`"/$1"` is `/etc` for `etc`), and
///   `"$@"` is one word per argument;
/// - inside single quotes nothing is replaced, and parameters not given stay as written.
///
/// The scan knows quotes, escapes and `$(..)`/`` `..` `` (whose insides are unquoted again).
pub(crate) fn positional(script: &str, zero: Option<&str>, args: &[String]) -> String {
    let b = script.as_bytes();
    let mut out = String::with_capacity(script.len() + 16);
    // Whether each open level (the script, then each substitution inside it) is in double quotes.
    let mut doubles: Vec<bool> = vec![false];
    // Open parentheses per level, so a level's closing `)` is told from a subshell's.
    let mut parens: Vec<usize> = vec![0];
    // Where each level's open double quote opened.
    let mut opened: Vec<Option<usize>> = vec![None];
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        let double = doubles.last().copied().unwrap_or(false);
        match b[i] {
            b'\\' => i += 2,
            b'\'' if !double => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            }
            b'"' => {
                if let Some(d) = doubles.last_mut() {
                    *d = !*d;
                }
                if let Some(o) = opened.last_mut() {
                    *o = if double { None } else { Some(i) };
                }
                i += 1;
            }
            b'`' => {
                // A backquoted substitution opens a level; its closing quote ends it.
                if doubles.len() > 1 && parens.last() == Some(&usize::MAX) {
                    doubles.pop();
                    parens.pop();
                    opened.pop();
                } else {
                    doubles.push(false);
                    parens.push(usize::MAX);
                    opened.push(None);
                }
                i += 1;
            }
            b'(' if !double => {
                if let Some(p) = parens.last_mut().filter(|p| **p != usize::MAX) {
                    *p += 1;
                }
                i += 1;
            }
            b')' if !double => {
                match parens.last_mut() {
                    Some(0) if doubles.len() > 1 => {
                        doubles.pop();
                        parens.pop();
                        opened.pop();
                    }
                    Some(p) if *p != usize::MAX && *p > 0 => *p -= 1,
                    _ => {}
                }
                i += 1;
            }
            // A comment, to the end of its line: its quotes open nothing.
            b'#' if !double && (i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(')) => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'$' if b.get(i + 1) == Some(&b'(') && b.get(i + 2) != Some(&b'(') => {
                doubles.push(false);
                parens.push(0);
                opened.push(None);
                i += 2;
            }
            b'$' if b.get(i + 1) == Some(&b'\'') && !double => {
                // `$'..'`: backslash escapes inside, no expansion.
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'$' => {
                let Some((len, param)) = parameter_at(&b[i + 1..]) else {
                    i += 1;
                    continue;
                };
                let values: Vec<&str> = match param {
                    Parameter::All(_) => args.iter().map(String::as_str).collect(),
                    Parameter::Nth(0) => zero.into_iter().collect(),
                    Parameter::Nth(n) => args.get(n - 1).map(String::as_str).into_iter().collect(),
                };
                let given = matches!(param, Parameter::All(_)) || !values.is_empty();
                let end = i + 1 + len;
                // `x=$1`: an assignment's value is one word, not split.
                let unsplit = !double && in_assignment(b, i);
                if given {
                    // `"$1"`, a whole double-quoted word: the quoted value alone stands for it.
                    let whole_word = double && opened.last() == Some(&Some(i - 1)) && b.get(end) == Some(&b'"');
                    if whole_word {
                        out.push_str(&script[copied..i - 1]);
                        out.push_str(&expansion(&values, param, false, true));
                        if let Some(d) = doubles.last_mut() {
                            *d = false;
                        }
                        copied = end + 1;
                        i = end + 1;
                        continue;
                    }
                    out.push_str(&script[copied..i]);
                    if unsplit {
                        out.push_str(&shell_quote(&values.join(" ")));
                    } else {
                        out.push_str(&expansion(&values, param, double, false));
                    }
                    copied = end;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    out.push_str(script.get(copied..).unwrap_or(""));
    out
}

/// The words `word` stands for when it is a whole positional parameter (`$@`, `$*`, `$1`,
/// `${2}`, `${1:-rm}`) and `params` are the parameters `set --` gave (None: none were, and the
/// agent's shell has none, so a parameter with a default is its default); itself otherwise.
fn parameter_words(word: &str, params: Option<&[String]>) -> Vec<String> {
    let Some(rest) = word.strip_prefix('$') else {
        return vec![word.to_string()];
    };
    let default = rest
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .and_then(|r| r.split_once('-'))
        .map(|(_, d)| d)
        .filter(|d| is_literal(d));
    match (parameter_at(rest.as_bytes()), params) {
        (Some((len, Parameter::All(_))), Some(p)) if len == rest.len() => p.to_vec(),
        (Some((len, Parameter::Nth(n))), _) if len == rest.len() && n > 0 => {
            match params.and_then(|p| p.get(n - 1)).filter(|v| !v.is_empty()) {
                Some(v) => vec![v.clone()],
                None => match default {
                    Some(d) => vec![d.to_string()],
                    None if params.is_some() => Vec::new(),
                    None => vec![word.to_string()],
                },
            }
        }
        _ => vec![word.to_string()],
    }
}

/// The parameters `set ARGS` gives: the words after `--`, or after its options when a word
/// that is not an option follows them (`set a b`); None when it only sets options (`set -e`).
fn set_parameters(args: &[String]) -> Option<Vec<String>> {
    let mut i = 0;
    let words = loop {
        let a = args.get(i)?;
        if a == "--" || a == "-" {
            break &args[i + 1..];
        }
        if !(a.starts_with('-') || a.starts_with('+')) {
            break &args[i..];
        }
        // `set -euo pipefail`: `pipefail` is the value of the bundle's `o`.
        i += 1 + option_values(a);
    };
    // `set -- $@ $@`, again and again, doubles them: past a bound they are not followed.
    (words.len() <= MAX_PARAMETERS).then(|| words.to_vec())
}

/// At most this many positional parameters are followed (see [`set_parameters`]).
const MAX_PARAMETERS: usize = 1024;

/// The most words a computed substitution ([`Walker::computed_into`]) stands for; a longer
/// output keeps the substitution as written.
const MAX_COMPUTED_WORDS: usize = 256;

/// How many words after a shell's short-option bundle are its options' values: one for each
/// `o` or `O` in `-o`, `+o`, `-eo`, `-O` (long options take none).
pub(crate) fn option_values(bundle: &str) -> usize {
    if bundle.starts_with("--") || !(bundle.starts_with('-') || bundle.starts_with('+')) {
        return 0;
    }
    bundle[1..].chars().filter(|c| matches!(c, 'o' | 'O')).count()
}

/// Programs the rules watch, in the order a globbed command word is matched against them:
/// deleters and disk writers, shells and wrappers, fetchers and interpreters, then the rest.
const WATCHED_PROGRAMS: &[&str] = &[
    "rm",
    "shred",
    "dd",
    "mkfs",
    "wipefs",
    "truncate",
    "sh",
    "bash",
    "dash",
    "zsh",
    "fish",
    "ksh",
    "busybox",
    "env",
    "sudo",
    "doas",
    "su",
    "timeout",
    "nice",
    "nohup",
    "setsid",
    "stdbuf",
    "time",
    "xargs",
    "eval",
    "curl",
    "wget",
    "nc",
    "ncat",
    "socat",
    "telnet",
    "python3",
    "python",
    "perl",
    "ruby",
    "node",
    "php",
    "awk",
    "chmod",
    "chown",
    "chattr",
    "git",
    "kill",
    "pkill",
    "killall",
    "find",
    "mv",
    "cp",
    "tee",
    "sed",
    "fdisk",
    "parted",
    "iptables",
    "ufw",
    "systemctl",
    "crontab",
    "ssh",
    "scp",
    "rsync",
    "base64",
    "openssl",
    "docker",
    "kubectl",
    "mysql",
    "psql",
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
    "userdel",
    "passwd",
    "mount",
    "insmod",
    "modprobe",
];

/// When `argv`'s command word has glob characters: replaces it with the watched program it
/// matches (see [`globbed_program`]) and returns the word as written.
fn resolve_globbed_name(argv: &mut [String]) -> Option<String> {
    // A pattern of the word itself: not one inside an expansion (`${x%%:*}`), nor an
    // assignment's value.
    let first = argv
        .first_mut()
        .filter(|w| w.contains(['*', '?', '[']) && is_literal(w) && !super::is_assignment(w))?;
    let pattern = first.clone();
    if let Some(program) = globbed_program(&pattern) {
        *first = program.to_string();
    }
    Some(pattern)
}

/// The first of [`WATCHED_PROGRAMS`] whose name the last path component of `pattern` (a
/// command word with glob characters) matches: the program bash's globbing would find, were it
/// installed where the pattern looks.
fn globbed_program(pattern: &str) -> Option<&'static str> {
    let name = pattern.rsplit('/').next().unwrap_or(pattern);
    let matcher = globset::GlobBuilder::new(name)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()?
        .compile_matcher();
    WATCHED_PROGRAMS.iter().copied().find(|p| matcher.is_match(p))
}

/// `w` quoted for bash but for its glob characters, which an unquoted expansion leaves to
/// globbing: `/bin/r[m]` → `'/bin/r'[m]`.
fn quote_keeping_globs(w: &str) -> String {
    if !w.contains(['*', '?', '[']) {
        return shell_quote(w);
    }
    let mut out = String::with_capacity(w.len() + 8);
    let mut literal = String::new();
    for c in w.chars() {
        if matches!(c, '*' | '?' | '[' | ']') {
            if !literal.is_empty() {
                out.push_str(&shell_quote(&literal));
                literal.clear();
            }
            out.push(c);
        } else {
            literal.push(c);
        }
    }
    if !literal.is_empty() {
        out.push_str(&shell_quote(&literal));
    }
    out
}

/// A positional parameter named after a `$`.
#[derive(Clone, Copy)]
enum Parameter {
    /// `$0`, `$1`, .. `$9`, `${N}`.
    Nth(usize),
    /// `$@` (true) or `$*` (false).
    All(bool),
}

/// The positional parameter that `b` (the text after a `$`) names, and its length.
fn parameter_at(b: &[u8]) -> Option<(usize, Parameter)> {
    match b.first()? {
        c @ b'0'..=b'9' => Some((1, Parameter::Nth(usize::from(c - b'0')))),
        b'@' => Some((1, Parameter::All(true))),
        b'*' => Some((1, Parameter::All(false))),
        b'{' => {
            let close = b.iter().position(|&c| c == b'}')?;
            let inner = &b[1..close];
            // `${1:-x}`, `${1-x}`: the parameter, when it is given (its default otherwise).
            let digits = inner.iter().take_while(|c| c.is_ascii_digit()).count();
            let inner = match &inner[digits..] {
                [b':', b'-', ..] | [b'-', ..] if digits > 0 => &inner[..digits],
                _ => inner,
            };
            let param = match inner {
                b"@" => Parameter::All(true),
                b"*" => Parameter::All(false),
                digits if !digits.is_empty() && digits.len() <= 4 && digits.iter().all(u8::is_ascii_digit) => {
                    Parameter::Nth(std::str::from_utf8(digits).ok()?.parse().ok()?)
                }
                _ => return None,
            };
            Some((close + 1, param))
        }
        _ => None,
    }
}

/// The text that replaces a positional parameter whose values are `values`: in double quotes
/// the quotes are closed around the quoted value (`"$@"` one word per value, anything else one
/// piece); unquoted each value is split at blanks into quoted words.
///
/// `whole_word`: the parameter was a whole double-quoted word (`"$1"`), whose quotes are gone.
fn expansion(values: &[&str], param: Parameter, double: bool, whole_word: bool) -> String {
    if whole_word || double {
        let quoted = match param {
            Parameter::All(true) => values.iter().map(|v| shell_quote(v)).collect::<Vec<_>>().join(" "),
            _ => shell_quote(&values.join(" ")),
        };
        return if whole_word { quoted } else { format!("\"{quoted}\"") };
    }
    // A blank at either end of the values ends the word before or starts the one after.
    let joined = values.join(" ");
    let mut out = String::new();
    if joined.starts_with(BLANKS) {
        out.push(' ');
    }
    let words: Vec<String> = joined
        .split(BLANKS)
        .filter(|w| !w.is_empty())
        .map(quote_keeping_globs)
        .collect();
    out.push_str(&words.join(" "));
    if joined.ends_with(BLANKS) && !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

/// The characters bash splits unquoted expansions at (its default `IFS`).
const BLANKS: [char; 3] = [' ', '\t', '\n'];

/// Whether the `$` at `i` is in the value of an assignment (`x=$1`, `a=b$1`), which bash does
/// not split.
fn in_assignment(b: &[u8], i: usize) -> bool {
    let start = b[..i]
        .iter()
        .rposition(|c| matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'('))
        .map_or(0, |k| k + 1);
    std::str::from_utf8(&b[start..i]).is_ok_and(super::is_assignment)
}

/// At most this many words come out of one word with brace lists; past it, a covering subset
/// (see [`expand_braces`]).
const MAX_BRACE_WORDS: usize = 64;
/// Words with more brace groups than this are expanded by the covering subset only.
const MAX_BRACE_GROUPS: usize = 16;
/// A line with more `{` than this is not expanded at all (and fails closed when it holds a
/// brace list): scanning for lists is linear per `{` only up to a bound.
const MAX_BRACE_LINE_LISTS: usize = 1024;

/// `{rm,-rf,/}`, `/{etc,tmp}/x`, `~/.{bashrc,profile}`: the line with every word that holds an
/// unquoted brace list replaced by the words bash expands it into (`pre{a,b}post` → `preapost
/// prebpost`), in a command substitution's words too (`$(rm {a,b})`); None when there is
/// none. Quoted braces (`'{a,b}'`, `"{a,b}"`, `\{`), `${..}`, substitutions inside a word
/// (`x$(..)`) and backquotes, comments, here-document bodies and assignments at the start of
/// a command are left as they are; sequences (`{a..c}`) are not expanded. The output is bounded
/// ([`MAX_BRACE_WORDS`] per word, and about four times the line in all).
#[cfg(test)]
fn brace_words(text: &str) -> Option<String> {
    brace_words_bounded(text).ok().flatten()
}

/// [`brace_words`], or `Err` when the line holds more brace lists than the guard expands
/// (more than [`MAX_BRACE_LINE_LISTS`] `{`, a word past [`MAX_BRACE_WORDS`] words or
/// [`MAX_BRACE_GROUPS`] lists, or more than about four times the line in all): the caller
/// then fails closed, since bash would run words the guard did not see.
fn brace_words_bounded(text: &str) -> Result<Option<String>, ()> {
    if !text.contains(',') || !text.contains('{') {
        return Ok(None);
    }
    if text.matches('{').count() > MAX_BRACE_LINE_LISTS {
        return Err(());
    }
    let b = text.as_bytes();
    let budget = 4 * text.len() + 4096;
    let mut out = String::with_capacity(text.len() + 16);
    let mut changed = false;
    let mut at_start = true;
    let mut heredocs: Vec<(String, bool)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                out.push('\n');
                i += 1;
                at_start = true;
                // Here-document bodies are text, not words.
                for (delim, tabs) in std::mem::take(&mut heredocs) {
                    while i < b.len() {
                        let end = text[i..].find('\n').map_or(b.len(), |e| i + e + 1);
                        let line = text[i..end].trim_end_matches('\n');
                        let line = if tabs { line.trim_start_matches('\t') } else { line };
                        out.push_str(&text[i..end]);
                        i = end;
                        if line == delim {
                            break;
                        }
                    }
                }
            }
            b' ' | b'\t' | b'\r' => {
                out.push(b[i] as char);
                i += 1;
            }
            b';' | b'&' | b'|' | b'(' | b')' => {
                out.push(b[i] as char);
                i += 1;
                at_start = true;
            }
            b'<' if text[i..].starts_with("<<") && !text[i..].starts_with("<<<") => {
                let mut j = i + 2;
                let tabs = b.get(j) == Some(&b'-');
                j += usize::from(tabs);
                while b.get(j).is_some_and(|c| *c == b' ' || *c == b'\t') {
                    j += 1;
                }
                let end = word_end(b, j);
                let delim: String = text[j..end]
                    .chars()
                    .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                    .collect();
                if !delim.is_empty() {
                    heredocs.push((delim, tabs));
                }
                out.push_str(&text[i..end]);
                i = end;
            }
            b'<' | b'>' => {
                out.push(b[i] as char);
                i += 1;
            }
            // A word that opens a command substitution: its commands' words are words too.
            b'$' if text[i..].starts_with("$(") && !text[i..].starts_with("$((") => {
                out.push_str("$(");
                i += 2;
                at_start = true;
            }
            // A word that starts with `#` starts a comment.
            b'#' => {
                let end = text[i..].find('\n').map_or(b.len(), |e| i + e);
                out.push_str(&text[i..end]);
                i = end;
            }
            _ => {
                let end = word_end(b, i).max(i + 1);
                let word = &text[i..end];
                let assignment = at_start && super::is_assignment(word);
                let expanded = (!assignment).then(|| expand_braces(word)).flatten();
                if expanded.as_ref().is_some_and(|w| w.is_empty() || out.len() >= budget) {
                    return Err(());
                }
                match expanded {
                    Some(words) => {
                        changed = true;
                        out.push_str(&words.join(" "));
                    }
                    None => out.push_str(word),
                }
                at_start = assignment;
                i = end;
            }
        }
    }
    Ok(changed.then_some(out))
}

/// The end of the word that starts at `i`: quotes, escapes, `${..}`, `$(..)` and backquotes
/// are part of it; unquoted blanks and `;&|()<>` end it.
fn word_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' => return i,
            _ => i = skip_quoted(b, i),
        }
    }
    i
}

/// The index after the character at `i`, or after the quoted or substituted part that starts
/// there (`'..'`, `".."`, `$'..'`, `\x`, `${..}`, `$(..)`, `` `..` ``).
fn skip_quoted(b: &[u8], i: usize) -> usize {
    let find = |from: usize, close: u8, escapes: bool| {
        let mut k = from;
        while k < b.len() {
            if escapes && b[k] == b'\\' {
                k += 2;
                continue;
            }
            if b[k] == close {
                return k + 1;
            }
            k += 1;
        }
        b.len()
    };
    let nested = |from: usize, open: u8, close: u8| {
        let mut depth = 1usize;
        let mut k = from;
        while k < b.len() {
            match b[k] {
                b'\\' => k += 1,
                c if c == open => depth += 1,
                c if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return k + 1;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        b.len()
    };
    match (b[i], b.get(i + 1)) {
        (b'\\', _) => (i + 2).min(b.len()),
        (b'\'', _) => find(i + 1, b'\'', false),
        (b'"', _) => find(i + 1, b'"', true),
        (b'`', _) => find(i + 1, b'`', true),
        (b'$', Some(b'\'')) => find(i + 2, b'\'', true),
        (b'$', Some(b'{')) => nested(i + 2, b'{', b'}'),
        (b'$', Some(b'(')) => nested(i + 2, b'(', b')'),
        _ => i + 1,
    }
}

/// The first unquoted brace list of `word` (`{` .. `}` holding a comma at its own level, not
/// `${`): the text before it, its alternatives, the text after it.
fn brace_list(word: &str) -> Option<(&str, Vec<&str>, &str)> {
    let b = word.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'{' || (i > 0 && b[i - 1] == b'$') {
            i = skip_quoted(b, i);
            continue;
        }
        // The matching `}`, and the commas at this level.
        let (mut depth, mut k) = (0usize, i + 1);
        let mut commas = Vec::new();
        let mut close = None;
        while k < b.len() {
            match b[k] {
                b'{' => depth += 1,
                b'}' if depth == 0 => {
                    close = Some(k);
                    break;
                }
                b'}' => depth -= 1,
                b',' if depth == 0 => commas.push(k),
                _ => {
                    k = skip_quoted(b, k);
                    continue;
                }
            }
            k += 1;
        }
        match close {
            Some(c) if !commas.is_empty() => {
                let mut alts = Vec::with_capacity(commas.len() + 1);
                let mut from = i + 1;
                for &comma in &commas {
                    alts.push(&word[from..comma]);
                    from = comma + 1;
                }
                alts.push(&word[from..c]);
                return Some((&word[..i], alts, &word[c + 1..]));
            }
            // `{}`, `{a}`, `{a..c}`: literal; look further on.
            _ => i += 1,
        }
    }
    None
}

/// The words bash expands `word` into, None when it holds no brace list, and an empty list
/// when it expands into more than [`MAX_BRACE_WORDS`] words or holds more than
/// [`MAX_BRACE_GROUPS`] lists (which [`brace_words_bounded`] turns into a failure).
fn expand_braces(word: &str) -> Option<Vec<String>> {
    brace_list(word)?;
    let mut out = Vec::new();
    if word.matches('{').count() <= MAX_BRACE_GROUPS && expand_all(word, &mut out) {
        return Some(out);
    }
    Some(Vec::new())
}

/// Pushes every word `word` expands into; false once there would be more than
/// [`MAX_BRACE_WORDS`].
fn expand_all(word: &str, out: &mut Vec<String>) -> bool {
    match brace_list(word) {
        None if out.len() < MAX_BRACE_WORDS => {
            out.push(word.to_string());
            true
        }
        None => false,
        Some((pre, alts, post)) => alts.iter().all(|a| expand_all(&format!("{pre}{a}{post}"), out)),
    }
}

/// Single-quotes a word for re-parsing.
pub(crate) fn shell_quote(w: &str) -> String {
    format!("'{}'", w.replace('\'', "'\\''"))
}

/// `w` as a shell word: bare when it is plain (letters, digits, `-_./:+,%`), quoted otherwise
/// ([`shell_quote`]): `=` would make a first word an assignment, and the grammar splits a
/// command word at `@`. A carried argv of plain words stays a plain line, which the walker
/// reads without the parser.
pub(crate) fn quote_word(w: &str) -> String {
    let plain = !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./:+,%".contains(&b));
    if plain {
        w.to_string()
    } else {
        shell_quote(w)
    }
}

fn resolve_cd(cwd: Option<&Path>, arg: Option<&str>) -> Option<PathBuf> {
    let arg = arg.unwrap_or("~");
    let home_rest = if arg == "~" || arg == "$HOME" {
        Some("")
    } else {
        arg.strip_prefix("~/").or_else(|| arg.strip_prefix("$HOME/"))
    };
    if let Some(rest) = home_rest {
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        return Some(normalize(&Path::new(&home).join(rest)));
    }
    if !is_literal(arg) || arg.starts_with('~') || arg == "-" {
        return None;
    }
    if arg.starts_with('/') {
        return Some(normalize(Path::new(arg)));
    }
    cwd.map(|c| normalize(&c.join(arg)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::basename;

    fn argvs(text: &str) -> Vec<Vec<String>> {
        parse_shell(text, None)
            .pipelines
            .into_iter()
            .flatten()
            .map(|c| c.argv)
            .collect()
    }

    #[test]
    fn an_unquoted_substitutions_words_are_the_commands_arguments_as_xargs_reads_them() {
        let stages = |text: &str| -> Vec<Vec<(String, bool)>> {
            parse_shell(text, None)
                .pipelines
                .into_iter()
                .map(|p| p.into_iter().map(|c| (c.argv.join(" "), c.args_from_stdin)).collect())
                .collect()
        };
        let fed = |argv: &str| (argv.to_string(), true);
        let plain = |argv: &str| (argv.to_string(), false);
        assert_eq!(
            stages("rm -f $(find ~ -type f)"),
            [vec![plain("find ~ -type f"), fed("rm -f $(find ~ -type f)")]]
        );
        assert_eq!(
            stages("sudo shred -u `ls ~`"),
            [vec![plain("ls ~"), fed("shred -u `ls ~`")]]
        );
        // Quoted, it is one argument; a shell or eval runs it as code; a later stage keeps its
        // own stdin.
        assert_eq!(stages("rm -f \"$(cat name)\"")[1], [plain("rm -f $(cat name)")]);
        assert!(stages("eval $(ssh-agent -s)").iter().flatten().all(|(_, fed)| !fed));
        assert!(stages("bash $(mktemp)").iter().all(|p| p.len() == 1));
        // Only a program that acts on each file it is named; the words must reach it.
        assert!(stages("ssh $(cat .host) uptime").iter().all(|p| p.len() == 1));
        assert!(stages("sudo -u $(logname) rm -f x")
            .iter()
            .flatten()
            .all(|(_, fed)| !fed));
        assert!(stages("ls | rm -f $(find ~ -type f)")
            .iter()
            .flatten()
            .all(|(_, fed)| !fed));
        assert_eq!(
            stages("cat x | xargs echo $(date)"),
            [vec![plain("date")], vec![plain("cat x"), fed("echo $(date)")]]
        );
    }

    #[test]
    fn positional_parameters_expand_as_the_shell_expands_them() {
        let args = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let words = |script: &str, zero: Option<&str>, xs: &[&str]| argvs(&positional(script, zero, &args(xs)));
        // Unquoted, a value is split at blanks: `x /*` is two words.
        assert_eq!(words("rm -rf $1", None, &["x /*"]), [["rm", "-rf", "x", "/*"]]);
        assert_eq!(words("rm -rf ${1}", None, &["a\tb"]), [["rm", "-rf", "a", "b"]]);
        // An empty value leaves nothing; glued to text, the first piece joins it.
        assert_eq!(words("rm -rf $1 /", None, &[""]), [["rm", "-rf", "/"]]);
        assert_eq!(words("rm -rf /$1", None, &["etc x"]), [["rm", "-rf", "/etc", "x"]]);
        // In double quotes it stays one word, glued to what surrounds it.
        assert_eq!(words("rm -rf \"$1\"", None, &["a b"]), [["rm", "-rf", "a b"]]);
        assert_eq!(words("rm -rf \"/$1/x\"", None, &["etc"]), [["rm", "-rf", "/etc/x"]]);
        assert_eq!(words("rm -rf \"$@\"", None, &["a b", "c"]), [["rm", "-rf", "a b", "c"]]);
        assert_eq!(words("rm -rf \"x$@y\"", None, &["a", "b"]), [["rm", "-rf", "xa", "by"]]);
        assert_eq!(words("echo \"$*\"", None, &["a", "b"]), [["echo", "a b"]]);
        assert_eq!(words("rm -rf \"$@\"", None, &[]), [["rm", "-rf"]]);
        // `$0` is the first word after the script.
        assert_eq!(words("rm -rf \"$0\" $1", Some("~"), &["/"]), [["rm", "-rf", "~", "/"]]);
        // Single quotes keep `$1` as written; a parameter not given stays too.
        assert_eq!(words("echo '$1' $2", None, &["a"]), [["echo", "$1", "$2"]]);
        // Inside a substitution in double quotes, the value is unquoted again.
        assert_eq!(
            positional("echo \"$(rm -rf $1)\"", None, &args(&["x /"])),
            "echo \"$(rm -rf 'x' '/')\""
        );
        assert_eq!(
            positional("echo \"`rm $1`\"", None, &args(&["a b"])),
            "echo \"`rm 'a' 'b'`\""
        );
        // A comment's quotes open nothing; an unquoted value's glob characters still glob.
        assert_eq!(
            words("true # \"\n$1", None, &["/bin/rm -rf /etc"]),
            [vec!["true"], vec!["/bin/rm", "-rf", "/etc"]]
        );
        assert_eq!(
            positional("$1 -rf ~", None, &args(&["/bin/r[m]"])),
            "'/bin/r'['m'] -rf ~"
        );
        // A value is data: its quotes and `;` are not shell syntax.
        assert_eq!(words("echo $1", None, &["a;rm -rf /"]), [["echo", "a;rm", "-rf", "/"]]);
        assert_eq!(words("echo \"$1\"", None, &["it's"]), [["echo", "it's"]]);
    }

    #[test]
    fn lookups_of_one_program_under_its_versions_stand_for_the_first() {
        assert_eq!(same_program_lookups("which python || which python3"), Some("python"));
        assert_eq!(
            same_program_lookups("command -v python3.11 || command -v python3 || type -P python"),
            Some("python3.11")
        );
        // Another program among the alternatives, a lone lookup (read elsewhere), a path, a
        // word that is not a lookup: unknown.
        assert_eq!(same_program_lookups("which vim || which nano"), None);
        assert_eq!(same_program_lookups("which python3"), None);
        assert_eq!(same_program_lookups("which /tmp/python || which python"), None);
        assert_eq!(same_program_lookups("which python || echo rm"), None);
        assert_eq!(same_program_lookups("which 3 || which 2"), None);
        // The resolved name is what the walker runs.
        assert_eq!(
            argvs("PY=$(which python3 || which python); $PY -c 'print(1)'")
                .last()
                .map(|a| a[0].clone()),
            Some("/usr/bin/python3".to_string())
        );
    }

    #[test]
    fn a_double_paren_that_is_not_arithmetic_is_read_as_nested_subshells() {
        // dash runs `((rm -rf /))` as `( (rm -rf /) )`; the grammar only knows arithmetic.
        for line in ["((rm -rf /))", "echo a; ((rm -rf ~)); echo b", "(((rm -rf /)))"] {
            let parsed = argvs(line);
            assert!(
                parsed.iter().any(|argv| argv.first().map(String::as_str) == Some("rm")),
                "{line}: {parsed:?}"
            );
        }
        let verdict = crate::guard::check_command(
            "((rm -rf /))",
            &crate::guard::GuardContext {
                workspace: std::path::Path::new("/ws"),
            },
        );
        assert_eq!(verdict.recommendation, crate::guard::Recommendation::Block);
        // Quoted words and plain names too: dash runs `((reboot))` as a command.
        for line in ["(('mkfs.ext4' /dev/sda1))", "((reboot))"] {
            assert!(!argvs(line).is_empty(), "{line}");
        }
        // An arithmetic expansion is arithmetic in dash too.
        assert!(
            argvs("echo $((1+2))")
                .iter()
                .all(|a| a.first().map(String::as_str) == Some("echo")),
            "{:?}",
            argvs("echo $((1+2))")
        );
    }

    /// The commands of the corpora (ours and the public tuning rows; held-out rows stay
    /// unread here), for tests that compare two readings of every line.
    fn corpus_lines() -> Vec<String> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/guard");
        let mut lines = Vec::new();
        for name in [
            "corpus.tsv",
            "heldout.tsv",
            "heldout2.tsv",
            "heldout3.tsv",
            "heldout4.tsv",
        ] {
            let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap_or_default();
            lines.extend(
                text.lines()
                    .filter(|l| !l.starts_with('#'))
                    .filter_map(|l| l.split_once('\t'))
                    .map(|(_, c)| c.replace("\\n", "\n")),
            );
        }
        for name in ["tldr.tsv", "gtfobins.tsv", "atomic.tsv"] {
            let text = std::fs::read_to_string(format!("{dir}/public/{name}")).unwrap_or_default();
            lines.extend(
                text.lines()
                    .filter(|l| !l.starts_with('#'))
                    .map(|l| l.splitn(4, '\t').collect::<Vec<_>>())
                    .filter(|f| f.len() == 4 && f[1] == "tuning")
                    .map(|f| f[3].replace("\\n", "\n")),
            );
        }
        lines
    }

    #[test]
    fn plain_lines_read_as_the_grammar_reads_them() {
        let mut lines: Vec<String> = [
            "ls -la",
            "cargo test --release -- --nocapture",
            "dd if=/dev/zero of=./disk.img bs=1M count=10",
            "sleep 10",
            "7z x a.7z",
            ". env.sh",
            ": ok",
            "echo done",
            "echo for in then",
            "/bin/rm -rf /",
            "rm -rf {}",
            "rm {} +",
            "echo {} x{} {a}",
            "{} x",
            "sudo rm -rf /etc",
            "env A=1 B=2 rm x",
            "xargs rm -rf",
            "git push -f origin main",
            "cd / ",
            "  cd /tmp  ",
            "alias",
            "-x",
            "=x",
            "export A=1",
            "unset A",
            "time ls",
            "a=1",
            "echo a,b c:d e@f g+h",
            "kill -9 1",
            "1 2 3",
            "_x",
            "",
            "   ",
            "echo 'x'",
            "echo ''",
            "echo '' x",
            "find . -name '*.pyc' -exec rm -f {} \\;",
            "find / -name '*' -exec rm -rf {} \\;",
            "python3 -c 'import os; os.system(\"rm -rf /\")'",
            "git commit -m \"fix: it's done\"",
            "echo -n''x\"y\"",
            "grep -r 'a b' \"c d\" .",
            "echo 'done' 'if' \"then\"",
            "echo '*' \"?\" '[a]' '~' \"~/x\" '#x' \"a#b\"",
            "echo 'a;b|c&d>e<f(g)h'",
            "curl -H 'Authorization: Bearer abc' https://x.io",
            "sudo -u root 'rm' x",
            "ls 'x'y\"z\" w",
            "sh -c 'rm$IFS-rf$IFS/'",
            "sh -c 'rm${IFS}-rf${IFS}/'",
            "x=1; python3 -c 'print(\"IFS\")'",
        ]
        .iter()
        .map(|l| l.to_string())
        .collect();
        lines.extend(corpus_lines());
        let cwd = Some(PathBuf::from("/work/ws"));
        let mut plain = 0;
        for line in &lines {
            let fast = parse_shell_with(line, cwd.clone(), true);
            let walked = parse_shell_with(line, cwd.clone(), false);
            assert_eq!(fast.pipelines, walked.pipelines, "{line}");
            assert_eq!(fast.error, walked.error, "{line}");
            assert_eq!(fast.clear_error, walked.clear_error, "{line}");
            plain += usize::from(plain_command_words(line).is_some());
        }
        assert!(plain > 1000, "only {plain} plain lines: the comparison proves little");
        for (line, want) in [
            ("ls -la", Some(vec!["ls", "-la"])),
            ("  cd /tmp  ", Some(vec!["cd", "/tmp"])),
            ("a=1 ls", None),
            ("echo done", None),
            ("echo 'x'", Some(vec!["echo", "x"])),
            (
                "find / -name '*' -exec rm -rf {} \\;",
                Some(vec!["find", "/", "-name", "*", "-exec", "rm", "-rf", "{}", ";"]),
            ),
            (
                "python3 -c 'import os; os.system(\"rm -rf /\")'",
                Some(vec!["python3", "-c", "import os; os.system(\"rm -rf /\")"]),
            ),
            (
                "git commit -m \"fix: it's done\"",
                Some(vec!["git", "commit", "-m", "fix: it's done"]),
            ),
            ("echo -n''x\"y\"", Some(vec!["echo", "-nxy"])),
            ("echo ''", Some(vec!["echo", ""])),
            ("'rm' -rf /", None),
            ("echo \"$HOME\"", None),
            ("echo \"a\\\"b\"", None),
            ("echo 'unclosed", None),
            ("echo 'a\nb'", None),
            ("echo \\x", None),
            ("echo '{a,b}'", None),
            ("echo 'done'", Some(vec!["echo", "done"])),
            ("python -c 'f((1))'", None),
            ("sh -c 'rm$IFS-rf$IFS/'", None),
            ("echo 'a IFS b'", None),
            ("a ==", None),
            ("ls\tx", None),
            ("ls ~", None),
            ("rm -rf {}", Some(vec!["rm", "-rf", "{}"])),
            ("rm x{}", None),
            ("{} x", None),
            ("echo {a}", None),
            ("-x", None),
            ("", None),
        ] {
            let read = plain_command_words(line);
            let read: Option<Vec<&str>> = read.as_deref().map(|w| w.iter().map(String::as_str).collect());
            assert_eq!(read, want, "{line}");
        }
    }

    proptest::proptest! {
        /// Lines made of the pieces the fast path reads (bare runs, quoted runs of any
        /// printable text, `\;`, `{}`) and of pieces it must refuse (`$`, `IFS`, `((`, `~`):
        /// whichever way a line is read, the commands are the walk's.
        #[test]
        fn quoted_lines_read_as_the_grammar_reads_them(
            name in "[a-z][a-z0-9_./-]{0,6}",
            words in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-zA-Z0-9_./:=@+,-]{1,6}",
                    "'[ -&(-~]{0,10}'",
                    "\"[ -!#-~]{0,10}\"",
                    "[a-z-]{0,3}'[ -&(-~]{0,6}'[a-z]{0,3}",
                    proptest::strategy::Just("\\;".to_string()),
                    proptest::strategy::Just("{}".to_string()),
                    proptest::strategy::Just("'$IFS'".to_string()),
                    proptest::strategy::Just("'a((b'".to_string()),
                    proptest::strategy::Just("~".to_string()),
                ],
                0..5,
            )
        ) {
            let line = std::iter::once(name).chain(words).collect::<Vec<_>>().join(" ");
            let cwd = Some(PathBuf::from("/work/ws"));
            let fast = parse_shell_with(&line, cwd.clone(), true);
            let walked = parse_shell_with(&line, cwd, false);
            proptest::prop_assert_eq!(fast.pipelines, walked.pipelines, "{}", line);
            proptest::prop_assert_eq!(fast.error, walked.error, "{}", line);
            proptest::prop_assert_eq!(fast.clear_error, walked.clear_error, "{}", line);
        }
    }

    #[test]
    fn brace_lists_expand_with_their_prefix_and_suffix() {
        for (line, want) in [
            ("{rm,-rf,/}", "rm -rf /"),
            ("cat /{etc/shadow,tmp/x}", "cat /etc/shadow /tmp/x"),
            ("rm -rf /{etc,tmp}/x", "rm -rf /etc/x /tmp/x"),
            ("cp x ~/.{bashrc,profile}", "cp x ~/.bashrc ~/.profile"),
            ("echo a{b,c{d,e}}f", "echo abf acdf acef"),
            ("echo {a,b}{1,2}", "echo a1 a2 b1 b2"),
            ("echo {}{a,b} {a..c}", "echo {}a {}b {a..c}"),
            ("x && rm -rf /{a,b};ls", "x && rm -rf /a /b;ls"),
            ("echo $(rm -rf /{a,b})", "echo $(rm -rf /a /b)"),
            ("echo \"$x\"{a,b}", "echo \"$x\"a \"$x\"b"),
            ("dd of=/dev/{sda,sdb}", "dd of=/dev/sda of=/dev/sdb"),
            ("echo {'a b',c}", "echo 'a b' c"),
        ] {
            assert_eq!(brace_words(line).as_deref(), Some(want), "{line}");
        }
        // Quoted, escaped, parameter expansions, assignments, comments, here-documents.
        for line in [
            "echo '{a,b}'",
            "echo \"{a,b}\"",
            "echo \\{a,b}",
            "echo ${x,,} ${a:-{b,c}}",
            "x={a,b} ls",
            "ls # {a,b}",
            "cat <<EOF\n{a,b}\nEOF",
            "awk -F, '{print $1,$2}'",
            "find . -exec rm {} +",
            "echo {a} {a..c} {",
        ] {
            assert_eq!(brace_words(line), None, "{line}");
        }
        // After the here-document ends, words expand again.
        assert_eq!(
            brace_words("cat <<'E'\n{a,b}\nE\nrm {c,d}").as_deref(),
            Some("cat <<'E'\n{a,b}\nE\nrm c d")
        );
    }

    #[test]
    fn brace_expansion_is_bounded_and_fails_closed_past_the_bound() {
        // 2^20 words: not expanded, and the line fails closed (a clear parse error).
        let word = format!("{}{{x,/}}", "{a,b}".repeat(19));
        assert_eq!(expand_braces(&word), Some(Vec::new()));
        let started = std::time::Instant::now();
        // A long flat list, many lists, a flood of unclosed braces, and harmless lists that
        // use up the budget before a dangerous one: none of them is passed through unseen.
        let list = format!("rm -rf {{{}/}}", "a,".repeat(10_000));
        let deep = format!("echo {}", "{a,b}".repeat(5_000));
        let flood = format!("echo {}{{a,b}}", "{".repeat(20_000));
        let spent = format!(": {} ; rm -rf {{~,x}}", "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b} ".repeat(16));
        for line in [&list, &deep, &flood, &spent] {
            assert!(brace_words_bounded(line).is_err(), "{}", &line[..40]);
            let p = parse_shell(line, None);
            assert!(p.error.is_some() && p.clear_error, "{}", &line[..40]);
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // Within the bound, every word is there.
        let some = format!("echo {}", "{a,b}".repeat(6));
        assert_eq!(brace_words(&some).map(|o| o.split(' ').count()), Some(65));
    }

    #[test]
    fn a_shell_named_by_its_variable_is_a_shell() {
        for line in [
            "$SHELL -c 'rm -rf /'",
            "${SHELL} -c 'rm -rf /'",
            "\"$BASH\" -c 'rm -rf /'",
            "sudo $SHELL -c 'rm -rf /'",
        ] {
            let p = parse_shell(line, None);
            let cmds: Vec<_> = p.pipelines.iter().flatten().collect();
            assert!(cmds.iter().any(|c| c.argv == ["rm", "-rf", "/"]), "{line}: {cmds:?}");
            let shell = cmds.iter().find(|c| c.name_as_written.is_some()).expect("the shell");
            assert!(!shell.dynamic_name && shell.name() == "bash", "{line}: {shell:?}");
        }
        // Other variables stay dynamic; `echo $SHELL` is not a command word; a value given
        // earlier in the line wins.
        assert!(parse_shell("$CMD -c 'rm -rf /'", None).pipelines[0][0].dynamic_name);
        assert_eq!(argvs("echo $SHELL"), vec![vec!["echo", "$SHELL"]]);
        assert_eq!(argvs("SHELL=ls; $SHELL -c x")[1], ["ls", "-c", "x"]);
    }

    #[test]
    fn xargs_and_parallel_commands_are_built_from_known_input() {
        for (line, want) in [
            ("echo / | xargs rm -rf", &["rm", "-rf", "/"][..]),
            ("echo / | xargs -I{} rm -rf {}", &["rm", "-rf", "/"]),
            ("printf '/etc\\n' | xargs -n1 -J % rm -rf %", &["rm", "-rf", "/etc"]),
            ("echo 'rm -rf /' | xargs sh -c", &["rm", "-rf", "/"]),
            ("xargs -i rm -rf {}/x <<< /etc", &["rm", "-rf", "/etc/x"]),
            ("echo 'rm -rf ~' | parallel", &["rm", "-rf", "~"]),
            ("parallel ::: 'rm -rf /'", &["rm", "-rf", "/"]),
            (
                "echo 'eq -ve /' | tr eqv rmf | xargs -I{} sh -c {}",
                &["rm", "-fr", "/"],
            ),
        ] {
            let got = argvs(line);
            assert!(got.iter().any(|a| a == want), "{line}: {got:?}");
        }
        // `-i` without the string in the command: the items are not appended.
        let got = argvs("echo / | xargs -i rm -rf");
        assert!(
            got.iter()
                .filter(|a| a[0] == "rm")
                .all(|a| a.last().map(String::as_str) != Some("/")),
            "{got:?}"
        );
    }

    #[test]
    fn quotes_and_escapes_are_resolved() {
        assert_eq!(
            argvs(r#"echo 'a b' "c \"d\"" e\ f"#),
            vec![vec!["echo", "a b", "c \"d\"", "e f"]]
        );
        assert_eq!(argvs("r''m -rf x")[0][0], "rm");
        assert_eq!(argvs("\"rm\" -rf x")[0][0], "rm");
        assert_eq!(argvs("\\rm -rf x")[0][0], "rm");
        assert_eq!(argvs("$'\\x72\\x6d' -rf x")[0][0], "rm");
        assert_eq!(argvs("r\"m\" -rf x")[0][0], "rm");
    }

    #[test]
    fn every_command_node_is_visited() {
        let got = argvs(
            "a 1; b 2 && c || d | e & f\ng; (h); { i; }; if j; then k; fi; for x in 1; do l; done; \
             f() { m; }; echo $(n) `o` <(p); while q; do r; done",
        );
        let names: Vec<&str> = got.iter().map(|a| a[0].as_str()).collect();
        for n in [
            "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r",
        ] {
            assert!(names.contains(&n), "{n} missing from {names:?}");
        }
        let p = parse_shell("echo x | psql db", None);
        assert_eq!(p.pipelines.len(), 1);
        assert_eq!(p.pipelines[0].len(), 2);
    }

    #[test]
    fn wrappers_and_nested_shells_are_unwrapped() {
        let got = argvs("sudo -u root env A=1 nice -n 5 nohup timeout -s KILL 10 /bin/rm -rf x");
        assert_eq!(got[0], ["/bin/rm", "-rf", "x"]);
        let got = argvs("sh -c 'rm -rf ~'; eval \"rm -rf /\"; su -c 'rm -rf /etc' root; ssh h 'rm -rf /'");
        assert!(got.contains(&vec!["rm".to_string(), "-rf".into(), "~".into()]));
        assert!(got.contains(&vec!["rm".to_string(), "-rf".into(), "/etc".into()]));
        assert!(got.contains(&vec!["rm".to_string(), "-rf".into(), "/".into()]));
    }

    #[test]
    fn heredoc_and_herestring_become_stdin() {
        let p = parse_shell("psql db <<EOF\nDROP TABLE x;\nEOF\necho done", None);
        let cmds: Vec<_> = p.pipelines.into_iter().flatten().collect();
        assert!(cmds[0].stdin_text.as_deref().unwrap_or("").contains("DROP TABLE x;"));
        assert_eq!(cmds[1].argv, ["echo", "done"]);
        let p = parse_shell("sqlite3 a.db <<< 'DELETE FROM t'", None);
        assert_eq!(p.pipelines[0][0].stdin_text.as_deref(), Some("DELETE FROM t"));
    }

    #[test]
    fn words_after_a_redirect_target_are_arguments() {
        assert_eq!(
            argvs("git 2>/dev/null reset --hard HEAD~1"),
            vec![vec!["git", "reset", "--hard", "HEAD~1"]]
        );
        assert_eq!(argvs("rm >/dev/null -rf ~"), vec![vec!["rm", "-rf", "~"]]);
        assert_eq!(argvs("sudo 2>&1 rm -rf /"), vec![vec!["rm", "-rf", "/"]]);
        assert_eq!(argvs("ls -la > out.txt"), vec![vec!["ls", "-la"]]);
    }

    #[test]
    fn redirects_are_recorded_not_arguments() {
        let p = parse_shell("echo hi > out.txt 2>&1", None);
        assert_eq!(p.pipelines[0][0].argv, ["echo", "hi"]);
        assert_eq!(p.pipelines[0][0].redirects, ["out.txt"]);
    }

    #[test]
    fn dynamic_command_words_are_marked() {
        let p = parse_shell("$(echo rm) -rf /", None);
        assert!(p.pipelines.iter().flatten().any(|c| c.dynamic_name));
        let p = parse_shell("$CMD x", None);
        assert!(p.pipelines[0][0].dynamic_name);
        let p = parse_shell("ls -la", None);
        assert!(!p.pipelines[0][0].dynamic_name);
    }

    #[test]
    fn a_digit_glued_to_a_redirect_is_its_descriptor() {
        let argv = |c: &str| parse_shell(c, None).pipelines[0][0].argv.clone();
        assert_eq!(argv("/bin/sh 0<&2 1>&2"), ["/bin/sh"]);
        assert_eq!(argv("echo 5>x"), ["echo"]);
        assert_eq!(argv("echo 5 >x"), ["echo", "5"]);
    }

    #[test]
    fn text_is_read_as_bash_reads_it_around_backslashes_and_newlines() {
        for (line, last) in [
            ("ls\n\\rm -rf /etc", vec!["rm", "-rf", "/etc"]),
            ("ls\r\n\\rm -rf /etc", vec!["rm", "-rf", "/etc"]),
            ("ls\n\\\nrm -rf /etc", vec!["rm", "-rf", "/etc"]),
            ("ls\nr\\\nm -rf /etc", vec!["rm", "-rf", "/etc"]),
            ("ls\nrm -rf \"/e\\\ntc\"", vec!["rm", "-rf", "/etc"]),
            ("echo a\\\r\nrm -rf /etc", vec!["rm", "-rf", "/etc"]),
        ] {
            let p = parse_shell(line, None);
            let argvs: Vec<Vec<String>> = p.pipelines.iter().flatten().map(|c| c.argv.clone()).collect();
            assert_eq!(argvs.len(), 2, "{line:?}: {argvs:?}");
            assert_eq!(argvs[1], last, "{line:?}");
        }
        // Inside a substitution in double quotes, quotes open anew; and `$((` closed other
        // than by `))` is a substitution holding a subshell, not arithmetic.
        assert!(substitution_opening_a_subshell("x=$((ls); rm -rf /etc)"));
        assert!(!substitution_opening_a_subshell("echo $(( (1 + 2) * 3 )) $((i+1))"));
        for line in ["echo \"$(echo \"a\"\n\\rm -rf /etc)\"", "x=$((ls); rm -rf /etc)"] {
            let p = parse_shell(line, None);
            let argvs: Vec<Vec<String>> = p.pipelines.iter().flatten().map(|c| c.argv.clone()).collect();
            let rm = vec!["rm".to_string(), "-rf".into(), "/etc".into()];
            assert!(argvs.contains(&rm), "{line:?}: {argvs:?}");
        }
        // Single quotes, comments and other escapes keep their backslashes.
        for kept in ["echo 'a\\\nb' x", "echo x # a \\\nls", "echo \\\\ x"] {
            assert!(as_bash_reads(kept).is_none_or(|read| read == kept), "{kept:?}");
        }
        assert_eq!(as_bash_reads("echo 'a\n\\b'").as_deref(), Some("echo 'a\n\\b'"));
        assert_eq!(as_bash_reads("ls \\\nfoo").as_deref(), Some("ls foo"));
    }

    #[test]
    fn unbalanced_input_is_a_clear_error() {
        for bad in ["echo 'abc", "echo \"abc", "echo $(ls"] {
            let p = parse_shell(bad, None);
            assert!(p.error.is_some() && p.clear_error, "{bad}");
        }
        assert!(parse_shell("echo 'ok'", None).error.is_none());
    }

    #[test]
    fn long_pipelines_keep_their_shape_and_words() {
        let p = parse_shell("curl -s x | grep 'a|b' | tee out.txt | sh", None);
        assert_eq!(p.pipelines.len(), 1, "{:?}", p.pipelines);
        let argv: Vec<&Vec<String>> = p.pipelines[0].iter().map(|c| &c.argv).collect();
        assert_eq!(argv[1], &vec!["grep".to_string(), "a|b".into()]);
        assert_eq!(argv[3], &vec!["sh".to_string()]);
        let p = parse_shell("a || b | c | d; e", None);
        let shapes: Vec<usize> = p.pipelines.iter().map(Vec::len).collect();
        assert_eq!(shapes.iter().sum::<usize>(), 5);
        assert!(shapes.contains(&3) || shapes.contains(&4), "{shapes:?}");
        // `case` patterns keep their `|`.
        let p = parse_shell("case x in a|b) rm -rf /;; esac", None);
        assert!(p.error.is_none());
        assert!(p.pipelines.iter().flatten().any(|c| c.name() == "rm"));
    }

    #[test]
    fn literal_variables_and_echo_substitutions_are_expanded() {
        let got = argvs("a=r; b=m; $a$b -rf ~");
        assert!(
            got.contains(&vec!["rm".to_string(), "-rf".into(), "~".into()]),
            "{got:?}"
        );
        let got = argvs("rm -rf $(echo /) ${HOME:?}/");
        assert!(
            got.contains(&vec!["rm".to_string(), "-rf".into(), "/".into(), "$HOME/".into()]),
            "{got:?}"
        );
        // A computed command word stays marked as such once resolved.
        let p = parse_shell("c=rm; $c -rf x", None);
        let rm = p.pipelines.iter().flatten().find(|c| c.name() == "rm").unwrap();
        assert!(rm.dynamic_name && rm.name_as_written.as_deref() == Some("$c"));
        // A value that is not literal forgets the name.
        let got = argvs("d=/; d=$(pwd); rm -rf $d");
        assert!(
            got.contains(&vec!["rm".to_string(), "-rf".into(), "$d".into()]),
            "{got:?}"
        );
    }

    #[test]
    fn commands_run_by_other_commands_are_parsed() {
        for (line, want) in [
            ("find . -exec rm -rf / \\;", "/"),
            ("echo 'rm -rf /' > x.sh; sh x.sh", "/"),
            ("echo 'rm -rf /' | at now", "/"),
            ("script -qc 'rm -rf /' /dev/null", "/"),
            ("env -S 'rm -rf /'", "/"),
            ("python3 -c 'import shutil; shutil.rmtree(\"/\")'", "/"),
        ] {
            let got = argvs(line);
            assert!(
                got.iter().any(|a| a.first().map(|w| basename(w)) == Some("rm") && a.last().map(String::as_str) == Some(want)),
                "{line}: {got:?}"
            );
        }
    }

    #[test]
    fn redirects_after_a_list_belong_to_its_last_command() {
        let p = parse_shell("true && nc x 1 < /etc/shadow", None);
        let cmds: Vec<_> = p.pipelines.into_iter().flatten().collect();
        assert!(cmds[0].inputs.is_empty());
        assert_eq!(cmds[1].inputs, ["/etc/shadow"]);
        let p = parse_shell("{ echo a; echo b; } > out.txt", None);
        assert!(p.pipelines.iter().flatten().all(|c| c.redirects == ["out.txt"]));
    }

    #[test]
    fn cd_is_followed() {
        let p = parse_shell("cd sub && rm x", Some(PathBuf::from("/ws")));
        let cmds: Vec<_> = p.pipelines.into_iter().flatten().collect();
        assert_eq!(cmds[1].cwd.as_deref(), Some(Path::new("/ws/sub")));
    }

    /// The directory the command named `name` runs in.
    fn cwd_of(line: &str, name: &str) -> Option<PathBuf> {
        let p = parse_shell(line, Some(PathBuf::from("/ws")));
        let cmd = p.pipelines.into_iter().flatten().rfind(|c| c.name() == name);
        cmd.and_then(|c| c.cwd)
    }

    #[test]
    fn carried_scripts_run_where_they_run() {
        // `eval` and `source` run in this shell: their `cd` carries on.
        assert_eq!(cwd_of("eval 'cd /etc'; rm -rf x", "rm"), Some(PathBuf::from("/etc")));
        assert_eq!(
            cwd_of("echo 'cd /etc' > x.sh; source x.sh; rm -rf x", "rm"),
            Some(PathBuf::from("/etc"))
        );
        // A process of its own does not move the shell.
        for line in [
            "sh -c 'cd /etc'; rm -rf x",
            "echo 'cd /etc' > x.sh; bash x.sh; rm -rf x",
            "GIT_SSH_COMMAND='cd /etc' git fetch; rm -rf x",
            "python3 -c \"import os; os.system('cd /etc && ls')\"; rm -rf x",
        ] {
            assert_eq!(cwd_of(line, "rm"), Some(PathBuf::from("/ws")), "{line}");
        }
        // Inside the carried script, its own `cd` holds.
        assert_eq!(cwd_of("sh -c 'cd /etc && rm -rf x'", "rm"), Some(PathBuf::from("/etc")));
        // A remote script has no local directory.
        assert_eq!(cwd_of("ssh host 'rm -rf x'", "rm"), None);
    }
}

//! Shell text → canonical commands, with tree-sitter-bash.
//!
//! [`parse_shell`] parses a command line once (one parser per thread), then visits every
//! command node: pipelines, lists, subshells, `{ }` groups, control flow, function bodies,
//! `$( )`, backticks and process substitutions. Each command becomes a [`SimpleCommand`]
//! whose argv has quotes and escapes resolved (`r''m`, `"rm"`, `\rm` → `rm`), `$'..'` decoded,
//! here-documents and here-strings kept as its stdin text, and wrappers unwrapped recursively
//! (`sudo`, `env`, `nice`, `timeout`, `xargs`, `time -v`, `strace`, `systemd-run`, `screen`,
//! `runuser -u`, ...). Scripts handed to another shell (`sh -c`, `eval`, `su -c`, `ssh host
//! '..'`, `tmux new-session '..'`) are parsed as commands of their own.
//!
//! Commands bash runs indirectly are parsed too: aliases and functions defined earlier in the
//! line, at their call (`$1`/`"$@"` replaced by the call's words, as are `sh -c`'s `$0`..),
//! brace-list words (`{rm,-rf,/}`), `for` bodies once per literal value, `find -exec`'s `{}`
//! when find's first hit is its start path (`-maxdepth 0`, no test), programs git settings
//! run (`-c core.sshCommand=..`, `config alias.x '!..'`), `tar --checkpoint-action=exec=`,
//! `npm pkg set scripts.x=..`, a `package.json`/`Makefile` written earlier and then run by
//! npm/make, crontab lines piped into `crontab -`, `cat <<EOF | sh`, and what `sudo -s` /
//! `pkexec bash` (kept whole, not unwrapped) read on stdin. Also: git's `ext::` transport,
//! `GIT_SSH_COMMAND=`/`PAGER=`/`EDITOR=`-style assignments, `vim -c ':!..'`, `gdb -ex 'shell
//! ..'`, `expect -c 'spawn ..'`, GNU sed's `e CMD`, PowerShell's `Remove-Item -Recurse X` (as
//! `rm -rf X`), text appended to shell startup files (`>> ~/.bashrc`), and the command of a
//! container that mounts the root, a home or a system directory (`docker run -v ~:/d img rm
//! -rf /d` is `rm -rf ~`).
//!
//! Commands inside `$( )` or `<( )` are marked [`SimpleCommand::captured`]; `d=$(mktemp ..)`
//! makes `$d` a temporary path.
//!
//! Words that are not literal keep their source text (`$HOME`, `$(..)`), so rules can tell a
//! literal path from an expansion. A command word that is not literal sets
//! [`SimpleCommand::dynamic_name`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tree_sitter::{Node, Parser, Tree};

use super::{basename, normalize, ParsedShell, Pipeline, ShellParseError, SimpleCommand};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Scripts nested deeper than this (`sh -c "sh -c '..'"`) are a parse error.
const MAX_DEPTH: usize = 8;

/// Brackets nested deeper than this (`$(`, `(`, `{`, `[`, counted without regard to quoting)
/// are not handed to the parser: tree-sitter's time grows faster than linearly with nesting
/// (3,000 nested `$(echo …)` took ~10 s), and no real command nests this deep. Such input fails
/// to parse, which the guard treats as a block.
const MAX_BRACKET_NESTING: usize = 100;

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
fn parse_tree(text: &str) -> Option<Tree> {
    let bytes = text.as_bytes();
    if nested_too_deep(bytes) {
        return None;
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
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut p = Parser::new();
            p.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
            *slot = Some(p);
        }
        let parser = slot.as_mut()?;
        let tree = parser.parse(input, None)?;
        if mask_pipes && tree.root_node().has_error() {
            let plain: Vec<u8> = bytes.iter().map(|&b| if b >= 0x80 { b'x' } else { b }).collect();
            return parser.parse(&plain, None);
        }
        Some(tree)
    })
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

/// Parses a shell command line into pipelines of simple commands (see the module doc).
/// `cwd` is the directory the line starts in (lexically tracked through `cd`).
pub fn parse_shell(text: &str, cwd: Option<PathBuf>) -> ParsedShell {
    let mut out = ParsedShell::default();
    let mut w = Walker {
        out: &mut out,
        cwd,
        nest: 0,
        captured: 0,
        vars: HashMap::new(),
        written: HashMap::new(),
        aliases: HashMap::new(),
        functions: HashMap::new(),
    };
    w.parse_into(text, 0);
    // Text piped or fed into a shell (`echo 'rm -rf /' | sh`, `sh <<EOF`, `echo .. | at now`)
    // is a script of its own: parse it too, wherever it sits in the line.
    let mut k = 0;
    while k < w.out.pipelines.len() && k < 256 {
        let scripts = stdin_scripts(&w.out.pipelines[k]);
        for (script, cwd) in scripts {
            let saved = std::mem::replace(&mut w.cwd, cwd);
            w.parse_into(&script, 1);
            w.cwd = saved;
        }
        k += 1;
    }
    out
}

/// Scripts that a pipeline feeds to a shell on stdin: a here-document or here-string of a
/// shell (or `at`/`batch`), or the literal words an upstream `echo`/`printf` prints into it.
fn stdin_scripts(pipeline: &Pipeline) -> Vec<(String, Option<PathBuf>)> {
    let mut out = Vec::new();
    for (i, cmd) in pipeline.iter().enumerate() {
        let name = cmd.name();
        let cron = name == "crontab"
            && cmd
                .argv
                .iter()
                .skip(1)
                .all(|a| a == "-" || a == "-u" || !a.starts_with('-'));
        let runs_stdin = match name {
            "at" | "batch" => !cmd.argv.iter().any(|a| a == "-f" || a == "-l" || a == "-c"),
            // `sudo -s`, `pkexec bash` (kept whole by unwrap_command): a root shell.
            "sudo" | "doas" | "pkexec" => true,
            // `(crontab -l; echo '* * * * * CMD') | crontab -`: the jobs' commands.
            "crontab" => cron,
            n if is_shell(n) => {
                let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
                let c = args
                    .iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.len() > 1 && a[1..].contains('c'));
                !c && (args.iter().all(|a| a.starts_with('-')) || args.contains(&"-s"))
            }
            _ => false,
        };
        if !runs_stdin {
            continue;
        }
        let mut texts = Vec::new();
        if let Some(t) = &cmd.stdin_text {
            texts.push(t.clone());
        }
        if i > 0 {
            let up = &pipeline[i - 1];
            // `cat <<EOF | sh`: cat prints its here-document.
            let cat_doc = (up.name() == "cat" && up.argv.len() == 1)
                .then(|| up.stdin_text.clone())
                .flatten();
            if let Some(text) = printed_text(up).or(cat_doc) {
                texts.push(text);
            }
        }
        for t in texts {
            let t = if cron { cron_commands(&t) } else { t };
            out.push((t, cmd.cwd.clone()));
        }
    }
    out
}

/// The commands of crontab lines: each line without its schedule (five fields, or `@daily`).
fn cron_commands(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.contains('=') || l.starts_with('@'))
        .map(|l| {
            let skip = if l.starts_with('@') { 1 } else { 5 };
            l.split_whitespace().skip(skip).collect::<Vec<_>>().join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text an `echo`/`printf` of literal words prints (None for other commands, or when a
/// word is not literal).
pub(crate) fn printed_text(cmd: &SimpleCommand) -> Option<String> {
    let args: Vec<&str> = cmd.argv.iter().skip(1).map(String::as_str).collect();
    let text = match cmd.name() {
        "echo" => args
            .iter()
            .skip_while(|a| matches!(**a, "-n" | "-e" | "-E" | "-ne" | "-en"))
            .copied()
            .collect::<Vec<_>>()
            .join(" "),
        "printf" => {
            // The format's `\n` escapes are newlines; `%s` takes the following words in turn.
            let (fmt, rest) = args.split_first()?;
            let mut s = fmt.replace("\\n", "\n").replace("%s", "");
            for r in rest {
                s.push('\n');
                s.push_str(r);
            }
            s
        }
        _ => return None,
    };
    (is_literal(&text) && !text.trim().is_empty()).then_some(text)
}

struct Walker<'o> {
    out: &'o mut ParsedShell,
    cwd: Option<PathBuf>,
    /// Current depth of the tree walk (bounded by [`MAX_NODE_DEPTH`]).
    nest: usize,
    /// How many command or process substitutions enclose the current command.
    captured: usize,
    /// Variables given a literal value earlier in the line (`d=/; rm -rf $d`).
    vars: HashMap<String, String>,
    /// Files written earlier in the line by `echo`/`printf`/`cat <<EOF` (`echo .. > x.sh`), by
    /// path as written, with their text: running one of them runs that text.
    written: HashMap<String, String>,
    /// Aliases and shell functions defined earlier in the line, by name, with their text:
    /// calling one runs that text (`alias x='rm -rf'; x ~`, `f() { rm -rf "$1"; }; f /`).
    aliases: HashMap<String, String>,
    functions: HashMap<String, String>,
}

/// Syntax trees deeper than this are a parse error (and never a stack overflow).
const MAX_NODE_DEPTH: usize = 150;

impl Walker<'_> {
    fn fail(&mut self, msg: impl Into<String>, clear: bool) {
        if self.out.error.is_none() {
            self.out.error = Some(ShellParseError(msg.into()));
            self.out.clear_error = clear;
        }
    }

    fn parse_into(&mut self, text: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.fail("commands nested too deeply", true);
            return;
        }
        // `{rm,-rf,/}`: bash expands a braced word into words before running it.
        let expanded = brace_words(text);
        let text = expanded.as_deref().unwrap_or(text);
        let Some(tree) = parse_tree(text) else {
            self.fail("the shell parser gave up", true);
            return;
        };
        let root = tree.root_node();
        if root.has_error() {
            let clear = unbalanced(text).is_some();
            let msg = unbalanced(text).unwrap_or_else(|| "a construct the bash grammar does not accept".into());
            self.fail(msg, clear);
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
            "declaration_command" | "variable_assignment" => {
                let mut cmd = SimpleCommand::default();
                if node.kind() == "variable_assignment" {
                    self.visit_subs(node, src, depth);
                    let w = word(node, src);
                    self.assign(&w);
                    cmd.argv.push(w);
                } else {
                    if let Some(kw) = node.child(0) {
                        cmd.argv.push(text(kw, src).to_string());
                    }
                    let mut tail = Vec::new();
                    self.fill(node, src, depth, &mut cmd, &mut tail);
                    for w in cmd.argv.iter().skip(1) {
                        self.assign(w);
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
                        self.visit(child, src, depth);
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
                let before = self.out.pipelines.len();
                let mut redirs = SimpleCommand::default();
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
                self.visit_children(node, src, depth);
                self.cwd = saved;
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
                match (var, body) {
                    (Some(var), Some(body))
                        if !values.is_empty() && values.len() <= 8 && values.iter().all(|v| is_literal(v)) =>
                    {
                        let saved = self.vars.get(&var).cloned();
                        for v in values {
                            self.vars.insert(var.clone(), v);
                            self.visit(body, src, depth);
                        }
                        match saved {
                            Some(v) => self.vars.insert(var, v),
                            None => self.vars.remove(&var),
                        };
                    }
                    _ => self.visit_children(node, src, depth),
                }
            }
            "comment" | "heredoc_body" => {}
            _ => self.visit_children(node, src, depth),
        }
    }

    /// Visits the statements under `node` in order; siblings separated by a `|` in the
    /// original text (see [`parse_tree`]) are joined into one pipeline.
    fn visit_children(&mut self, node: Node<'_>, src: &[u8], depth: usize) {
        let mut cursor = node.walk();
        let mut prev_end: Option<usize> = None;
        let mut group_start = self.out.pipelines.len();
        for child in node.named_children(&mut cursor) {
            if child.kind() == "comment" {
                continue;
            }
            let piped = prev_end.is_some_and(|e| pipe_between(src, e, child.start_byte()));
            let before = self.out.pipelines.len();
            self.visit(child, src, depth);
            if piped {
                let start = group_start.min(self.out.pipelines.len());
                let merged: Vec<SimpleCommand> = self.out.pipelines.drain(start..).flatten().collect();
                if !merged.is_empty() {
                    self.out.pipelines.push(merged);
                }
            } else {
                group_start = before;
            }
            prev_end = Some(child.end_byte());
        }
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
        self.fill(node, src, depth, &mut cmd, &mut tail);
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

    /// Records `NAME=value` (a standalone assignment or `export`/`declare`): a literal value
    /// is remembered, anything else forgets the name.
    fn assign(&mut self, w: &str) {
        if let Some((name, value)) = w.split_once('=') {
            if super::is_assignment(w) {
                let value = self.expand(value);
                // `d=$(mktemp -d)`: a fresh directory under the temporary directory.
                let subst = (value.starts_with("$(mktemp") && value.ends_with(')') && value.matches(')').count() == 1)
                    || (value.starts_with("`mktemp") && value.ends_with('`') && value.matches('`').count() == 2);
                if subst {
                    self.vars.insert(name.to_string(), "/tmp/tmp.mktemp".to_string());
                    return;
                }
                if is_literal(&value) {
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
        if !w.contains('$') && !w.contains('`') {
            return w.to_string();
        }
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
                if let Some(v) = self.vars.get(&name) {
                    out.push_str(v);
                    i += 1 + name.len();
                    continue;
                }
            } else if b[i] == '$' && b.get(i + 1) == Some(&'(') {
                // `$(echo /)`: a literal word printed by echo.
                if let Some(len) = b[i + 2..].iter().position(|c| *c == ')') {
                    let inner: String = b[i + 2..i + 2 + len].iter().collect();
                    let words: Vec<&str> = inner.split_whitespace().collect();
                    let simple = |x: &str| x.chars().all(|c| c.is_ascii_alphanumeric() || "/._~-*".contains(c));
                    if words.len() == 2 && words[0] == "echo" && simple(words[1]) {
                        out.push_str(words[1]);
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

    fn push_command(&mut self, mut cmd: SimpleCommand, depth: usize, pipeline: &mut Pipeline) {
        let mut as_written = cmd.argv.clone();
        super::unwrap_command(&mut as_written);
        let written_word = as_written.first().filter(|w| !is_literal(w)).cloned();
        if !self.vars.is_empty() || cmd.argv.iter().any(|w| w.contains("${") || w.contains("$(echo")) {
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
        if cmd.stdin_text.is_none() && !self.written.is_empty() {
            let key = |w: &str| w.trim_start_matches("./").to_string();
            let read = cmd
                .inputs
                .first()
                .cloned()
                .or_else(|| (cmd.argv.len() == 2 && basename(&cmd.argv[0]) == "cat").then(|| cmd.argv[1].clone()));
            if let Some(text) = read.and_then(|f| self.written.get(&key(&f)).cloned()) {
                cmd.stdin_text = Some(text);
            }
        }
        let before = cmd.argv.len();
        let original = cmd.argv.clone();
        cmd.args_from_stdin = super::unwrap_command(&mut cmd.argv);
        // `env --split-string='rm -rf ~'` can leave more words than it removed.
        let removed = before.saturating_sub(cmd.argv.len());
        cmd.assignments = original
            .into_iter()
            .take(removed)
            .filter(|w| super::is_assignment(w))
            .collect();
        cmd.dynamic_name = cmd.argv.first().is_some_and(|w| !is_literal(w));
        if let Some(w) = written_word.filter(|w| cmd.argv.first() != Some(w)) {
            cmd.dynamic_name = true;
            cmd.name_as_written = Some(w);
        }
        if cmd.argv.is_empty() && cmd.stdin_text.is_none() && cmd.assignments.is_empty() && cmd.redirects.is_empty() {
            return;
        }
        cmd.cwd = self.cwd.clone();
        cmd.captured = self.captured > 0;
        if cmd.name() == "alias" {
            for a in cmd.argv.iter().skip(1) {
                if let Some((n, v)) = a.split_once('=') {
                    self.aliases.insert(n.to_string(), v.to_string());
                }
            }
        }
        let args: Vec<String> = cmd.argv.iter().skip(1).map(|a| shell_quote(a)).collect();
        if let Some(text) = cmd.argv.first().and_then(|n| self.aliases.get(n)).cloned() {
            self.parse_into(&format!("{text} {}", args.join(" ")), depth + 1);
        }
        if let Some(body) = cmd.argv.first().and_then(|n| self.functions.get(n)).cloned() {
            let call = positional(&body, &cmd.argv[1..]);
            if call != body {
                self.parse_into(&call, depth + 1);
            }
        }
        // `GIT_SSH_COMMAND='cmd' git fetch`, `PAGER='cmd' git log`: variables naming a command
        // the program runs.
        const RUN_VARS: &[&str] = &[
            "GIT_SSH_COMMAND",
            "GIT_SSH",
            "GIT_EXTERNAL_DIFF",
            "GIT_PAGER",
            "GIT_EDITOR",
            "GIT_SEQUENCE_EDITOR",
            "GIT_ASKPASS",
            "SSH_ASKPASS",
            "PAGER",
            "EDITOR",
            "VISUAL",
            "LESSOPEN",
            "PROMPT_COMMAND",
        ];
        let run_values: Vec<String> = cmd
            .assignments
            .iter()
            .filter_map(|a| a.split_once('='))
            .filter(|(n, v)| RUN_VARS.contains(n) && !v.is_empty())
            .map(|(_, v)| v.trim_start_matches('|').to_string())
            .collect();
        for value in run_values {
            self.parse_into(&value, depth + 1);
        }
        if let Some(inner) = nested_script(&cmd.argv).filter(|n| !single_substitution(&n.script)) {
            let saved = self.cwd.clone();
            if inner.remote {
                self.cwd = None;
            }
            self.parse_into(&inner.script, depth + 1);
            self.cwd = saved;
        }
        // `python -c 'import os; os.system("rm -rf /")'`: shell commands in the string
        // literals of a program that runs commands; `shutil.rmtree("/")` and reads of
        // credential files as the commands that do the same.
        for literal in shell_literals(&cmd.argv).into_iter().chain(inline_effects(&cmd.argv)) {
            self.parse_into(&literal, depth + 1);
        }
        // `find .. -exec rm -rf / \;`: the command find runs.
        for exec in find_exec(&cmd.argv) {
            self.parse_into(&exec, depth + 1);
        }
        // `echo 'rm -rf ~' > x.sh && bash x.sh`: the file's text runs.
        if let Some(text) = self.script_written(&cmd) {
            self.parse_into(&text, depth + 1);
        }
        // `echo 'curl x | sh' >> ~/.bashrc`: a shell startup file runs its text in every new
        // shell.
        let startup = |r: &String| {
            crate::guard::rules::home_relative(r).is_some_and(|rest| {
                matches!(
                    rest,
                    ".bashrc"
                        | ".bash_profile"
                        | ".bash_login"
                        | ".profile"
                        | ".zshrc"
                        | ".zprofile"
                        | ".zshenv"
                        | ".zlogin"
                        | ".config/fish/config.fish"
                )
            }) || r.starts_with("/etc/profile")
                || r == "/etc/bash.bashrc"
        };
        let into_startup =
            cmd.redirects.iter().any(startup) || (cmd.name() == "tee" && cmd.argv.iter().skip(1).any(startup));
        if into_startup {
            if let Some(text) = printed_text(&cmd).or_else(|| cmd.stdin_text.clone()) {
                self.parse_into(&text, depth + 1);
            }
        }
        self.record_written(&cmd);
        if cmd.name() == "cd" || cmd.name() == "pushd" {
            self.cwd = resolve_cd(self.cwd.as_deref(), cmd.argv.get(1).map(String::as_str));
        }
        pipeline.push(cmd);
    }

    /// The text of a file written earlier in the line that `cmd` runs (`bash x.sh`,
    /// `sh ./x.sh`, `source x.sh`, `./x.sh`).
    fn script_written(&self, cmd: &SimpleCommand) -> Option<String> {
        if self.written.is_empty() {
            return None;
        }
        let key = |w: &str| w.trim_start_matches("./").to_string();
        let name = cmd.name();
        // `echo '{"scripts":{"postinstall":"CMD"}}' > package.json && npm install`: npm runs
        // the package's scripts; `make` runs a Makefile's recipe lines.
        if matches!(name, "npm" | "pnpm" | "yarn" | "bun") {
            let json: serde_json::Value = serde_json::from_str(self.written.get("package.json")?).ok()?;
            let scripts = json.get("scripts")?.as_object()?;
            let text: Vec<&str> = scripts.values().filter_map(|v| v.as_str()).collect();
            return Some(text.join("\n"));
        }
        if name == "make" {
            let text = self.written.get("Makefile").or_else(|| self.written.get("makefile"))?;
            let recipes: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix('\t')).collect();
            return Some(recipes.join("\n"));
        }
        let file = if is_shell(name) || name == "source" || name == "." {
            cmd.argv.iter().skip(1).find(|a| !a.starts_with('-'))?
        } else {
            cmd.argv.first()?
        };
        self.written.get(&key(file)).cloned()
    }

    /// Remembers the text `cmd` writes to its redirect targets, when it is known.
    fn record_written(&mut self, cmd: &SimpleCommand) {
        if cmd.redirects.is_empty() {
            return;
        }
        let text = match cmd.name() {
            "cat" | "tee" if cmd.stdin_text.is_some() => cmd.stdin_text.clone(),
            _ => printed_text(cmd),
        };
        if let Some(text) = text {
            for r in &cmd.redirects {
                let k = r.trim_start_matches("./").to_string();
                let entry = self.written.entry(k).or_default();
                if !cmd.appends.contains(r) {
                    entry.clear();
                }
                entry.push_str(&text);
                entry.push('\n');
            }
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
        if let Some(dest) = child.child_by_field_name("destination") {
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
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "command" => self.fill(child, src, depth, cmd, tail),
                "variable_assignment" => {
                    self.visit_subs(child, src, depth);
                    cmd.argv.push(word(child, src));
                }
                "command_name" => {
                    self.visit_subs(child, src, depth);
                    if let Some(w) = child.named_child(0) {
                        cmd.argv.push(word(w, src));
                    }
                }
                "file_redirect" => self.add_redirect(child, src, depth, cmd),
                "heredoc_redirect" => {
                    let mut body = String::new();
                    collect_heredoc(child, src, &mut body);
                    cmd.stdin_text = Some(body);
                    // `cat <<EOF | psql`: the rest of the line hangs under the redirect.
                    let mut c2 = child.walk();
                    for part in child.named_children(&mut c2) {
                        match part.kind() {
                            "heredoc_start" | "heredoc_end" | "heredoc_body" => self.visit_subs(part, src, depth),
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
                _ => {
                    self.visit_subs(child, src, depth);
                    cmd.argv.push(word(child, src));
                }
            }
        }
    }
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
    let mut out = String::new();
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

/// String literals of an inline program (`python -c`, `perl -e`, `ruby -e`, `node -e`) that
/// runs commands (`os.system`, `subprocess`, `exec`, `system`, backticks, `child_process`).
fn shell_literals(argv: &[String]) -> Vec<String> {
    let Some(code) = inline_program(argv) else {
        return Vec::new();
    };
    let runs = [
        "system",
        "subprocess",
        "popen",
        "exec",
        "spawn",
        "child_process",
        "`",
        "Popen",
        "call(",
    ]
    .iter()
    .any(|k| code.contains(k));
    if !runs {
        return Vec::new();
    }
    let mut out = Vec::new();
    // `subprocess.run(["rm", "-rf", "/"])`: one-word literals in order form an argv.
    let mut words: Vec<String> = Vec::new();
    let b: Vec<char> = code.chars().collect();
    let mut k = 0;
    while k < b.len() {
        let q = b[k];
        if q == '"' || q == '\'' || q == '`' {
            let start = k + 1;
            let mut j = start;
            while j < b.len() && b[j] != q {
                if b[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            let lit: String = b[start..j.min(b.len())].iter().collect();
            if lit.contains(' ') {
                out.push(lit);
            } else if !lit.is_empty() {
                words.push(shell_quote(&lit));
            }
            k = j + 1;
        } else {
            k += 1;
        }
    }
    if words.len() > 1 {
        out.push(words.join(" "));
    }
    out
}

/// The program text of an inline interpreter call (`python -c CODE`, `perl -e CODE`,
/// `node -e CODE`, `awk 'PROGRAM'`), if `argv` is one.
fn inline_program(argv: &[String]) -> Option<&String> {
    let name = argv.first().map(|w| basename(w))?;
    if matches!(name, "awk" | "gawk" | "mawk" | "nawk") {
        if argv.iter().any(|a| a == "-f" || a.starts_with("--file")) {
            return None;
        }
        let mut i = 1;
        while let Some(a) = argv.get(i) {
            match a.as_str() {
                "-F" | "-v" => i += 2,
                "--" => return argv.get(i + 1),
                _ if a.starts_with('-') && a.len() > 1 => i += 1,
                _ => return Some(a),
            }
        }
        return None;
    }
    let inline = name.starts_with("python") || matches!(name, "perl" | "ruby" | "node" | "php" | "deno" | "bun");
    if !inline {
        return None;
    }
    let i = argv.iter().position(|a| {
        matches!(
            a.as_str(),
            "-c" | "-e" | "-r" | "--eval" | "-E" | "-pe" | "-ne" | "-pie"
        )
    })?;
    argv.get(i + 1)
}

/// String literals of a program, in order, with the byte offset of their opening quote.
fn string_literals(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut chars = code.char_indices();
    while let Some((at, q)) = chars.next() {
        if q != '"' && q != '\'' && q != '`' {
            continue;
        }
        let mut lit = String::new();
        while let Some((_, c)) = chars.next() {
            if c == q {
                break;
            }
            if c == '\\' {
                if let Some((_, n)) = chars.next() {
                    lit.push(n);
                }
                continue;
            }
            lit.push(c);
        }
        out.push((at, lit));
    }
    out
}

/// What an inline program does to files, as the shell commands that do the same, so the
/// deletion and secrets rules judge it: `shutil.rmtree("/")` → `rm -rf /`,
/// `os.remove(p)` → `rm -f p`, a credential file path in the program → `cat path`.
fn inline_effects(argv: &[String]) -> Vec<String> {
    let Some(code) = inline_program(argv) else {
        return Vec::new();
    };
    // Calls that delete recursively, and ones that delete one file.
    const RECURSIVE: &[&str] = &[
        "rmtree(",
        "rm_rf(",
        "rm_r(",
        "remove_tree(",
        "rmSync(",
        "rimraf(",
        "removeSync(",
        "remove_dir_all(",
        "rmdirSync(",
        "emptyDirSync(",
    ];
    const SINGLE: &[&str] = &["remove(", "unlink(", "unlinkSync(", "unlink ", "File.delete(", "rm_f("];
    // Expressions for the home directory.
    const HOME: &[&str] = &[
        "Dir.home",
        "homedir()",
        "Path.home()",
        "$ENV{HOME}",
        "ENV['HOME']",
        "ENV[\"HOME\"]",
        "environ['HOME']",
        "environ[\"HOME\"]",
        "env.HOME",
    ];
    let literals = string_literals(code);
    let mut out = Vec::new();
    for (calls, flags) in [(RECURSIVE, "-rf"), (SINGLE, "-f")] {
        for call in calls {
            for (at, _) in code.match_indices(call) {
                let start = at + call.len();
                let rest = &code[start..];
                let end = start + rest.find([')', ';', '\n']).unwrap_or(rest.len());
                // The first string literal inside the call, else a home-directory expression.
                // A module name (`require("os").homedir()`) is not a path.
                let target = literals
                    .iter()
                    .find(|(pos, _)| (start..end).contains(pos) && !code[..*pos].ends_with("require("))
                    .map(|(_, l)| l.clone())
                    .or_else(|| {
                        // The first argument (`require("os").homedir()`, `Path.home()`).
                        let arg = code[start..].split([',', ';', '\n']).next().unwrap_or("");
                        HOME.iter().any(|h| arg.contains(h)).then(|| "~".to_string())
                    });
                if let Some(t) = target {
                    out.push(format!("rm {flags} {}", shell_quote(&t)));
                }
            }
        }
    }
    for (_, lit) in &literals {
        let path = ["~/", "/home/", "/root/", "/Users/", "/etc/"]
            .iter()
            .any(|p| lit.starts_with(p));
        if path && !lit.contains(char::is_whitespace) {
            out.push(format!("cat {}", shell_quote(lit)));
        }
    }
    out
}

/// The commands `find .. -exec CMD ARGS ;` (also `-execdir`, `-ok`, `-okdir`) runs, `{}`
/// standing for each file found.
fn find_exec(argv: &[String]) -> Vec<String> {
    if argv.first().map(|w| basename(w)) != Some("find") {
        return Vec::new();
    }
    let mut out = Vec::new();
    // `find ~ -maxdepth 0 -exec ..`: with no test before the action, the first file found is
    // the start path itself, so `{}` is it.
    let roots: Vec<&String> = argv[1..]
        .iter()
        .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
        .collect();
    let first_action = argv.iter().position(|a| a.starts_with("-exec") || a.starts_with("-ok"));
    let untested = first_action.is_some_and(|k| {
        let mut j = 1 + roots.len();
        while j < k {
            match argv[j].as_str() {
                "-maxdepth" => j += 2,
                "-xdev" | "-mount" | "-depth" | "-follow" | "-L" | "-H" | "-P" => j += 1,
                _ => return false,
            }
        }
        true
    });
    let root = (untested && roots.len() == 1).then(|| roots[0].as_str());
    let mut i = 0;
    while i < argv.len() {
        if matches!(argv[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let words: Vec<String> = argv[i + 1..]
                .iter()
                .take_while(|w| *w != ";" && *w != "+")
                .map(|w| match root {
                    Some(r) => shell_quote(&w.replace("{}", r)),
                    None => shell_quote(w),
                })
                .collect();
            i += words.len() + 1;
            if !words.is_empty() {
                out.push(words.join(" "));
            }
        }
        i += 1;
    }
    out
}

/// `SCRIPT` with its positional parameters (`$1`, `"$1"`, `${1}`, `$@`, `$*`, and `$0` when
/// `zero` is given) replaced by `args`, quoted.
fn positional(script: &str, args: &[String]) -> String {
    let mut s = script.to_string();
    let all = args.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ");
    for p in ["\"$@\"", "\"$*\"", "$@", "$*", "${@}"] {
        s = s.replace(p, &all);
    }
    for (k, a) in args.iter().enumerate().take(9).rev() {
        let q = shell_quote(a);
        let n = k + 1;
        for p in [
            format!("\"${n}\""),
            format!("\"${{{n}}}\""),
            format!("${{{n}}}"),
            format!("${n}"),
        ] {
            s = s.replace(&p, &q);
        }
    }
    s
}

/// `{rm,-rf,/}`: a line with a word that is one brace list (no quotes, spaces or `$`), with
/// that word replaced by its expansion; None when there is none.
fn brace_words(text: &str) -> Option<String> {
    if !text.contains(",") || !text.contains('{') {
        return None;
    }
    let mut changed = false;
    let words: Vec<String> = text
        .split(' ')
        .map(|w| {
            let (lead, rest) = w.split_at(w.len() - w.trim_start_matches([';', '(', '&', '|']).len());
            let (core, trail) = rest.split_at(rest.trim_end_matches([';', ')', '&', '|']).len());
            let inner = core.strip_prefix('{').and_then(|c| c.strip_suffix('}'));
            match inner {
                Some(i) if i.contains(',') && !i.contains(['{', '}', '\'', '"', '$', '`', '\\']) => {
                    changed = true;
                    format!("{lead}{}{trail}", i.split(',').collect::<Vec<_>>().join(" "))
                }
                _ => w.to_string(),
            }
        })
        .collect();
    changed.then(|| words.join(" "))
}

/// Single-quotes a word for re-parsing.
fn shell_quote(w: &str) -> String {
    format!("'{}'", w.replace('\'', "'\\''"))
}

/// A script that is one substitution (`"$(ssh-agent -s)"`): its text is only known at run
/// time (the substitution itself is checked where it appears).
fn single_substitution(script: &str) -> bool {
    let s = script.trim();
    (s.starts_with("$(") && s.ends_with(')')) || (s.starts_with('`') && s.ends_with('`') && s.len() > 1)
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

/// The shell command a git setting makes git run: `-c KEY=VALUE` or `config [--global] KEY
/// VALUE` where KEY runs a program (`core.sshCommand`, `core.pager`, `core.editor`,
/// `core.fsmonitor`, `diff.external`, ...) or is an alias starting with `!`.
fn git_command_setting(argv: &[String]) -> Option<String> {
    const RUNS: &[&str] = &[
        "core.sshcommand",
        "core.pager",
        "core.editor",
        "core.fsmonitor",
        "core.hookspath",
        "sequence.editor",
        "diff.external",
        "credential.helper",
        "gpg.program",
        "pager.log",
        "pager.diff",
    ];
    let script = |key: &str, value: &str| -> Option<String> {
        let key = key.to_ascii_lowercase();
        if key.starts_with("alias.") || key == "credential.helper" {
            return value.strip_prefix('!').map(String::from);
        }
        RUNS.contains(&key.as_str()).then(|| value.to_string())
    };
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "-c" {
            if let Some((k, v)) = argv.get(i + 1).and_then(|kv| kv.split_once('=')) {
                if let Some(s) = script(k, v) {
                    return Some(s);
                }
            }
            i += 2;
        } else if a == "config" {
            let rest: Vec<&String> = argv[i + 1..].iter().filter(|w| !w.starts_with('-')).collect();
            return match rest.as_slice() {
                [k, v, ..] => script(k, v),
                _ => None,
            };
        } else if a.starts_with('-') {
            i += if matches!(a, "-C" | "--git-dir" | "--work-tree" | "--namespace") {
                2
            } else {
                1
            };
        } else {
            return None;
        }
    }
    None
}

/// A script handed to another shell by a command.
pub(crate) struct NestedScript {
    pub script: String,
    /// It runs on another machine (`ssh`): paths do not resolve against the workspace.
    pub remote: bool,
}

const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "fish", "rbash"];

/// Whether `name` is a shell interpreter.
pub fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

/// The script of `sh -c SCRIPT`, `eval WORDS`, `su -c SCRIPT`, `ssh HOST SCRIPT..`,
/// `busybox sh -c`, if `argv` is one.
pub(crate) fn nested_script(argv: &[String]) -> Option<NestedScript> {
    let name = argv.first().map(|w| basename(w))?;
    let local = |s: String| {
        Some(NestedScript {
            script: s,
            remote: false,
        })
    };
    match name {
        n if is_shell(n) || n == "busybox" => {
            let mut i = 1;
            if n == "busybox" {
                if !argv.get(1).is_some_and(|a| is_shell(a)) {
                    return None;
                }
                i = 2;
            }
            while i < argv.len() {
                let a = &argv[i];
                if a.starts_with('-') && a.len() > 1 && !a.starts_with("--") && a[1..].contains('c') {
                    // `bash -c 'script' name args`: the first word after the options.
                    let mut j = i + 1;
                    while argv.get(j).is_some_and(|w| w.starts_with('-') && w.len() > 1) {
                        j += 1;
                    }
                    // `sh -c 'rm -rf "$0"' ~`: the words after the script are `$0`, `$1`, ...
                    let script = argv.get(j)?;
                    let rest = &argv[j + 1..];
                    let script = match rest.split_first() {
                        Some((zero, more)) => {
                            let z = shell_quote(zero);
                            positional(script, more)
                                .replace("\"$0\"", &z)
                                .replace("${0}", &z)
                                .replace("$0", &z)
                        }
                        None => script.clone(),
                    };
                    return local(script);
                }
                if a == "-o" || a == "-O" || a == "--rcfile" || a == "--init-file" {
                    i += 2;
                    continue;
                }
                if !a.starts_with('-') && !a.starts_with('+') {
                    return None;
                }
                i += 1;
            }
            None
        }
        "eval" => (argv.len() > 1).then(|| argv[1..].join(" ")).and_then(local),
        // `git -c core.sshCommand=CMD ..`, `git config alias.x '!CMD'`: git runs CMD.
        "git" => git_command_setting(argv)
            .or_else(|| {
                // `git clone 'ext::sh -c cmd% args'`: the ext transport runs a command (`% ` is a space).
                // Words split at unescaped spaces.
                let c = argv.iter().find_map(|a| a.strip_prefix("ext::"))?;
                let words: Vec<String> = c
                    .replace("%%", "\u{1}")
                    .replace("% ", "\u{0}")
                    .split(' ')
                    .filter(|w| !w.is_empty())
                    .map(|w| shell_quote(&w.replace('\u{0}', " ").replace('\u{1}', "%")))
                    .collect();
                Some(words.join(" "))
            })
            .and_then(local),
        // `tar --checkpoint-action=exec=CMD`, `--to-command=CMD`, `-I CMD`.
        "tar" | "gtar" | "bsdtar" => argv.iter().enumerate().find_map(|(i, a)| {
            a.strip_prefix("--checkpoint-action=exec=")
                .or_else(|| a.strip_prefix("--to-command="))
                .or_else(|| a.strip_prefix("--use-compress-program="))
                .map(String::from)
                .or_else(|| (a == "-I").then(|| argv.get(i + 1).cloned()).flatten())
                .and_then(local)
        }),
        // `npm pkg set scripts.test="CMD"`: the package script npm runs next.
        "npm" | "pnpm" | "yarn" | "bun" => argv
            .windows(2)
            .position(|w| w[0] == "pkg" && w[1] == "set")
            .and_then(|k| {
                argv[k + 2..]
                    .iter()
                    .find_map(|a| a.strip_prefix("scripts.")?.split_once('='))
            })
            .map(|(_, v)| v.to_string())
            .and_then(local),
        // `script -qc 'cmd' /dev/null` runs the command under a pseudo-terminal.
        "script" => {
            let i = argv.iter().position(|a| {
                a == "--command" || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('c'))
            })?;
            argv.get(i + 1).cloned().and_then(local)
        }
        // `tmux new-session -d 'cmd'`: the session's shell command.
        "tmux" => {
            let k = argv.iter().position(|a| {
                matches!(
                    a.as_str(),
                    "new-session"
                        | "new"
                        | "new-window"
                        | "neww"
                        | "split-window"
                        | "splitw"
                        | "respawn-pane"
                        | "respawnp"
                )
            })?;
            let with_value = ["-s", "-n", "-t", "-c", "-x", "-y", "-e", "-F", "-l", "-f"];
            let mut i = k + 1;
            while let Some(a) = argv.get(i).filter(|a| a.starts_with('-') && a.len() > 1) {
                i += if with_value.contains(&a.as_str()) { 2 } else { 1 };
            }
            let rest = argv.get(i..).filter(|r| !r.is_empty())?;
            local(rest.join(" "))
        }
        // `vim -c ':!cmd'`, `vim +'!cmd'`: an editor running a shell command.
        "vi" | "vim" | "nvim" | "view" | "ex" => argv.iter().enumerate().find_map(|(i, a)| {
            let c = if a == "-c" || a == "--cmd" {
                argv.get(i + 1)?.as_str()
            } else {
                a.strip_prefix('+')?
            };
            let c = c.trim_start_matches(':').trim_start();
            c.strip_prefix('!').map(String::from).and_then(local)
        }),
        // `gdb -ex 'shell cmd'` / `-ex '!cmd'`.
        "gdb" => argv.windows(2).find_map(|w| {
            let c = (w[0] == "-ex" || w[0] == "--eval-command").then_some(w[1].trim())?;
            c.strip_prefix("shell ")
                .or_else(|| c.strip_prefix('!'))
                .map(String::from)
                .and_then(local)
        }),
        // `expect -c 'spawn cmd args; ...'`: the spawned command.
        "expect" => argv.windows(2).find_map(|w| {
            let c = (w[0] == "-c").then_some(w[1].as_str())?;
            let spawn = c
                .split([';', '\n'])
                .find_map(|part| part.trim().strip_prefix("spawn "))?;
            local(spawn.to_string())
        }),
        "docker" | "podman" => docker_mounted_command(argv).and_then(local),
        // GNU sed's `e CMD` command runs CMD (`sed -n '1e rm -rf ~' f`).
        "sed" | "gsed" => {
            let scripts: Vec<&String> = if argv.iter().any(|a| a == "-e" || a == "--expression") {
                argv.windows(2)
                    .filter(|w| w[0] == "-e" || w[0] == "--expression")
                    .map(|w| &w[1])
                    .collect()
            } else {
                argv.iter().skip(1).find(|a| !a.starts_with('-')).into_iter().collect()
            };
            scripts.iter().flat_map(|s| s.split([';', '\n'])).find_map(|part| {
                let cmd = part
                    .trim_start()
                    .trim_start_matches(|c: char| c.is_ascii_digit() || c == '$' || c == ',');
                cmd.strip_prefix("e ")
                    .map(|c| c.trim().to_string())
                    .filter(|c| !c.is_empty())
            })
        }
        .and_then(local),
        // `pwsh -Command "Remove-Item -Recurse -Force $HOME"`: PowerShell's recursive delete.
        "pwsh" | "powershell" | "powershell.exe" | "pwsh.exe" => powershell_removal(argv).and_then(local),
        "su" | "runuser" => {
            let i = argv.iter().position(|a| a == "-c" || a == "--command")?;
            argv.get(i + 1).cloned().and_then(local)
        }
        "ssh" => {
            let with_value = [
                "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R",
                "-S", "-W", "-w", "-B",
            ];
            let mut i = 1;
            while i < argv.len() {
                let a = argv[i].as_str();
                if with_value.contains(&a) {
                    i += 2;
                } else if a.starts_with('-') {
                    i += 1;
                } else {
                    break;
                }
            }
            // argv[i] is the host; the rest is the remote command line.
            let rest = argv.get(i + 1..)?;
            if rest.is_empty() {
                return None;
            }
            Some(NestedScript {
                script: rest.join(" "),
                remote: true,
            })
        }
        _ => None,
    }
}

/// `pwsh -Command "Remove-Item -Recurse -Force X"` (also `rm`/`ri`/`del`/`rmdir`/`rd` aliases)
/// as the `rm -rf X` it amounts to; `$env:USERPROFILE` and `$HOME` are the home directory.
fn powershell_removal(argv: &[String]) -> Option<String> {
    let k = argv
        .iter()
        .position(|a| a.eq_ignore_ascii_case("-command") || a.eq_ignore_ascii_case("-c"))?;
    let script = argv[k + 1..].join(" ");
    let mut out = Vec::new();
    for stmt in script.split([';', '\n', '|']) {
        let words: Vec<&str> = stmt.split_whitespace().collect();
        let Some((first, rest)) = words.split_first() else {
            continue;
        };
        let removal =
            ["remove-item", "rm", "ri", "del", "rmdir", "rd", "erase"].contains(&first.to_ascii_lowercase().as_str());
        let recurse = rest.iter().any(|w| w.to_ascii_lowercase().starts_with("-r"));
        if !removal || !recurse {
            continue;
        }
        let mut i = 0;
        let mut targets = Vec::new();
        while i < rest.len() {
            let w = rest[i];
            let lw = w.to_ascii_lowercase();
            if lw == "-path" || lw == "-literalpath" {
                i += 1;
                if let Some(t) = rest.get(i) {
                    targets.push(*t);
                }
            } else if !w.starts_with('-') {
                targets.push(w);
            }
            i += 1;
        }
        for t in targets {
            let t = t.trim_matches(|c| c == '"' || c == '\'');
            let t = if t.eq_ignore_ascii_case("$env:USERPROFILE") || t.eq_ignore_ascii_case("$HOME") {
                "~".to_string()
            } else if t.len() <= 3 && t.as_bytes().get(1) == Some(&b':') {
                "/".to_string()
            } else {
                t.replace('\\', "/")
            };
            out.push(format!("rm -rf {}", shell_quote(&t)));
        }
    }
    (!out.is_empty()).then(|| out.join("; "))
}

/// `docker run -v SRC:DST IMAGE cmd..` where SRC is the root, a home or a system directory:
/// the container's command with DST rewritten to SRC, i.e. what it does to the host. None
/// when no such directory is mounted (what a container does to its own files stays there).
fn docker_mounted_command(argv: &[String]) -> Option<String> {
    let run = argv.iter().position(|a| a == "run" || a == "exec" || a == "create")?;
    let with_value = [
        "-v",
        "--volume",
        "--mount",
        "-w",
        "--workdir",
        "-e",
        "--env",
        "--env-file",
        "--name",
        "-p",
        "--publish",
        "--network",
        "--net",
        "--entrypoint",
        "-u",
        "--user",
        "-l",
        "--label",
        "--platform",
        "-h",
        "--hostname",
        "--cpus",
        "-m",
        "--memory",
        "--add-host",
        "--device",
        "--cap-add",
        "--cap-drop",
        "--security-opt",
        "--ulimit",
        "--restart",
        "--pull",
        "--gpus",
        "--shm-size",
        "--ipc",
        "--pid",
        "--tmpfs",
        "--log-driver",
    ];
    let mut mounts: Vec<(String, String)> = Vec::new();
    let mut i = run + 1;
    while let Some(a) = argv.get(i).filter(|a| a.starts_with('-') && a.len() > 1) {
        let (opt, value) = match a.split_once('=') {
            Some((o, v)) if a.starts_with("--") => (o.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let value = if with_value.contains(&opt.as_str()) && value.is_none() {
            i += 1;
            argv.get(i).cloned()
        } else {
            value
        };
        if let Some(v) = value.filter(|_| opt == "-v" || opt == "--volume") {
            let mut parts = v.splitn(3, ':');
            if let (Some(src), Some(dst)) = (parts.next(), parts.next()) {
                mounts.push((src.to_string(), dst.to_string()));
            }
        }
        i += 1;
    }
    let host = |src: &str| {
        let src = src.trim_end_matches('/');
        src.is_empty()
            || matches!(
                src,
                "~" | "$HOME" | "${HOME}" | "/home" | "/Users" | "/root" | "/etc" | "/usr" | "/var"
            )
            || src.starts_with("~/")
            || src.starts_with("$HOME/")
            || src.starts_with("/home/")
            || src.starts_with("/Users/")
    };
    let mounts: Vec<(String, String)> = mounts.into_iter().filter(|(s, _)| host(s)).collect();
    if mounts.is_empty() {
        return None;
    }
    // argv[i] is the image; the rest is the container's command.
    let rest = argv.get(i + 1..).filter(|r| !r.is_empty())?;
    let script = rest.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ");
    let mut out = script;
    for (src, dst) in &mounts {
        let dst = dst.trim_end_matches('/');
        if dst.is_empty() {
            continue;
        }
        let src = src.trim_end_matches('/');
        let with_slash = format!("{src}/");
        out = out
            .replace(&format!("{dst}/"), &with_slash)
            .replace(dst, if src.is_empty() { "/" } else { src });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argvs(text: &str) -> Vec<Vec<String>> {
        parse_shell(text, None)
            .pipelines
            .into_iter()
            .flatten()
            .map(|c| c.argv)
            .collect()
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
}

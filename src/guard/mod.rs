//! May it act? The guard judges every action before it runs: the constitutional pre-check of
//! commands (rules by category), the task's tool policy, and its runtime limits.
//!
//! The guard never runs anything and never touches the file system beyond resolving paths: it
//! reads the action and answers with a [`Verdict`]. What a warn or block means for a task is
//! [`policy`]'s call.
//!
//! This first version parses shell text with a small hand-written tokenizer ([`parse_shell`]):
//! quotes and backslash escapes are resolved, the line is split on `;`, `&&`, `||`, `&`,
//! newlines and `|` into simple commands, `$( )`, backticks, `sh -c '..'` and `eval ..` are
//! parsed as commands of their own, here-documents and here-strings are kept as the command's
//! stdin text, and simple wrappers (`sudo`, `env`, `nice`, `nohup`, `timeout`, `command`,
//! `exec`, `time`, `xargs`, `doas`, `stdbuf`) are unwrapped so rules see the real command word
//! (by basename: `/bin/rm` is `rm`). `cd DIR` is followed so relative paths resolve against the
//! directory the command would really run in. The semantic tree-sitter guard will replace the
//! tokenizer; the [`SimpleCommand`] interface and the rules stay.

pub mod limits;
pub mod policy;
pub mod rules;
pub mod verdict;

use std::path::{Component, Path, PathBuf};

pub use verdict::{Category, Recommendation, Risk, Verdict, Violation};

/// What the guard knows about where the action would run.
#[derive(Debug, Clone, Copy)]
pub struct GuardContext<'a> {
    pub workspace: &'a Path,
}

/// One simple command after parsing: its argv with quotes resolved and wrappers unwrapped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    /// The argv; `argv[0]` is the command word as written (use [`SimpleCommand::name`]).
    pub argv: Vec<String>,
    /// Text fed to stdin by a here-document (`<<EOF`) or here-string (`<<<`).
    pub stdin_text: Option<String>,
    /// The directory the command runs in, lexically resolved (None when unknown, e.g. after
    /// `cd "$DIR"`).
    pub cwd: Option<PathBuf>,
    /// More arguments come from stdin at run time (the command was unwrapped from `xargs`).
    pub args_from_stdin: bool,
}

impl SimpleCommand {
    /// Basename of the command word (`/bin/rm` → `rm`); empty for an empty command.
    pub fn name(&self) -> &str {
        self.argv.first().map(|w| basename(w)).unwrap_or("")
    }

    /// The argv joined with spaces, for messages.
    pub fn display(&self) -> String {
        self.argv
            .iter()
            .map(|a| {
                if a.is_empty() || a.contains(char::is_whitespace) {
                    format!("'{a}'")
                } else {
                    a.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Commands joined by `|`: each one's stdout feeds the next one's stdin.
pub type Pipeline = Vec<SimpleCommand>;

/// Why a command line could not be fully parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot parse the command: {0}; check that quotes, `$(` and backticks are balanced")]
pub struct ShellParseError(pub String);

/// The result of parsing a command line: every pipeline found (including the ones inside
/// substitutions and `sh -c`), plus the first parse error when the text was not well formed.
/// On error the pipelines hold what could be parsed, so rules still see it.
#[derive(Debug, Clone, Default)]
pub struct ParsedShell {
    pub pipelines: Vec<Pipeline>,
    pub error: Option<ShellParseError>,
}

/// The verdict on one shell command line.
pub fn check_command(command: &str, ctx: &GuardContext<'_>) -> Verdict {
    check_command_in(command, ctx, None)
}

/// Like [`check_command`], with the command starting in `cwd` (workspace-relative) instead of
/// the workspace root.
pub fn check_command_in(command: &str, ctx: &GuardContext<'_>, cwd: Option<&str>) -> Verdict {
    // A relative workspace is taken relative to the current directory, so absolute targets
    // inside it are recognised.
    let workspace = if ctx.workspace.is_absolute() {
        normalize(ctx.workspace)
    } else {
        normalize(&std::env::current_dir().unwrap_or_default().join(ctx.workspace))
    };
    let ctx = &GuardContext { workspace: &workspace };
    let start = match cwd {
        Some(dir) if !dir.is_empty() => normalize(&workspace.join(dir)),
        _ => workspace.clone(),
    };
    let parsed = parse_shell(command, Some(start));
    let mut violations = Vec::new();
    if let Some(err) = &parsed.error {
        violations.push(rules::unparseable(command, &err.0));
    }
    for pipeline in &parsed.pipelines {
        violations.extend(rules::check_pipeline(pipeline, ctx));
    }
    let alternative = rules::alternative_for(&violations);
    Verdict::from_violations(violations, alternative)
}

/// The verdict on one tool call: the commands inside it (bash, verify command_succeeds) and,
/// for file tools, the paths they touch.
///
/// File tools are allowed here: keeping them inside the workspace is the tools' own job (they
/// answer PERMISSION_DENIED for paths that lead out).
pub fn check_action(tool: &str, input: &serde_json::Value, ctx: &GuardContext<'_>) -> Verdict {
    let text = |key: &str| input.get(key).and_then(|v| v.as_str());
    match tool {
        "bash" => match text("command") {
            Some(cmd) => check_command_in(cmd, ctx, text("cwd")),
            None => Verdict::allow(),
        },
        "verify" if text("type") == Some("command_succeeds") => match text("target") {
            Some(cmd) => check_command(cmd, ctx),
            None => Verdict::allow(),
        },
        _ => Verdict::allow(),
    }
}

/// The last path component of a command word (`/usr/bin/psql` → `psql`).
pub fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Lexically normalizes a path: removes `.`, resolves `..` against the previous component.
/// Never touches the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    // `..` above the root of a relative path stays visible.
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

// ------------------------------------------------------------------------------ tokenizer

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A word with quotes resolved.
    Word(String),
    /// `;`, `&&`, `||`, `&`, newline, `(`, `)`: ends a pipeline.
    Sep,
    /// `|` or `|&`.
    Pipe,
    /// A redirection operator (`>`, `>>`, `<`, `2>`, `&>`, `>&`): the next word is its target.
    Redirect,
    /// A here-string `<<<`: the next word is stdin text.
    HereString,
    /// A here-document's body, already collected.
    HereDoc(String),
}

struct Lexer<'a> {
    chars: Vec<char>,
    pos: usize,
    tokens: Vec<Token>,
    /// Bodies of substitutions found (`$( )`, backticks), parsed later as commands.
    substitutions: Vec<String>,
    /// Here-document delimiters waiting for the end of the current line.
    pending_heredocs: Vec<(String, bool, usize)>,
    error: Option<String>,
    _src: &'a str,
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Self {
        Lexer {
            chars: src.chars().collect(),
            pos: 0,
            tokens: Vec::new(),
            substitutions: Vec::new(),
            pending_heredocs: Vec::new(),
            error: None,
            _src: src,
        }
    }

    fn peek(&self, off: usize) -> Option<char> {
        self.chars.get(self.pos + off).copied()
    }

    fn fail(&mut self, msg: impl Into<String>) {
        if self.error.is_none() {
            self.error = Some(msg.into());
        }
    }

    fn run(mut self) -> (Vec<Token>, Vec<String>, Option<String>) {
        let mut word = String::new();
        let mut in_word = false;
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' => {
                    self.flush(&mut word, &mut in_word);
                    self.pos += 1;
                }
                '\n' => {
                    self.flush(&mut word, &mut in_word);
                    self.pos += 1;
                    self.tokens.push(Token::Sep);
                    self.read_heredoc_bodies();
                }
                '#' if !in_word => {
                    while let Some(c) = self.peek(0) {
                        if c == '\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                ';' | '(' | ')' => {
                    self.flush(&mut word, &mut in_word);
                    self.pos += 1;
                    if c == ';' && self.peek(0) == Some(';') {
                        self.pos += 1;
                    }
                    self.tokens.push(Token::Sep);
                }
                '&' => {
                    self.flush(&mut word, &mut in_word);
                    if self.peek(1) == Some('&') {
                        self.pos += 2;
                        self.tokens.push(Token::Sep);
                    } else if self.peek(1) == Some('>') {
                        self.pos += 2;
                        if self.peek(0) == Some('>') {
                            self.pos += 1;
                        }
                        self.tokens.push(Token::Redirect);
                    } else {
                        self.pos += 1;
                        self.tokens.push(Token::Sep);
                    }
                }
                '|' => {
                    self.flush(&mut word, &mut in_word);
                    if self.peek(1) == Some('|') {
                        self.pos += 2;
                        self.tokens.push(Token::Sep);
                    } else {
                        self.pos += 1;
                        if self.peek(0) == Some('&') {
                            self.pos += 1;
                        }
                        self.tokens.push(Token::Pipe);
                    }
                }
                '<' | '>' => {
                    // A word of digits right before is a file descriptor (`2>`), not a word.
                    if in_word && !word.is_empty() && word.chars().all(|d| d.is_ascii_digit()) {
                        word.clear();
                        in_word = false;
                    }
                    self.flush(&mut word, &mut in_word);
                    self.redirect(c);
                }
                '\'' => {
                    in_word = true;
                    self.pos += 1;
                    let mut closed = false;
                    while let Some(c) = self.peek(0) {
                        self.pos += 1;
                        if c == '\'' {
                            closed = true;
                            break;
                        }
                        word.push(c);
                    }
                    if !closed {
                        self.fail("unbalanced single quote");
                    }
                }
                '"' => {
                    in_word = true;
                    self.pos += 1;
                    self.double_quoted(&mut word);
                }
                '\\' => {
                    in_word = true;
                    self.pos += 1;
                    match self.peek(0) {
                        Some('\n') => self.pos += 1,
                        Some(n) => {
                            word.push(n);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '$' if self.peek(1) == Some('(') => {
                    in_word = true;
                    self.substitution(&mut word);
                }
                '`' => {
                    in_word = true;
                    self.backtick(&mut word);
                }
                _ => {
                    in_word = true;
                    word.push(c);
                    self.pos += 1;
                }
            }
        }
        self.flush(&mut word, &mut in_word);
        if !self.pending_heredocs.is_empty() {
            self.fail("here-document without a body");
        }
        (self.tokens, self.substitutions, self.error)
    }

    fn flush(&mut self, word: &mut String, in_word: &mut bool) {
        if *in_word {
            self.tokens.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    }

    fn redirect(&mut self, c: char) {
        if c == '<' && self.peek(1) == Some('<') && self.peek(2) == Some('<') {
            self.pos += 3;
            self.tokens.push(Token::HereString);
            return;
        }
        if c == '<' && self.peek(1) == Some('<') {
            self.pos += 2;
            let strip_tabs = self.peek(0) == Some('-');
            if strip_tabs {
                self.pos += 1;
            }
            while matches!(self.peek(0), Some(' ' | '\t')) {
                self.pos += 1;
            }
            let mut delim = String::new();
            while let Some(d) = self.peek(0) {
                if d.is_whitespace() || matches!(d, ';' | '|' | '&' | '<' | '>' | '(' | ')') {
                    break;
                }
                if d != '\'' && d != '"' && d != '\\' {
                    delim.push(d);
                }
                self.pos += 1;
            }
            if delim.is_empty() {
                self.fail("here-document without a delimiter");
            }
            // Placeholder, filled in when the body is read at the next newline.
            self.pending_heredocs.push((delim, strip_tabs, self.tokens.len()));
            self.tokens.push(Token::HereDoc(String::new()));
            return;
        }
        self.pos += 1;
        // `>>`, `>&`, `>|`, `<>`, `<&`
        if matches!(self.peek(0), Some('>' | '&' | '|')) {
            self.pos += 1;
        }
        // `>&1` / `2>&-`: the target is a descriptor, not a path; still consumed as a word.
        self.tokens.push(Token::Redirect);
    }

    fn read_heredoc_bodies(&mut self) {
        let pending = std::mem::take(&mut self.pending_heredocs);
        for (delim, strip_tabs, slot) in pending {
            let mut body = String::new();
            let mut closed = false;
            while self.pos < self.chars.len() {
                let start = self.pos;
                while self.pos < self.chars.len() && self.chars[self.pos] != '\n' {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.pos < self.chars.len() {
                    self.pos += 1;
                }
                let cmp = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if cmp == delim {
                    closed = true;
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if !closed {
                self.fail(format!("here-document `{delim}` is not closed"));
            }
            if let Some(t) = self.tokens.get_mut(slot) {
                *t = Token::HereDoc(body);
            }
        }
    }

    fn double_quoted(&mut self, word: &mut String) {
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some(n @ ('$' | '`' | '"' | '\\')) => {
                            word.push(n);
                            self.pos += 1;
                        }
                        Some('\n') => self.pos += 1,
                        _ => word.push('\\'),
                    }
                }
                '$' if self.peek(1) == Some('(') => self.substitution(word),
                '`' => self.backtick(word),
                _ => {
                    word.push(c);
                    self.pos += 1;
                }
            }
        }
        self.fail("unbalanced double quote");
    }

    /// `$( ... )` (or `$(( ... ))`, arithmetic): finds the matching `)` respecting quotes;
    /// the body is recorded as a substitution and kept verbatim in the word.
    fn substitution(&mut self, word: &mut String) {
        let start = self.pos;
        self.pos += 2; // `$(`
        let mut depth = 1usize;
        let body_start = self.pos;
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => self.pos += 2,
                '\'' => {
                    self.pos += 1;
                    while let Some(q) = self.peek(0) {
                        self.pos += 1;
                        if q == '\'' {
                            break;
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    while let Some(q) = self.peek(0) {
                        if q == '\\' {
                            self.pos += 2;
                            continue;
                        }
                        self.pos += 1;
                        if q == '"' {
                            break;
                        }
                    }
                }
                '(' => {
                    depth += 1;
                    self.pos += 1;
                }
                ')' => {
                    depth -= 1;
                    self.pos += 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => self.pos += 1,
            }
        }
        let end = self.pos.min(self.chars.len());
        if depth != 0 {
            self.fail("unbalanced `$(`");
            let body: String = self.chars[body_start.min(end)..end].iter().collect();
            self.substitutions.push(body);
        } else {
            let body: String = self.chars[body_start..end - 1].iter().collect();
            // `$((` arithmetic is not a command.
            if !body.starts_with('(') {
                self.substitutions.push(body);
            }
        }
        word.extend(self.chars[start..end].iter());
    }

    fn backtick(&mut self, word: &mut String) {
        let start = self.pos;
        self.pos += 1;
        let body_start = self.pos;
        let mut closed = false;
        while let Some(c) = self.peek(0) {
            if c == '\\' {
                self.pos += 2;
                continue;
            }
            self.pos += 1;
            if c == '`' {
                closed = true;
                break;
            }
        }
        let end = self.pos.min(self.chars.len());
        let body_end = if closed { end - 1 } else { end };
        let body: String = self.chars[body_start..body_end].iter().collect();
        self.substitutions.push(body);
        if !closed {
            self.fail("unbalanced backtick");
        }
        word.extend(self.chars[start..end].iter());
    }
}

/// Parses a shell command line into pipelines of simple commands (see the module doc).
/// `cwd` is the directory the line starts in (lexically tracked through `cd`).
pub fn parse_shell(text: &str, cwd: Option<PathBuf>) -> ParsedShell {
    let mut out = ParsedShell::default();
    parse_into(text, cwd, 0, &mut out);
    out
}

const MAX_DEPTH: usize = 8;

fn parse_into(text: &str, mut cwd: Option<PathBuf>, depth: usize, out: &mut ParsedShell) {
    if depth > MAX_DEPTH {
        if out.error.is_none() {
            out.error = Some(ShellParseError("commands nested too deeply".into()));
        }
        return;
    }
    let (tokens, substitutions, error) = Lexer::new(text).run();
    if let (Some(e), None) = (error, &out.error) {
        out.error = Some(ShellParseError(e));
    }
    for sub in substitutions {
        parse_into(&sub, cwd.clone(), depth + 1, out);
    }

    let mut pipeline: Pipeline = Vec::new();
    let mut current = SimpleCommand::default();
    let mut iter = tokens.into_iter().peekable();
    let finish_cmd =
        |cmd: &mut SimpleCommand, pipeline: &mut Pipeline, cwd: &mut Option<PathBuf>, out: &mut ParsedShell| {
            let mut cmd = std::mem::take(cmd);
            cmd.args_from_stdin = unwrap_command(&mut cmd.argv);
            if cmd.argv.is_empty() && cmd.stdin_text.is_none() {
                return;
            }
            cmd.cwd = cwd.clone();
            // Nested shells: `sh -c 'text'`, `eval text`.
            if let Some(inner) = nested_script(&cmd.argv) {
                parse_into(&inner, cwd.clone(), depth + 1, out);
            }
            if cmd.name() == "cd" {
                *cwd = resolve_cd(cwd.as_deref(), cmd.argv.get(1).map(String::as_str));
            }
            pipeline.push(cmd);
        };
    while let Some(tok) = iter.next() {
        match tok {
            Token::Word(w) => current.argv.push(w),
            Token::Redirect => {
                // The target is not part of argv.
                if let Some(Token::Word(_)) = iter.peek() {
                    iter.next();
                }
            }
            Token::HereString => {
                if let Some(Token::Word(w)) = iter.peek() {
                    let w = w.clone();
                    iter.next();
                    current.stdin_text = Some(w);
                }
            }
            Token::HereDoc(body) => current.stdin_text = Some(body),
            Token::Pipe => finish_cmd(&mut current, &mut pipeline, &mut cwd, out),
            Token::Sep => {
                finish_cmd(&mut current, &mut pipeline, &mut cwd, out);
                if !pipeline.is_empty() {
                    out.pipelines.push(std::mem::take(&mut pipeline));
                }
            }
        }
    }
    finish_cmd(&mut current, &mut pipeline, &mut cwd, out);
    if !pipeline.is_empty() {
        out.pipelines.push(pipeline);
    }
}

fn resolve_cd(cwd: Option<&Path>, arg: Option<&str>) -> Option<PathBuf> {
    let arg = arg?;
    if arg.starts_with('$') || arg.starts_with('~') || arg == "-" || arg.contains('`') {
        return None;
    }
    if arg.starts_with('/') {
        return Some(normalize(Path::new(arg)));
    }
    cwd.map(|c| normalize(&c.join(arg)))
}

/// The script of `sh -c SCRIPT` / `bash -c SCRIPT` / `eval WORDS`, if `argv` is one.
fn nested_script(argv: &[String]) -> Option<String> {
    let name = argv.first().map(|w| basename(w))?;
    match name {
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash" | "busybox" => {
            let mut i = 1;
            if name == "busybox" {
                if argv.get(1).map(String::as_str) != Some("sh") {
                    return None;
                }
                i = 2;
            }
            while i < argv.len() {
                let a = &argv[i];
                if a.starts_with('-') && a.len() > 1 && !a.starts_with("--") && a[1..].contains('c') {
                    return argv.get(i + 1).cloned();
                }
                if !a.starts_with('-') {
                    return None;
                }
                i += 1;
            }
            None
        }
        "eval" => (argv.len() > 1).then(|| argv[1..].join(" ")),
        _ => None,
    }
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Removes leading assignments, shell keywords and wrappers until the real command word.
/// Returns true when `xargs` was unwrapped (more arguments come from stdin at run time).
pub fn unwrap_command(argv: &mut Vec<String>) -> bool {
    let mut xargs = false;
    for _ in 0..32 {
        let Some(first) = argv.first() else { return xargs };
        let skip = if is_assignment(first) {
            1
        } else {
            match basename(first) {
                "!" | "{" | "}" | "then" | "do" | "else" | "elif" | "if" | "while" | "until" | "time" | "nohup"
                | "builtin" => 1,
                "sudo" | "doas" => skip_options(argv, &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"]),
                "env" => {
                    let mut i = skip_options(argv, &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"]);
                    while argv.get(i).is_some_and(|w| is_assignment(w)) {
                        i += 1;
                    }
                    i
                }
                "nice" | "ionice" => skip_options(argv, &["-n", "-c", "-p", "--adjustment"]),
                "command" | "exec" => skip_options(argv, &["-a"]),
                "stdbuf" => skip_options(argv, &["-i", "-o", "-e"]),
                "xargs" => {
                    xargs = true;
                    skip_options(
                        argv,
                        &[
                            "-I",
                            "-n",
                            "-P",
                            "-d",
                            "-L",
                            "-s",
                            "-E",
                            "-a",
                            "--max-args",
                            "--delimiter",
                        ],
                    )
                }
                "timeout" => {
                    let i = skip_options(argv, &["-s", "-k", "--signal", "--kill-after"]);
                    // The duration.
                    if i < argv.len() {
                        i + 1
                    } else {
                        i
                    }
                }
                _ => return xargs,
            }
        };
        let skip = skip.min(argv.len());
        if skip == 0 {
            return xargs;
        }
        argv.drain(..skip);
    }
    xargs
}

/// Index of the first word after the wrapper word and its options; `with_value` lists options
/// that take the next word as their value.
fn skip_options(argv: &[String], with_value: &[&str]) -> usize {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        // `-n10`/`--signal=KILL` carry their value; `-n 10` takes the next word.
        if with_value.contains(&a) {
            i += 2;
        } else {
            i += 1;
        }
    }
    // `nice -10 cmd` style numeric options are already skipped above.
    i
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
    }

    #[test]
    fn separators_split_commands() {
        let got = argvs("a 1; b 2 && c || d | e & f\ng");
        let names: Vec<&str> = got.iter().map(|a| a[0].as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e", "f", "g"]);
        let p = parse_shell("echo x | psql db", None);
        assert_eq!(p.pipelines.len(), 1);
        assert_eq!(p.pipelines[0].len(), 2);
    }

    #[test]
    fn wrappers_are_unwrapped() {
        assert_eq!(
            argvs("sudo -u root env A=1 nice -n 5 nohup timeout -s KILL 10 /bin/rm -rf x")[0],
            ["/bin/rm", "-rf", "x"]
        );
        assert_eq!(argvs("FOO=1 command exec rm x")[0], ["rm", "x"]);
    }

    #[test]
    fn substitutions_and_nested_shells_are_visited() {
        let got = argvs("echo $(rm -rf /) `ls`; sh -c 'rm -rf ~'");
        assert!(got.contains(&vec!["rm".to_string(), "-rf".into(), "/".into()]));
        assert!(got.contains(&vec!["ls".to_string()]));
        assert!(got.contains(&vec!["rm".to_string(), "-rf".into(), "~".into()]));
    }

    #[test]
    fn heredoc_and_herestring_become_stdin() {
        let p = parse_shell("psql db <<EOF\nDROP TABLE x;\nEOF\necho done", None);
        let cmds: Vec<_> = p.pipelines.into_iter().flatten().collect();
        assert_eq!(cmds[0].stdin_text.as_deref(), Some("DROP TABLE x;\n"));
        assert_eq!(cmds[1].argv, ["echo", "done"]);
        let p = parse_shell("sqlite3 a.db <<< 'DELETE FROM t'", None);
        assert_eq!(p.pipelines[0][0].stdin_text.as_deref(), Some("DELETE FROM t"));
    }

    #[test]
    fn redirect_targets_are_not_arguments() {
        assert_eq!(argvs("echo hi > out.txt 2>&1")[0], ["echo", "hi"]);
    }

    #[test]
    fn unbalanced_quotes_are_errors() {
        assert!(parse_shell("echo 'abc", None).error.is_some());
        assert!(parse_shell("echo \"abc", None).error.is_some());
        assert!(parse_shell("echo $(ls", None).error.is_some());
        assert!(parse_shell("echo 'ok'", None).error.is_none());
    }

    #[test]
    fn cd_is_followed() {
        let p = parse_shell("cd sub && rm x", Some(PathBuf::from("/ws")));
        let cmds: Vec<_> = p.pipelines.into_iter().flatten().collect();
        assert_eq!(cmds[1].cwd.as_deref(), Some(Path::new("/ws/sub")));
    }

    #[test]
    fn normalize_is_lexical() {
        assert_eq!(normalize(Path::new("/ws/a/../../etc")), PathBuf::from("/etc"));
        assert_eq!(normalize(Path::new("/ws/./b/")), PathBuf::from("/ws/b"));
    }
}

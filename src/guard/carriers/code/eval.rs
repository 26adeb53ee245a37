//! The evaluator of inline code: statements, simple assignments, imports, call and attribute
//! chains and the operators that join text, over the tokens of [`super::lex`]. Every
//! expression gets a [`Val`]: its text where known, where its data comes from ([`From`]), and
//! what it names (a module or function, a file handle, a connection). The effects of calls are
//! recorded on the [`State`] by [`super::apis`]; nothing here knows an API by name.

use std::collections::HashMap;

use super::apis;
use super::lex::{lex, Tok};
use super::{Fact, Lang, Mode, Reading};
use crate::guard::shell::shell_quote;

/// How deep code run as code (`exec("..")`) and interpolations (`f"{x}"`) are read.
const MAX_DEPTH: usize = 3;
/// Token visits allowed for one program: beyond, the reading stops where it is.
const MAX_WORK: usize = 50_000;
/// Bytes lexed for one unit of work.
const LEX_BYTES_PER_WORK: usize = 8;
/// Longest text a value keeps (the longest program read): a value built longer (`x = x + x`
/// over and over) has unknown text, so no reading grows past what it was handed.
const MAX_TEXT: usize = 64 * 1024;
/// Most values one value holds (items, fields, a method's receiver, nested): a bigger one
/// (`x = [x, x]` over and over) keeps only where its data comes from.
const MAX_NODES: usize = 256;

/// A piece of a value's text: known, or a hole computed at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    Lit(String),
    Hole,
}

/// Where a value's data comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct From {
    /// Decoded, decompressed, reversed or built from char codes: how.
    pub hidden: Option<String>,
    /// Downloaded: from this URL ("" when it is not known).
    pub fetched: Option<String>,
    /// The whole process environment.
    pub env: bool,
    /// Single environment variables.
    pub env_vars: Vec<String>,
    /// The contents of these files.
    pub files: Vec<String>,
}

impl From {
    pub(super) fn merge(&mut self, o: &From) {
        if self.hidden.is_none() {
            self.hidden.clone_from(&o.hidden);
        }
        if self.fetched.is_none() {
            self.fetched.clone_from(&o.fetched);
        }
        self.env |= o.env;
        for v in &o.env_vars {
            if !self.env_vars.contains(v) {
                self.env_vars.push(v.clone());
            }
        }
        for f in &o.files {
            if !self.files.contains(f) {
                self.files.push(f.clone());
            }
        }
    }

    /// How the data hides what it is, if it does: decoded, or downloaded.
    pub(super) fn unread(&self) -> Option<String> {
        self.hidden
            .clone()
            .or_else(|| self.fetched.as_ref().map(|u| downloaded(u)))
    }
}

fn downloaded(url: &str) -> String {
    if url.is_empty() {
        "downloaded".to_string()
    } else {
        format!("downloaded from {url}")
    }
}

/// What a value is a handle on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Handle {
    /// A file open for writing: the index of its write.
    Write(usize),
    /// A connection to a host ("" until known).
    Net(String),
    /// An HTTP client or session object.
    Client,
}

/// The value of an expression.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Val {
    /// Its text in pieces; empty when nothing of it is known.
    pub parts: Vec<Part>,
    /// The items of a list or tuple literal.
    pub items: Option<Vec<Val>>,
    /// Named values: keyword arguments, object, dict and hash literal pairs.
    pub fields: Vec<(String, Val)>,
    /// The module or function it names (`os.path`, `child_process.execSync`).
    pub api: Option<String>,
    /// A method of a data value, not yet called: the receiver and the name.
    pub method: Option<(Box<Val>, String)>,
    pub from: From,
    pub handle: Option<Handle>,
    /// Substitutions applied to its text (`.replace(/a/g, 'b')`, `re.sub`, `s/a/b/`).
    pub edits: Vec<(String, String)>,
    /// A regex literal's pattern.
    pub regex: Option<String>,
    /// The variable it was read from (Perl's `open(my $fh, ..)` binds it).
    pub var: Option<String>,
}

impl Val {
    /// A value of known text (of unknown text when longer than [`MAX_TEXT`]).
    pub(super) fn lit(s: impl Into<String>) -> Val {
        let s = s.into();
        let part = if s.len() > MAX_TEXT { Part::Hole } else { Part::Lit(s) };
        Val {
            parts: vec![part],
            ..Val::default()
        }
    }

    pub(super) fn unknown() -> Val {
        Val::default()
    }

    pub(super) fn api(name: impl Into<String>) -> Val {
        Val {
            api: Some(name.into()),
            ..Val::default()
        }
    }

    /// An unknown value whose data comes from `from`.
    pub(super) fn tainted(from: From) -> Val {
        Val { from, ..Val::default() }
    }

    /// The whole text, when every piece of it is known.
    pub(super) fn text(&self) -> Option<String> {
        if self.parts.is_empty() {
            return None;
        }
        let mut s = String::new();
        for p in &self.parts {
            match p {
                Part::Lit(l) => s.push_str(l),
                Part::Hole => return None,
            }
        }
        Some(s)
    }

    /// The known pieces, joined, with a line break for each hole ("" when none is known).
    pub(super) fn pieces(&self) -> String {
        let mut s = String::new();
        for p in &self.parts {
            match p {
                Part::Lit(l) => s.push_str(l),
                Part::Hole => s.push('\n'),
            }
        }
        s
    }

    /// The text starts with a known piece (a command word known, its arguments maybe not).
    pub(super) fn starts_known(&self) -> bool {
        matches!(self.parts.first(), Some(Part::Lit(l)) if !l.trim().is_empty())
    }

    /// This value and another, as text side by side (`a + b`).
    pub(super) fn concat(mut self, other: Val) -> Val {
        let left = if self.parts.is_empty() {
            vec![Part::Hole]
        } else {
            self.parts
        };
        let right = if other.parts.is_empty() {
            vec![Part::Hole]
        } else {
            other.parts
        };
        let mut parts = left;
        for p in right {
            match (parts.last_mut(), p) {
                (Some(Part::Lit(a)), Part::Lit(b)) => a.push_str(&b),
                // Unknown text beside unknown text is one unknown piece.
                (Some(Part::Hole), Part::Hole) => {}
                (_, p) => parts.push(p),
            }
        }
        self.from.merge(&other.from);
        let long = parts.iter().map(|p| match p {
            Part::Lit(l) => l.len(),
            Part::Hole => 0,
        });
        if long.sum::<usize>() > MAX_TEXT {
            parts = vec![Part::Hole];
        }
        Val {
            parts,
            from: self.from,
            ..Val::default()
        }
    }

    /// Whether this value holds more than `budget` values, itself counted.
    fn larger_than(&self, budget: usize) -> bool {
        let mut left = budget;
        self.spend(&mut left)
    }

    /// Counts this value and those it holds against `left`; true once it runs out.
    fn spend(&self, left: &mut usize) -> bool {
        if *left == 0 {
            return true;
        }
        *left -= 1;
        self.items.iter().flatten().any(|i| i.spend(left))
            || self.fields.iter().any(|(_, v)| v.spend(left))
            || self.method.as_ref().is_some_and(|(r, _)| r.spend(left))
    }

    /// This value, or, when it holds too many values, only where its data comes from.
    fn bounded(self) -> Val {
        if self.larger_than(MAX_NODES) {
            Val::tainted(self.all_from())
        } else {
            self
        }
    }

    /// The data of this value, its items' and its fields', merged.
    pub(super) fn all_from(&self) -> From {
        let mut f = self.from.clone();
        for i in self.items.iter().flatten() {
            f.merge(&i.all_from());
        }
        for (_, v) in &self.fields {
            f.merge(&v.all_from());
        }
        if let Some((recv, _)) = &self.method {
            f.merge(&recv.all_from());
        }
        f
    }

    /// The named field (`{body: ..}`, `data=..`).
    pub(super) fn field(&self, name: &str) -> Option<&Val> {
        self.fields.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
}

/// An argument of a call: positional or named.
#[derive(Debug, Clone)]
pub(super) struct Arg {
    pub name: Option<String>,
    pub val: Val,
}

/// The arguments of a call.
pub(super) struct Args<'a>(pub &'a [Arg]);

impl Args<'_> {
    /// The `k`-th positional argument.
    pub(super) fn pos(&self, k: usize) -> Option<&Val> {
        self.0.iter().filter(|a| a.name.is_none()).nth(k).map(|a| &a.val)
    }

    pub(super) fn positional(&self) -> impl Iterator<Item = &Val> {
        self.0.iter().filter(|a| a.name.is_none()).map(|a| &a.val)
    }

    /// A named argument, or a field of an options object among the positional ones.
    pub(super) fn named(&self, name: &str) -> Option<&Val> {
        self.0
            .iter()
            .find(|a| a.name.as_deref() == Some(name))
            .map(|a| &a.val)
            .or_else(|| self.positional().find_map(|v| v.field(name)))
    }

    pub(super) fn text(&self, k: usize) -> Option<String> {
        self.pos(k).and_then(Val::text)
    }

    /// The data of every argument, merged.
    pub(super) fn all_from(&self) -> From {
        let mut f = From::default();
        for a in self.0 {
            f.merge(&a.val.all_from());
        }
        f
    }
}

/// A file the program writes.
struct WriteRec {
    path: String,
    append: bool,
    content: Option<Val>,
    /// The index of its command in [`State::commands`].
    at: usize,
}

/// The tokens of one piece of code and where each bracket closes.
struct Code {
    toks: Vec<Tok>,
    close: Vec<usize>,
}

impl Code {
    fn new(toks: Vec<Tok>) -> Code {
        let n = toks.len();
        let mut close: Vec<usize> = (0..n).collect();
        let mut stack: Vec<(usize, &str)> = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            match t {
                Tok::Punct(p @ ("(" | "[" | "{")) => stack.push((i, p)),
                Tok::Punct(p @ (")" | "]" | "}")) => {
                    let want = match *p {
                        ")" => "(",
                        "]" => "[",
                        _ => "{",
                    };
                    // Unwind to the matching opener; openers left unclosed run to the end.
                    if let Some(k) = stack.iter().rposition(|(_, o)| *o == want) {
                        for (j, _) in stack.drain(k + 1..) {
                            close[j] = n;
                        }
                        if let Some((j, _)) = stack.pop() {
                            close[j] = i;
                        }
                    }
                }
                _ => {}
            }
        }
        for (j, _) in stack {
            close[j] = n;
        }
        Code { toks, close }
    }

    fn is(&self, i: usize, p: &str) -> bool {
        self.toks.get(i).is_some_and(|t| t.is(p))
    }

    fn word(&self, i: usize) -> Option<&str> {
        self.toks.get(i).and_then(Tok::word)
    }

    fn opener(&self, i: usize) -> bool {
        matches!(self.toks.get(i), Some(Tok::Punct("(" | "[" | "{")))
    }

    /// The token after the one at `i`, skipping a whole bracketed group.
    fn skip(&self, i: usize) -> usize {
        if self.opener(i) {
            self.close[i].saturating_add(1)
        } else {
            i + 1
        }
    }

    /// Positions in `lo..hi` of depth-0 tokens for which `f` holds.
    fn top(&self, lo: usize, hi: usize, f: impl Fn(&Tok) -> bool) -> Vec<usize> {
        let mut out = Vec::new();
        let mut i = lo;
        while i < hi {
            if f(&self.toks[i]) {
                out.push(i);
            }
            i = self.skip(i);
        }
        out
    }
}

/// Everything the reading of one program collects.
pub(super) struct State {
    pub lang: Lang,
    vars: HashMap<String, Val>,
    /// Modules imported whole (`from os import *`).
    star: Vec<String>,
    pub commands: Vec<String>,
    pub facts: Vec<Fact>,
    writes: Vec<WriteRec>,
    /// Files written, and where their content came from.
    written: Vec<(String, From)>,
    /// Every decoded or downloaded source seen in the program.
    pub sources: From,
    /// A fork call was seen; a fork word stands inside an endless loop.
    pub forks: bool,
    fork_loop: bool,
    /// The last URL literal seen, for a send whose own URL is not known.
    pub last_url: Option<String>,
    /// Substitutions of the line loop's `$_` (`perl -pi -e 's/a/b/'`, `ruby -pe 'gsub(..)'`).
    pub line_edits: Vec<(String, String)>,
    /// Commands and code computed at run time from unknown data (`exec(d)`, `os.system(c)`):
    /// whether each was code. Judged once the whole program is read: in a program that
    /// decodes or downloads, that data is what runs.
    unknown_runs: Vec<bool>,
    depth: usize,
    work: usize,
}

/// Reads the program `code` in `lang`.
pub(super) fn read_program(lang: Lang, code: &str, mode: &Mode) -> Reading {
    let mut st = State {
        lang,
        vars: HashMap::new(),
        star: Vec::new(),
        commands: Vec::new(),
        facts: Vec::new(),
        writes: Vec::new(),
        written: Vec::new(),
        sources: From::default(),
        forks: false,
        fork_loop: false,
        last_url: None,
        line_edits: Vec::new(),
        unknown_runs: Vec::new(),
        depth: 0,
        work: 0,
    };
    if mode.line_loop && !mode.files.is_empty() {
        let line = Val::tainted(From {
            files: mode.files.clone(),
            ..From::default()
        });
        st.vars.insert("$_".into(), line);
    }
    let last = st.read(code);
    if mode.print_value {
        st.print(&last);
    }
    st.line_loop(mode);
    if st.forks && st.fork_loop {
        st.facts.push(Fact::ForkLoop);
    }
    if let Some(how) = st.sources.unread() {
        for code in std::mem::take(&mut st.unknown_runs) {
            st.facts.push(Fact::RunsHidden { how: how.clone(), code });
        }
    }
    Reading {
        commands: st.commands,
        facts: st.facts,
    }
}

impl State {
    /// Reads a piece of code: its statements, in order; the value of the last.
    fn read(&mut self, code: &str) -> Val {
        // Lexing is work too: code run as code over and over (`s = 'exec(s);' * 99`) is
        // lexed only while the budget lasts.
        self.work += code.len() / LEX_BYTES_PER_WORK + 1;
        if self.work > MAX_WORK {
            return Val::unknown();
        }
        let c = Code::new(lex(code, self.lang));
        self.fork_loop |= fork_in_endless_loop(&c.toks);
        for t in &c.toks {
            if let Tok::Str { text, .. } = t {
                if text.starts_with("http://") || text.starts_with("https://") {
                    self.last_url = Some(text.clone());
                }
            }
        }
        self.block(&c, 0, c.toks.len())
    }

    /// Reads code the program runs as code (a known string handed to `exec`, an
    /// interpolation), one level deeper.
    pub(super) fn read_nested(&mut self, code: &str) -> Val {
        if self.depth >= MAX_DEPTH {
            return Val::unknown();
        }
        self.depth += 1;
        let v = self.read(code);
        self.depth -= 1;
        v
    }

    pub(super) fn bind(&mut self, name: &str, v: Val) {
        self.vars.insert(name.to_string(), v);
    }

    pub(super) fn var(&self, name: &str) -> Option<Val> {
        self.vars.get(name).cloned()
    }

    fn spent(&mut self) -> bool {
        self.work += 1;
        self.work > MAX_WORK
    }

    /// Statements in `lo..hi`: split at `;` and line ends (and Lua's and Ruby's block words),
    /// each read in turn.
    fn block(&mut self, c: &Code, lo: usize, hi: usize) -> Val {
        let mut last = Val::unknown();
        let mut start = lo;
        let mut i = lo;
        while i < hi {
            if self.spent() {
                return last;
            }
            let t = &c.toks[i];
            let ends = t.is(";")
                || (*t == Tok::Newline && self.line_ends(c, i))
                || (matches!(self.lang, Lang::Lua | Lang::Ruby | Lang::AppleScript)
                    && matches!(
                        t.word(),
                        Some("then" | "end" | "else" | "elseif" | "elsif" | "repeat" | "begin")
                    )
                    || (self.lang == Lang::Lua && t.word() == Some("do")));
            if ends {
                if start < i {
                    last = self.statement(c, start, i);
                }
                start = i + 1;
                i += 1;
                continue;
            }
            i = c.skip(i).min(hi.max(i + 1));
        }
        if start < hi {
            last = self.statement(c, start, hi.min(c.toks.len()));
        }
        last
    }

    /// Whether a line break at `i` ends a statement: not in Perl or PHP (which need `;`), nor
    /// after an operator or before a `.method` continuation.
    fn line_ends(&self, c: &Code, i: usize) -> bool {
        if matches!(self.lang, Lang::Perl | Lang::Php) {
            return false;
        }
        let before = i.checked_sub(1).and_then(|k| c.toks.get(k));
        let continues = before.is_some_and(|t| {
            matches!(
                t,
                Tok::Punct("+" | "," | "." | "=" | "&&" | "||" | "(" | "[" | "{" | "\\" | "&" | ".." | "=>" | "->")
            )
        }) || c.is(i + 1, ".")
            || c.is(i + 1, "?.");
        !continues
    }

    /// One statement in `lo..hi`.
    fn statement(&mut self, c: &Code, mut lo: usize, hi: usize) -> Val {
        while lo < hi && c.toks[lo] == Tok::Newline {
            lo += 1;
        }
        if lo >= hi {
            return Val::unknown();
        }
        if self.lang == Lang::AppleScript {
            return self.applescript(c, lo, hi);
        }
        if let Some(v) = self.import(c, lo, hi) {
            return v;
        }
        // Leading keywords that do not change what follows.
        while lo < hi
            && matches!(
                c.word(lo),
                Some(
                    "return"
                        | "await"
                        | "yield"
                        | "export"
                        | "global"
                        | "nonlocal"
                        | "else"
                        | "try"
                        | "finally"
                        | "do"
                        | "then"
                        | "begin"
                        | "ensure"
                        | "rescue"
                        | "throw"
                        | "raise"
                        | "assert"
                        | "del"
                        | "defer"
                )
            )
        {
            lo += 1;
        }
        if lo >= hi {
            return Val::unknown();
        }
        if self.lang == Lang::Python {
            if let Some(v) = self.python_compound(c, lo, hi) {
                return v;
            }
        }
        // Statement modifiers (Perl, Ruby): `EXPR if COND`, `fork while 1`.
        if matches!(self.lang, Lang::Perl | Lang::Ruby) {
            let modifiers = c.top(lo + 1, hi, |t| {
                matches!(t.word(), Some("if" | "unless" | "while" | "until" | "for" | "foreach"))
            });
            if let Some(&m) = modifiers.first() {
                // `print for LIST`: the statement runs with `$_` set to each item.
                let cond = self.expr(c, m + 1, hi);
                if matches!(c.word(m), Some("for" | "foreach")) {
                    self.vars.insert("$_".into(), element_of(&cond));
                }
                return self.statement(c, lo, m);
            }
        }
        // Control words whose condition is an expression: read it, then the rest.
        if let Some(w) = c.word(lo) {
            if matches!(
                w,
                "if" | "elif" | "elsif" | "unless" | "while" | "until" | "for" | "foreach" | "switch" | "with"
            ) && self.lang != Lang::Python
            {
                if c.opener(lo + 1) {
                    let end = c.close[lo + 1].min(hi);
                    self.block(c, lo + 2, end);
                    return self.block(c, end + 1, hi);
                }
                return self.block(c, lo + 1, hi);
            }
            if matches!(
                w,
                "def" | "function" | "sub" | "fn" | "class" | "module" | "local" | "my" | "our"
            ) && c.word(lo + 1).is_some()
                && !c.is(lo + 2, "=")
                && matches!(w, "def" | "function" | "sub" | "fn" | "class" | "module")
            {
                // A definition: its body is read as code (what it does, it does when called).
                let body = (lo + 2..hi).find(|k| c.is(*k, "{") || c.is(*k, ":") || c.is(*k, "("));
                return match body {
                    Some(b) if c.is(b, "(") => self.block(c, c.close[b].saturating_add(1), hi),
                    Some(b) => self.block(c, b, hi),
                    None => Val::unknown(),
                };
            }
        }
        if let Some(v) = self.assignment(c, lo, hi) {
            return v;
        }
        self.expr(c, lo, hi)
    }

    /// Python's compound statements: `with E as f:`, `for x in E:`, `while C:`, `if C:`,
    /// `def f(..):`, `except E:`, followed by their body on the same line.
    fn python_compound(&mut self, c: &Code, lo: usize, hi: usize) -> Option<Val> {
        let w = c.word(lo)?;
        if !matches!(
            w,
            "with" | "for" | "while" | "if" | "elif" | "def" | "class" | "except" | "async" | "else"
        ) {
            return None;
        }
        let colon = c.top(lo + 1, hi, |t| t.is(":")).first().copied().unwrap_or(hi);
        match w {
            "with" | "async" => {
                // `with open(p, 'w') as f, open(q) as g:`
                let parts = split_at(c, lo + 1, colon, ",");
                for (a, b) in parts {
                    let as_at = (a..b).find(|k| c.word(*k) == Some("as"));
                    let end = as_at.unwrap_or(b);
                    let v = self.expr(c, a, end);
                    if let Some(name) = as_at.and_then(|k| c.word(k + 1)) {
                        self.vars.insert(name.to_string(), v);
                    }
                }
            }
            "for" => {
                let in_at = (lo + 1..colon).find(|k| c.word(*k) == Some("in"));
                if let Some(k) = in_at {
                    let v = self.expr(c, k + 1, colon);
                    let each = element_of(&v);
                    for name in (lo + 1..k).filter_map(|n| c.word(n)) {
                        self.vars.insert(name.to_string(), each.clone());
                    }
                }
            }
            "def" | "class" => {}
            _ => {
                self.expr(c, lo + 1, colon);
            }
        }
        Some(if colon < hi {
            self.block(c, colon + 1, hi)
        } else {
            Val::unknown()
        })
    }

    /// `import ..`, `from .. import ..`, `import {..} from '..'`: names bound to modules.
    fn import(&mut self, c: &Code, lo: usize, hi: usize) -> Option<Val> {
        let w = c.word(lo)?;
        match (self.lang, w) {
            (Lang::Python, "import") => {
                for (a, b) in split_at(c, lo + 1, hi, ",") {
                    let (module, alias) = dotted_as(c, a, b);
                    if let Some(alias) = alias {
                        self.vars.insert(alias, Val::api(module));
                    }
                }
                Some(Val::unknown())
            }
            (Lang::Python, "from") => {
                let imp = (lo + 1..hi).find(|k| c.word(*k) == Some("import"))?;
                let (module, _) = dotted_as(c, lo + 1, imp);
                if c.is(imp + 1, "*") {
                    self.star.push(module);
                    return Some(Val::unknown());
                }
                let (a, b) = if c.is(imp + 1, "(") {
                    (imp + 2, c.close[imp + 1].min(hi))
                } else {
                    (imp + 1, hi)
                };
                for (x, y) in split_at(c, a, b, ",") {
                    let (name, alias) = dotted_as(c, x, y);
                    let v = apis::settle(self, Val::api(format!("{module}.{name}")));
                    self.vars.insert(alias.unwrap_or(name), v);
                }
                Some(Val::unknown())
            }
            (Lang::Js, "import") if !c.is(lo + 1, "(") => {
                let from = (lo + 1..hi).find(|k| c.word(*k) == Some("from"))?;
                let module = match c.toks.get(from + 1) {
                    Some(Tok::Str { text, .. }) => apis::module_name(text),
                    _ => return Some(Val::unknown()),
                };
                self.bind_pattern(c, lo + 1, from, &Val::api(module));
                Some(Val::unknown())
            }
            _ => None,
        }
    }

    /// Binds the names of a binding pattern in `lo..hi` to `v`: a name (`x`, `$x`, `my $x`), a
    /// destructuring of fields (`{a, b: c}`, `* as x`), or a list (`(a, b)`, `[a, b]`).
    fn bind_pattern(&mut self, c: &Code, mut lo: usize, hi: usize, v: &Val) {
        while lo < hi
            && matches!(
                c.word(lo),
                Some("const" | "let" | "var" | "my" | "our" | "local" | "static" | "global" | "auto")
            )
        {
            lo += 1;
        }
        if lo >= hi {
            return;
        }
        if c.is(lo, "*") && c.word(lo + 1) == Some("as") {
            if let Some(n) = c.word(lo + 2) {
                self.vars.insert(n.to_string(), v.clone());
            }
            return;
        }
        if c.is(lo, "{") {
            let end = c.close[lo].min(hi);
            for (a, b) in split_at(c, lo + 1, end, ",") {
                // `name`, `name: alias` (JS), `name as alias` (ES imports).
                let Some(name) = c.word(a) else { continue };
                let alias = if c.is(a + 1, ":") || c.word(a + 1) == Some("as") {
                    c.word(a + 2).unwrap_or(name)
                } else {
                    name
                };
                let field = v
                    .field(name)
                    .cloned()
                    .unwrap_or_else(|| member_of(self, v.clone(), name));
                if b > a {
                    self.vars.insert(alias.to_string(), field);
                }
            }
            // `import x, {a} from 'm'` reaches here only for the braces.
            return;
        }
        if c.is(lo, "(") || c.is(lo, "[") {
            let end = c.close[lo].min(hi);
            let names = split_at(c, lo + 1, end, ",");
            for (k, (a, b)) in names.into_iter().enumerate() {
                let item = v
                    .items
                    .as_ref()
                    .and_then(|items| items.get(k).cloned())
                    .unwrap_or_else(|| element_of(v));
                self.bind_pattern(c, a, b, &item);
            }
            return;
        }
        // `import x, {a} from 'm'`: a default import then named ones.
        if let Some(n) = c.word(lo) {
            if hi == lo + 1 || c.is(lo + 1, ",") {
                self.vars.insert(n.to_string(), v.clone());
                if c.is(lo + 1, ",") {
                    self.bind_pattern(c, lo + 2, hi, v);
                }
            }
        }
    }

    /// `x = E`, `const {a} = E`, `my $x = E`, `x += E`, `local f = E`: the value bound.
    fn assignment(&mut self, c: &Code, lo: usize, hi: usize) -> Option<Val> {
        let ops = c.top(lo, hi, |t| {
            matches!(t, Tok::Punct("=" | "+=" | ".=" | "||=" | "//=" | "??="))
        });
        let &eq = ops.first()?;
        if eq == lo {
            return None;
        }
        // The target: words, sigils, a destructuring, maybe `obj.attr` (not bound).
        let target_ok = (lo..eq).all(|k| {
            matches!(
                &c.toks[k],
                Tok::Word(_) | Tok::Punct("{" | "[" | "(" | "," | "." | "::" | "->" | ":" | "}" | "]" | ")")
            )
        }) || c.opener(lo);
        if !target_ok {
            return None;
        }
        let v = self.expr(c, eq + 1, hi);
        let op = match &c.toks[eq] {
            Tok::Punct(p) => *p,
            _ => "=",
        };
        // `x = y = E` is bound once, to the last target.
        let attribute = (lo..eq).any(|k| matches!(c.toks[k], Tok::Punct("." | "->" | "::")));
        if attribute {
            return Some(v);
        }
        let bound = if op == "=" {
            v
        } else {
            // `d += chunk`, `$s .= "x"`: the text grows.
            let name = c.word(eq - 1).unwrap_or("");
            let old = self.vars.get(name).cloned().unwrap_or_default();
            old.concat(v)
        };
        // Python's `a, b = 1, 2` binds in order; a lone name binds the whole.
        if (lo..eq).any(|k| c.is(k, ",")) && !c.opener(lo) {
            let names: Vec<&str> = (lo..eq).filter_map(|k| c.word(k)).collect();
            for (k, n) in names.iter().enumerate() {
                let item = bound
                    .items
                    .as_ref()
                    .and_then(|items| items.get(k).cloned())
                    .unwrap_or_else(|| element_of(&bound));
                self.vars.insert((*n).to_string(), item);
            }
        } else {
            self.bind_pattern(c, lo, eq, &bound);
        }
        Some(bound)
    }

    /// An expression in `lo..hi`: operands joined by operators. Text joins only where the
    /// language joins text (`+`, `.`, `..`, `&`, pathlib's `/`, `%` formatting); any other
    /// operator gives a value of unknown text whose data comes from both sides.
    fn expr(&mut self, c: &Code, mut lo: usize, hi: usize) -> Val {
        while lo < hi && c.toks[lo] == Tok::Newline {
            lo += 1;
        }
        if lo >= hi || self.spent() {
            return Val::unknown();
        }
        // An arrow function (`r => ..`, `(a, b) => {..}`), a Python lambda: its body runs
        // when called; what it does and where its data comes from are read now.
        let arrow = (self.lang == Lang::Js)
            .then(|| c.top(lo, hi, |t| t.is("=>")).first().copied())
            .flatten();
        if let Some(a) = arrow {
            let body = self.expr_or_block(c, a + 1, hi);
            return function_value(body);
        }
        if self.lang == Lang::Python && c.word(lo) == Some("lambda") {
            let colon = c.top(lo + 1, hi, |t| t.is(":")).first().copied().unwrap_or(hi);
            let body = self.expr(c, colon + 1, hi);
            return function_value(body);
        }
        // Operators at depth 0, between operands.
        let mut ops: Vec<(usize, Op)> = Vec::new();
        let mut i = lo;
        while i < hi {
            if i > lo && ends_operand_at(c, i - 1) {
                if let Some(op) = self.binary(c, i) {
                    ops.push((i, op));
                }
            }
            i = c.skip(i);
        }
        if ops.is_empty() {
            return self.operand(c, lo, hi);
        }
        let mut start = lo;
        let mut acc: Option<Val> = None;
        let mut pending = Op::Other;
        for (at, op) in ops.iter().copied().chain(std::iter::once((hi, Op::Other))) {
            let v = self.operand(c, start, at);
            acc = Some(match acc {
                None => v,
                Some(left) => combine(self, left, pending, v),
            });
            pending = op;
            start = at + 1;
        }
        acc.unwrap_or_default()
    }

    fn expr_or_block(&mut self, c: &Code, lo: usize, hi: usize) -> Val {
        if c.is(lo, "{") {
            let end = c.close[lo].min(hi);
            let v = self.block(c, lo + 1, end);
            if end + 1 < hi {
                self.block(c, end + 1, hi);
            }
            v
        } else {
            self.statement(c, lo, hi)
        }
    }

    /// The binary operator at `i`, if the token there is one in this language.
    fn binary(&self, c: &Code, i: usize) -> Option<Op> {
        let l = self.lang;
        Some(match &c.toks[i] {
            Tok::Punct("+") if matches!(l, Lang::Python | Lang::Js | Lang::Ruby) => Op::Concat,
            Tok::Punct(".") if matches!(l, Lang::Perl | Lang::Php) => Op::Concat,
            Tok::Punct("..") if l == Lang::Lua => Op::Concat,
            Tok::Punct("&") if l == Lang::AppleScript => Op::Concat,
            Tok::Punct("/") if l == Lang::Python => Op::Path,
            Tok::Punct("%") if l == Lang::Python => Op::Format,
            Tok::Punct("<<") if l == Lang::Ruby => Op::Append,
            Tok::Punct("=~") if matches!(l, Lang::Perl | Lang::Ruby) => Op::Bind,
            Tok::Punct(
                "+" | "-" | "*" | "/" | "%" | "**" | "//" | "&&" | "||" | "??" | "==" | "===" | "!=" | "!==" | "<"
                | ">" | "<=" | ">=" | "|" | "^" | "&" | "<<" | ">>" | "!~" | "<=>" | "?" | "..",
            ) => Op::Other,
            Tok::Punct(":") if !matches!(l, Lang::Python | Lang::Lua) => Op::Other,
            Tok::Word(w)
                if matches!(
                    w.as_str(),
                    "and" | "or" | "if" | "else" | "in" | "is" | "not" | "eq" | "ne" | "x" | "for" | "instanceof"
                ) =>
            {
                Op::Other
            }
            _ => return None,
        })
    }

    /// One operand: prefix operators, a primary, and its chain of attributes, calls and
    /// subscripts; words left after it are the arguments of a call without parentheses
    /// (`system "rm -rf /"`, `puts File.read(p)`, `print $fh "x"`) or code of their own.
    fn operand(&mut self, c: &Code, mut lo: usize, hi: usize) -> Val {
        let mut reduce = false;
        loop {
            match c.toks.get(lo) {
                Some(Tok::Punct("!" | "-" | "+" | "~" | "*" | "**" | "..." | "\\" | "@")) if lo + 1 < hi => lo += 1,
                Some(Tok::Punct("#")) if self.lang == Lang::Lua && lo + 1 < hi => {
                    reduce = true;
                    lo += 1;
                }
                Some(Tok::Word(w))
                    if lo + 1 < hi
                        && matches!(
                            w.as_str(),
                            "not"
                                | "await"
                                | "new"
                                | "typeof"
                                | "void"
                                | "delete"
                                | "async"
                                | "defined"
                                | "my"
                                | "our"
                                | "local"
                                | "const"
                                | "let"
                                | "var"
                                | "yield"
                                | "return"
                                | "quoted"
                                | "form"
                        ) =>
                {
                    lo += 1
                }
                Some(Tok::Newline) if lo + 1 < hi => lo += 1,
                _ => break,
            }
        }
        if lo >= hi {
            return Val::unknown();
        }
        let (mut cur, mut i, head) = self.primary(c, lo, hi);
        let mut calls = 0;
        while i < hi {
            match &c.toks[i] {
                Tok::Punct("." | "?." | "::" | "->") if c.word(i + 1).is_some() => {
                    let name = c.word(i + 1).unwrap_or_default();
                    cur = member_of(self, cur, name);
                    i += 2;
                    if !c.is(i, "(") {
                        cur = apis::settle(self, cur);
                    }
                    // Ruby calls a method named without parentheses or arguments (`ENV.keys.size`).
                    let no_args = i >= hi || c.is(i, ".") || c.is(i, "&.") || c.is(i, ")");
                    if self.lang == Lang::Ruby && no_args {
                        if let Some(api) = cur.api.clone() {
                            if let Some(v) = apis::call(self, &api, &Args(&[])) {
                                cur = v;
                                calls += 1;
                            }
                        }
                    }
                }
                Tok::Punct(":") if self.lang == Lang::Lua && c.word(i + 1).is_some() => {
                    let name = c.word(i + 1).unwrap_or_default();
                    cur = member_of(self, cur, name);
                    i += 2;
                }
                // Perl's `->(..)`, `->[..]`, `->{..}`.
                Tok::Punct("->") if c.opener(i + 1) => i += 1,
                Tok::Punct("(") => {
                    let end = c.close[i].min(hi);
                    let args = self.args(c, i + 1, end);
                    cur = self.call(cur, &args, head.as_deref());
                    calls += 1;
                    i = end + 1;
                }
                Tok::Punct("[") => {
                    let end = c.close[i].min(hi);
                    cur = self.index(c, cur, i + 1, end);
                    i = end + 1;
                }
                Tok::Punct("{") if self.lang == Lang::Perl => {
                    let end = c.close[i].min(hi);
                    let variable = head.as_deref().is_some_and(|h| h.starts_with('$')) || cur.from.env;
                    if variable {
                        // `$ENV{HOME}`, `$h->{key}`: a hash subscript (a bare word is its key).
                        cur = if end == i + 2 && c.word(i + 1).is_some() {
                            let key = Val::lit(c.word(i + 1).unwrap_or_default());
                            index_value(cur, &key)
                        } else {
                            self.index(c, cur, i + 1, end)
                        };
                    } else {
                        // `map { .. } LIST`, `eval { .. }`, `sort { .. }`: a block; its data
                        // is the result's.
                        let v = self.block(c, i + 1, end);
                        cur.from.merge(&v.all_from());
                    }
                    i = end + 1;
                }
                Tok::Punct("{") if matches!(self.lang, Lang::Ruby | Lang::Lua | Lang::Js) => {
                    // A Ruby block (`File.open(p, 'w') { |f| f.write(x) }`): its parameters are
                    // the call's value; Lua's `f{..}` call with a table.
                    let end = c.close[i].min(hi);
                    if self.lang == Lang::Lua && calls == 0 {
                        let args = self.args(c, i, end + 1);
                        cur = self.call(cur, &args, head.as_deref());
                    } else {
                        let body = self.bind_block_params(c, i + 1, end, &cur);
                        self.block(c, body, end);
                    }
                    i = end + 1;
                }
                Tok::Word(w) if w == "do" && self.lang == Lang::Ruby => {
                    let body = self.bind_block_params(c, i + 1, hi, &cur);
                    self.block(c, body, hi);
                    i = hi;
                }
                // `require "socket"`, `print "x"` (Lua); a tagged template (`` Bun.$`ls` ``).
                Tok::Str { .. } if calls == 0 && matches!(self.lang, Lang::Lua | Lang::Js) => {
                    let args = self.args(c, i, i + 1);
                    cur = self.call(cur, &args, head.as_deref());
                    calls += 1;
                    i += 1;
                }
                _ => break,
            }
        }
        // `f.write "x"`, `sock.puts data` (Ruby): a method called without parentheses.
        if i < hi && self.lang == Lang::Ruby && cur.method.is_some() {
            let args = self.args(c, i, hi);
            cur = self.call(cur, &args, head.as_deref());
            calls += 1;
            i = hi;
        }
        if let Some((recv, name)) = cur.method.take() {
            cur = apis::attribute(self, *recv, &name);
        }
        // `print $fh "x"`, `print FH "x"` (Perl): a handle, then what goes through it.
        if i < hi && self.lang == Lang::Perl && cur.handle.is_some() {
            let mut v = self.expr(c, i, hi);
            v.handle = cur.handle.take();
            return v;
        }
        // `fork`, `print`, `puts` alone (Perl, Ruby): a call without arguments.
        let plain_word = head.as_deref().is_some_and(|h| !h.starts_with(['$', '@', '%']));
        if calls == 0 && i >= hi && plain_word && matches!(self.lang, Lang::Perl | Lang::Ruby) {
            if let Some(name) = cur.api.clone() {
                if let Some(v) = apis::call(self, &name, &Args(&[])) {
                    cur = v;
                }
            }
        }
        if i < hi {
            // Arguments without parentheses, for a callee that takes them.
            let bare = calls == 0 && cur.api.as_deref().is_some_and(|a| apis::takes_bare_args(self.lang, a));
            if bare {
                let args = self.args(c, i, hi);
                cur = self.call(cur, &args, head.as_deref());
            } else {
                let rest = self.block(c, i, hi);
                cur.from.merge(&rest.from);
                cur.parts.clear();
                cur.api = None;
            }
        }
        if reduce {
            return Val::unknown();
        }
        cur
    }

    /// `|f|` (Ruby) at the start of a block bound to `v`; the index after the parameters.
    fn bind_block_params(&mut self, c: &Code, lo: usize, hi: usize, v: &Val) -> usize {
        if !c.is(lo, "|") {
            return lo;
        }
        let Some(end) = (lo + 1..hi).find(|k| c.is(*k, "|")) else {
            return lo;
        };
        let each = if v.handle.is_some() { v.clone() } else { element_of(v) };
        for name in (lo + 1..end).filter_map(|k| c.word(k)) {
            self.vars.insert(name.to_string(), each.clone());
        }
        end + 1
    }

    /// The primary at `lo`: a literal, a bracketed group, a word (a variable, a module, a
    /// function), a function literal. Returns it, the index after it, and the word when it
    /// was one (a variable a method may rebind).
    fn primary(&mut self, c: &Code, lo: usize, hi: usize) -> (Val, usize, Option<String>) {
        let next = lo + 1;
        match &c.toks[lo] {
            Tok::Str { text, interp } => (self.string(text, *interp), next, None),
            Tok::Cmd { text, interp } => {
                let cmd = self.string(text, *interp);
                let out = self.run(&cmd, &[]);
                (out, next, None)
            }
            Tok::Num(n) => (Val::lit(n.clone()), next, None),
            Tok::Regex(r) => (
                Val {
                    regex: Some(r.clone()),
                    ..Val::default()
                },
                next,
                None,
            ),
            Tok::Subst(p, r) => {
                let line = self.vars.contains_key("$_");
                if line || self.lang == Lang::Perl {
                    self.line_edits.push((p.clone(), r.clone()));
                }
                (
                    Val {
                        edits: vec![(p.clone(), r.clone())],
                        ..Val::default()
                    },
                    next,
                    None,
                )
            }
            Tok::Punct("(") => {
                let end = c.close[lo].min(hi);
                let v = if c.top(lo + 1, end, |t| t.is(",")).is_empty() {
                    self.expr(c, lo + 1, end)
                } else {
                    self.list(c, lo + 1, end)
                };
                (v, end + 1, None)
            }
            Tok::Punct("[") => {
                let end = c.close[lo].min(hi);
                let comprehension = !c.top(lo + 1, end, |t| t.word() == Some("for")).is_empty();
                let v = if comprehension {
                    let v = self.block(c, lo + 1, end);
                    Val::tainted(v.all_from())
                } else {
                    self.list(c, lo + 1, end)
                };
                (v, end + 1, None)
            }
            Tok::Punct("{") => {
                let end = c.close[lo].min(hi);
                (self.object(c, lo + 1, end), end + 1, None)
            }
            // Perl's `<$fh>`, `<STDIN>`: a line read from a handle.
            Tok::Punct("<") if self.lang == Lang::Perl && c.is(lo + 2, ">") => {
                let v = c
                    .word(lo + 1)
                    .and_then(|w| self.vars.get(w).cloned())
                    .unwrap_or_default();
                (Val::tainted(v.from), lo + 3, None)
            }
            Tok::Word(w) => self.word_primary(c, w, lo, hi),
            _ => (Val::unknown(), next, None),
        }
    }

    fn word_primary(&mut self, c: &Code, w: &str, lo: usize, hi: usize) -> (Val, usize, Option<String>) {
        let next = lo + 1;
        match (self.lang, w) {
            (Lang::Js, "function") | (Lang::Perl, "sub") | (Lang::Php, "function" | "fn") => {
                // `function name(a) {..}`, `sub {..}`: the body's effects and data.
                let body = (lo + 1..hi).find(|k| c.is(*k, "{"));
                return match body {
                    Some(b) => {
                        let end = c.close[b].min(hi);
                        let v = self.block(c, b + 1, end);
                        (function_value(v), end + 1, None)
                    }
                    None => (Val::unknown(), hi, None),
                };
            }
            (Lang::Lua, "function") => {
                let v = self.block(c, lo + 1, hi);
                return (function_value(v), hi, None);
            }
            _ => {}
        }
        if let Some(v) = self.vars.get(w) {
            let mut v = v.clone();
            v.var = Some(w.to_string());
            return (v, next, Some(w.to_string()));
        }
        let mut v = apis::word(self, w);
        v.var = Some(w.to_string());
        (v, next, Some(w.to_string()))
    }

    /// The items of a list in `lo..hi` (`[a, b]`, `(a, b)`, `%w[..]`).
    fn list(&mut self, c: &Code, lo: usize, hi: usize) -> Val {
        let mut items = Vec::new();
        let mut from = From::default();
        let mut fields = Vec::new();
        for (a, b) in split_at(c, lo, hi, ",") {
            if a >= b {
                continue;
            }
            // `key => value` pairs in a Perl or PHP list are fields too.
            if c.is(a + 1, "=>") {
                let key = key_text(&c.toks[a]);
                let v = self.expr(c, a + 2, b);
                from.merge(&v.from);
                if let Some(k) = key {
                    fields.push((k, v));
                }
                continue;
            }
            let v = self.expr(c, a, b);
            from.merge(&v.all_from());
            items.push(v);
        }
        Val {
            items: Some(items),
            fields,
            ..Val::default()
        }
        .bounded()
    }

    /// `{key: value, ..}`, `{'k' => v}`, `{k = v}` (Lua), or a block of code.
    fn object(&mut self, c: &Code, lo: usize, hi: usize) -> Val {
        let pairs = split_at(c, lo, hi, ",");
        let lua = self.lang == Lang::Lua;
        let pair_sep = |a: usize| c.is(a + 1, ":") || c.is(a + 1, "=>") || (lua && c.is(a + 1, "="));
        let is_object = lo >= hi
            || pairs
                .iter()
                .all(|(a, b)| a >= b || pair_sep(*a) || c.is(*a, "...") || *b == a + 1);
        if !is_object || c.top(lo, hi, |t| t.is(";") || *t == Tok::Newline).len() > pairs.len() {
            let v = self.block(c, lo, hi);
            return Val::tainted(v.all_from());
        }
        let mut fields = Vec::new();
        let mut items = Vec::new();
        for (a, b) in pairs {
            if a >= b {
                continue;
            }
            if pair_sep(a) {
                let v = self.expr(c, a + 2, b);
                if let Some(k) = key_text(&c.toks[a]) {
                    fields.push((k, v));
                }
            } else {
                // `{ body }` shorthand, `...spread`, Lua's array part.
                let v = self.expr(c, a, b);
                if let Some(k) = c.word(a).filter(|_| b == a + 1) {
                    fields.push((k.to_string(), v.clone()));
                }
                items.push(v);
            }
        }
        Val {
            fields,
            items: (!items.is_empty()).then_some(items),
            ..Val::default()
        }
        .bounded()
    }

    /// The arguments in `lo..hi`, split at depth-0 commas; `name=value` (Python), `name:
    /// value` (Ruby) and `key => value` (Perl, PHP) are named.
    fn args(&mut self, c: &Code, lo: usize, hi: usize) -> Vec<Arg> {
        let mut out = Vec::new();
        let lua_table = self.lang == Lang::Lua && c.is(lo, "{");
        if lua_table {
            let v = self.primary(c, lo, hi).0;
            out.push(Arg { name: None, val: v });
            return out;
        }
        for (a, b) in split_at(c, lo, hi, ",") {
            if a >= b {
                continue;
            }
            let named = match self.lang {
                Lang::Python => c.is(a + 1, "=") && c.word(a).is_some(),
                Lang::Ruby => c.is(a + 1, ":") && c.word(a).is_some(),
                Lang::Perl | Lang::Php => c.is(a + 1, "=>"),
                _ => false,
            };
            if named {
                let name = key_text(&c.toks[a]);
                let val = self.expr(c, a + 2, b);
                out.push(Arg { name, val });
            } else {
                let val = self.expr(c, a, b);
                out.push(Arg { name: None, val });
            }
        }
        out
    }

    /// A call of `callee` with `args`; `head` is the word the chain started from.
    fn call(&mut self, callee: Val, args: &[Arg], head: Option<&str>) -> Val {
        let a = Args(args);
        if let Some(name) = callee.api.clone() {
            if let Some(v) = apis::call(self, &name, &a) {
                return v;
            }
            // A name imported whole (`from os import *; system(..)`).
            for m in self.star.clone() {
                if let Some(v) = apis::call(self, &format!("{m}.{name}"), &a) {
                    return v;
                }
            }
        }
        if let Some((recv, m)) = callee.method.clone() {
            if let Some(v) = apis::method(self, &recv, &m, &a) {
                // `s.connect((host, port))`: the variable now names the connection.
                if let (Some(h), Some(Handle::Net(_))) = (head, &v.handle) {
                    if m == "connect" && self.vars.contains_key(h) {
                        self.vars.insert(h.to_string(), v.clone());
                    }
                }
                return v;
            }
            let mut from = recv.all_from();
            from.merge(&a.all_from());
            return Val::tainted(from);
        }
        // An unknown function: its result comes from its arguments and its own body; a
        // wrapper around a handle (`assert(s.tcp())`) is that handle.
        let mut from = callee.from.clone();
        from.merge(&a.all_from());
        // A decoder handed over as a function (`map(chr, codes)`): what comes out is decoded.
        let decoder = a
            .positional()
            .find_map(|f| f.api.as_deref().and_then(|n| apis::decoder(self.lang, n)));
        if let Some(how) = decoder {
            let all = Val::tainted(from);
            return self.hidden(how, &all);
        }
        let mut v = Val::tainted(from);
        v.handle = a.pos(0).and_then(|f| f.handle.clone());
        v
    }

    /// `cur[..]` with the subscript in `lo..hi`.
    fn index(&mut self, c: &Code, cur: Val, lo: usize, hi: usize) -> Val {
        // `s[::-1]`: reversed.
        let minus_one = |k: usize| c.is(k, "-") && matches!(c.toks.get(k + 1), Some(Tok::Num(n)) if n == "1");
        let reversed = self.lang == Lang::Python
            && ((hi == lo + 3 && c.is(lo, "::") && minus_one(lo + 1))
                || (hi == lo + 4 && c.is(lo, ":") && c.is(lo + 1, ":") && minus_one(lo + 2)));
        if reversed {
            return self.hidden("reversed", &cur);
        }
        if !c.top(lo, hi, |t| t.is(":")).is_empty() {
            // A slice: part of the same data.
            return Val::tainted(cur.all_from());
        }
        let key = self.expr(c, lo, hi);
        index_value(cur, &key)
    }

    /// A string literal's value, its interpolations (`$x`, `#{..}`, `${..}`, `f"{..}"`)
    /// resolved where their values are known.
    fn string(&mut self, text: &str, interp: bool) -> Val {
        if !interp {
            return Val::lit(text);
        }
        let mut out = Val::lit("");
        let mut rest = text;
        while !rest.is_empty() {
            let (lit, expr, after) = next_interpolation(rest, self.lang);
            if !lit.is_empty() {
                out = out.concat(Val::lit(lit));
            }
            if let Some(e) = expr {
                let v = self.interpolated(e);
                out = out.concat(v);
            }
            rest = after;
        }
        out
    }

    /// The value of one interpolated expression: a Perl/PHP variable with subscripts, or code.
    fn interpolated(&mut self, e: &str) -> Val {
        if matches!(self.lang, Lang::Perl | Lang::Php) && e.starts_with(['$', '@']) {
            let (name, key) = match e.find(['{', '[']) {
                Some(at) => (&e[..at], Some(e[at + 1..].trim_end_matches(['}', ']']))),
                None => (e, None),
            };
            let var = self.vars.get(name).cloned().unwrap_or_else(|| apis::word(self, name));
            return match key {
                Some(k) => {
                    let k = k.trim_matches(['\'', '"']);
                    let key = if k.starts_with('$') {
                        self.vars.get(k).cloned().unwrap_or_default()
                    } else {
                        Val::lit(k)
                    };
                    index_value(var, &key)
                }
                None => var,
            };
        }
        let v = self.read_nested(e);
        if v.parts.is_empty() && v.all_from() == From::default() {
            Val::unknown()
        } else {
            v
        }
    }

    /// AppleScript: `do shell script EXPR [with administrator privileges]`, `set x to EXPR`,
    /// `make login item ..`.
    fn applescript(&mut self, c: &Code, lo: usize, hi: usize) -> Val {
        let words: Vec<&str> = (lo..hi).filter_map(|k| c.word(k)).collect();
        if words.windows(2).any(|w| w == ["login", "item"]) && words.contains(&"make") {
            self.facts.push(super::Fact::LoginItem);
        }
        for k in lo..hi {
            if c.word(k) == Some("do") && c.word(k + 1) == Some("shell") && c.word(k + 2) == Some("script") {
                let end = (k + 3..hi)
                    .find(|j| matches!(c.word(*j), Some("with" | "without" | "user" | "password" | "altering")))
                    .unwrap_or(hi);
                let cmd = self.expr(c, k + 3, end);
                let root = (end..hi).any(|j| c.word(j) == Some("administrator"));
                let cmd = if root { Val::lit("sudo ").concat(cmd) } else { cmd };
                return self.run(&cmd, &[]);
            }
        }
        if c.word(lo) == Some("set") {
            if let Some(to) = (lo + 2..hi).find(|k| c.word(*k) == Some("to")) {
                let v = self.expr(c, to + 1, hi);
                if let Some(name) = c.word(lo + 1) {
                    self.vars.insert(name.to_string(), v.clone());
                }
                return v;
            }
        }
        Val::unknown()
    }

    // ---- Effects, recorded for the guard. ----

    /// A value decoded, decompressed or reversed (`how`) from `input`.
    pub(super) fn hidden(&mut self, how: &str, input: &Val) -> Val {
        let mut from = input.all_from();
        if from.hidden.is_none() {
            from.hidden = Some(how.to_string());
        }
        if self.sources.hidden.is_none() {
            self.sources.hidden = Some(how.to_string());
        }
        Val::tainted(from)
    }

    /// Data downloaded from `url`.
    pub(super) fn fetched(&mut self, url: Option<&Val>) -> Val {
        let url = url.and_then(Val::text).unwrap_or_default();
        if self.sources.fetched.is_none() {
            self.sources.fetched = Some(url.clone());
        }
        Val::tainted(From {
            fetched: Some(url),
            ..From::default()
        })
    }

    /// Runs a command: `cmd` is shell text, or an argv list; `extra` are further argv words
    /// (`spawn('git', ['checkout', '.'])`, `system('git', 'checkout')`). Returns its output.
    pub(super) fn run(&mut self, cmd: &Val, extra: &[&Val]) -> Val {
        let mut from = cmd.all_from();
        for e in extra {
            from.merge(&e.all_from());
        }
        if let Some(how) = from.unread() {
            self.facts.push(Fact::RunsHidden { how, code: false });
            return Val::tainted(from);
        }
        let mut words: Vec<&Val> = Vec::new();
        let shell_text = match &cmd.items {
            Some(items) => {
                words.extend(items.iter());
                None
            }
            None if extra.is_empty() => Some(cmd),
            None => {
                words.push(cmd);
                None
            }
        };
        for e in extra {
            match &e.items {
                Some(items) => words.extend(items.iter()),
                None if e.fields.is_empty() => words.push(e),
                None => {}
            }
        }
        let text = match shell_text {
            Some(v) => match v.text() {
                Some(t) => Some(t),
                None if v.starts_known() => Some(holes_as_variables(v)),
                None => None,
            },
            None => {
                let known_head = words.first().is_some_and(|w| w.text().is_some());
                known_head.then(|| {
                    words
                        .iter()
                        .map(|w| w.text().map_or_else(|| "\"$VALUE\"".to_string(), |t| shell_quote(&t)))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
            }
        };
        match text {
            Some(t) if !t.trim().is_empty() => {
                self.runs_written(&t);
                self.commands.push(format!("(\n{t}\n)"));
                // Output of a download command is downloaded data.
                let fetches = ["curl ", "wget ", "fetch ", "http "].iter().any(|f| t.contains(f));
                if fetches {
                    return self.fetched(None);
                }
            }
            Some(_) => {}
            None => self.unknown_runs.push(false),
        }
        Val::tainted(from)
    }

    /// A command that runs a file the program wrote from decoded or downloaded data.
    fn runs_written(&mut self, text: &str) {
        let hit = self.written.iter().find(|(path, from)| {
            from.unread().is_some()
                && text
                    .split(|ch: char| ch.is_whitespace() || ch == '\'' || ch == '"')
                    .any(|w| w == path || w.strip_prefix("./") == Some(path.as_str()))
        });
        if let Some((path, from)) = hit {
            let how = format!("{} into {path}", from.unread().unwrap_or_default());
            self.facts.push(Fact::RunsHidden { how, code: false });
        }
    }

    /// Runs `code` as code in the program's language (`exec`, `eval`, `Function`, `load`).
    pub(super) fn eval_code(&mut self, code: &Val) {
        if self.work > MAX_WORK {
            return;
        }
        let from = code.all_from();
        if let Some(how) = from.unread() {
            self.facts.push(Fact::RunsHidden { how, code: true });
            return;
        }
        if let Some(how) = self.written_unread(&from.files) {
            self.facts.push(Fact::RunsHidden { how, code: true });
            return;
        }
        if let Some(text) = code.text() {
            self.read_nested(&text);
            return;
        }
        if code.pieces().trim().is_empty() && from.files.is_empty() {
            self.unknown_runs.push(true);
        }
    }

    /// Runs the file at `path` as code (`require`, `load`, `include`, `dofile`).
    pub(super) fn eval_file(&mut self, path: &Val) {
        let Some(p) = path.text() else { return };
        if p.starts_with("http://") || p.starts_with("https://") {
            self.facts.push(Fact::RunsHidden {
                how: downloaded(&p),
                code: true,
            });
        } else if let Some(how) = self.written_unread(std::slice::from_ref(&p)) {
            self.facts.push(Fact::RunsHidden { how, code: true });
        }
    }

    fn written_unread(&self, files: &[String]) -> Option<String> {
        self.written
            .iter()
            .find(|(p, f)| files.contains(p) && f.unread().is_some())
            .and_then(|(p, f)| f.unread().map(|how| format!("{how} into {p}")))
    }

    /// Opens `path` for writing (appending when `append`): the handle's write.
    pub(super) fn open_write(&mut self, path: &Val, append: bool) -> Option<Handle> {
        let p = path.text().filter(|p| !p.is_empty())?;
        self.commands.push(String::new());
        self.writes.push(WriteRec {
            path: p,
            append,
            content: None,
            at: self.commands.len() - 1,
        });
        let k = self.writes.len() - 1;
        self.render_write(k);
        Some(Handle::Write(k))
    }

    /// Writes `content` through the write `k`.
    pub(super) fn write_to(&mut self, k: usize, content: &Val) {
        let Some(w) = self.writes.get_mut(k) else { return };
        w.content = Some(match w.content.take() {
            None => content.clone(),
            Some(old) => {
                let mut joined = old.concat(content.clone());
                joined.edits = content.edits.clone();
                joined
            }
        });
        self.render_write(k);
    }

    /// Writes `content` to `path` in one call.
    pub(super) fn write(&mut self, path: &Val, content: &Val, append: bool) {
        if let Some(Handle::Write(k)) = self.open_write(path, append) {
            self.write_to(k, content);
        }
    }

    /// The shell command for write `k`: a download to the file, a substitution of its own
    /// text, known text, a copy of another file's text, or an unknown write.
    fn render_write(&mut self, k: usize) {
        let w = &self.writes[k];
        let path = shell_quote(&w.path);
        let redirect = if w.append { ">>" } else { ">" };
        let content = w.content.clone().unwrap_or_default();
        let from = content.all_from();
        let own = from.files.contains(&w.path);
        let cmd = if let Some(url) = &from.fetched {
            let url = if url.is_empty() {
                "\"$URL\"".to_string()
            } else {
                shell_quote(url)
            };
            format!("curl -fsSL {url} {redirect} {path}")
        } else if own && !content.edits.is_empty() {
            let scripts: Vec<String> = content
                .edits
                .iter()
                .map(|(p, r)| format!("-e {}", shell_quote(&sed_script(p, r))))
                .collect();
            format!("sed -i -E {} {path}", scripts.join(" "))
        } else if !content.pieces().trim().is_empty() {
            format!("printf '%s' {} {redirect} {path}", shell_quote(&content.pieces()))
        } else if let Some(src) = from.files.iter().find(|f| **f != w.path) {
            if w.append {
                format!("cat {} >> {path}", shell_quote(src))
            } else {
                format!("cp {} {path}", shell_quote(src))
            }
        } else if from.env {
            format!("env {redirect} {path}")
        } else if w.append {
            format!("tee -a {path}")
        } else {
            format!("tee {path}")
        };
        let at = w.at;
        let path_text = w.path.clone();
        if let Some(slot) = self.commands.get_mut(at) {
            *slot = cmd;
        }
        match self.written.iter_mut().find(|(p, _)| *p == path_text) {
            Some((_, f)) => f.merge(&from),
            None => self.written.push((path_text, from)),
        }
    }

    /// A shell command on files the program names (`rm -rf P`, `mv A B`, `chmod 777 P`),
    /// pushed when every operand is known.
    pub(super) fn file_command(&mut self, words: &[&str], operands: &[&Val]) {
        let mut line: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
        for o in operands {
            match o.text().filter(|t| !t.is_empty()) {
                Some(t) => line.push(shell_quote(&t)),
                None => return,
            }
        }
        self.commands.push(line.join(" "));
    }

    /// What printing `v` shows: the environment, a variable of it, a file's contents.
    pub(super) fn print(&mut self, v: &Val) {
        let from = v.all_from();
        if from.env {
            self.commands.push("env".into());
        }
        for var in &from.env_vars {
            self.commands.push(format!("printenv {}", shell_quote(var)));
        }
        for f in &from.files {
            self.commands.push(format!("cat {}", shell_quote(f)));
        }
    }

    /// What sending `body` to `url` sends: the environment, a variable of it, a file.
    pub(super) fn send(&mut self, url: Option<&Val>, body: &Val) {
        let from = body.all_from();
        if !from.env && from.env_vars.is_empty() && from.files.is_empty() {
            return;
        }
        let url = url
            .and_then(Val::text)
            .filter(|u| !u.is_empty())
            .or_else(|| self.last_url.clone())
            .unwrap_or_else(|| "https://remote.invalid".to_string());
        // A bare host (a socket's peer) is spelled as a URL.
        let url = if url.contains("://") {
            url
        } else {
            format!("https://{url}")
        };
        let url = shell_quote(&url);
        if from.env {
            self.commands.push(format!("env | curl --data-binary @- {url}"));
        }
        for var in &from.env_vars {
            self.commands.push(format!("curl --data-binary \"${var}\" {url}"));
        }
        for f in &from.files {
            self.commands
                .push(format!("curl --data-binary @{} {url}", shell_quote(f)));
        }
    }

    /// The substitutions of a line loop applied to its files (`perl -pi -e 's/a/b/'`,
    /// `ruby -pi -e 'gsub(..)'`), and the lines it prints (`-p`).
    fn line_loop(&mut self, mode: &Mode) {
        if !mode.line_loop || mode.files.is_empty() {
            return;
        }
        if mode.in_place {
            if self.line_edits.is_empty() {
                return;
            }
            let scripts: Vec<String> = self
                .line_edits
                .iter()
                .map(|(p, r)| format!("-e {}", shell_quote(&sed_script(p, r))))
                .collect();
            for f in &mode.files {
                self.commands
                    .push(format!("sed -i -E {} {}", scripts.join(" "), shell_quote(f)));
            }
        } else if mode.prints_lines {
            for f in mode.files.clone() {
                self.commands.push(format!("cat {}", shell_quote(&f)));
            }
        }
    }
}

/// How two operands join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Concat,
    /// Python's pathlib `/`.
    Path,
    /// Python's `%` formatting.
    Format,
    /// Ruby's `<<`: appended to a string, or written to a handle.
    Append,
    /// `=~` (Perl, Ruby): a match, or a substitution applied.
    Bind,
    Other,
}

fn combine(st: &mut State, left: Val, op: Op, right: Val) -> Val {
    match op {
        Op::Concat => left.concat(right),
        Op::Path => match (left.text(), right.text()) {
            (Some(a), Some(b)) => Val::lit(join_path(&a, &b)),
            _ => left.concat(right),
        },
        Op::Format => match (left.text(), right.text().or_else(|| first_item_text(&right))) {
            (Some(fmt), Some(arg)) if fmt.contains("%s") => Val::lit(fmt.replacen("%s", &arg, 1)),
            _ => merged(left, &right),
        },
        Op::Append => {
            if let Some(Handle::Write(k)) = left.handle {
                st.write_to(k, &right);
                return left;
            }
            if let Some(Handle::Net(h)) = &left.handle {
                st.send(Some(&Val::lit(h.clone())), &right);
                return left;
            }
            left.concat(right)
        }
        Op::Bind => {
            let mut v = merged(left, &right);
            v.edits = right.edits;
            v
        }
        Op::Other => merged(left, &right),
    }
}

fn first_item_text(v: &Val) -> Option<String> {
    v.items.as_ref()?.first()?.text()
}

/// A value of unknown text whose data comes from both.
fn merged(left: Val, right: &Val) -> Val {
    let mut from = left.all_from();
    from.merge(&right.all_from());
    Val::tainted(from)
}

fn function_value(body: Val) -> Val {
    Val::tainted(body.all_from())
}

/// What iterating over `v` yields: its items' data.
fn element_of(v: &Val) -> Val {
    Val::tainted(v.all_from())
}

/// `a.b` on a value: a module's member (`os.path`), or a method of data.
fn member_of(st: &mut State, cur: Val, name: &str) -> Val {
    if let Some(a) = &cur.api {
        let mut v = Val::api(format!("{a}.{name}"));
        // `process.env.HOME`: the environment's member keeps what it is made of.
        v.from = cur.from.clone();
        if cur.from.env {
            return apis::env_member(st, cur, name);
        }
        return v;
    }
    Val {
        method: Some((Box::new(cur), name.to_string())),
        ..Val::default()
    }
    .bounded()
}

/// `v[key]`: one environment variable, one item of a list, or part of the same data.
fn index_value(v: Val, key: &Val) -> Val {
    if v.from.env && v.api.is_some() {
        return match key.text() {
            Some(k) => apis::env_var(&k),
            None => v,
        };
    }
    if let (Some(items), Some(k)) = (&v.items, key.text().and_then(|k| k.parse::<usize>().ok())) {
        if let Some(item) = items.get(k) {
            return item.clone();
        }
    }
    if let Some(k) = key.text() {
        if let Some(f) = v.field(&k) {
            return f.clone();
        }
    }
    Val::tainted(v.all_from())
}

/// Whether the token at `i` ends an operand (so what follows may be a binary operator).
fn ends_operand_at(c: &Code, i: usize) -> bool {
    match &c.toks[i] {
        Tok::Word(w) => !matches!(
            w.as_str(),
            "return"
                | "not"
                | "and"
                | "or"
                | "in"
                | "is"
                | "if"
                | "else"
                | "new"
                | "typeof"
                | "await"
                | "lambda"
                | "my"
        ),
        Tok::Num(_) | Tok::Str { .. } | Tok::Regex(_) | Tok::Cmd { .. } | Tok::Subst(..) => true,
        Tok::Punct(p) => matches!(*p, ")" | "]" | "}"),
        Tok::Newline => false,
    }
}

/// Sub-ranges of `lo..hi` split at depth-0 `sep` tokens.
fn split_at(c: &Code, lo: usize, hi: usize, sep: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = lo;
    for at in c.top(lo, hi, |t| t.is(sep)) {
        out.push((start, at));
        start = at + 1;
    }
    if start < hi {
        out.push((start, hi));
    }
    out
}

/// `a.b.c as x` in `lo..hi`: the dotted name and its alias.
fn dotted_as(c: &Code, lo: usize, hi: usize) -> (String, Option<String>) {
    let as_at = (lo..hi).find(|k| c.word(*k) == Some("as")).unwrap_or(hi);
    let name: Vec<&str> = (lo..as_at).filter_map(|k| c.word(k)).collect();
    let alias = c.word(as_at + 1).filter(|_| as_at < hi).map(str::to_string);
    (name.join("."), alias)
}

/// The text of a key token (`name`, `'name'`, `"name"`).
fn key_text(t: &Tok) -> Option<String> {
    match t {
        Tok::Word(w) => Some(w.trim_start_matches(['$', ':']).to_string()),
        Tok::Str { text, .. } => Some(text.clone()),
        Tok::Num(n) => Some(n.clone()),
        _ => None,
    }
}

/// Paths joined the way `os.path.join` and pathlib join them: an absolute part restarts.
pub(super) fn join_path(a: &str, b: &str) -> String {
    if b.starts_with('/') || a.is_empty() {
        b.to_string()
    } else if a.ends_with('/') {
        format!("{a}{b}")
    } else {
        format!("{a}/{b}")
    }
}

/// A value's text with each hole spelled as a shell variable (`rm -rf "$VALUE"`).
fn holes_as_variables(v: &Val) -> String {
    v.parts
        .iter()
        .map(|p| match p {
            Part::Lit(l) => l.clone(),
            Part::Hole => "\"$VALUE\"".to_string(),
        })
        .collect()
}

/// A sed script for one substitution, with a delimiter found in neither side.
fn sed_script(pat: &str, repl: &str) -> String {
    let delim = ['/', '|', '#', ',', '@', '!', '%', '~', ':']
        .into_iter()
        .find(|d| !pat.contains(*d) && !repl.contains(*d))
        .unwrap_or('\u{1}');
    format!("s{delim}{pat}{delim}{repl}{delim}g")
}

/// The next piece of an interpolated string: the literal text before the next
/// interpolation, the interpolation's expression, and the rest.
fn next_interpolation(s: &str, lang: Lang) -> (&str, Option<&str>, &str) {
    let open = match lang {
        Lang::Ruby => "#{",
        Lang::Js => "${",
        Lang::Python => "{",
        Lang::Perl | Lang::Php => "$",
        _ => return (s, None, ""),
    };
    let Some(at) = s.find(open) else {
        return (s, None, "");
    };
    let lit = &s[..at];
    if matches!(lang, Lang::Perl | Lang::Php) {
        let rest = &s[at..];
        // `${name}` and `{$name}` (PHP) are spelled with braces around the name.
        let body = &rest[1..];
        if let Some(inner) = body.strip_prefix('{') {
            let end = inner.find('}').unwrap_or(inner.len());
            let name = format!("${}", &inner[..end]);
            let after = inner.get(end + 1..).unwrap_or("");
            // The name must live as long as `s`: look it up by its span instead.
            let span_end = at + 2 + end;
            let _ = name;
            return (lit, Some(&s[at + 2..span_end]), after);
        }
        let mut end = 1;
        let bytes = rest.as_bytes();
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_' || bytes[end] == b':') {
            end += 1;
        }
        if end == 1 {
            // A lone `$`: literal text.
            let (l2, e2, a2) = next_interpolation(&rest[1..], lang);
            if e2.is_none() {
                return (s, None, "");
            }
            return (&s[..at + 1 + l2.len()], e2, a2);
        }
        // Subscripts: `$ENV{HOME}`, `$h['k']`, `$a[0]`.
        if matches!(bytes.get(end), Some(b'{' | b'[')) {
            let close = if bytes[end] == b'{' { '}' } else { ']' };
            if let Some(k) = rest[end..].find(close) {
                end += k + 1;
            }
        }
        return (lit, Some(&rest[..end]), &rest[end..]);
    }
    if lang == Lang::Python && s[at..].starts_with("{{") {
        let (l2, e2, a2) = next_interpolation(&s[at + 2..], lang);
        if e2.is_none() {
            return (s, None, "");
        }
        return (&s[..at + 2 + l2.len()], e2, a2);
    }
    let body = &s[at + open.len()..];
    let mut depth = 0usize;
    let mut end = body.len();
    for (k, ch) in body.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' if depth == 0 => {
                end = k;
                break;
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    let mut expr = &body[..end];
    // Python's `{x!r:>10}`: the conversion and format are not part of the expression.
    if lang == Lang::Python {
        if let Some(k) = expr.find(['!', ':']) {
            if !expr[k..].starts_with("!=") {
                expr = &expr[..k];
            }
        }
    }
    let after = body.get(end + 1..).unwrap_or("");
    (lit, Some(expr), after)
}

/// Whether the tokens hold a fork inside an endless loop: the loop's head (`while True`,
/// `while 1`, `while(1)`, `while(true)`, `for(;;)`, `loop {`/`loop do`, `until false`/`until
/// 0`, `setInterval`, `while fork`) followed by a fork with nothing after the head that leaves
/// the loop or the process (`break`, `last`, `exit`, `return`, `die`), or a statement modified
/// by such a loop that forks (`fork while 1`, `fork while fork`). A fork before a loop that
/// only waits (`os.fork(); while True: time.sleep(1)`) is a daemon, not a bomb.
fn fork_in_endless_loop(toks: &[Tok]) -> bool {
    let truthy = |t: Option<&Tok>| match t {
        Some(Tok::Word(w)) => matches!(w.as_str(), "True" | "true" | "fork"),
        Some(Tok::Num(n)) => n != "0",
        _ => false,
    };
    let falsy = |t: Option<&Tok>| match t {
        Some(Tok::Word(w)) => matches!(w.as_str(), "False" | "false" | "nil"),
        Some(Tok::Num(n)) => n == "0",
        _ => false,
    };
    let fork = |t: &Tok| {
        t.word()
            .is_some_and(|w| w == "fork" || w == "forkpty" || w.ends_with("_fork"))
    };
    let leaves = |t: &Tok| {
        t.word().is_some_and(|w| {
            matches!(
                w,
                "break" | "last" | "exit" | "_exit" | "return" | "die" | "throw" | "raise"
            )
        })
    };
    let endless_head = |i: usize, t: &Tok| {
        let next = toks.get(i + 1);
        let paren = next.is_some_and(|n| n.is("("));
        let inner = if paren { toks.get(i + 2) } else { next };
        match t.word() {
            Some("while") => truthy(inner) || (inner.is_some_and(|x| x.is("!")) && falsy(toks.get(i + 3))),
            Some("until") => falsy(inner),
            Some("for") => {
                paren && toks.get(i + 2).is_some_and(|x| x.is(";")) && toks.get(i + 3).is_some_and(|x| x.is(";"))
            }
            Some("loop") => next.is_some_and(|n| n.is("{") || n.word() == Some("do")),
            Some("setInterval") => true,
            _ => false,
        }
    };
    toks.iter().enumerate().any(|(h, t)| {
        if !endless_head(h, t) {
            return false;
        }
        let after = &toks[h + 1..];
        if after.iter().any(fork) && !after.iter().any(leaves) {
            return true;
        }
        // A statement modifier: the fork stands before the loop word in the same statement.
        let modifier = matches!(t.word(), Some("while" | "until"));
        modifier
            && toks[..h]
                .iter()
                .rev()
                .take_while(|x| !matches!(x, Tok::Newline | Tok::Punct(";" | "{" | "}")))
                .any(fork)
    })
}

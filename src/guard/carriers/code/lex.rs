//! Tokens of inline code: words, string literals with their escapes resolved, numbers, regex
//! and substitution literals, command literals (backticks, `qx`, `%x`) and punctuation, with
//! comments dropped. One lexer for every language the guard reads, told the language's
//! quoting and comment rules; it never fails (an unclosed string runs to the end).

use super::Lang;

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tok {
    /// An identifier or keyword, with its sigil (`$x`, `@a`, `%ENV`, `@ivar`).
    Word(String),
    /// A string literal; `interp` when its text still holds interpolations (`"$HOME/x"`,
    /// `f"{p}"`, `` `${d}` ``, `"#{x}"`) to resolve.
    Str {
        text: String,
        interp: bool,
    },
    Num(String),
    /// A regex literal's body (`/\bit\(/g`, `qr{..}`, `m/../`).
    Regex(String),
    /// A substitution literal (`s/PAT/REPL/`, `tr/../../`), pattern and replacement.
    Subst(String, String),
    /// A command literal (`` `cmd` `` in Perl, Ruby, PHP; `qx{..}`; `%x(..)`).
    Cmd {
        text: String,
        interp: bool,
    },
    Punct(&'static str),
    Newline,
}

impl Tok {
    pub(super) fn is(&self, p: &str) -> bool {
        matches!(self, Tok::Punct(q) if *q == p)
    }

    pub(super) fn word(&self) -> Option<&str> {
        match self {
            Tok::Word(w) => Some(w),
            _ => None,
        }
    }

    /// Whether the token ends an operand (so a `/` after it divides).
    fn ends_operand(&self) -> bool {
        match self {
            Tok::Word(w) => !KEYWORDS_BEFORE_OPERAND.contains(&w.as_str()),
            Tok::Num(_) | Tok::Str { .. } | Tok::Regex(_) | Tok::Cmd { .. } | Tok::Subst(..) => true,
            Tok::Punct(p) => matches!(*p, ")" | "]" | "}"),
            Tok::Newline => false,
        }
    }
}

/// Words after which an operand starts (a `/` there opens a regex).
const KEYWORDS_BEFORE_OPERAND: &[&str] = &[
    "return", "typeof", "in", "of", "and", "or", "not", "if", "unless", "while", "until", "when", "split", "grep",
    "map", "join", "push", "unshift", "case", "else", "elsif", "do", "then", "yield", "await", "new", "delete", "void",
];

const PUNCT: &[&str] = &[
    "===", "!==", "**=", "...", "<=>", "//=", "<<=", ">>=", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "::", "..",
    "+=", "-=", "*=", "/=", ".=", "|=", "&=", "?.", "??", "<<", ">>", "**", "//", "=~", "!~", "(", ")", "[", "]", "{",
    "}", ",", ";", ".", ":", "=", "<", ">", "+", "-", "*", "/", "%", "!", "&", "|", "^", "~", "?", "@", "\\", "#", "$",
];

/// Longest code read: what lies beyond is not looked at (the bound keeps the guard's cost flat).
const MAX_CODE: usize = 64 * 1024;

/// The tokens of `code` in `lang`.
pub(super) fn lex(code: &str, lang: Lang) -> Vec<Tok> {
    let code = match code.char_indices().nth(MAX_CODE) {
        Some((at, _)) => &code[..at],
        None => code,
    };
    let mut lx = Lexer {
        s: code.as_bytes(),
        src: code,
        i: 0,
        lang,
        out: Vec::new(),
    };
    lx.run();
    lx.out
}

struct Lexer<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
    lang: Lang,
    out: Vec<Tok>,
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> u8 {
        self.s.get(self.i + k).copied().unwrap_or(0)
    }

    fn rest(&self) -> &str {
        &self.src[self.i..]
    }

    fn prev(&self) -> Option<&Tok> {
        self.out.iter().rev().find(|t| **t != Tok::Newline)
    }

    /// Whether an operand may start here (nothing before, or an operator, or a keyword).
    fn operand_expected(&self) -> bool {
        !self.prev().is_some_and(Tok::ends_operand)
    }

    fn run(&mut self) {
        while self.i < self.s.len() {
            let c = self.peek(0);
            match c {
                b'\n' => {
                    self.i += 1;
                    if self.out.last().is_some_and(|t| *t != Tok::Newline) {
                        self.out.push(Tok::Newline);
                    }
                }
                b' ' | b'\t' | b'\r' => self.i += 1,
                // A line continuation.
                b'\\' if matches!(self.peek(1), b'\n') => self.i += 2,
                _ if self.comment() => {}
                b'\'' | b'"' => self.quoted(c),
                b'`' => self.backtick(),
                b'0'..=b'9' => self.number(),
                _ if self.lang_literal() => {}
                _ if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 => self.word(),
                b'$' | b'@' | b'%' | b'&' if self.sigil() => {}
                b'/' if self.regex_here() => {
                    self.i += 1;
                    let body = self.delimited(b'/', b'/');
                    self.flags();
                    self.out.push(Tok::Regex(body));
                }
                _ => self.punct(),
            }
        }
    }

    /// Skips a comment at the cursor, if one starts here.
    fn comment(&mut self) -> bool {
        let (c, n) = (self.peek(0), self.peek(1));
        let hash = c == b'#'
            && match self.lang {
                Lang::Python | Lang::Ruby | Lang::Php | Lang::AppleScript => true,
                // `$#array` is lexed as a word before reaching here.
                Lang::Perl => true,
                Lang::Js | Lang::Lua => false,
            };
        let slashes = c == b'/' && n == b'/' && matches!(self.lang, Lang::Js | Lang::Php);
        let dashes = c == b'-' && n == b'-' && matches!(self.lang, Lang::Lua | Lang::AppleScript);
        if hash || slashes || dashes {
            if dashes && self.lang == Lang::Lua && self.rest()[2..].starts_with('[') {
                self.i += 2;
                if self.long_bracket().is_some() {
                    return true;
                }
            }
            while self.i < self.s.len() && self.peek(0) != b'\n' {
                self.i += 1;
            }
            return true;
        }
        let block = (c == b'/' && n == b'*' && matches!(self.lang, Lang::Js | Lang::Php))
            || (c == b'(' && n == b'*' && self.lang == Lang::AppleScript);
        if block {
            let end = if c == b'/' { "*/" } else { "*)" };
            match self.rest()[2..].find(end) {
                Some(at) => self.i += 2 + at + 2,
                None => self.i = self.s.len(),
            }
            return true;
        }
        false
    }

    fn quoted(&mut self, q: u8) {
        // Python's triple quotes.
        if self.lang == Lang::Python && self.peek(1) == q && self.peek(2) == q {
            self.i += 3;
            let end = if q == b'"' { "\"\"\"" } else { "'''" };
            let (raw, after) = match self.rest().find(end) {
                Some(at) => (&self.src[self.i..self.i + at], self.i + at + 3),
                None => (self.rest(), self.s.len()),
            };
            let text = unescape(raw, self.lang);
            self.i = after;
            self.out.push(Tok::Str { text, interp: false });
            return;
        }
        self.i += 1;
        let raw = self.delimited(q, q);
        let single = q == b'\'';
        let (text, interp) = match self.lang {
            // Single quotes keep their text but for `\\` and `\'` in Perl, Ruby and PHP.
            Lang::Perl | Lang::Ruby | Lang::Php if single => (raw.replace("\\\\", "\\").replace("\\'", "'"), false),
            Lang::Perl | Lang::Ruby | Lang::Php => {
                let interp = raw.contains('$') || raw.contains("#{");
                (unescape(&raw, self.lang), interp)
            }
            Lang::AppleScript => (raw.replace("\\\"", "\"").replace("\\\\", "\\"), false),
            _ => (unescape(&raw, self.lang), false),
        };
        self.out.push(Tok::Str { text, interp });
    }

    fn backtick(&mut self) {
        self.i += 1;
        let raw = self.delimited(b'`', b'`');
        match self.lang {
            Lang::Js => {
                let interp = raw.contains("${");
                self.out.push(Tok::Str {
                    text: unescape(&raw, self.lang),
                    interp,
                });
            }
            Lang::Perl | Lang::Ruby | Lang::Php => {
                let interp = raw.contains('$') || raw.contains("#{");
                self.out.push(Tok::Cmd { text: raw, interp });
            }
            _ => {}
        }
    }

    /// The raw text up to the closing `close` (nesting `open` when it differs), with the cursor
    /// after it; escapes are kept for the caller to resolve.
    fn delimited(&mut self, open: u8, close: u8) -> String {
        let start = self.i;
        let mut depth = 0usize;
        let mut class = false;
        while self.i < self.s.len() {
            let c = self.peek(0);
            if c == b'\\' {
                self.i += 2;
                continue;
            }
            // A `/` inside a regex character class does not close it.
            if open == b'/' && close == b'/' {
                if c == b'[' {
                    class = true;
                } else if c == b']' {
                    class = false;
                }
            }
            if c == close && depth == 0 && !class {
                let body = self.src[start..self.i].to_string();
                self.i += 1;
                return body;
            }
            if open != close {
                if c == open {
                    depth += 1;
                } else if c == close {
                    depth -= 1;
                }
            }
            self.i += 1;
        }
        self.i = self.s.len();
        self.src[start.min(self.s.len())..].to_string()
    }

    fn flags(&mut self) {
        while self.peek(0).is_ascii_alphabetic() {
            self.i += 1;
        }
    }

    fn number(&mut self) {
        let start = self.i;
        while self.i < self.s.len() {
            let c = self.peek(0);
            let dot = c == b'.' && self.peek(1).is_ascii_digit();
            if c.is_ascii_alphanumeric() || c == b'_' || dot {
                self.i += 1;
            } else {
                break;
            }
        }
        self.out.push(Tok::Num(self.src[start..self.i].to_string()));
    }

    fn word(&mut self) {
        let start = self.i;
        while self.i < self.s.len() {
            let c = self.peek(0);
            if c == b'_' || c.is_ascii_alphanumeric() || c >= 0x80 || (c == b'$' && self.lang == Lang::Js) {
                self.i += 1;
            } else {
                break;
            }
        }
        // Ruby's `system?`, `exist?`, `delete!`.
        if self.lang == Lang::Ruby && matches!(self.peek(0), b'?' | b'!') && self.peek(1) != b'=' {
            self.i += 1;
        }
        // Python's string prefixes: `r'..'`, `b".."`, `f'..'`, `rb'..'`.
        let w = &self.src[start..self.i];
        if self.lang == Lang::Python
            && w.len() <= 2
            && w.chars().all(|c| "rRbBuUfF".contains(c))
            && matches!(self.peek(0), b'\'' | b'"')
        {
            let raw = w.contains(['r', 'R']);
            let f = w.contains(['f', 'F']);
            self.python_prefixed(raw, f);
            return;
        }
        self.out.push(Tok::Word(w.to_string()));
    }

    fn python_prefixed(&mut self, raw: bool, f: bool) {
        let q = self.peek(0);
        let triple = self.peek(1) == q && self.peek(2) == q;
        let body = if triple {
            self.i += 3;
            let end = if q == b'"' { "\"\"\"" } else { "'''" };
            match self.rest().find(end) {
                Some(at) => {
                    let b = self.src[self.i..self.i + at].to_string();
                    self.i += at + 3;
                    b
                }
                None => {
                    let b = self.rest().to_string();
                    self.i = self.s.len();
                    b
                }
            }
        } else {
            self.i += 1;
            self.delimited(q, q)
        };
        let text = if raw { body } else { unescape(&body, Lang::Python) };
        self.out.push(Tok::Str {
            interp: f && text.contains('{'),
            text,
        });
    }

    /// Whether the token before is a Perl builtin that takes a list or a hash (`keys %ENV`,
    /// `print @lines`), so a `%` or `@` after it starts a variable.
    fn after_perl_list_operator(&self) -> bool {
        self.prev().and_then(Tok::word).is_some_and(|w| {
            matches!(
                w,
                "keys"
                    | "values"
                    | "each"
                    | "delete"
                    | "exists"
                    | "defined"
                    | "scalar"
                    | "print"
                    | "say"
                    | "printf"
                    | "push"
                    | "unshift"
                    | "pop"
                    | "shift"
                    | "splice"
                    | "sort"
                    | "reverse"
                    | "map"
                    | "grep"
                    | "join"
                    | "my"
                    | "our"
                    | "local"
                    | "return"
                    | "foreach"
                    | "for"
            )
        })
    }

    /// A sigiled variable (`$x`, `@list`, `%ENV`, `$_`, `$#a`, `$!`, `@ivar`), if one starts
    /// here.
    fn sigil(&mut self) -> bool {
        let c = self.peek(0);
        let n = self.peek(1);
        let ident = |b: u8| b == b'_' || b.is_ascii_alphabetic();
        let named = match (self.lang, c) {
            (Lang::Perl, b'$') => ident(n) || n == b'#' || n.is_ascii_digit(),
            (Lang::Perl, b'@' | b'%' | b'&') => {
                ident(n) && (self.operand_expected() || self.after_perl_list_operator())
            }
            (Lang::Php, b'$') => ident(n),
            (Lang::Ruby, b'$') => ident(n),
            (Lang::Ruby, b'@') => ident(n) || n == b'@',
            (Lang::Js, b'$') => true,
            _ => false,
        };
        // Perl's and Ruby's punctuation variables: `$!`, `$@`, `$0`, `$$`, `$<`.
        let punctuation =
            !named && c == b'$' && matches!(self.lang, Lang::Perl | Lang::Ruby) && b"!@/\\,;.&`'+<>$~?".contains(&n);
        if punctuation {
            self.out.push(Tok::Word(self.src[self.i..self.i + 2].to_string()));
            self.i += 2;
            return true;
        }
        if !named {
            return false;
        }
        let start = self.i;
        self.i += 1;
        if matches!(self.peek(0), b'#' | b'@') && self.lang != Lang::Js {
            self.i += 1;
        }
        while self.i < self.s.len() {
            let b = self.peek(0);
            if b == b'_' || b.is_ascii_alphanumeric() || (b == b'$' && self.lang == Lang::Js) {
                self.i += 1;
            } else if self.lang == Lang::Perl && b == b':' && self.peek(1) == b':' && ident(self.peek(2)) {
                self.i += 2;
            } else {
                break;
            }
        }
        self.out.push(Tok::Word(self.src[start..self.i].to_string()));
        true
    }

    /// Whether a `/` here opens a regex literal (JS, Ruby, Perl).
    fn regex_here(&self) -> bool {
        if !matches!(self.lang, Lang::Js | Lang::Ruby | Lang::Perl) {
            return false;
        }
        if self.operand_expected() {
            return true;
        }
        // `gsub /x/, 'y'`, `split /,/`: a word, a space, then a `/` not followed by one.
        matches!(self.lang, Lang::Ruby | Lang::Perl)
            && matches!(self.prev(), Some(Tok::Word(_)))
            && self.i > 0
            && self.s[self.i - 1] == b' '
            && !matches!(self.peek(1), b' ' | b'=')
    }

    /// The quote-like literals of Perl (`q{}`, `qq{}`, `qw{}`, `qx{}`, `m{}`, `qr{}`,
    /// `s{}{}`, `tr{}{}`, `y{}{}`), Ruby's percent literals (`%w[]`, `%q()`, `%x()`, `%r{}`)
    /// and Lua's long strings (`[[..]]`), if one starts here.
    fn lang_literal(&mut self) -> bool {
        match self.lang {
            Lang::Perl => self.perl_quote_like(),
            Lang::Ruby => self.ruby_percent(),
            Lang::Lua if self.peek(0) == b'[' && matches!(self.peek(1), b'[' | b'=') => match self.long_bracket() {
                Some(text) => {
                    self.out.push(Tok::Str { text, interp: false });
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    /// Lua's `[[..]]` or `[==[..]==]` at the cursor: its text, with the cursor after it.
    fn long_bracket(&mut self) -> Option<String> {
        let rest = self.rest();
        let eq = rest[1..].bytes().take_while(|b| *b == b'=').count();
        if rest.as_bytes().get(1 + eq) != Some(&b'[') {
            return None;
        }
        let close = format!("]{}]", "=".repeat(eq));
        let body_start = self.i + 2 + eq;
        let body = &self.src[body_start..];
        let (text, after) = match body.find(&close) {
            Some(at) => (body[..at].to_string(), body_start + at + close.len()),
            None => (body.to_string(), self.s.len()),
        };
        self.i = after;
        Some(text.strip_prefix('\n').map(str::to_string).unwrap_or(text))
    }

    fn perl_quote_like(&mut self) -> bool {
        let rest = self.rest();
        let word_end = rest
            .bytes()
            .position(|b| !b.is_ascii_alphanumeric() && b != b'_')
            .unwrap_or(rest.len());
        let word = rest[..word_end].to_string();
        let word = word.as_str();
        if !matches!(word, "q" | "qq" | "qw" | "qx" | "m" | "qr" | "s" | "tr" | "y") {
            return false;
        }
        // `$h{s}`, `s => 1`, `->s(..)`: a hash key or method, not a literal.
        if self.prev().is_some_and(|t| t.is("->") || t.is("{")) && rest[word.len()..].starts_with('}') {
            return false;
        }
        let after = &rest[word.len()..];
        let delim = after.trim_start_matches([' ', '\t']).bytes().next().unwrap_or(0);
        let space = after.len() - after.trim_start_matches([' ', '\t']).len();
        let ok = !(delim == 0
            || delim.is_ascii_alphanumeric()
            || matches!(delim, b'_' | b',' | b';' | b')' | b'=' | b'\n' | b' ')
            || (space > 0 && delim == b'#'));
        if !ok || after.starts_with("=>") || self.prev().is_some_and(|t| t.is("->")) {
            return false;
        }
        self.i += word.len() + space + 1;
        let close = closing(delim);
        let first = self.delimited(delim, close);
        let tok = match word {
            "s" | "tr" | "y" => {
                let second = if close != delim {
                    while matches!(self.peek(0), b' ' | b'\t' | b'\n') {
                        self.i += 1;
                    }
                    let d2 = self.peek(0);
                    self.i += 1;
                    self.delimited(d2, closing(d2))
                } else {
                    self.delimited(delim, close)
                };
                self.flags();
                Tok::Subst(first, second)
            }
            "m" | "qr" => {
                self.flags();
                Tok::Regex(first)
            }
            "qx" => Tok::Cmd {
                interp: first.contains('$'),
                text: first,
            },
            "q" => Tok::Str {
                text: first,
                interp: false,
            },
            "qw" => {
                // A list of words: spelled back as a parenthesised list of strings.
                self.out.push(Tok::Punct("("));
                for w in first.split_whitespace() {
                    self.out.push(Tok::Str {
                        text: w.to_string(),
                        interp: false,
                    });
                    self.out.push(Tok::Punct(","));
                }
                Tok::Punct(")")
            }
            _ => Tok::Str {
                interp: first.contains('$'),
                text: unescape(&first, Lang::Perl),
            },
        };
        self.out.push(tok);
        true
    }

    fn ruby_percent(&mut self) -> bool {
        if self.peek(0) != b'%' || !self.operand_expected() {
            return false;
        }
        let (kind, delim) = match self.peek(1) {
            k @ (b'w' | b'W' | b'i' | b'I' | b'q' | b'Q' | b'x' | b'r') => (k, self.peek(2)),
            d @ (b'(' | b'[' | b'{' | b'<' | b'|' | b'!') => (b'Q', d),
            _ => return false,
        };
        if delim.is_ascii_alphanumeric() || delim == b' ' || delim == 0 {
            return false;
        }
        self.i += if self.peek(1) == delim { 2 } else { 3 };
        let body = self.delimited(delim, closing(delim));
        match kind {
            b'w' | b'W' | b'i' | b'I' => {
                self.out.push(Tok::Punct("["));
                for w in body.split_whitespace() {
                    self.out.push(Tok::Str {
                        text: w.to_string(),
                        interp: false,
                    });
                    self.out.push(Tok::Punct(","));
                }
                self.out.push(Tok::Punct("]"));
            }
            b'x' => self.out.push(Tok::Cmd {
                interp: body.contains("#{"),
                text: body,
            }),
            b'r' => {
                self.flags();
                self.out.push(Tok::Regex(body));
            }
            b'q' => self.out.push(Tok::Str {
                text: body,
                interp: false,
            }),
            _ => self.out.push(Tok::Str {
                interp: body.contains("#{"),
                text: unescape(&body, Lang::Ruby),
            }),
        }
        true
    }

    fn punct(&mut self) {
        let rest = self.rest();
        // Ruby's symbols (`:name`) are strings: where an operand starts, or as an argument
        // after a space (`puts :sym`; a ternary's `:` has a space after it).
        let spaced = self.i > 0 && self.s[self.i - 1] == b' ';
        if self.lang == Lang::Ruby
            && rest.starts_with(':')
            && rest[1..].starts_with(|c: char| c == '_' || c.is_ascii_alphabetic())
            && (self.operand_expected() || spaced)
        {
            self.i += 1;
            let start = self.i;
            while self.peek(0) == b'_' || self.peek(0).is_ascii_alphanumeric() {
                self.i += 1;
            }
            let text = self.src[start..self.i].to_string();
            self.out.push(Tok::Str { text, interp: false });
            return;
        }
        match PUNCT.iter().find(|p| rest.starts_with(**p)) {
            Some(p) => {
                // Python's `//` is floor division; JS's and PHP's were taken as comments.
                self.i += p.len();
                self.out.push(Tok::Punct(p));
            }
            None => {
                // Any other character: skip it (one whole UTF-8 character).
                let len = rest.chars().next().map_or(1, char::len_utf8);
                self.i += len;
            }
        }
    }
}

/// The closing delimiter of a bracketing opening one, else the same character.
fn closing(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        b'{' => b'}',
        b'<' => b'>',
        other => other,
    }
}

/// The text of a double-quoted literal with its escapes resolved (`\n`, `\t`, `\xHH`,
/// `\uHHHH`, `\u{H..}`, octal, Lua's decimal `\ddd`); an unknown escape keeps its character.
pub(super) fn unescape(raw: &str, lang: Lang) -> String {
    if !raw.contains('\\') {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let take_radix = |n: usize, radix: u32, chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
            let mut v = 0u32;
            let mut got = 0;
            while got < n {
                match chars.peek().and_then(|d| d.to_digit(radix)) {
                    Some(d) => {
                        v = v * radix + d;
                        chars.next();
                        got += 1;
                    }
                    None => break,
                }
            }
            (got > 0).then(|| char::from_u32(v)).flatten()
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0'..='9' if lang == Lang::Lua => {
                let mut digits = String::from(e);
                while digits.len() < 3 && chars.peek().is_some_and(char::is_ascii_digit) {
                    digits.extend(chars.next());
                }
                out.extend(digits.parse::<u32>().ok().and_then(char::from_u32));
            }
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                let mut n = 1;
                while n < 3 && chars.peek().is_some_and(|d| d.is_digit(8)) {
                    v = v * 8 + chars.next().and_then(|d| d.to_digit(8)).unwrap_or(0);
                    n += 1;
                }
                out.extend(char::from_u32(v));
            }
            'x' => {
                if chars.peek() == Some(&'{') {
                    chars.next();
                    let v = take_radix(8, 16, &mut chars);
                    if chars.peek() == Some(&'}') {
                        chars.next();
                    }
                    out.extend(v);
                } else {
                    match take_radix(2, 16, &mut chars) {
                        Some(v) => out.push(v),
                        None => out.push('x'),
                    }
                }
            }
            'u' => {
                if chars.peek() == Some(&'{') {
                    chars.next();
                    let v = take_radix(8, 16, &mut chars);
                    if chars.peek() == Some(&'}') {
                        chars.next();
                    }
                    out.extend(v);
                } else {
                    match take_radix(4, 16, &mut chars) {
                        Some(v) => out.push(v),
                        None => out.push('u'),
                    }
                }
            }
            'e' if matches!(lang, Lang::Perl | Lang::Ruby | Lang::Php) => out.push('\u{1b}'),
            '\n' => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(code: &str, lang: Lang) -> Vec<String> {
        lex(code, lang)
            .into_iter()
            .filter_map(|t| match t {
                Tok::Str { text, .. } => Some(text),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn strings_in_each_language() {
        assert_eq!(strs(r#"os.system("rm \x2drf /") # 'x'"#, Lang::Python), ["rm -rf /"]);
        assert_eq!(strs(r"p = r'^(\s*)assert '", Lang::Python), [r"^(\s*)assert "]);
        assert_eq!(strs("x = '''a\nb''' + \"c\"", Lang::Python), ["a\nb", "c"]);
        assert_eq!(strs("// 'no'\nrequire('fs') /* 'no' */", Lang::Js), ["fs"]);
        assert_eq!(strs(r"print q{a b}, 'c\n'", Lang::Perl), ["a b", r"c\n"]);
        assert_eq!(strs("local s = [[x y]] -- 'no'", Lang::Lua), ["x y"]);
        assert_eq!(strs(r#"system("\114\109")"#, Lang::Lua), ["rm"]);
        assert_eq!(strs("puts :sym", Lang::Ruby), ["sym"]);
    }

    #[test]
    fn regexes_substitutions_and_commands() {
        let t = lex(r"s.replace(/\bit\(/g, 'it.skip(')", Lang::Js);
        assert!(t.contains(&Tok::Regex(r"\bit\(".into())), "{t:?}");
        let t = lex(r"a / b / c", Lang::Js);
        assert!(!t.iter().any(|t| matches!(t, Tok::Regex(_))), "{t:?}");
        let t = lex(r"s/t\.Fatalf/t.Logf/g", Lang::Perl);
        assert_eq!(t, [Tok::Subst(r"t\.Fatalf".into(), "t.Logf".into())]);
        let t = lex("`rm -rf ~`", Lang::Ruby);
        assert!(matches!(&t[0], Tok::Cmd { text, .. } if text == "rm -rf ~"), "{t:?}");
        let t = lex("%x(id)", Lang::Ruby);
        assert!(matches!(&t[0], Tok::Cmd { text, .. } if text == "id"), "{t:?}");
        let t = lex("fork while 1", Lang::Perl);
        assert_eq!(t[0], Tok::Word("fork".into()));
        let t = lex("print $ENV{HOME}; keys %ENV", Lang::Perl);
        assert!(
            t.contains(&Tok::Word("$ENV".into())) && t.contains(&Tok::Word("%ENV".into())),
            "{t:?}"
        );
    }
}

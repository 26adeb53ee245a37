//! Loading one task file: YAML → [`TaskSpec`], with errors that carry `file:line:col`, say what
//! is wrong and how to fix it (unknown keys suggest the nearest valid key).
//!
//! This is the one module that knows the YAML library (serde_yaml_ng). Loading runs in three
//! passes:
//!
//! 1. a generic pass into `serde_yaml_ng::Value` catches syntax errors, several documents and
//!    duplicate keys;
//! 2. the typed pass deserializes the file as written (`spec::raw`) with enums written as
//!    one-key maps (`- file_exists: a`, `agent: {process: {..}}`);
//! 3. the kind: the file as written becomes a [`TaskSpec`] whose [`TaskKind`] carries the
//!    kind's own blocks (`kind: tdd` needs `tdd:`, a block or `expect.*` of another kind is an
//!    error, only multi-round kinds write `solution` as rounds);
//! 4. semantic checks: every regex in the expectations compiles, the `workspace:` fixture exists.
//!
//! serde_yaml_ng's errors are rewritten into [`SpecError::Invalid`]: its dotted path becomes the
//! "where", serde's wording (`unknown field`, `invalid type: ..., expected u32`) becomes plain
//! words, and positions it reports poorly are recovered by scanning the text:
//!
//! - serde errors (unknown key/variant, wrong type) come with the offending scalar's position,
//!   also inside nested block or flow maps; kept as is;
//! - duplicate keys and a second key in a one-key map (`- file_exists: a` + `command: b`) are
//!   reported at the start of the map: moved to the offending key;
//! - a type error on a block value (`key:` then `- a` below) is moved up to the key;
//! - libyaml syntax errors are often noticed a line late (a key without `:`, an unclosed `{`,
//!   one line indented differently): moved to the line that holds the mistake, or, where two
//!   lines disagree on indentation, the help names the other line;
//! - semantic errors (the kind's blocks, regexes, fixture dirs, tool inputs) have no position at
//!   all: found by searching their section of the text for the key or the value.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::model::{EnvironmentSpec, Expect, FileExpect, Step, TaskKind, TaskSpec, ValidatorSpec};
use super::raw::{RawExpect, RawKind, RawTask};
use super::values::SolutionItem;
use crate::agent::{AgentRefError, AgentRegistry};
pub use crate::suggest::nearest;

/// Why a spec could not be loaded. Every variant names the file; parse and semantic errors name
/// the line and column too.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `file:line:col: message` followed by an optional `help: ...` line.
    #[error("{}", format_located(path, *line, *column, message, help.as_deref()))]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
        help: Option<String>,
    },
}

impl SpecError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            SpecError::Io { path, .. } | SpecError::Invalid { path, .. } => path,
        }
    }

    /// `(line, column)`, 1-based, for located errors.
    pub fn location(&self) -> Option<(usize, usize)> {
        match self {
            SpecError::Io { .. } => None,
            SpecError::Invalid { line, column, .. } => Some((*line, *column)),
        }
    }

    pub(crate) fn invalid(path: &Path, (line, column): (usize, usize), message: String, help: Option<String>) -> Self {
        SpecError::Invalid {
            path: path.to_path_buf(),
            line,
            column,
            message,
            help,
        }
    }
}

fn format_located(path: &Path, line: usize, column: usize, message: &str, help: Option<&str>) -> String {
    match help {
        Some(h) => format!("{}:{}:{}: {}\n  help: {}", path.display(), line, column, message, h),
        None => format!("{}:{}:{}: {}", path.display(), line, column, message),
    }
}

/// An error about requirement `id` named by the task at `path` (`requirements: [..]`),
/// located at the id after the `requirements` key (else at the key, else at 1:1).
pub fn requirement_error(path: &Path, id: &str, message: String, help: &str) -> SpecError {
    let text = super::limits::read(path).unwrap_or_default();
    let key = text.find("requirements");
    let pos = key.map(|k| text[k..].find(id).map_or(k, |i| k + i));
    let (line, column) = pos.map_or((1, 1), |p| {
        let before = &text[..p];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, column)
    });
    SpecError::invalid(path, (line, column), message, Some(help.to_string()))
}

/// Reads and parses the task file at `path`; its `agent:`, if any, names a built-in agent.
pub fn load_task(path: &Path) -> Result<TaskSpec, SpecError> {
    load_task_with(path, &AgentRegistry::builtin())
}

/// Reads and parses the task file at `path`; its `agent:`, if any, names an agent of `agents`.
pub fn load_task_with(path: &Path, agents: &AgentRegistry) -> Result<TaskSpec, SpecError> {
    let text = super::limits::read(path)?;
    parse_task_with(&text, path, agents)
}

/// Parses task YAML `text` with the built-in agents (see `parse_task_with`).
pub fn parse_task(text: &str, path: &Path) -> Result<TaskSpec, SpecError> {
    parse_task_with(text, path, &AgentRegistry::builtin())
}

/// Parses task YAML `text`. `path` names the file in error messages, and a `workspace:` fixture
/// is resolved relative to its directory (it must exist); `agent:` must name an agent of
/// `agents`.
pub fn parse_task_with(text: &str, path: &Path, agents: &AgentRegistry) -> Result<TaskSpec, SpecError> {
    if is_blank(text) {
        return Err(SpecError::invalid(
            path,
            (1, 1),
            "the task file is empty".into(),
            Some("a task needs at least `description:`, usually also `prompt:`, `solution:` and `expect:`; `medin schema` prints every key".into()),
        ));
    }
    let raw: RawTask = from_yaml(text, path, Doc::Task).map_err(|e| {
        // A file that is no task at all says so, rather than what is wrong with it as one.
        let task_keys = struct_keys("TaskSpec");
        let task_keys: Vec<&str> = task_keys.iter().map(String::as_str).collect();
        super::foreign::not_a_task(path, &Source::new(text).top_level_keys(), &task_keys).unwrap_or(e)
    })?;
    let mut spec = typed(raw, text, path, agents)?;
    super::taskdir::apply_defaults(&mut spec, path)?;
    check_verify(&spec, text, path)?;
    check_regexes(&spec, text, path)?;
    check_steps(&spec, text, path)?;
    check_workspace(&spec, text, path)?;
    check_cassette(&spec, text, path)?;
    check_environment(&spec, text, path)?;
    check_check_paths(&spec, text, path)?;
    check_protected(&spec, text, path)?;
    Ok(spec)
}

/// The task's id: its `id:`, else the file name without extension (`gt-002-create-file`).
#[cfg(test)]
pub fn task_id(spec: &TaskSpec, path: &Path) -> String {
    spec.id.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    })
}

/// `a/b/../c` → `a/c`, without touching the file system (for messages).
fn tidy(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir
                if matches!(out.components().next_back(), Some(std::path::Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Which kind of file is being read; it names the top level in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Doc {
    Task,
    Suite,
    /// YAML inside a PRD.md: its front matter or a requirement's `checks` block.
    Prd,
}

impl Doc {
    fn root(self) -> &'static str {
        match self {
            Doc::Task => "the task",
            Doc::Suite => "medin.yaml",
            Doc::Prd => "the PRD's YAML",
        }
    }
    fn file(self) -> &'static str {
        match self {
            Doc::Task => "a task file",
            Doc::Suite => "medin.yaml",
            Doc::Prd => "a PRD's YAML",
        }
    }
    fn example_keys(self) -> &'static str {
        match self {
            Doc::Task => "`description:` and `prompt:`",
            Doc::Suite => "`suites:` and `thresholds:`",
            Doc::Prd => "`version:` and `last_updated:`",
        }
    }
}

/// True when `text` holds nothing but whitespace, comments and document markers.
pub(crate) fn is_blank(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .all(|l| l.is_empty() || l.starts_with('#') || l == "---" || l == "...")
}

/// Deserializes `text` as `T` (enums as one-key maps), turning every error into a located
/// [`SpecError::Invalid`].
pub(crate) fn from_yaml<T: DeserializeOwned>(text: &str, path: &Path, doc: Doc) -> Result<T, SpecError> {
    // Pass 0: the limits (nesting, entries, values after aliases), before anything is built.
    let structure = super::limits::check_structure(text, path)?;
    let translate = |e: serde_yaml_ng::Error| translate(&e, text, path, doc, structure);
    // Pass 1: syntax, several documents, duplicate keys.
    serde_yaml_ng::from_str::<serde_yaml_ng::Value>(text).map_err(translate)?;
    // Pass 2: the typed model.
    serde_yaml_ng::with::singleton_map_recursive::deserialize(serde_yaml_ng::Deserializer::from_str(text))
        .map_err(translate)
}

// ------------------------------------------------------------------ error translation

/// One serde_yaml_ng error, taken apart.
struct Raw {
    /// Dotted path to the value (`limits.max_turns`, `expect.validate[0]`); empty at the root.
    at: String,
    message: String,
    /// 1-based line and column, if the library gave one.
    pos: Option<(usize, usize)>,
}

fn split_error(e: &serde_yaml_ng::Error) -> Raw {
    let pos = e.location().map(|l| (l.line(), l.column()));
    let shown = e.to_string();
    let mut message = strip_positions(&shown);
    let mut at = String::new();
    // serde_yaml_ng writes `path: message`. Known serde messages mark where the path ends even
    // when a key holds spaces; otherwise a path is taken to have none.
    const SERDE: &[&str] = &[
        ": unknown field `",
        ": unknown variant `",
        ": missing field `",
        ": duplicate field `",
        ": invalid type: ",
        ": invalid value: ",
        ": invalid length ",
    ];
    if let Some(i) = SERDE.iter().filter_map(|m| message.find(m)).min() {
        at = message[..i].to_string();
        message = message[i + 2..].to_string();
    } else if let Some((head, tail)) = message.split_once(": ") {
        if !head.is_empty() && !head.contains(' ') && !head.contains('`') && !head.contains('"') {
            at = head.to_string();
            message = tail.to_string();
        }
    }
    Raw { at, message, pos }
}

/// Removes the ` at line N column M` / ` at position N` parts the library appends.
fn strip_positions(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(" at ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 4..];
        let skip = position_len(after);
        if skip == 0 {
            out.push_str(" at ");
            rest = after;
        } else {
            rest = &after[skip..];
        }
    }
    out.push_str(rest);
    out
}

/// The position after `, while ... at line N column M` in a libyaml message (the context mark).
fn context_position(shown: &str) -> Option<(usize, usize)> {
    let (_, ctx) = shown.split_once(", while ")?;
    let (_, at) = ctx.rsplit_once(" at line ")?;
    let (line, col) = at.split_once(" column ")?;
    Some((line.trim().parse().ok()?, col.trim().parse().ok()?))
}

/// Length of a leading `line N column M` or `position N`, 0 if there is none.
fn position_len(s: &str) -> usize {
    fn digits(s: &str) -> usize {
        s.bytes().take_while(u8::is_ascii_digit).count()
    }
    if let Some(r) = s.strip_prefix("line ") {
        let d = digits(r);
        if d > 0 {
            if let Some(r2) = r[d..].strip_prefix(" column ") {
                let d2 = digits(r2);
                if d2 > 0 {
                    return 5 + d + 8 + d2;
                }
            }
        }
    } else if let Some(r) = s.strip_prefix("position ") {
        let d = digits(r);
        if d > 0 {
            return 9 + d;
        }
    }
    0
}

/// Text between the first pair of backticks after `prefix`.
fn ticked_after<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = message.strip_prefix(prefix)?;
    let rest = rest.strip_prefix('`')?;
    rest.split_once('`').map(|(w, _)| w)
}

/// Every backticked word in `text`.
fn ticked_all(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

fn where_is(at: &str, doc: Doc) -> String {
    if at.is_empty() || at == "." {
        doc.root().to_string()
    } else {
        format!("`{at}`")
    }
}

fn key_at(at: &str, doc: Doc) -> String {
    if at.is_empty() || at == "." {
        format!("the top level of {}", doc.file())
    } else {
        format!("`{at}`")
    }
}

fn did_you_mean(word: &str, valid: &[&str], what: &str) -> String {
    match nearest(word, valid) {
        Some(n) => format!("did you mean `{n}`?"),
        None if valid.is_empty() => format!("no {what}s are allowed here"),
        None => format!("valid {what}s here: {}", valid.join(", ")),
    }
}

fn translate(
    e: &serde_yaml_ng::Error,
    text: &str,
    path: &Path,
    doc: Doc,
    structure: super::limits::Structure,
) -> SpecError {
    let Raw { at, message, pos } = split_error(e);
    // The library's own guards against alias loops carry no position: the aliases are where
    // to look.
    if message.contains("repetition limit exceeded") || (message.contains("recursion limit exceeded") && pos.is_none())
    {
        return SpecError::invalid(
            path,
            structure.first_alias.or(pos).unwrap_or((1, 1)),
            "aliases (`*name`) in this file repeat their anchors too often to load (the YAML library's limit)".into(),
            Some("an alias repeats its anchor's whole value each time it is used: use fewer aliases, or anchors on smaller values".into()),
        );
    }
    let mut pos0 = pos.unwrap_or((1, 1));
    if message.contains("end of stream") {
        // An unterminated quote or bracket: the place it was opened is the useful one.
        if let Some(ctx) = context_position(&e.to_string()) {
            pos0 = ctx;
        }
    }
    let src = Source::new(text);
    let here = where_is(&at, doc);

    // unknown key in a struct
    if let Some(key) = ticked_after(&message, "unknown field ") {
        let valid = expected_list(&message);
        return SpecError::invalid(
            path,
            pos0,
            format!("unknown key `{key}` in {here}"),
            Some(did_you_mean(key, &valid, "key")),
        );
    }
    // unknown enum variant: a value (`outcome: sucess`) or a one-key map's key (`- file_exist: a`)
    if let Some(word) = ticked_after(&message, "unknown variant ") {
        let valid = expected_list(&message);
        let as_key = src.is_key_at(pos0);
        let noun = variant_noun(&at, as_key);
        let msg = if as_key {
            format!("unknown {noun} `{word}` in {here}")
        } else {
            format!("unknown {noun} `{word}` for {}", key_at(&at, doc))
        };
        let mut help = did_you_mean(word, &valid, noun);
        if help.starts_with("did you mean") && valid.len() > 1 {
            help = format!("{help} (one of: {})", valid.join(", "));
        }
        return SpecError::invalid(path, pos0, msg, Some(help));
    }
    if let Some(key) = ticked_after(&message, "missing field ") {
        let help = if key == "description" && (at.is_empty() || at == ".") {
            "add a line such as `description: Create hello.txt and check its content` (one line: what the task checks)"
                .to_string()
        } else {
            format!("add `{key}: ...` to {here}")
        };
        return SpecError::invalid(
            path,
            pos0,
            format!("missing required key `{key}` in {here}"),
            Some(help),
        );
    }
    if let Some(key) = ticked_after(&message, "duplicate field ") {
        let p = src.find_key_in_map(pos0, key, 2).unwrap_or(pos0);
        return duplicate(path, p, key, &here);
    }
    if let Some(rest) = message.strip_prefix("duplicate entry with key ") {
        let key = rest.trim_matches('"').trim_matches('`').to_string();
        let p = src.find_key_in_map(pos0, &key, 2).unwrap_or(pos0);
        return duplicate(path, p, &key, &here);
    }
    if message.starts_with("duplicate entry") {
        return SpecError::invalid(
            path,
            pos0,
            format!("duplicate key in {here}"),
            Some("a key may appear once per map; remove one of them".into()),
        );
    }
    if message == "invalid type: unit variant, expected newtype variant" {
        let word = src.word_at(pos0).unwrap_or_else(|| "this entry".into());
        return SpecError::invalid(
            path,
            pos0,
            format!("`{word}` needs a value in {here}"),
            Some(format!("write `{word}: <value>`; see `medin schema` for what it takes")),
        );
    }
    if message == "invalid value: map, expected map with a single key" {
        let noun = variant_noun(&at, true);
        if src.starts_empty_map(pos0) {
            return SpecError::invalid(
                path,
                pos0,
                format!("empty {noun} in {here}"),
                Some(format!("write one key, e.g. {}", variant_example(noun))),
            );
        }
        let (p, second) = src.nth_key_in_map(pos0, 2).unwrap_or((pos0, String::new()));
        let first = src.word_at(pos0).unwrap_or_default();
        return SpecError::invalid(
            path,
            p,
            format!(
                "{} {noun} is a one-key map, but `{second}` follows `{first}` in {here}",
                if noun.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                }
            ),
            Some(if noun == "agent" {
                format!("an agent is one name: keep `{first}`, and indent `{second}` less if it is a key of its own")
            } else {
                format!("put `- {second}: ..` on its own list item")
            }),
        );
    }
    if let Some(rest) = message.strip_prefix("invalid type: ") {
        if let Some((found, expected)) = rest.split_once(", expected ") {
            return invalid_type(path, &src, pos0, &at, found, expected, doc);
        }
    }
    if let Some(rest) = message.strip_prefix("invalid value: ") {
        if let Some((found, expected)) = rest.split_once(", expected ") {
            return SpecError::invalid(
                path,
                pos0,
                format!(
                    "{} must be {}, found {}",
                    key_at(&at, doc),
                    human_expected(expected),
                    human_found(found)
                ),
                None,
            );
        }
    }
    if let Some(rest) = message.strip_prefix("invalid length ") {
        return SpecError::invalid(path, pos0, format!("wrong number of entries in {here}: {rest}"), None);
    }
    if message.starts_with("deserializing from YAML containing more than one document") {
        if src.second_document().is_none() {
            if let Some((ln, indent)) = src.first_content_line().filter(|(_, i)| *i > 0) {
                return SpecError::invalid(
                    path,
                    (ln, indent + 1),
                    format!("top-level keys must start at the beginning of the line, but line {ln} is indented by {indent} spaces"),
                    Some("remove the indentation before the top-level keys (`description:`, `prompt:`, ...)".into()),
                );
            }
        }
        let p = src.second_document().unwrap_or(pos0);
        return SpecError::invalid(
            path,
            p,
            format!("{} holds one YAML document, but a second one starts here", doc.file()),
            Some("remove this `---` line, or move the rest into its own file".into()),
        );
    }
    if e.location().is_some() && at.is_empty() && looks_like_syntax(&message) {
        return syntax_error(path, &message, &e.to_string(), &src, pos0);
    }

    // A custom message (durations, sizes, solution steps): `what is wrong; how to fix it`.
    let mut p = pos0;
    // One about a value it names first (`` `PATH` cannot be passed ``): the library points at
    // the list that holds it; point at the value.
    if let Some((value, _)) = message.strip_prefix('`').and_then(|rest| rest.split_once('`')) {
        p = src.value_from(pos0, value).unwrap_or(pos0);
    }
    if let Some(rest) = message.split_once("but `").map(|(_, r)| r) {
        if let Some((extra, _)) = rest.split_once("` follows") {
            p = src.find_key_in_map(pos0, extra, 1).unwrap_or(pos0);
        }
    }
    let (msg, help) = match message.split_once("; ") {
        Some((m, h)) => (m.to_string(), Some(h.to_string())),
        None => (message.clone(), None),
    };
    let msg = if at.is_empty() || at == "." {
        msg
    } else {
        format!("`{at}`: {msg}")
    };
    SpecError::invalid(path, p, msg, help)
}

fn duplicate(path: &Path, p: (usize, usize), key: &str, here: &str) -> SpecError {
    SpecError::invalid(
        path,
        p,
        format!("duplicate key `{key}` in {here}"),
        Some("a key may appear once per map; remove one of them or merge their values".into()),
    )
}

/// The valid names serde lists after `expected` in an unknown-field/variant message.
fn expected_list(message: &str) -> Vec<&str> {
    match message.split_once(", expected ") {
        Some((_, list)) => ticked_all(list),
        None => Vec::new(),
    }
}

fn variant_noun(at: &str, as_key: bool) -> &'static str {
    let last = at.rsplit('.').next().unwrap_or(at);
    if last.starts_with("validate[") {
        "validator"
    } else if at == "agent" || last == "agent" {
        "agent"
    } else if at == "kind" {
        "task kind"
    } else if last == "outcome" {
        "outcome"
    } else if last == "result" {
        "result"
    } else if last == "type" {
        "evidence type"
    } else if last == "error" {
        "error code"
    } else if as_key {
        "key"
    } else {
        "value"
    }
}

fn variant_example(noun: &str) -> &'static str {
    match noun {
        "validator" => "`- file_exists: hello.txt` or `- command: \"make test\"`",
        "agent" => "`agent: oracle` or `agent: {process: {command: ./my-agent}}`",
        _ => "`key: value`",
    }
}

/// For a value written as a block below its key (`key:` then `- a` on the next lines), the
/// position of `key:`; the library reports the first line of the block.
fn key_line_above(src: &Source, pos: (usize, usize), at: &str) -> Option<(usize, usize)> {
    let key = at.rsplit('.').next()?;
    if key.ends_with(']') {
        return None;
    }
    let (prev, text) = src.previous_content_line(pos.0)?;
    let t = text.split(" #").next().unwrap_or(text).trim_end();
    let t_start = t.trim_start();
    let body = t_start.strip_prefix("- ").unwrap_or(t_start);
    let body = body.trim_matches(['"', '\'']);
    if body
        .strip_prefix(key)
        .is_some_and(|r| r.trim_matches(['"', '\'']).trim() == ":")
    {
        let col =
            text.len() - t_start.len() + (t_start.len() - t_start.strip_prefix("- ").unwrap_or(t_start).len()) + 1;
        return Some((prev, col));
    }
    None
}

fn invalid_type(
    path: &Path,
    src: &Source,
    pos: (usize, usize),
    at: &str,
    found: &str,
    expected: &str,
    doc: Doc,
) -> SpecError {
    let found_h = human_found(found);
    if at.is_empty() || at == "." {
        return SpecError::invalid(
            path,
            pos,
            format!(
                "{} must be a map of keys such as {}, found {found_h}",
                doc.file(),
                doc.example_keys()
            ),
            Some("write one `key: value` per line at the start of the line; `medin schema` prints every key".into()),
        );
    }
    let expected_h = human_expected(expected);
    let pos = if found == "sequence" || found == "map" {
        key_line_above(src, pos, at).unwrap_or(pos)
    } else {
        pos
    };
    let key = at.rsplit('.').next().unwrap_or(at);
    let key = key.split('[').next().unwrap_or(key);
    let help = if expected.contains("sequence") && !found.starts_with("map") {
        Some(format!(
            "write a list: `{key}: [a, b]`, or one `- item` per line below `{key}:`"
        ))
    } else if expected.contains("sequence") {
        Some(format!("write a list: one `- item` per line below `{key}:`"))
    } else if expected.starts_with("struct ") || expected == "a map" {
        let keys = expected.strip_prefix("struct ").map(struct_keys).unwrap_or_default();
        let listed = if keys.is_empty() {
            String::new()
        } else {
            format!("; its keys: {}", keys.join(", "))
        };
        Some(format!(
            "write a map below `{key}:`, one `name: value` per line, or `{key}: {{ name: value }}`{listed}"
        ))
    } else if (expected == "a string" || expected.starts_with("a one-key"))
        && !found.starts_with("map")
        && !found.starts_with("sequence")
    {
        Some("put the value in quotes so YAML reads it as text".to_string())
    } else if expected.starts_with('u') && found.starts_with("integer") {
        Some("use a number that is 0 or more".to_string())
    } else {
        None
    };
    SpecError::invalid(path, pos, format!("`{at}` must be {expected_h}, found {found_h}"), help)
}

/// The keys of a model struct, by its Rust name (`Limits`), from the published schemas.
fn struct_keys(name: &str) -> Vec<String> {
    static DEFS: std::sync::OnceLock<Vec<(String, Vec<String>)>> = std::sync::OnceLock::new();
    let defs = DEFS.get_or_init(|| {
        let mut out = Vec::new();
        for (root, text) in [
            ("TaskSpec", super::schema::task_schema_json()),
            ("SuiteConfig", super::schema::suite_schema_json()),
        ] {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            let keys = |s: &serde_json::Value| -> Vec<String> {
                s.get("properties")
                    .and_then(|p| p.as_object())
                    .map(|o| o.keys().cloned().collect())
                    .unwrap_or_default()
            };
            out.push((root.to_string(), keys(&v)));
            if let Some(defs) = v.get("$defs").and_then(|d| d.as_object()) {
                for (n, d) in defs {
                    out.push((n.clone(), keys(d)));
                }
            }
        }
        out
    });
    defs.iter()
        .find(|(n, _)| n == name)
        .or_else(|| defs.iter().find(|(n, _)| n.starts_with(&format!("{name}_"))))
        .map(|(_, k)| k.clone())
        .unwrap_or_default()
}

fn human_expected(expected: &str) -> String {
    match expected {
        "u8" => "a whole number from 0 to 255".into(),
        "u16" => "a whole number from 0 to 65535".into(),
        "u32" | "u64" | "usize" => "a whole number (0 or more)".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".into(),
        "f32" | "f64" => "a number".into(),
        "a boolean" => "`true` or `false`".into(),
        "a sequence" => "a list".into(),
        "map with a single key" => "a one-key map".into(),
        e if e.starts_with("struct ") || e == "a map" => "a map".into(),
        e => e.to_string(),
    }
}

fn human_found(found: &str) -> String {
    if let Some(s) = found.strip_prefix("string ") {
        format!("the text {s}")
    } else if let Some(n) = found.strip_prefix("integer ") {
        format!("the number {}", n.trim_matches('`'))
    } else if let Some(n) = found.strip_prefix("floating point ") {
        format!("the number {}", n.trim_matches('`'))
    } else if let Some(b) = found.strip_prefix("boolean ") {
        format!("the boolean {b}")
    } else {
        match found {
            "sequence" => "a list".into(),
            "map" => "a map".into(),
            "unit value" => "an empty value".into(),
            f => f.to_string(),
        }
    }
}

fn looks_like_syntax(message: &str) -> bool {
    const LIBYAML: &[&str] = &[
        "mapping values are not allowed",
        "did not find expected",
        "found unexpected",
        "found character that cannot start any token",
        "while scanning",
        "while parsing",
        "found undefined tag handle",
        "could not find expected",
        "found a tab character",
        "block sequence entries are not allowed",
        "invalid leading UTF-8",
        "control characters are not allowed",
    ];
    LIBYAML.iter().any(|m| message.contains(m))
}

/// A libyaml syntax error, moved to the line that holds the mistake where libyaml reports a
/// later one (a key without `:`, an unclosed `{`/`[`, one line indented differently from its
/// siblings), with a hint for its kind.
fn syntax_error(path: &Path, message: &str, shown: &str, src: &Source, pos: (usize, usize)) -> SpecError {
    let ctx = context_position(shown);
    let msg = format!("YAML syntax error: {message}");
    let err = |p: (usize, usize), m: String, h: String| SpecError::invalid(path, p, m, Some(h));
    let indent = |l: &str| l.len() - l.trim_start().len();
    let here = src.line(pos.0).unwrap_or("");

    if message.contains("tab") || here.contains('\t') {
        return err(pos, msg, "YAML indentation must use spaces, not tabs".into());
    }
    if message.contains("quoted scalar") {
        return err(
            ctx.unwrap_or(pos),
            msg,
            "a quoted value is not closed; add the closing quote".into(),
        );
    }
    // An unclosed `{`/`[`: libyaml notices on a later line.
    let back = if message.contains("flow") { 30 } else { 1 };
    if let Some((p, open)) = src.unclosed_bracket(pos.0, back) {
        let close = if open == '{' { '}' } else { ']' };
        return err(
            p,
            format!("YAML syntax error: this `{open}` is not closed"),
            format!("close it with `{close}` (a flow collection may span lines, but must end before the next key), or add the missing comma between its items"),
        );
    }
    if message.contains("while parsing a flow") {
        let (open, close) = if message.contains("flow sequence") {
            ('[', ']')
        } else {
            ('{', '}')
        };
        return err(
            ctx.unwrap_or(pos),
            msg,
            format!("a `{open}` opened here is not closed with `{close}`, or a comma is missing between its items"),
        );
    }
    if message.contains("while scanning a simple key") {
        let p = ctx.unwrap_or(pos);
        let word = src.word_at(p).unwrap_or_else(|| "key".into());
        return err(
            p,
            format!("YAML syntax error: line {} has no `:` after its key", p.0),
            format!("write `{word}: value`"),
        );
    }
    let structural = message.contains("mapping values are not allowed")
        || message.contains("did not find expected key")
        || message.contains("expected '-' indicator");
    if structural {
        // The first line of a block text (`|`, `>`) sets its indentation.
        if let Some((prev, text)) = src.previous_content_line(pos.0) {
            if src.in_block_scalar(prev)
                && indent(text) > indent(here)
                && src.opens_block_scalar(prev.saturating_sub(1))
            {
                return err(
                    (prev, indent(text) + 1),
                    format!(
                        "YAML syntax error: line {prev} starts a block text indented {} spaces, but the next line is indented {}",
                        indent(text),
                        indent(here)
                    ),
                    "the first line of a `|` or `>` text sets its indentation: indent its lines alike".into(),
                );
            }
        }
        // This line should be a key but has no `:`.
        let content = |l: &str| -> String {
            let t = l.split(" #").next().unwrap_or(l).trim();
            t.strip_prefix("- ").unwrap_or(t).trim().to_string()
        };
        let lacks_colon = |t: &str| {
            !t.is_empty() && !t.contains(": ") && !t.ends_with(':') && !t.starts_with(['{', '[', '"', '\'', '|', '>'])
        };
        if message.contains("did not find expected key") && lacks_colon(&content(here)) {
            let word: String = content(here)
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '{')
                .collect();
            return err(
                (pos.0, indent(here) + 1),
                format!("YAML syntax error: line {} has no `:` after its key", pos.0),
                format!("write `{word}: ...`"),
            );
        }
        if let Some((prev, text)) = src.previous_content_line(pos.0) {
            // The previous line is a key without `:`; YAML read it as text running on.
            let prev_content_col = indent(text) + if text.trim_start().starts_with("- ") { 2 } else { 0 };
            if prev_content_col <= indent(here) && lacks_colon(&content(text)) && !src.in_block_scalar(prev) {
                let word: String = content(text).chars().take_while(|c| !c.is_whitespace()).collect();
                return err(
                    (prev, prev_content_col + 1),
                    format!("YAML syntax error: line {prev} has no `:` after its key"),
                    format!("write `{word}: ...`"),
                );
            }
            if message.contains("expected '-' indicator")
                && indent(text) == indent(here)
                && text.trim_start().starts_with("- ")
            {
                return err(
                    pos,
                    msg,
                    format!(
                        "this line lines up with the `- ` item on line {prev} but is not an item: indent it by {} spaces to belong to that item, or start it with `- `",
                        indent(text) + 2
                    ),
                );
            }
            let prev_has_value = content(text)
                .split_once(": ")
                .is_some_and(|(_, v)| !v.trim().is_empty());
            if indent(here) > indent(text) && prev_has_value && message.contains("mapping values are not allowed") {
                return err(
                    pos,
                    msg,
                    format!(
                        "line {prev} already has a value, so this line cannot belong to it: indent it like line {prev} ({} spaces), or quote a value that contains `: `",
                        indent(text)
                    ),
                );
            }
            if indent(text) != indent(here) {
                // The odd one out is the line whose indentation matches no enclosing level and
                // no neighbour: when this line lines up with an enclosing level or the lines
                // after it, the previous line (the first of its block) is the mistake.
                let levels = src.enclosing_indents(prev);
                let next_same = src
                    .next_content_line(pos.0)
                    .is_some_and(|(_, n)| indent(n) == indent(here));
                let prev_first = src
                    .previous_content_line(prev)
                    .is_some_and(|(_, pp)| indent(pp) < indent(text));
                if indent(text) > indent(here) && prev_first && next_same && !levels.contains(&indent(here)) {
                    return err(
                        (prev, indent(text) + 1),
                        format!(
                            "YAML syntax error: line {prev} is indented {} spaces, but the entries after it are indented {}",
                            indent(text),
                            indent(here)
                        ),
                        format!("indent line {prev} by {} spaces like the entries after it", indent(here)),
                    );
                }
                return err(
                    pos,
                    msg,
                    format!(
                        "this line is indented {} spaces but line {prev} above is indented {}; entries of one map or list must line up, and a key's children are indented deeper than the key",
                        indent(here),
                        indent(text)
                    ),
                );
            }
        }
        if message.contains("mapping values are not allowed") {
            return err(
                pos,
                msg,
                "check the indentation of this line against the one above, and quote values that contain `: ` (e.g. `prompt: \"a: b\"`)".into(),
            );
        }
    }
    if message.contains("cannot start any token") {
        return err(
            pos,
            msg,
            "quote the value: YAML gives `@`, `` ` ``, `%` and `|`/`>` at the start of a value a special meaning"
                .into(),
        );
    }
    err(
        pos,
        msg,
        "check the indentation (spaces only, children indented deeper than their key) and quote values with special characters".into(),
    )
}

// ------------------------------------------------------------------ the text, for locations

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// The spec text split into lines, for recovering positions the YAML library reports poorly.
struct Source<'a> {
    lines: Vec<&'a str>,
}

impl<'a> Source<'a> {
    fn new(text: &'a str) -> Self {
        Source {
            lines: text.lines().collect(),
        }
    }

    /// Line `n`, 1-based.
    fn line(&self, n: usize) -> Option<&'a str> {
        n.checked_sub(1).and_then(|i| self.lines.get(i).copied())
    }

    /// The text from `(line, col)` on (col 1-based, in characters).
    fn rest_at(&self, (line, col): (usize, usize)) -> Option<&'a str> {
        let l = self.line(line)?;
        let byte = l
            .char_indices()
            .nth(col.saturating_sub(1))
            .map(|(b, _)| b)
            .unwrap_or(l.len());
        Some(&l[byte..])
    }

    /// The plain word (key or value) starting at `pos`, unquoted.
    fn word_at(&self, pos: (usize, usize)) -> Option<String> {
        let rest = self.rest_at(pos)?.trim_start_matches(['{', ' ']);
        let rest = rest.trim_start_matches(['"', '\'']);
        let w: String = rest
            .chars()
            .take_while(|c| !matches!(c, ':' | ',' | '}' | '"' | '\'' | ' ' | '#'))
            .collect();
        (!w.is_empty()).then_some(w)
    }

    /// The first place at or after `pos` where `value` is written as a whole word (not inside
    /// a longer name): where a list the library points at holds the item an error is about.
    fn value_from(&self, pos: (usize, usize), value: &str) -> Option<(usize, usize)> {
        if value.is_empty() {
            return None;
        }
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        (pos.0..=self.lines.len()).find_map(|n| {
            let l = self.line(n)?;
            let from = if n == pos.0 {
                l.char_indices()
                    .nth(pos.1.saturating_sub(1))
                    .map_or(l.len(), |(b, _)| b)
            } else {
                0
            };
            let mut at = from;
            while let Some(b) = l[at..].find(value) {
                let start = at + b;
                let end = start + value.len();
                let before = l[..start].chars().next_back();
                let after = l[end..].chars().next();
                if !before.is_some_and(is_word) && !after.is_some_and(is_word) {
                    return Some((n, l[..start].chars().count() + 1));
                }
                at = end;
            }
            None
        })
    }

    /// Whether the scalar at `pos` is a key (`word:` follows).
    fn is_key_at(&self, pos: (usize, usize)) -> bool {
        let Some(rest) = self.rest_at(pos) else {
            return false;
        };
        let Some(word) = self.word_at(pos) else {
            return false;
        };
        let Some(i) = rest.find(word.as_str()) else {
            return false;
        };
        let after = rest[i + word.len()..].trim_start_matches(['"', '\'']).trim_start();
        after.starts_with(':')
    }

    fn starts_empty_map(&self, pos: (usize, usize)) -> bool {
        self.rest_at(pos).is_some_and(|r| r.replace(' ', "").starts_with("{}"))
    }

    /// The last line before line `ln` (1-based) that is not blank or a comment.
    fn previous_content_line(&self, ln: usize) -> Option<(usize, &'a str)> {
        (1..ln).rev().find_map(|n| {
            let l = self.line(n)?;
            let t = l.trim();
            (!t.is_empty() && !t.starts_with('#')).then_some((n, l))
        })
    }

    /// The last unclosed `{`/`[` on line `ln` or on the `back` content lines before it.
    fn unclosed_bracket(&self, ln: usize, back: usize) -> Option<((usize, usize), char)> {
        let mut n = ln;
        for _ in 0..=back {
            let line = self.line(n)?;
            let t = line.trim_start();
            if !t.is_empty() && !t.starts_with('#') {
                let mut stack: Vec<(usize, char)> = Vec::new();
                let mut quote: Option<char> = None;
                let mut prev = ' ';
                for (ci, c) in line.chars().enumerate() {
                    match quote {
                        Some(q) if c == q => quote = None,
                        Some(_) => {}
                        None => match c {
                            '"' | '\'' if matches!(prev, ' ' | '{' | '[' | ',' | ':') => quote = Some(c),
                            '#' if prev == ' ' => break,
                            '{' | '[' => stack.push((ci, c)),
                            '}' | ']' => {
                                stack.pop();
                            }
                            _ => {}
                        },
                    }
                    prev = c;
                }
                if let Some((ci, c)) = stack.last() {
                    return Some(((n, ci + 1), *c));
                }
                if n != ln && indent_of(line) == 0 {
                    return None;
                }
            }
            n = n.checked_sub(1).filter(|n| *n >= 1)?;
        }
        None
    }

    /// Indentations of the lines that enclose line `ln` (each less indented than the last).
    fn enclosing_indents(&self, ln: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut current = self.line(ln).map(indent_of).unwrap_or(0);
        for n in (1..ln).rev() {
            let Some(l) = self.line(n) else { break };
            let t = l.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if indent_of(l) < current {
                current = indent_of(l);
                out.push(current);
                if l.trim_start().starts_with("- ") {
                    out.push(current + 2);
                }
            }
        }
        out
    }

    /// Whether line `ln` ends with a block-scalar indicator (`key: |`, `- >-`).
    fn opens_block_scalar(&self, ln: usize) -> bool {
        self.line(ln).is_some_and(|l| {
            let t = l.split(" #").next().unwrap_or(l).trim_end();
            let last = t.rsplit([' ', ':']).next().unwrap_or("");
            !last.is_empty() && (last.starts_with('|') || last.starts_with('>')) && last.len() <= 3
        })
    }

    /// Whether line `ln` is inside a block scalar: some earlier, less indented content line
    /// opens one and every line between is indented at least as much as `ln`.
    fn in_block_scalar(&self, ln: usize) -> bool {
        let Some(me) = self.line(ln) else {
            return false;
        };
        let mine = indent_of(me);
        for n in (1..ln).rev() {
            let Some(l) = self.line(n) else { return false };
            if l.trim().is_empty() {
                continue;
            }
            if indent_of(l) < mine {
                return self.opens_block_scalar(n);
            }
        }
        false
    }

    /// The first line after line `ln` (1-based) that is not blank or a comment.
    fn next_content_line(&self, ln: usize) -> Option<(usize, &'a str)> {
        (ln + 1..=self.lines.len()).find_map(|n| {
            let l = self.line(n)?;
            let t = l.trim();
            (!t.is_empty() && !t.starts_with('#')).then_some((n, l))
        })
    }

    /// The keys of the top-level block map, in order, with their positions.
    fn top_level_keys(&self) -> Vec<(String, (usize, usize))> {
        (1..=self.lines.len())
            .filter(|&ln| self.line(ln).is_some_and(|l| !l.starts_with([' ', '#', '-', '{', '['])))
            .filter(|&ln| self.is_key_at((ln, 1)))
            .filter_map(|ln| self.word_at((ln, 1)).map(|w| (w, (ln, 1))))
            .collect()
    }

    /// The first line that is not blank, a comment or `---`: its number and indentation.
    fn first_content_line(&self) -> Option<(usize, usize)> {
        self.lines.iter().enumerate().find_map(|(i, l)| {
            let t = l.trim();
            (!t.is_empty() && !t.starts_with('#') && t != "---").then(|| (i + 1, l.len() - l.trim_start().len()))
        })
    }

    /// The 1-based line where a second YAML document starts (`---` after content).
    fn second_document(&self) -> Option<(usize, usize)> {
        let mut content = false;
        for (i, l) in self.lines.iter().enumerate() {
            let t = l.trim_end();
            if t == "---" || t.starts_with("--- ") {
                if content {
                    return Some((i + 1, 1));
                }
            } else if !t.trim().is_empty() && !t.trim_start().starts_with('#') {
                content = true;
            }
        }
        None
    }

    /// Keys of the map that starts at `start` (the position of its first key, or of its `{`),
    /// in order, with their positions. Block maps: keys at the first key's column, until a line
    /// indented less. Flow maps: top-level keys on the following text up to the closing `}`.
    fn keys_in_map(&self, start: (usize, usize)) -> Vec<((usize, usize), String)> {
        let mut out = Vec::new();
        let Some(first) = self.rest_at(start) else {
            return out;
        };
        if first.starts_with('{') {
            // Flow map: walk characters, tracking depth and quotes.
            let mut depth = 0i32;
            let mut quote: Option<char> = None;
            let mut expect_key = false;
            for ln in start.0..=self.lines.len() {
                let Some(line) = self.line(ln) else { break };
                let skip = if ln == start.0 { start.1.saturating_sub(1) } else { 0 };
                for (ci, c) in line.chars().enumerate().skip(skip) {
                    if let Some(q) = quote {
                        if c == q {
                            quote = None;
                        }
                        continue;
                    }
                    match c {
                        '{' | '[' => {
                            depth += 1;
                            expect_key = depth == 1 && c == '{';
                        }
                        '}' | ']' => {
                            depth -= 1;
                            if depth == 0 {
                                return out;
                            }
                        }
                        ',' if depth == 1 => expect_key = true,
                        '#' if ci == 0 || line.chars().nth(ci - 1) == Some(' ') => break,
                        ' ' => {}
                        _ if expect_key && depth == 1 => {
                            expect_key = false;
                            if let Some(w) = self.word_at((ln, ci + 1)) {
                                out.push(((ln, ci + 1), w));
                            }
                            if c == '"' || c == '\'' {
                                quote = Some(c);
                            }
                        }
                        '"' | '\'' => quote = Some(c),
                        _ => {}
                    }
                }
            }
            return out;
        }
        // Block map.
        let col = start.1;
        for ln in start.0..=self.lines.len() {
            let Some(line) = self.line(ln) else { break };
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let indent = line.chars().take_while(|c| *c == ' ').count() + 1;
            let key_col = if ln == start.0 {
                col
            } else if indent < col {
                // A `- ` item marker at a lower indent whose key sits at `col` starts a new item.
                break;
            } else if indent == col {
                col
            } else {
                continue;
            };
            if ln != start.0 && trimmed.starts_with("- ") && indent == col {
                break;
            }
            if self.is_key_at((ln, key_col)) {
                if let Some(w) = self.word_at((ln, key_col)) {
                    out.push(((ln, key_col), w));
                }
            } else if ln != start.0 {
                break;
            }
        }
        out
    }

    /// The `nth` (1-based) occurrence of `key` among the keys of the map starting at `start`.
    fn find_key_in_map(&self, start: (usize, usize), key: &str, nth: usize) -> Option<(usize, usize)> {
        self.keys_in_map(start)
            .into_iter()
            .filter(|(_, k)| k == key)
            .nth(nth - 1)
            .map(|(p, _)| p)
    }

    fn nth_key_in_map(&self, start: (usize, usize), nth: usize) -> Option<((usize, usize), String)> {
        self.keys_in_map(start).into_iter().nth(nth - 1)
    }

    /// Where the value `value` of a `key:` entry is written. Prefers a line holding both the key
    /// and the value (raw, or escaped as YAML writes it in quotes), then any line holding the
    /// value, then the first line with the key.
    /// The search starts after the keys of `anchors` were seen in order (e.g.
    /// `["expect", "final"]`), so an equal value elsewhere is not taken for it.
    fn locate_value_under(&self, anchors: &[&str], key: &str, value: &str) -> Option<(usize, usize)> {
        let mut from_line = 0;
        for (i, a) in anchors.iter().enumerate() {
            let column = (i == 0).then_some(1);
            match self.locate_key_from(a, column, from_line) {
                Some((l, _)) => from_line = l - 1,
                None => break,
            }
        }
        if from_line > 0 {
            let tail = Source {
                lines: self.lines[from_line..].to_vec(),
            };
            if let Some((l, c)) = tail.locate_value_plain(key, value) {
                return Some((l + from_line, c));
            }
        }
        self.locate_value_plain(key, value)
    }

    fn locate_value_plain(&self, key: &str, value: &str) -> Option<(usize, usize)> {
        let first_line = value.lines().next().unwrap_or(value);
        let forms: Vec<String> = vec![
            first_line.to_string(),
            first_line.replace('\\', "\\\\").replace('"', "\\\""),
            first_line.replace('\'', "''"),
        ];
        let key_pat = format!("{key}:");
        let find = |need_key: bool| {
            self.lines.iter().enumerate().find_map(|(i, l)| {
                if need_key && !l.contains(&key_pat) {
                    return None;
                }
                let search_from = if need_key {
                    l.find(&key_pat).map(|k| k + key_pat.len()).unwrap_or(0)
                } else {
                    0
                };
                forms.iter().filter(|f| !f.is_empty()).find_map(|f| {
                    l[search_from..].find(f.as_str()).map(|b| {
                        let byte = search_from + b;
                        let mut col = l[..byte].chars().count() + 1;
                        // Point at the opening quote when the value is quoted.
                        if col > 1 && matches!(l[..byte].chars().last(), Some('"' | '\'')) {
                            col -= 1;
                        }
                        (i + 1, col)
                    })
                })
            })
        };
        find(true)
            .or_else(|| find(false))
            .or_else(|| self.locate_key(key, None))
    }

    /// The `index`-th (0-based) item of the block list under the top-level key `list`: its
    /// 1-based line and the line where the next item (or the list) ends, exclusive.
    fn list_item(&self, list: &str, index: usize) -> Option<(usize, usize)> {
        let (key_line, _) = self.locate_key(list, Some(1))?;
        let mut items = Vec::new();
        let mut item_indent = None;
        let mut end = self.lines.len() + 1;
        for ln in key_line + 1..=self.lines.len() {
            let line = self.line(ln)?;
            let t = line.trim_start();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let indent = line.len() - t.len();
            let is_item = t == "-" || t.starts_with("- ");
            match item_indent {
                None if is_item => item_indent = Some(indent),
                None => {
                    end = ln;
                    break;
                }
                Some(_) => {}
            }
            if item_indent == Some(indent) && is_item {
                items.push(ln);
            } else if item_indent.is_some_and(|ii| indent < ii || (indent == ii && !is_item)) || indent == 0 && !is_item
            {
                end = ln;
                break;
            }
        }
        let start = *items.get(index)?;
        Some((start, items.get(index + 1).copied().unwrap_or(end)))
    }

    /// Position of `key:` written as a key on lines `[from, to)`.
    fn key_between(&self, key: &str, from: usize, to: usize) -> Option<(usize, usize)> {
        (from..to).find_map(|ln| self.key_on_line(key, ln, 1))
    }

    /// Position of the first `key:` written as a key on line `ln`, at column `from_col` or later.
    fn key_on_line(&self, key: &str, ln: usize, from_col: usize) -> Option<(usize, usize)> {
        let line = self.line(ln)?;
        let mut search = line
            .char_indices()
            .nth(from_col.saturating_sub(1))
            .map(|(b, _)| b)
            .unwrap_or(line.len());
        while let Some(b) = line[search..].find(key) {
            let s = search + b;
            let before = line[..s].chars().last();
            let after = line[s + key.len()..].trim_start_matches(['"', '\'']).trim_start();
            let before_ok = match before {
                None => true,
                Some(c) => matches!(c, ' ' | '{' | ',' | '"' | '\'' | '-'),
            };
            if before_ok && after.starts_with(':') {
                let s = if matches!(before, Some('"' | '\'')) { s - 1 } else { s };
                return Some((ln, line[..s].chars().count() + 1));
            }
            search = s + key.len();
        }
        None
    }

    /// Position of the step's content on an item line `- write_file: ..` (after the `- `).
    fn item_start(&self, ln: usize) -> (usize, usize) {
        let line = self.line(ln).unwrap_or("");
        let t = line.trim_start();
        let after_dash = t.strip_prefix('-').map(str::trim_start).unwrap_or(t);
        (ln, line.chars().count() - after_dash.chars().count() + 1)
    }

    /// The lines `[start, end)` (1-based) of the top-level key `section`: its own line and the
    /// lines below it, up to the next line that starts at the first column.
    fn section(&self, section: &str) -> Option<(usize, usize)> {
        let (start, _) = self.locate_key(section, Some(1))?;
        let end = (start + 1..=self.lines.len())
            .find(|&n| {
                let l = self.line(n).unwrap_or("");
                let t = l.trim_start();
                !t.is_empty() && !t.starts_with('#') && indent_of(l) == 0
            })
            .unwrap_or(self.lines.len() + 1);
        Some((start, end))
    }

    /// Where `key:` is written as a key of the top-level map `section` (block or flow): of
    /// every `key:` in the section, the least nested one (by indentation, then by open `{`/`[`
    /// before it on its line), so `expect: {files: {tdd: ..}, tdd: ..}` finds the second.
    fn key_in_section(&self, section: &str, key: &str) -> Option<(usize, usize)> {
        let (start, end) = self.section(section)?;
        let depth = |(ln, col): (usize, usize)| {
            let line = self.line(ln).unwrap_or("");
            let before: String = line.chars().take(col - 1).collect();
            let open = before.matches(['{', '[']).count();
            let closed = before.matches(['}', ']']).count();
            (indent_of(line), open.saturating_sub(closed))
        };
        (start..end)
            .flat_map(|ln| {
                let mut found = Vec::new();
                let mut from_col = 1;
                while let Some(pos) = self.key_on_line(key, ln, from_col) {
                    // Past the key (and a quote before it).
                    from_col = pos.1 + key.chars().count() + 1;
                    found.push(pos);
                }
                found
            })
            .min_by_key(|&pos| depth(pos))
    }

    /// The position of the value written after the key at `key_pos` on the same line; the key's
    /// own position when the value is on the lines below.
    fn value_after_key(&self, key_pos: (usize, usize)) -> (usize, usize) {
        let Some(rest) = self.rest_at(key_pos) else {
            return key_pos;
        };
        let Some(colon) = rest.find(':') else {
            return key_pos;
        };
        let after = &rest[colon + 1..];
        let value = after.trim_start();
        if value.is_empty() || value.starts_with('#') {
            return key_pos;
        }
        let skipped = rest[..colon + 1].chars().count() + (after.len() - value.len());
        (key_pos.0, key_pos.1 + skipped)
    }

    /// The position of the `-` that opens the `index`-th item of the top-level list `list`.
    fn list_item_dash(&self, list: &str, index: usize) -> Option<(usize, usize)> {
        let (line, _) = self.list_item(list, index)?;
        let text = self.line(line)?;
        Some((line, indent_of(text) + 1))
    }

    /// Where `word:` is written as a key in the block of the top-level key on line `line`
    /// (that line and the more indented ones after it), block or flow style.
    fn key_in_agent_block(&self, line: usize, word: &str) -> Option<(usize, usize)> {
        if word.is_empty() {
            return None;
        }
        (line..=self.lines.len())
            .take_while(|&n| n == line || self.line(n).is_some_and(|l| l.trim().is_empty() || indent_of(l) > 0))
            .find_map(|n| {
                let l = self.line(n)?;
                l.match_indices(word).find_map(|(b, _)| {
                    let before = l[..b].chars().last();
                    let after = l[b + word.len()..].trim_start_matches(['"', '\'']).trim_start();
                    let starts_word = matches!(before, None | Some(' ' | '{' | ',' | '"' | '\''));
                    (starts_word && after.starts_with(':')).then(|| (n, l[..b].chars().count() + 1))
                })
            })
    }

    /// The first line where `key:` is written as a key, at `indent` (1-based column) if given.
    fn locate_key(&self, key: &str, column: Option<usize>) -> Option<(usize, usize)> {
        self.locate_key_from(key, column, 0)
    }

    /// [`Source::locate_key`] from the 0-based line `from` on; flow maps (`{ key: .. }`) count.
    fn locate_key_from(&self, key: &str, column: Option<usize>, from: usize) -> Option<(usize, usize)> {
        let block = self.lines.iter().enumerate().skip(from).find_map(|(i, l)| {
            let indent = l.chars().take_while(|c| *c == ' ').count() + 1;
            if column.is_some_and(|c| c != indent) {
                return None;
            }
            let t = l.trim_start().trim_start_matches("- ");
            let col = l.chars().count() - t.chars().count() + 1;
            (t.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with(':'))).then_some((i + 1, col))
        });
        if block.is_some() || column.is_some() {
            return block;
        }
        let needles = [format!("{{ {key}:"), format!("{{{key}:"), format!(", {key}:")];
        self.lines.iter().enumerate().skip(from).find_map(|(i, l)| {
            needles
                .iter()
                .find_map(|n| l.find(n.as_str()))
                .map(|b| (i + 1, l[..b].chars().count() + 1))
        })
    }
}

/// Where a validator's command `run` (`command: ..`, or `run: ..` in its map) is written in
/// `expect.validate`: the start of its line's content, for `medin check`'s warnings.
pub(crate) fn locate_validator_command(text: &str, run: &str) -> Option<(usize, usize)> {
    let src = Source::new(text);
    let first_line = run.lines().next().unwrap_or(run);
    src.locate_value_under(&["expect", "validate"], "command", first_line)
        .or_else(|| src.locate_value_under(&["expect", "validate"], "run", first_line))
        .map(|(line, _)| src.item_start(line))
}

// ------------------------------------------------------------------ the agent

/// An agent the registry could not resolve, located at the top-level `agent:` of `text` (a
/// task or `medin.yaml`): at the key it does not know, else at the agent's name.
pub(crate) fn agent_error(path: &Path, text: &str, e: &AgentRefError) -> SpecError {
    let src = Source::new(text);
    let pos = src.locate_key("agent", Some(1)).map(|at| {
        let in_block = |word: &str| src.key_in_agent_block(at.0, word);
        let found = match e {
            AgentRefError::UnknownKey { key, .. } | AgentRefError::InvalidOption { key, .. } => in_block(key),
            _ => None,
        };
        found.or_else(|| {
            // The name: the value after `agent:` (a string, or a flow map's key), else the key
            // of the block map below it.
            let value = src.value_after_key(at);
            if value == at {
                return in_block(e.name());
            }
            let flow = src.rest_at(value).is_some_and(|r| r.starts_with('{'));
            if flow {
                in_block(e.name()).or(Some(value))
            } else {
                Some(value)
            }
        })
    });
    let pos = pos.flatten().unwrap_or((1, 1));
    SpecError::invalid(path, pos, e.to_string(), e.help())
}

// ------------------------------------------------------------------ the kind

/// Pass 3: the file as written → the typed task. The kind decides which blocks the task has:
/// `kind: tdd` needs `tdd:` and `kind: prp` needs `prp:`; a block or `expect.tdd`/`expect.prp`
/// of another kind is an error (a task has one kind); only a multi-round kind writes
/// `solution` as rounds. Every error points at the key that is wrong or missing its partner.
fn typed(raw: RawTask, text: &str, path: &Path, agents: &AgentRegistry) -> Result<TaskSpec, SpecError> {
    let RawTask {
        id,
        description,
        kind,
        tags,
        requirements,
        workspace,
        setup,
        prompt,
        limits,
        policy,
        retry,
        flake_tolerance,
        isolation,
        agent,
        solution,
        expect,
        prp,
        tdd,
        toolchains,
        protected,
        hidden,
        cassette,
        environment,
        verify,
        pass_env,
    } = raw;
    let RawExpect {
        outcome,
        final_report,
        files,
        receipts,
        tool_calls,
        blocked,
        validate,
        metrics,
        prp: expect_prp,
        tdd: expect_tdd,
    } = expect;
    // The agent, by name: one the registry knows, with what it takes.
    let agent = agent
        .map(|written| agents.resolve(&written).map_err(|e| agent_error(path, text, &e)))
        .transpose()?;
    if let Some(bad) = policy
        .egress
        .iter()
        .find(|h| crate::agent::cli::parse_host_port(h).is_none())
    {
        let src = Source::new(text);
        let pos = src.locate_key("egress", None).unwrap_or((1, 1));
        return Err(SpecError::invalid(
            path,
            pos,
            format!("`policy.egress` entry `{bad}` is not `host:port`"),
            Some("write each host with its port, e.g. `egress: [pypi.org:443]`".into()),
        ));
    }
    let kinds = KindCheck {
        kind,
        src: Source::new(text),
        path,
    };
    // Blocks of another kind first: a `prp:` block on a `kind: tdd` task more likely names the
    // wrong kind than a missing `tdd:` block.
    for (present, other) in [(tdd.is_some(), RawKind::Tdd), (prp.is_some(), RawKind::Prp)] {
        if present && other != kind {
            return Err(kinds.foreign_block(other));
        }
    }
    for (present, other) in [
        (expect_tdd.is_some(), RawKind::Tdd),
        (expect_prp.is_some(), RawKind::Prp),
    ] {
        if present && other != kind {
            return Err(kinds.foreign_expect(other));
        }
    }
    let kind = match kind {
        RawKind::Task => TaskKind::Task,
        RawKind::Tdd => TaskKind::Tdd {
            tdd: tdd.ok_or_else(|| {
                kinds.missing_block(
                    "the project's test command the loop runs",
                    "such as `tdd: { test: \"cargo test --offline\" }` (`test:` is the project's real test command; see README, TDD tasks)",
                )
            })?,
            expect: expect_tdd,
        },
        RawKind::Prp => TaskKind::Prp {
            prp: prp.ok_or_else(|| {
                kinds.missing_block(
                    "the requirement and the validation gates that prove it",
                    "with `objective:` and `gates:`, such as `gates: [{ level: 2, description: unit tests, command: \"cargo test\" }]` (see README, PRP tasks)",
                )
            })?,
            expect: expect_prp,
        },
    };
    if let TaskKind::Tdd { tdd, .. } = &kind {
        kinds.check_framework(tdd.framework.as_deref())?;
    }
    if matches!(kind, TaskKind::Task) {
        if let Some(i) = solution.iter().position(|item| matches!(item, SolutionItem::Round(_))) {
            return Err(kinds.rounds_in_one_round_task(i));
        }
        let ends_round = |item: &SolutionItem| matches!(item, SolutionItem::Step(Step::Final(_) | Step::Reply(_)));
        if let Some(end) = solution
            .iter()
            .position(ends_round)
            .filter(|&end| end + 1 < solution.len())
        {
            return Err(kinds.steps_after_the_round(end, end + 1));
        }
    }
    Ok(TaskSpec {
        id,
        description,
        kind,
        tags,
        requirements,
        workspace,
        setup,
        prompt,
        limits,
        policy,
        retry,
        flake_tolerance,
        isolation,
        agent,
        solution: super::values::flatten_rounds(solution),
        expect: Expect {
            outcome,
            final_report,
            files,
            receipts,
            tool_calls,
            blocked,
            validate,
            metrics,
        },
        toolchains,
        protected,
        hidden,
        cassette,
        environment,
        verify,
        pass_env,
    })
}

/// The errors of pass 3, located in the text.
struct KindCheck<'a> {
    /// The kind as written (`task` when `kind:` is left out).
    kind: RawKind,
    src: Source<'a>,
    path: &'a Path,
}

impl KindCheck<'_> {
    /// Where `kind:`'s value is written, if it is.
    fn kind_value(&self) -> Option<(usize, usize)> {
        self.src
            .locate_key("kind", Some(1))
            .map(|p| self.src.value_after_key(p))
    }

    /// "is `kind: prp`", or, with no `kind:` written, "has no `kind:`, so it is `kind: task`".
    fn this_task_is(&self) -> String {
        if self.kind_value().is_some() {
            format!("this task is `kind: {}`", self.kind.name())
        } else {
            format!("this task has no `kind:`, so it is `kind: {}`", self.kind.name())
        }
    }

    /// What to write to make the task `kind: other`.
    fn make_it(&self, other: RawKind) -> String {
        if self.kind_value().is_some() {
            format!("change `kind: {}` to `kind: {}`", self.kind.name(), other.name())
        } else {
            format!("add `kind: {}`", other.name())
        }
    }

    /// A top-level `tdd:`/`prp:` block on a task of another kind.
    fn foreign_block(&self, other: RawKind) -> SpecError {
        let block = other.name();
        let pos = self.src.locate_key(block, Some(1)).unwrap_or((1, 1));
        SpecError::invalid(
            self.path,
            pos,
            format!(
                "a `{block}:` block belongs to a `kind: {block}` task, but {}",
                self.this_task_is()
            ),
            Some(format!(
                "{} if this task is a {}, or remove the `{block}:` block (a task has one kind)",
                self.make_it(other),
                kind_noun(other)
            )),
        )
    }

    /// `expect.tdd`/`expect.prp` on a task of another kind.
    fn foreign_expect(&self, other: RawKind) -> SpecError {
        let key = other.name();
        let pos = self
            .src
            .key_in_section("expect", key)
            .or_else(|| self.src.locate_key("expect", Some(1)))
            .unwrap_or((1, 1));
        SpecError::invalid(
            self.path,
            pos,
            format!(
                "`expect.{key}` checks a {}, but {}",
                kind_noun(other),
                self.this_task_is()
            ),
            Some(format!(
                "remove `expect.{key}`, or {} and add its `{key}:` block",
                self.make_it(other)
            )),
        )
    }

    /// `kind: tdd` without `tdd:`, `kind: prp` without `prp:`: `needs` says what the block is
    /// for, `example` how to write it.
    fn missing_block(&self, needs: &str, example: &str) -> SpecError {
        let kind = self.kind.name();
        SpecError::invalid(
            self.path,
            self.kind_value().unwrap_or((1, 1)),
            format!("`kind: {kind}` needs a `{kind}:` block: {needs}"),
            Some(format!(
                "add a top-level `{kind}:` block, {example}, or remove `kind: {kind}`"
            )),
        )
    }

    /// `tdd.framework` names a runner whose output medin reads.
    fn check_framework(&self, framework: Option<&str>) -> Result<(), SpecError> {
        let Some(name) = framework else {
            return Ok(());
        };
        if name.parse::<crate::testparse::Framework>().is_ok() {
            return Ok(());
        }
        let names: Vec<&str> = crate::testparse::Framework::ALL.iter().map(|f| f.name()).collect();
        let pos = self
            .src
            .key_in_section("tdd", "framework")
            .map(|p| self.src.value_after_key(p))
            .or_else(|| self.src.locate_key("tdd", Some(1)))
            .unwrap_or((1, 1));
        let help = match nearest(name, &names) {
            Some(n) => format!(
                "did you mean `{n}`? (one of: {}; leave it out to detect the runner from the output)",
                names.join(", ")
            ),
            None => format!(
                "use one of {}, or leave it out to detect the runner from the output",
                names.join(", ")
            ),
        };
        Err(SpecError::invalid(
            self.path,
            pos,
            format!("unknown test framework `{name}` in `tdd.framework`"),
            Some(help),
        ))
    }

    /// A round (nested list) in the solution of a task that plays one round.
    fn rounds_in_one_round_task(&self, index: usize) -> SpecError {
        let pos = self
            .src
            .list_item_dash("solution", index)
            .or_else(|| self.src.locate_key("solution", Some(1)))
            .unwrap_or((1, 1));
        SpecError::invalid(
            self.path,
            pos,
            format!(
                "`solution[{index}]` is a round (a nested list of steps), but {}, which plays one round",
                self.this_task_is()
            ),
            Some(
                "write its steps directly under `solution:`, one `- step` each, or make it `kind: tdd` or `kind: prp` if it has several rounds"
                    .into(),
            ),
        )
    }

    /// Steps after the `final`/`reply` that ends a one-round task's only round.
    fn steps_after_the_round(&self, end: usize, first_after: usize) -> SpecError {
        let pos = self
            .src
            .list_item_dash("solution", first_after)
            .or_else(|| self.src.locate_key("solution", Some(1)))
            .unwrap_or((1, 1));
        SpecError::invalid(
            self.path,
            pos,
            format!(
                "`solution[{first_after}]` comes after `solution[{end}]` ended the round, but {}, which plays one round: the oracle would never play it",
                self.this_task_is()
            ),
            Some(
                "end the solution with its `final` (or `reply`) step and remove the steps after it, or make the task `kind: tdd` or `kind: prp` if it has several rounds"
                    .into(),
            ),
        )
    }
}

/// What a task of `kind` runs, for messages.
fn kind_noun(kind: RawKind) -> &'static str {
    match kind {
        RawKind::Task => "one-round task",
        RawKind::Tdd => "TDD loop",
        RawKind::Prp => "PRP run",
    }
}

// ------------------------------------------------------------------ semantic checks

/// Every regex in the expectations must compile; an error points at the regex in the text.
fn check_regexes(spec: &TaskSpec, text: &str, path: &Path) -> Result<(), SpecError> {
    // (path for the message, anchors to find its section, key, regex)
    let mut regexes: Vec<(String, Vec<&str>, &'static str, &str)> = Vec::new();
    for (file, fe) in &spec.expect.files {
        if let Some(m) = &fe.matches {
            regexes.push((
                format!("expect.files.{file}.matches"),
                vec!["expect", "files", file.as_str()],
                "matches",
                m,
            ));
        }
    }
    if let Some(m) = spec.expect.final_report.as_ref().and_then(|f| f.message.as_ref()) {
        regexes.push(("expect.final.message".into(), vec!["expect", "final"], "message", m));
    }
    for (i, r) in spec.expect.receipts.iter().enumerate() {
        if let Some(m) = &r.message {
            regexes.push((
                format!("expect.receipts[{i}].message"),
                vec!["expect", "receipts"],
                "message",
                m,
            ));
        }
    }
    for (i, v) in spec.expect.validate.iter().enumerate() {
        match &v.check {
            ValidatorSpec::FileContains(c) => regexes.push((
                format!("expect.validate[{i}].file_contains.pattern"),
                vec!["expect", "validate"],
                "pattern",
                &c.pattern,
            )),
            ValidatorSpec::Command(c) => {
                if let Some(s) = &c.stdout {
                    regexes.push((
                        format!("expect.validate[{i}].command.stdout"),
                        vec!["expect", "validate"],
                        "stdout",
                        s,
                    ));
                }
            }
            _ => {}
        }
    }
    match &spec.kind {
        TaskKind::Task => {}
        TaskKind::Tdd { expect, .. } => {
            for (file, fe) in expect.iter().flat_map(|e| &e.state) {
                if let FileExpect { matches: Some(m), .. } = fe {
                    regexes.push((
                        format!("expect.tdd.state.{file}.matches"),
                        vec!["expect", "tdd", "state", file.as_str()],
                        "matches",
                        m,
                    ));
                }
            }
        }
        TaskKind::Prp { expect, .. } => {
            if let Some(m) = expect.as_ref().and_then(|e| e.error.as_ref()) {
                regexes.push(("expect.prp.error".into(), vec!["expect", "prp"], "error", m));
            }
        }
    }
    let src = Source::new(text);
    for (at, anchors, key, re) in regexes {
        if let Err(e) = super::pattern::compile(re) {
            let pos = src.locate_value_under(&anchors, key, re).unwrap_or((1, 1));
            let help = match e {
                super::pattern::PatternError::TooLong { .. } => "a pattern need not spell out the whole text: match a short, distinctive part of it",
                _ => "this value is a regular expression (Rust regex syntax): escape special characters such as `(`, `[`, `+`, `*` with `\\` (`\\\\` inside double quotes)",
            };
            return Err(SpecError::invalid(
                path,
                pos,
                format!(
                    "invalid regex `{}` in `{at}`: {}",
                    crate::inert::clip(re, 80),
                    e.detail()
                ),
                Some(help.into()),
            ));
        }
    }
    Ok(())
}

/// The inputs of named tool steps (`- write_file: {..}`) must fit the tool's input schema: known
/// keys, required keys present, simple types. `call:` steps stay unchecked on purpose.
fn check_steps(spec: &TaskSpec, text: &str, path: &Path) -> Result<(), SpecError> {
    let registry = crate::tools::registry();
    let src = Source::new(text);
    for (i, step) in spec.solution.iter().enumerate() {
        let Step::Tool { tool, input } = step else {
            continue;
        };
        let Some(info) = registry.iter().find(|t| t.name == tool) else {
            continue;
        };
        let Some(obj) = input.as_object() else {
            continue;
        };
        let schema = &info.input_schema;
        let props = schema.get("properties").and_then(|p| p.as_object());
        let names: Vec<&str> = props
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        // Located only when there is an error: finding an item scans the text.
        let item = || src.list_item("solution", i);
        let unchecked = format!("(to send it anyway, write `call: {{tool: {tool}, input: ..}}`)");
        for (k, v) in obj {
            let Some(prop) = props.and_then(|p| p.get(k)) else {
                if schema.get("additionalProperties") == Some(&serde_json::Value::Bool(false)) {
                    let pos = item()
                        .and_then(|(l, end)| src.key_between(k, l, end))
                        .or(item().map(|(l, _)| (l, 1)))
                        .unwrap_or((1, 1));
                    let hint = match nearest(k, &names) {
                        Some(n) => format!("did you mean `{n}`? {unchecked}"),
                        None => format!("`{tool}` takes: {} {unchecked}", names.join(", ")),
                    };
                    return Err(SpecError::invalid(
                        path,
                        pos,
                        format!("unknown input `{k}` for `{tool}` in `solution[{i}]`"),
                        Some(hint),
                    ));
                }
                continue;
            };
            if let Some(problem) = type_problem(v, prop) {
                let pos = item()
                    .and_then(|(l, end)| src.key_between(k, l, end))
                    .or(item().map(|(l, _)| (l, 1)))
                    .unwrap_or((1, 1));
                return Err(SpecError::invalid(
                    path,
                    pos,
                    format!("input `{k}` of `{tool}` in `solution[{i}]` {problem}"),
                    Some(unchecked.trim_matches(['(', ')']).to_string()),
                ));
            }
        }
        for req in schema
            .get("required")
            .and_then(|r| r.as_array())
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str())
        {
            if !obj.contains_key(req) {
                let pos = item().map(|(l, _)| src.item_start(l)).unwrap_or((1, 1));
                return Err(SpecError::invalid(
                    path,
                    pos,
                    format!("`{tool}` in `solution[{i}]` needs `{req}`"),
                    Some(format!("add `{req}: ..`; `{tool}` takes: {}", names.join(", "))),
                ));
            }
        }
    }
    Ok(())
}

/// What is wrong with `v` against a simple property schema (`type`, `enum`, `minimum`).
fn type_problem(v: &serde_json::Value, prop: &serde_json::Value) -> Option<String> {
    use serde_json::Value as J;
    if let Some(options) = prop.get("enum").and_then(|e| e.as_array()) {
        if !options.contains(v) {
            let list: Vec<String> = options
                .iter()
                .map(|o| o.as_str().map(str::to_string).unwrap_or_else(|| o.to_string()))
                .collect();
            let near = v
                .as_str()
                .and_then(|s| nearest(s, &list.iter().map(String::as_str).collect::<Vec<_>>()))
                .map(|n| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            return Some(format!("must be one of {}, found `{v}`{near}", list.join(", ")));
        }
        return None;
    }
    let ok = match prop.get("type").and_then(|t| t.as_str()) {
        Some("string") => v.is_string(),
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("boolean") => v.is_boolean(),
        Some("number") => v.is_number(),
        Some("object") => v.is_object(),
        Some("array") => v.is_array(),
        _ => true,
    };
    let kind = prop.get("type").and_then(|t| t.as_str()).unwrap_or("");
    if !ok {
        let kind = match kind {
            "integer" => "a whole number",
            "array" => "a list",
            "object" => "a map",
            "boolean" => "`true` or `false`",
            "string" => "a string",
            _ => "a number",
        };
        return Some(format!("must be {kind}, found `{v}`"));
    }
    if let (Some(min), Some(n)) = (prop.get("minimum").and_then(J::as_i64), v.as_i64()) {
        if n < min {
            return Some(format!("must be at least {min}, found {n}"));
        }
    }
    None
}

/// A `workspace:` fixture must be an existing directory, relative to the spec file.
fn check_workspace(spec: &TaskSpec, text: &str, path: &Path) -> Result<(), SpecError> {
    if let Some(ws) = &spec.workspace {
        check_spec_dir("workspace", ws, text, path)?;
    }
    if let Some(hidden) = &spec.hidden {
        check_spec_dir("hidden", hidden, text, path)?;
    }
    Ok(())
}

/// `verify:` is well-formed: a command, a `files` folder that exists (relative to the spec
/// file) and has a name to be copied in under, a framework medin reads, a workspace-relative
/// reward file, and a pass mark above 0 and at most 1. Errors point at the key in `verify:`.
fn check_verify(spec: &TaskSpec, text: &str, path: &Path) -> Result<(), SpecError> {
    let Some(verify) = &spec.verify else {
        return Ok(());
    };
    let src = Source::new(text);
    let at = |key: &str| {
        src.key_in_section("verify", key)
            .map(|p| src.value_after_key(p))
            .or_else(|| src.locate_key("verify", Some(1)))
            .unwrap_or((1, 1))
    };
    let invalid =
        |key: &str, message: String, help: &str| SpecError::invalid(path, at(key), message, Some(help.into()));
    if verify.command.trim().is_empty() {
        return Err(invalid(
            "command",
            "`verify.command` is empty".into(),
            "name the verifier, e.g. `command: \"python3 -m pytest -rA\"`",
        ));
    }
    if let Some(files) = &verify.files {
        let dir = path.parent().unwrap_or(Path::new("")).join(files);
        let named = matches!(
            tidy(Path::new(files)).components().next_back(),
            Some(std::path::Component::Normal(_))
        );
        if !dir.is_dir() || !named {
            let what = if !named {
                "has no folder name to copy it in under".to_string()
            } else if dir.exists() {
                format!("is not a directory (looked for {})", tidy(&dir).display())
            } else {
                format!("does not exist (looked for {})", tidy(&dir).display())
            };
            return Err(invalid(
                "files",
                format!("verify files `{files}` {what}"),
                "`verify.files` names a folder relative to the spec file (a task directory's `tests/` is the default); it is copied into the workspace folder of the same name for verification",
            ));
        }
    }
    if let Some(name) = &verify.framework {
        if name.parse::<crate::testparse::Framework>().is_err() {
            let names: Vec<&str> = crate::testparse::Framework::ALL.iter().map(|f| f.name()).collect();
            let help = match nearest(name, &names) {
                Some(n) => format!("did you mean `{n}`? (one of: {})", names.join(", ")),
                None => format!("use one of {}, or leave it out to detect the runner", names.join(", ")),
            };
            return Err(invalid(
                "framework",
                format!("unknown test framework `{name}` in `verify.framework`"),
                &help,
            ));
        }
    }
    if let Some(file) = verify.reward_file() {
        let p = Path::new(file);
        let inside = !file.trim().is_empty()
            && p.is_relative()
            && p.components()
                .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
        if !inside {
            return Err(invalid(
                "file",
                format!("`verify.reward.file` `{file}` is not a path inside the workspace"),
                "write it relative to the workspace root, without `..`, e.g. `reward.txt` or `logs/verifier/reward.txt`",
            ));
        }
    }
    let pass_at = verify.pass_at();
    if !(pass_at > 0.0 && pass_at <= 1.0) {
        return Err(invalid(
            "pass_at",
            format!("`verify.reward.pass_at` is {pass_at}, but a reward is a number from 0 to 1"),
            "write the least reward that passes, above 0 and at most 1 (default 1: every test passed), e.g. `pass_at: 0.5`",
        ));
    }
    Ok(())
}

/// A `cassette:` is an existing file, replayed by the model agent the task pins.
fn check_cassette(spec: &TaskSpec, text: &str, path: &Path) -> Result<(), SpecError> {
    let Some(cassette) = &spec.cassette else {
        return Ok(());
    };
    let src = Source::new(text);
    let pos = src
        .locate_key("cassette", Some(1))
        .map(|(l, c)| (l, c + "cassette: ".len()))
        .unwrap_or((1, 1));
    if !spec.agent.as_ref().is_some_and(|a| a.speaks_model_api()) {
        return Err(SpecError::invalid(
            path,
            pos,
            "`cassette:` replays a model agent's exchanges, but the task pins no model agent".into(),
            Some("pin the model that was recorded (`agent: openai:MODEL`, `agent: anthropic:MODEL` or a named model agent), or remove `cassette:`".into()),
        ));
    }
    let file = path.parent().unwrap_or(Path::new("")).join(cassette);
    if file.is_file() {
        return Ok(());
    }
    Err(SpecError::invalid(
        path,
        pos,
        format!("cassette `{cassette}` is not a file (looked for {})", tidy(&file).display()),
        Some("`cassette:` names a cassette file relative to the spec file, as `medin run --record` writes them (`<run folder>/<category>/<task>/attempt-1/cassette.jsonl`)".into()),
    ))
}

/// Every package of `environment:` is a name of its ecosystem (with a version), never
/// something an installer would take as an option or a path.
fn check_environment(spec: &TaskSpec, text: &str, path: &Path) -> Result<(), SpecError> {
    static PATTERNS: std::sync::OnceLock<[(&str, regex::Regex, &str); 3]> = std::sync::OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        [
            (
                "python",
                regex::Regex::new(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?(\s*(==|>=|<=|~=|!=|===|>|<)\s*[A-Za-z0-9.*+!_-]+)*(\s*,\s*(==|>=|<=|~=|!=|>|<)\s*[A-Za-z0-9.*+!_-]+)*$").expect("a valid pattern"),
                "a requirement such as `pytest`, `requests==2.32.3` or `numpy>=2,<3`",
            ),
            (
                "node",
                regex::Regex::new(r"^(@[a-z0-9~][a-z0-9._~-]*/)?[a-z0-9~][a-z0-9._~-]*(@[A-Za-z0-9.^~<>=*+_-]+)?$").expect("a valid pattern"),
                "an npm package such as `left-pad`, `left-pad@1.3.0` or `@scope/pkg@^2`",
            ),
            (
                "apt",
                regex::Regex::new(r"^[a-z0-9][a-z0-9+.-]+$").expect("a valid pattern"),
                "a Debian package name such as `jq` or `libssl-dev`",
            ),
        ]
    });
    let Some(env) = &spec.environment else {
        return Ok(());
    };
    for (kind, re, shape) in patterns.iter() {
        let list = match *kind {
            "python" => &env.python,
            "node" => &env.node,
            _ => &env.apt,
        };
        if let Some(bad) = list.iter().find(|p| !re.is_match(p.trim())) {
            let src = Source::new(text);
            let pos = src
                .locate_value_plain(kind, bad)
                .or_else(|| src.locate_key(kind, None))
                .or_else(|| src.locate_key("environment", Some(1)))
                .unwrap_or((1, 1));
            return Err(SpecError::invalid(
                path,
                pos,
                format!("environment.{kind}: `{bad}` is not a package name"),
                Some(format!("write {shape}; options, paths and URLs are not taken")),
            ));
        }
    }
    check_container(spec, env, text, path)?;
    check_fixed_paths(spec, env, text, path)
}

/// `environment.image` / `environment.dockerfile`: one of them, an image name that no engine
/// can take for an option, a Dockerfile that exists, and nothing the image itself must bring
/// (packages, host toolchains).
fn check_container(spec: &TaskSpec, env: &EnvironmentSpec, text: &str, path: &Path) -> Result<(), SpecError> {
    if env.image.is_none() && env.dockerfile.is_none() {
        return Ok(());
    }
    let src = Source::new(text);
    let near = |key: &str, value: Option<&str>| {
        value
            .and_then(|v| src.locate_value_plain(key, v))
            .or_else(|| src.locate_key(key, None))
            .or_else(|| src.locate_key("environment", Some(1)))
            .unwrap_or((1, 1))
    };
    let invalid = |pos, message: String, help: &str| SpecError::invalid(path, pos, message, Some(help.to_string()));
    if let (Some(_), Some(file)) = (&env.image, &env.dockerfile) {
        return Err(invalid(
            near("dockerfile", Some(file)),
            "environment: `image:` and `dockerfile:` both name the task's container image".into(),
            "keep one: `image: NAME` runs an existing image, `dockerfile: PATH` builds one from a Dockerfile next to the task",
        ));
    }
    if let Some(image) = &env.image {
        if !crate::sandbox::image_name_is_valid(image) {
            return Err(invalid(
                near("image", Some(image)),
                format!("environment.image: `{image}` is not an image name"),
                "write a reference such as `debian:bookworm-slim`, `localhost/my-task:1` or `registry.example:5000/team/tool@sha256:<64 hex>`",
            ));
        }
    }
    if let Some(file) = &env.dockerfile {
        let full = path.parent().unwrap_or(Path::new("")).join(file);
        if !full.is_file() {
            return Err(invalid(
                near("dockerfile", Some(file)),
                format!(
                    "environment.dockerfile: `{file}` is not a file (looked for {})",
                    tidy(&full).display()
                ),
                "name the Dockerfile relative to the task file, e.g. `dockerfile: environment/Dockerfile`; its folder is the build context",
            ));
        }
    }
    let which = if env.image.is_some() { "image" } else { "dockerfile" };
    for (key, given) in [
        ("python", !env.python.is_empty()),
        ("node", !env.node.is_empty()),
        ("apt", !env.apt.is_empty()),
    ] {
        if given {
            return Err(invalid(
                near(key, None),
                format!("environment.{key} cannot be combined with `{which}:`: commands run in the container, where the image provides the packages"),
                "install them in the image (a `RUN pip install …`, `RUN npm install -g …` or `RUN apt-get install -y …` line of its Dockerfile) and drop the list",
            ));
        }
    }
    if !spec.toolchains.is_empty() {
        return Err(invalid(
            src.locate_key("toolchains", Some(1)).unwrap_or((1, 1)),
            format!("`toolchains:` cannot be combined with `environment.{which}`: host toolchains are not shown in the container"),
            "install the toolchain in the image and drop `toolchains:`",
        ));
    }
    Ok(())
}

/// `environment.root`, `mounts` and `outputs`: each a plain absolute path outside the trees
/// the sandbox's view keeps for itself (`sandbox::FixedPath`), none inside another, each mount
/// a folder next to the spec, and the task not pinned to a level that cannot show them.
fn check_fixed_paths(spec: &TaskSpec, env: &EnvironmentSpec, text: &str, path: &Path) -> Result<(), SpecError> {
    use crate::sandbox::{check_layout, FixedPath, Isolation};
    let src = Source::new(text);
    let near = |key: &str, value: Option<&str>| {
        value
            .and_then(|v| src.locate_value_plain(key, v))
            .or_else(|| src.locate_key(key, None))
            .or_else(|| src.locate_key("environment", Some(1)))
            .unwrap_or((1, 1))
    };
    let invalid = |pos, message: String, help: &str| SpecError::invalid(path, pos, message, Some(help.to_string()));
    let parse = |key: &str, text_path: &str, pos| {
        FixedPath::parse(text_path).map_err(|e| {
            invalid(
                pos,
                format!("environment.{key}: {e}"),
                "fixed paths are absolute folders of the strict sandbox's view, such as `root: /app`, `mounts: { /tests: tests/ }`, `outputs: [/logs/verifier]`",
            )
        })
    };
    let mut all: Vec<(FixedPath, (usize, usize))> = Vec::new();
    if let Some(root) = &env.root {
        let pos = near("root", Some(root));
        all.push((parse("root", root, pos)?, pos));
    }
    for (at, folder) in &env.mounts {
        let pos = near(at, None);
        let fixed = parse("mounts", at, pos)?;
        let dir = path.parent().unwrap_or(Path::new("")).join(folder);
        if !dir.is_dir() {
            return Err(invalid(
                near(at, Some(folder)),
                format!(
                    "environment.mounts: the folder `{folder}` for {fixed} is not a directory (looked for {})",
                    tidy(&dir).display()
                ),
                "a mount names a directory relative to the spec file, shown read-only at the fixed path: `mounts: { /tests: tests/ }`",
            ));
        }
        all.push((fixed, pos));
    }
    for out in &env.outputs {
        let pos = near("outputs", Some(out));
        all.push((parse("outputs", out, pos)?, pos));
    }
    if let Err(e) = check_layout(all.iter().map(|(p, _)| p)) {
        let pos = all
            .iter()
            .find(|(p, _)| p.to_string() == e.inner)
            .map_or((1, 1), |(_, pos)| *pos);
        return Err(invalid(
            pos,
            format!("environment: {e}"),
            "a fixed path cannot lie in another (a folder inside `/app` would be mounted through the agent's own directories); put `/tests` beside `/app`, not in it",
        ));
    }
    // A container shows its fixed paths whatever the host's level (that level confines only
    // the agent's own process).
    let in_container = env.container().is_some();
    if let (Some(level @ (Isolation::Process | Isolation::None)), false, false) =
        (spec.isolation, all.is_empty(), in_container)
    {
        return Err(invalid(
            src.locate_key("isolation", Some(1)).unwrap_or((1, 1)),
            format!(
                "`isolation: {level}` cannot show the task's fixed paths ({}): only `strict` builds each command's own filesystem",
                all.iter().map(|(p, _)| p.to_string()).collect::<Vec<_>>().join(", ")
            ),
            "leave `isolation:` out (tasks get strict where the machine has it) or write `isolation: strict`; without strict the task cannot run as written",
        ));
    }
    Ok(())
}

/// The paths `file_exists`, `file_contains` and `expect.files` name: relative to the workspace,
/// or absolute under one of the task's fixed paths (`environment.root` for the workspace,
/// `mounts` and `outputs` for their folders), plain (no `.` or `..`). Any other absolute path
/// is an error where it is written. `unchanged` is a workspace check only.
fn check_check_paths(spec: &TaskSpec, text: &str, path: &Path) -> Result<(), SpecError> {
    use crate::sandbox::FixedPath;
    let env = spec.environment.clone().unwrap_or_default();
    let parse = |p: &str| FixedPath::parse(p).ok();
    let root = env.root.as_deref().and_then(parse);
    let others: Vec<FixedPath> = env.mounts.keys().chain(&env.outputs).filter_map(|p| parse(p)).collect();
    let src = Source::new(text);
    // (where it is written, the key it is written as, the path, whether it checks `unchanged`)
    let mut named: Vec<((usize, usize), String, &str, bool)> = Vec::new();
    let files_at = src.key_in_section("expect", "files").unwrap_or((1, 1));
    for (p, fe) in &spec.expect.files {
        let pos = src.value_from(files_at, p).unwrap_or(files_at);
        named.push((pos, format!("expect.files.{p}"), p.as_str(), fe.unchanged));
    }
    for (i, v) in spec.expect.validate.iter().enumerate() {
        let (key, p) = match &v.check {
            ValidatorSpec::FileExists(p) => ("file_exists", p.as_str()),
            ValidatorSpec::FileContains(c) => ("path", c.path.as_str()),
            _ => continue,
        };
        let pos = src
            .locate_value_under(&["expect", "validate"], key, p)
            .unwrap_or((1, 1));
        named.push((pos, format!("expect.validate[{i}]"), p, false));
    }
    for (pos, at, p, unchanged) in named {
        if !p.starts_with('/') {
            continue;
        }
        let invalid = |message: String, help: &str| SpecError::invalid(path, pos, message, Some(help.to_string()));
        if p.split('/').any(|part| part == ".." || part == ".") {
            return Err(invalid(
                format!("`{at}`: `{p}` is not a plain path (`.` or `..` in it)"),
                "name the file plainly, e.g. `/app/out.txt`; a check never looks outside the workspace and the task's fixed folders",
            ));
        }
        let in_root = root.as_ref().is_some_and(|r| r.relative(p).is_some());
        let in_other = others.iter().any(|o| o.relative(p).is_some());
        if !in_root && !in_other {
            let mut places: Vec<String> = root.iter().chain(&others).map(|f| format!("`{f}`")).collect();
            let help = if places.is_empty() {
                "write the path relative to the workspace (`out.txt`); absolute paths name the task's fixed paths, such as `/app/out.txt` with `environment: { root: /app }`".to_string()
            } else {
                places.sort();
                format!(
                    "write the path relative to the workspace (`out.txt`) or below one of the task's fixed paths: {}",
                    places.join(", ")
                )
            };
            return Err(invalid(
                format!("`{at}`: `{p}` is neither in the workspace nor in one of the task's fixed folders"),
                &help,
            ));
        }
        if unchanged && !in_root {
            return Err(invalid(
                format!("`{at}`: `unchanged` compares with the workspace as the agent found it, and `{p}` is not in the workspace"),
                "check a fixed folder's files with `exists`, `absent`, `contains`, `matches` or `equals`",
            ));
        }
    }
    Ok(())
}

/// `protected:` globs compile; a bad one is located at its line.
fn check_protected(spec: &TaskSpec, text: &str, path: &Path) -> Result<(), SpecError> {
    for glob in spec.protected.iter().flatten() {
        if let Err(e) = globset::Glob::new(glob) {
            let src = Source::new(text);
            let pos = src
                .locate_value_plain("protected", glob)
                .or_else(|| src.locate_key("protected", Some(1)))
                .unwrap_or((1, 1));
            return Err(SpecError::invalid(
                path,
                pos,
                format!("protected: `{glob}` is not a valid glob: {e}"),
                Some("write workspace-relative globs such as `tests/**` or `conftest.py`".into()),
            ));
        }
    }
    Ok(())
}

/// A directory named by top-level `key` (relative to the spec file) exists.
fn check_spec_dir(key: &str, ws: &str, text: &str, path: &Path) -> Result<(), SpecError> {
    let dir = path.parent().unwrap_or(Path::new("")).join(ws);
    if dir.is_dir() {
        return Ok(());
    }
    let src = Source::new(text);
    let pos = src
        .locate_key(key, Some(1))
        .map(|(l, c)| (l, c + key.len() + 2))
        .unwrap_or((1, 1));
    let pos = src
        .line(pos.0)
        .map(|l| (pos.0, l.find(ws).map(|b| l[..b].chars().count() + 1).unwrap_or(pos.1)))
        .unwrap_or(pos);
    let what = if dir.exists() {
        "is not a directory"
    } else {
        "does not exist"
    };
    let (noun, help) = if key == "workspace" {
        ("workspace fixture", "`workspace:` names a directory relative to the spec file; fix the path or create the directory (leave `workspace:` out for an empty workspace)")
    } else {
        ("hidden checks folder", "`hidden:` names a directory relative to the spec file whose files are copied in only for judged runs; fix the path or create the directory")
    };
    Err(SpecError::invalid(
        path,
        pos,
        format!("{noun} `{ws}` {what} (looked for {})", tidy(&dir).display()),
        Some(help.into()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> (usize, usize, String, String) {
        match parse_task(text, Path::new("t.yaml")).unwrap_err() {
            SpecError::Invalid {
                line,
                column,
                message,
                help,
                ..
            } => (line, column, message, help.unwrap_or_default()),
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn checks_name_fixed_paths_as_commands_see_them_and_nothing_else_absolute() {
        let env = "environment: { root: /app, outputs: [/logs/verifier] }\n";
        let ok = format!(
            "description: d\n{env}expect:\n  files:\n    /app/out.txt: {{ equals: \"hi\\n\" }}\n    /logs/verifier/log.txt: {{ exists: true }}\n    plain.txt: {{ unchanged: true }}\n  validate:\n    - file_exists: /app/out.txt\n    - file_contains: {{ path: /logs/verifier/log.txt, pattern: ok }}\n"
        );
        parse_task(&ok, Path::new("t.yaml")).expect("fixed paths in checks load");
        let (line, col, msg, help) = err(&format!(
            "description: d\n{env}expect:\n  validate:\n    - file_exists: out.txt\n    - file_exists: /app/../etc/passwd\n"
        ));
        assert_eq!((line, col), (6, 20), "{msg}");
        assert_eq!(
            msg,
            "`expect.validate[1]`: `/app/../etc/passwd` is not a plain path (`.` or `..` in it)"
        );
        assert!(help.contains("/app/out.txt"), "{help}");
        let (line, col, msg, help) = err(&format!(
            "description: d\n{env}expect:\n  validate:\n    - file_contains: {{ path: /etc/passwd, pattern: root }}\n"
        ));
        assert_eq!((line, col), (5, 30), "{msg}");
        assert!(
            msg.contains("`/etc/passwd` is neither in the workspace nor in one of the task's fixed folders"),
            "{msg}"
        );
        assert!(help.contains("`/app`, `/logs/verifier`"), "{help}");
        let (line, _, msg, _) = err(&format!(
            "description: d\n{env}expect:\n  files:\n    /app/./x: {{ exists: true }}\n"
        ));
        assert_eq!(line, 5);
        assert!(msg.contains("`expect.files./app/./x`"), "{msg}");
        // Without fixed paths, an absolute path is no workspace path.
        let (line, _, msg, help) = err("description: d\nexpect:\n  files:\n    /app/out.txt: { exists: true }\n");
        assert_eq!(line, 4);
        assert!(msg.contains("neither in the workspace"), "{msg}");
        assert!(help.contains("environment: { root: /app }"), "{help}");
        let (_, _, msg, _) = err(&format!(
            "description: d\n{env}expect:\n  files:\n    /logs/verifier/log.txt: {{ unchanged: true }}\n"
        ));
        assert!(msg.contains("`unchanged` compares with the workspace"), "{msg}");
    }

    #[test]
    fn pass_env_names_that_steer_commands_are_refused_where_they_are_written() {
        let (line, col, msg, help) = err("description: d\npass_env:\n  - OPENAI_API_KEY\n  - LD_PRELOAD\n");
        assert_eq!((line, col), (4, 5), "{msg}");
        assert_eq!(
            msg,
            "`pass_env`: `LD_PRELOAD` cannot be passed: the dynamic loader reads it (LD_PRELOAD, LD_LIBRARY_PATH, …)"
        );
        assert!(help.contains("OPENAI_API_KEY"), "{help}");
        // In a flow list, a name inside a longer one (`PATH` in `MY_PATH_KEY`) is not it.
        let (line, col, msg, _) = err("description: d\npass_env: [MY_PATH_KEY, PATH]\n");
        assert_eq!((line, col), (2, 25), "{msg}");
        for bad in ["HOME", "MEDIN_RUN_ID", "PYTHONPATH", "BASH_ENV", "GIT_SSH_COMMAND"] {
            let (line, _, msg, _) = err(&format!("description: d\npass_env: [{bad}]\n"));
            assert_eq!(line, 2);
            assert!(msg.contains(&format!("`{bad}` cannot be passed")), "{msg}");
        }
        let (_, _, msg, _) = err("description: d\npass_env: [\"A-B\"]\n");
        assert!(msg.contains("is not a variable name"), "{msg}");
        let spec = parse_task("description: d\npass_env: [HF_TOKEN]\n", Path::new("t.yaml")).unwrap();
        assert_eq!(spec.pass_env, vec![crate::spec::EnvName::parse("HF_TOKEN").unwrap()]);
    }

    #[test]
    fn a_cassette_needs_a_pinned_model_agent_and_a_file_that_exists() {
        let (line, col, msg, help) = err("description: d\ncassette: rec.jsonl\n");
        assert_eq!((line, col), (2, 11), "{msg}");
        assert!(msg.contains("pins no model agent"), "{msg}");
        assert!(help.contains("agent: openai:MODEL"), "{help}");
        let (line, _, msg, help) = err("description: d\nagent: oracle\ncassette: rec.jsonl\n");
        assert_eq!(line, 3);
        assert!(msg.contains("pins no model agent"), "{msg} {help}");
        let (line, col, msg, help) = err("description: d\nagent: openai:gpt-4.1\ncassette: nowhere/rec.jsonl\n");
        assert_eq!((line, col), (3, 11));
        assert!(msg.contains("`nowhere/rec.jsonl` is not a file"), "{msg}");
        assert!(help.contains("medin run --record"), "{help}");
    }

    #[test]
    fn strips_library_positions() {
        assert_eq!(strip_positions("bad at line 3 column 4"), "bad");
        assert_eq!(
            strip_positions("x at line 3 column 1, while scanning at line 2 column 9"),
            "x, while scanning"
        );
        assert_eq!(strip_positions("look at this"), "look at this");
    }

    #[test]
    fn unknown_top_level_key_suggests_nearest() {
        let (l, c, m, h) = err("description: x\npromt: hi\n");
        assert_eq!((l, c), (2, 1));
        assert_eq!(m, "unknown key `promt` in the task");
        assert_eq!(h, "did you mean `prompt`?");
    }

    #[test]
    fn unknown_key_without_near_match_lists_valid_keys() {
        let (_, _, m, h) = err("description: x\nlimits:\n  zzzzzz: 1\n");
        assert_eq!(m, "unknown key `zzzzzz` in `limits`");
        assert!(
            h.starts_with("valid keys here: timeout, command_timeout, max_turns"),
            "{h}"
        );
    }

    #[test]
    fn unknown_variant_is_a_value_error_with_suggestion() {
        let (l, c, m, h) = err("description: x\nexpect:\n  outcome: sucess\n");
        assert_eq!((l, c), (3, 12));
        assert_eq!(m, "unknown outcome `sucess` for `expect.outcome`");
        assert!(h.starts_with("did you mean `success`?"), "{h}");
    }

    #[test]
    fn unknown_validator_kind_names_it() {
        let (l, c, m, h) = err("description: x\nexpect:\n  validate:\n    - file_exist: a\n");
        assert_eq!((l, c), (4, 7));
        assert_eq!(m, "unknown validator `file_exist` in `expect.validate[0]`");
        assert!(h.starts_with("did you mean `file_exists`?"), "{h}");
    }

    #[test]
    fn duplicate_key_points_at_the_second() {
        let (l, c, m, _) = err("description: x\nprompt: a\ndescription: y\n");
        assert_eq!((l, c), (3, 1));
        assert_eq!(m, "duplicate key `description` in the task");
        let (l, c, m, _) = err("description: x\nexpect:\n  files:\n    a: {contains: b}\n    a: {contains: c}\n");
        assert_eq!((l, c), (5, 5));
        assert_eq!(m, "duplicate key `a` in `expect.files`");
    }

    #[test]
    fn two_keys_in_one_step_or_validator_point_at_the_second() {
        let (l, c, m, _) = err("description: x\nsolution:\n  - write_file: {path: a, content: b}\n    bash: ls\n");
        assert_eq!((l, c), (4, 5));
        assert!(m.contains("but `bash` follows `write_file`"), "{m}");
        let (l, c, m, h) = err("description: x\nexpect:\n  validate:\n    - file_exists: a\n      command: b\n");
        assert_eq!((l, c), (5, 7));
        assert_eq!(
            m,
            "`expect.validate[0]`: a validator holds exactly one check, but `command` follows `file_exists`"
        );
        assert!(h.starts_with("put `- command: ..` on its own list item"), "{h}");
        let (l, c, _, _) = err("description: x\nexpect:\n  validate:\n    - {file_exists: a, command: b}\n");
        assert_eq!((l, c), (4, 24));
    }

    #[test]
    fn several_documents_point_at_the_separator() {
        let (l, c, m, _) = err("description: x\n---\ndescription: y\n");
        assert_eq!((l, c), (2, 1));
        assert!(m.contains("one YAML document"), "{m}");
    }

    #[test]
    fn syntax_errors_are_located_and_explained() {
        let (l, _, m, h) = err("description: x\n  prompt: y\n");
        assert_eq!(l, 2);
        assert!(
            m.starts_with("YAML syntax error: mapping values are not allowed"),
            "{m}"
        );
        assert_eq!(h, "line 1 already has a value, so this line cannot belong to it: indent it like line 1 (0 spaces), or quote a value that contains `: `");
    }

    #[test]
    fn wrong_types_read_plainly() {
        let (l, c, m, _) = err("description: x\nlimits:\n  max_turns: ten\n");
        assert_eq!((l, c), (3, 14));
        assert_eq!(
            m,
            "`limits.max_turns` must be a whole number (0 or more), found the text \"ten\""
        );
        let (_, _, m, h) = err("description: x\ntags: files\n");
        assert_eq!(m, "`tags` must be a list, found the text \"files\"");
        assert!(h.contains("tags: [a, b]"), "{h}");
        let (l, c, m, _) = err("- a\n- b\n");
        assert_eq!((l, c), (1, 1));
        assert!(m.starts_with("a task file must be a map of keys"), "{m}");
    }

    #[test]
    fn unit_variant_without_value() {
        let (l, c, m, _) = err("description: x\nexpect:\n  validate:\n    - file_exists\n");
        assert_eq!((l, c), (4, 7));
        assert_eq!(m, "`file_exists` needs a value in `expect.validate[0]`");
    }

    #[test]
    fn locate_value_finds_quoted_forms() {
        let src = Source::new("a: 1\nexpect:\n  final: {message: \"x\\\\(\"}\n");
        assert_eq!(src.locate_value_under(&[], "message", "x\\("), Some((3, 20)));
        let src = Source::new("p:\n  pattern: 'it''s ('\n");
        assert_eq!(src.locate_value_under(&[], "pattern", "it's ("), Some((2, 12)));
    }

    #[test]
    fn keys_with_spaces_and_flow_duplicates() {
        let (l, c, m, h) = err("description: x\nexpect:\n  files:\n    my notes.txt: { contain: a }\n");
        assert_eq!((l, c), (4, 21));
        assert_eq!(m, "unknown key `contain` in `expect.files.my notes.txt`");
        assert_eq!(h, "did you mean `contains`?");
        let (l, c, m, _) = err("description: x\nlimits: { timeout: 30s, timeout: 1m }\n");
        assert_eq!((l, c), (2, 25));
        assert_eq!(m, "duplicate key `timeout` in `limits`");
    }

    #[test]
    fn tabs_are_explained() {
        let (l, _, m, h) = err("description: x\nlimits:\n\ttimeout: 30s\n");
        assert_eq!(l, 3, "{m}");
        assert!(m.starts_with("YAML syntax error"), "{m}");
        assert_eq!(h, "YAML indentation must use spaces, not tabs");
    }

    #[test]
    fn ids_default_to_the_file_name_and_paths_tidy() {
        let spec = parse_task("description: x\n", Path::new("golden/gt-002-create-file.yaml")).unwrap();
        assert_eq!(
            task_id(&spec, Path::new("golden/gt-002-create-file.yaml")),
            "gt-002-create-file"
        );
        assert_eq!(tidy(Path::new("a/b/../c/./d")), PathBuf::from("a/c/d"));
        assert_eq!(tidy(Path::new("../x")), PathBuf::from("../x"));
    }

    #[test]
    fn each_kind_carries_its_own_blocks() {
        let load = |text: &str| parse_task(text, Path::new("t.yaml")).unwrap();
        assert_eq!(load("description: x\n").kind, TaskKind::Task);
        // Key order does not matter; `expect.tdd` travels with the loop.
        let tdd = load("tdd: { test: pytest -q }\nexpect: { tdd: { iterations: 2 } }\ndescription: x\nkind: tdd\n");
        match &tdd.kind {
            TaskKind::Tdd { tdd, expect } => {
                assert_eq!(tdd.test, "pytest -q");
                assert_eq!(expect.as_ref().and_then(|e| e.iterations), Some(2));
            }
            other => panic!("expected a TDD task, got {other:?}"),
        }
        assert_eq!(tdd.kind.harness_commands(), ["pytest -q"]);
        assert!(tdd.kind.prohibits_test_tampering());
        let prp = load("description: x\nkind: prp\nprp:\n  objective: o\n  gates:\n    - { level: 1, description: lint, command: ruff check }\n    - { level: 4, description: review, manual: true }\n");
        assert!(matches!(&prp.kind, TaskKind::Prp { prp, expect: None } if prp.objective == "o"));
        assert_eq!(prp.kind.harness_commands(), ["ruff check"]);
        assert!(!prp.kind.prohibits_test_tampering());
    }

    #[test]
    fn a_block_of_another_kind_is_found_as_a_key_not_as_a_value() {
        // `tdd` as a file name under `expect.files` and as a flow key: the real key is named.
        let (l, c, m, _) = err("description: x\nexpect: { files: { tdd: { exists: true } }, tdd: {} }\n");
        assert_eq!((l, c), (2, 45));
        assert_eq!(
            m,
            "`expect.tdd` checks a TDD loop, but this task has no `kind:`, so it is `kind: task`"
        );
        let (l, c, m, h) = err("description: x\nprompt: p\nkind: task\nprp: { objective: o, gates: [] }\n");
        assert_eq!((l, c), (4, 1));
        assert_eq!(
            m,
            "a `prp:` block belongs to a `kind: prp` task, but this task is `kind: task`"
        );
        assert!(
            h.starts_with("change `kind: task` to `kind: prp` if this task is a PRP run"),
            "{h}"
        );
    }

    #[test]
    fn a_verify_block_is_checked_at_its_keys() {
        let ok = parse_task(
            "description: d\nverify: { command: pytest -rA, framework: pytest, timeout: 2m, reward: { file: logs/r.txt, pass_at: 0.5 } }\n",
            Path::new("t.yaml"),
        )
        .unwrap();
        let v = ok.verify.unwrap();
        assert_eq!(
            (v.pass_at(), v.reward_file(), v.time_limit().as_secs()),
            (0.5, Some("logs/r.txt"), 120)
        );
        let (l, c, m, h) = err("description: d\nverify:\n  command: pytest\n  framework: pytset\n");
        assert_eq!(
            (l, c, m.as_str()),
            (4, 14, "unknown test framework `pytset` in `verify.framework`")
        );
        assert!(h.starts_with("did you mean `pytest`?"), "{h}");
        let (l, c, m, _) = err("description: d\nverify:\n  command: pytest\n  files: no-such-dir\n");
        assert_eq!((l, c), (4, 10));
        assert!(m.starts_with("verify files `no-such-dir` does not exist"), "{m}");
        let (_, _, m, _) = err("description: d\nverify: { command: x, reward: { file: ../r.txt } }\n");
        assert!(m.contains("is not a path inside the workspace"), "{m}");
        let (_, _, m, _) = err("description: d\nverify: { command: x, reward: { pass_at: 0 } }\n");
        assert!(m.contains("`verify.reward.pass_at` is 0"), "{m}");
        let (_, _, m, _) = err("description: d\nverify: { command: \"  \" }\n");
        assert_eq!(m, "`verify.command` is empty");
        let (_, _, m, _) = err("description: d\nverify: { comand: x }\n");
        assert!(m.starts_with("unknown key `comand` in `verify`"), "{m}");
    }

    #[test]
    fn a_task_directory_gives_its_workspace_tests_and_solve_script_as_defaults() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("t1");
        for sub in ["workspace", "tests", "solution"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        std::fs::write(dir.join("solution/solve.sh"), "echo solved > out.txt\n").unwrap();
        let file = dir.join(super::super::taskdir::TASK_FILE);
        std::fs::write(&file, "description: d\nverify: { command: pytest }\n").unwrap();
        let spec = load_task(&file).unwrap();
        assert_eq!(spec.workspace.as_deref(), Some("workspace"));
        assert_eq!(spec.verify.unwrap().files.as_deref(), Some("tests"));
        assert!(
            matches!(&spec.solution[0], Step::Tool { tool, input } if tool == "bash" && input["command"].as_str().unwrap().contains("echo solved"))
        );
        // What the task writes wins; a file not named task.yaml gets no defaults.
        std::fs::write(&file, "description: d\nsolution: [ { final: { result: issue } } ]\n").unwrap();
        assert!(matches!(load_task(&file).unwrap().solution[..], [Step::Final(_)]));
        let other = dir.join("other.yaml");
        std::fs::write(&other, "description: d\n").unwrap();
        let plain = load_task(&other).unwrap();
        assert!(plain.workspace.is_none() && plain.solution.is_empty());
    }

    #[test]
    fn a_validator_may_carry_a_name() {
        let spec = parse_task(
            "description: d\nexpect:\n  validate:\n    - { name: tests pass, command: pytest -q }\n    - file_exists: a\n",
            Path::new("t.yaml"),
        )
        .unwrap();
        assert_eq!(spec.expect.validate[0].name.as_deref(), Some("tests pass"));
        assert!(matches!(&spec.expect.validate[0].check, ValidatorSpec::Command(c) if c.run == "pytest -q"));
        assert!(spec.expect.validate[1].name.is_none());
        let (l, c, m, _) = err("description: d\nexpect:\n  validate:\n    - { name: x }\n");
        assert_eq!((l, c), (4, 7));
        assert!(m.contains("a validator needs a check"), "{m}");
        let (_, _, m, h) = err("description: d\nexpect:\n  validate:\n    - { name: x, comand: y }\n");
        assert_eq!(m, "unknown validator `comand` in `expect.validate[0]`");
        assert!(h.starts_with("did you mean `command`?"), "{h}");
    }

    #[test]
    fn blank_files_are_empty() {
        assert!(is_blank("\n# c\n---\n"));
        assert!(!is_blank("a: 1"));
        let (l, c, m, _) = err("# nothing\n");
        assert_eq!((l, c), (1, 1));
        assert_eq!(m, "the task file is empty");
    }
}

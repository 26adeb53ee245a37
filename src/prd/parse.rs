//! Reading a PRD.md: the markdown in, a checked [`Prd`] or a located [`PrdError`] out.
//!
//! Two forms are read, and a document uses one of them for its requirements:
//!
//! **Headings.** The document's fields are lines before the first requirement
//! (`Version: 1.2.0`, `Last updated: 2026-11-20`, bold labels allowed); each requirement is a
//! heading of any level whose text is `ID: Title` (an id is letters and digits with at least
//! one `-`, `_` or `.` inside: `REQ-1`, `AUTH-LOGIN.2`). Below it, until the next heading of
//! the same or a higher level: field lines `Priority: critical`, `Depends on: REQ-1, REQ-2`,
//! `Keywords: login, session`; a line or sub-heading `Acceptance criteria` followed by a list
//! (one criterion per item); a line or sub-heading `Checks` followed by a fenced YAML block
//! (a list of validators, the syntax of a task's `expect.validate`); every other paragraph is
//! the description.
//!
//! **Front matter.** A YAML block between `---` lines at the top holds `version`,
//! `last_updated` (or `lastUpdated`), `metadata` (free-form) and, instead of headings,
//! `requirements:` — a list of `{id, title, description, acceptance_criteria, priority,
//! depends_on, keywords, checks}`. The document's fields may come from front matter while the
//! requirements are headings; a field given in both places is an error.
//!
//! The checks are reference 000's JSON schema, made stricter where a loose document would
//! silently prove nothing: at least one requirement, non-empty title, description and
//! acceptance criteria, a priority from `critical | high | medium | low`, unique ids, and
//! `depends_on` naming requirements that exist. `last_updated` is an RFC 3339 date-time or a
//! plain `YYYY-MM-DD` date.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::spec::model::Validator;

/// A PRD, parsed and checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prd {
    /// Where it was read from.
    pub path: PathBuf,
    /// `MAJOR.MINOR.PATCH`.
    pub version: String,
    /// As written (checked to be a date or a date-time).
    pub last_updated: String,
    /// Free-form metadata of the front matter.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, serde_json::Value>,
    pub requirements: Vec<Requirement>,
    /// SHA-256 of the file's bytes: what a reload compares.
    pub digest: String,
}

/// One requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Requirement {
    pub id: String,
    pub title: String,
    pub description: String,
    pub acceptance_criteria: Vec<String>,
    pub priority: Priority,
    /// Requirements this one builds on: briefed with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    /// Words that make it relevant to a task that mentions them (default: its title's words).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    /// Validators judged in every task that names this requirement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Validator>,
    /// 1-based line and column of its id in the file.
    #[serde(skip)]
    pub at: (usize, usize),
}

impl Requirement {
    /// One line for briefs and reports: `REQ-1 (critical): Title`.
    pub fn headline(&self) -> String {
        format!("{} ({}): {}", self.id, self.priority.as_str(), self.title)
    }
}

/// How much a requirement matters; a `critical` one that no passing task proves fails the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Critical,
    High,
    Medium,
    Low,
}

impl Priority {
    pub const ALL: [Priority; 4] = [Priority::Critical, Priority::High, Priority::Medium, Priority::Low];

    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Critical => "critical",
            Priority::High => "high",
            Priority::Medium => "medium",
            Priority::Low => "low",
        }
    }

    fn parse(text: &str) -> Option<Priority> {
        Priority::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

/// Why a PRD could not be used. Every variant halts a run before its first task.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PrdError {
    #[error("{}: the PRD named by medin.yaml does not exist\n  help: write it (see the README, \"PRD.md as the source of truth\") or fix `prd:` in medin.yaml", path.display())]
    Missing { path: PathBuf },
    #[error("{}: cannot read the PRD: {message}\n  help: make it a readable UTF-8 file", path.display())]
    Unreadable { path: PathBuf, message: String },
    #[error("{}:{line}:{column}: {message}{}", path.display(), help.as_ref().map(|h| format!("\n  help: {h}")).unwrap_or_default())]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
        help: Option<String>,
    },
}

impl From<PrdError> for crate::spec::SpecError {
    fn from(e: PrdError) -> Self {
        match e {
            PrdError::Invalid {
                path,
                line,
                column,
                message,
                help,
            } => crate::spec::SpecError::invalid(&path, (line, column), message, help),
            PrdError::Missing { ref path } | PrdError::Unreadable { ref path, .. } => crate::spec::SpecError::Io {
                path: path.clone(),
                source: std::io::Error::other(e.to_string()),
            },
        }
    }
}

/// The largest PRD read: a requirements document, not a data set.
const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// Reads and checks the PRD at `path`.
pub fn load(path: &Path) -> Result<Prd, PrdError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(PrdError::Missing {
                path: path.to_path_buf(),
            })
        }
        Err(e) => {
            return Err(PrdError::Unreadable {
                path: path.to_path_buf(),
                message: e.to_string(),
            })
        }
    };
    if !meta.is_file() {
        return Err(PrdError::Unreadable {
            path: path.to_path_buf(),
            message: "it is not a regular file".into(),
        });
    }
    if meta.len() > MAX_BYTES {
        return Err(PrdError::Unreadable {
            path: path.to_path_buf(),
            message: format!("it is {} bytes, more than the {MAX_BYTES} a PRD may have", meta.len()),
        });
    }
    let bytes = std::fs::read(path).map_err(|e| PrdError::Unreadable {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| PrdError::Unreadable {
        path: path.to_path_buf(),
        message: format!("it is not UTF-8 ({e})"),
    })?;
    parse(&text, path)
}

/// Parses and checks PRD text; `path` names the file in errors.
pub fn parse(text: &str, path: &Path) -> Result<Prd, PrdError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = Lines::new(text);
    let err = |offset: usize, message: String, help: Option<String>| {
        let (line, column) = lines.at(offset);
        PrdError::Invalid {
            path: path.to_path_buf(),
            line,
            column,
            message,
            help,
        }
    };
    let (front, body_start) = front_matter(text, path, &lines)?;
    let body = &text[body_start..];
    let headed = read_headings(body, body_start, &lines, path)?;

    let version = pick_field("version", front.version, headed.version, &err)?;
    let last_updated = pick_field("last updated", front.last_updated, headed.last_updated, &err)?;
    let (version, version_at) = version.ok_or_else(|| missing_field(&err, "version"))?;
    let (last_updated, updated_at) = last_updated.ok_or_else(|| missing_field(&err, "last updated date"))?;
    if !is_semver(&version) {
        return Err(err(
            version_at,
            format!("version `{version}` is not MAJOR.MINOR.PATCH"),
            Some("write it as three numbers, e.g. `1.0.0`".into()),
        ));
    }
    if !is_date(&last_updated) {
        return Err(err(
            updated_at,
            format!("last updated `{last_updated}` is not a date"),
            Some("write `2026-11-20` or an RFC 3339 date-time such as `2026-11-20T10:00:00Z`".into()),
        ));
    }

    let requirements = match (front.requirements, headed.requirements.is_empty()) {
        (Some(_), false) => {
            return Err(err(
                headed.requirements[0].id_at,
                "requirements are written both in the front matter and as headings".into(),
                Some("keep one form: either `requirements:` in the front matter or one `## ID: Title` heading per requirement".into()),
            ))
        }
        (Some(list), true) => list,
        (None, _) => headed.requirements,
    };
    if requirements.is_empty() {
        return Err(err(
            body_start,
            "the PRD has no requirements".into(),
            Some("write each as a heading `## REQ-1: Title` followed by `Priority: high`, a description and an `Acceptance criteria:` list".into()),
        ));
    }
    let requirements = check_requirements(requirements, &lines, &err)?;
    Ok(Prd {
        path: path.to_path_buf(),
        version,
        last_updated,
        metadata: front.metadata,
        requirements,
        digest: hex::encode(Sha256::digest(text.as_bytes())),
    })
}

fn missing_field(err: &impl Fn(usize, String, Option<String>) -> PrdError, what: &str) -> PrdError {
    err(
        0,
        format!("the PRD gives no {what}"),
        Some("start it with front matter (`---`, `version: 1.0.0`, `last_updated: 2026-11-20`, `---`) or lines `Version: 1.0.0` and `Last updated: 2026-11-20` before the first requirement".into()),
    )
}

/// One of a document field's two places; given in both is an error.
fn pick_field(
    name: &str,
    front: Option<(String, usize)>,
    headed: Option<(String, usize)>,
    err: &impl Fn(usize, String, Option<String>) -> PrdError,
) -> Result<Option<(String, usize)>, PrdError> {
    match (front, headed) {
        (Some(_), Some((_, at))) => Err(err(
            at,
            format!("the {name} is given both in the front matter and in the text"),
            Some("keep one of them".into()),
        )),
        (a, b) => Ok(a.or(b)),
    }
}

/// A requirement as read, before its checks: positions are byte offsets in the file.
struct Draft {
    id: String,
    id_at: usize,
    title: String,
    description: String,
    criteria: Vec<String>,
    priority: Option<(String, usize)>,
    depends_on: Vec<(String, usize)>,
    keywords: Vec<String>,
    checks: Vec<Validator>,
}

fn check_requirements(
    drafts: Vec<Draft>,
    lines: &Lines,
    err: &impl Fn(usize, String, Option<String>) -> PrdError,
) -> Result<Vec<Requirement>, PrdError> {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for d in &drafts {
        if !is_id(&d.id) {
            return Err(err(
                d.id_at,
                format!("requirement id `{}` is not an id", d.id),
                Some("use letters and digits joined by `-`, `_` or `.`, e.g. `REQ-1`".into()),
            ));
        }
        if !seen.insert(d.id.clone()) {
            return Err(err(
                d.id_at,
                format!("requirement `{}` is defined twice", d.id),
                Some("give each requirement its own id".into()),
            ));
        }
    }
    let mut out = Vec::with_capacity(drafts.len());
    for d in drafts {
        let missing = |what: &str, help: &str| {
            err(
                d.id_at,
                format!("requirement `{}` has no {what}", d.id),
                Some(help.into()),
            )
        };
        if d.title.trim().is_empty() {
            return Err(missing("title", "write it after the id: `## REQ-1: Users can log in`"));
        }
        if d.description.trim().is_empty() {
            return Err(missing(
                "description",
                "write a paragraph under its heading saying what is required",
            ));
        }
        if d.criteria.iter().all(|c| c.trim().is_empty()) {
            return Err(missing(
                "acceptance criteria",
                "add a line `Acceptance criteria:` followed by a list, one criterion per item",
            ));
        }
        let priority = match &d.priority {
            None => {
                return Err(missing(
                    "priority",
                    "add a line `Priority: high` (critical, high, medium or low)",
                ))
            }
            Some((text, at)) => Priority::parse(text).ok_or_else(|| {
                err(
                    *at,
                    format!(
                        "priority `{text}` of `{}` is not one of critical, high, medium, low",
                        d.id
                    ),
                    Some(
                        match crate::suggest::nearest(text, &["critical", "high", "medium", "low"]) {
                            Some(n) => format!("did you mean `{n}`?"),
                            None => "write one of critical, high, medium, low".into(),
                        },
                    ),
                )
            })?,
        };
        for (dep, at) in &d.depends_on {
            if !seen.contains(dep) {
                return Err(err(
                    *at,
                    format!("`{}` depends on `{dep}`, which the PRD does not define", d.id),
                    Some("name requirements of this PRD, or remove the dependency".into()),
                ));
            }
        }
        out.push(Requirement {
            id: d.id,
            title: d.title.trim().to_string(),
            description: d.description.trim().to_string(),
            acceptance_criteria: d
                .criteria
                .into_iter()
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect(),
            priority,
            depends_on: d.depends_on.into_iter().map(|(id, _)| id).collect(),
            keywords: d.keywords,
            checks: d.checks,
            at: lines.at(d.id_at),
        });
    }
    Ok(out)
}

// ------------------------------------------------------------------ front matter

/// What the front matter gave; positions are byte offsets in the file.
#[derive(Default)]
struct Front {
    version: Option<(String, usize)>,
    last_updated: Option<(String, usize)>,
    metadata: BTreeMap<String, serde_json::Value>,
    requirements: Option<Vec<Draft>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFront {
    #[serde(default)]
    version: Option<serde_yaml_ng::Value>,
    #[serde(default, alias = "lastUpdated")]
    last_updated: Option<serde_yaml_ng::Value>,
    #[serde(default)]
    metadata: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    requirements: Option<Vec<RawRequirement>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequirement {
    id: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    description: String,
    #[serde(default, alias = "acceptanceCriteria")]
    acceptance_criteria: Vec<String>,
    #[serde(default)]
    priority: Option<String>,
    #[serde(default)]
    depends_on: Vec<String>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    checks: Vec<Validator>,
}

/// The front matter, if the file opens with one, and where the markdown body starts.
fn front_matter(text: &str, path: &Path, lines: &Lines) -> Result<(Front, usize), PrdError> {
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return Ok((Front::default(), 0));
    };
    let start = text.len() - rest.len();
    let mut offset = start;
    let mut end = None;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" || bare == "..." {
            end = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    let Some((yaml_end, body_start)) = end else {
        return Err(PrdError::Invalid {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: "the front matter opened by `---` is never closed".into(),
            help: Some("end it with a line `---`".into()),
        });
    };
    let yaml = &text[start..yaml_end];
    let raw: RawFront = yaml_at(yaml, start, path, lines)?;
    let locate = |needle: &str| text[start..yaml_end].find(needle).map_or(start, |i| start + i);
    let scalar = |v: Option<serde_yaml_ng::Value>, key: &str| -> Option<(String, usize)> {
        let v = v?;
        let s = match v {
            serde_yaml_ng::Value::String(s) => s,
            serde_yaml_ng::Value::Number(n) => n.to_string(),
            other => serde_yaml_ng::to_string(&other).unwrap_or_default().trim().to_string(),
        };
        Some((s, locate(key)))
    };
    let version = scalar(raw.version, "version");
    let last_updated = scalar(
        raw.last_updated,
        if yaml.contains("lastUpdated") {
            "lastUpdated"
        } else {
            "last_updated"
        },
    );
    let requirements = raw.requirements.map(|list| {
        let mut from = start;
        list.into_iter()
            .map(|r| {
                let id_at = text[from..yaml_end].find(&r.id).map_or(from, |i| from + i);
                from = id_at;
                let at = |needle: &str| text[id_at..yaml_end].find(needle).map_or(id_at, |i| id_at + i);
                Draft {
                    priority: r.priority.map(|p| {
                        let a = at("priority");
                        (p, a)
                    }),
                    depends_on: r
                        .depends_on
                        .into_iter()
                        .map(|d| {
                            let a = at(&d);
                            (d, a)
                        })
                        .collect(),
                    id: r.id,
                    id_at,
                    title: r.title,
                    description: r.description,
                    criteria: r.acceptance_criteria,
                    keywords: r.keywords,
                    checks: r.checks,
                }
            })
            .collect()
    });
    Ok((
        Front {
            version,
            last_updated,
            metadata: raw.metadata,
            requirements,
        },
        body_start,
    ))
}

/// YAML embedded in the PRD at byte `start`, deserialized the way task files are, its error
/// moved to the PRD's lines.
fn yaml_at<T: serde::de::DeserializeOwned>(
    yaml: &str,
    start: usize,
    path: &Path,
    lines: &Lines,
) -> Result<T, PrdError> {
    let (line0, _) = lines.at(start);
    crate::spec::load::from_yaml(yaml, path, crate::spec::load::Doc::Prd).map_err(|e| match e {
        crate::spec::SpecError::Invalid {
            line,
            column,
            message,
            help,
            ..
        } => PrdError::Invalid {
            path: path.to_path_buf(),
            line: line + line0 - 1,
            column,
            message,
            help,
        },
        crate::spec::SpecError::Io { source, .. } => PrdError::Unreadable {
            path: path.to_path_buf(),
            message: source.to_string(),
        },
    })
}

// ------------------------------------------------------------------ headings

/// What the markdown body gave.
#[derive(Default)]
struct Headed {
    version: Option<(String, usize)>,
    last_updated: Option<(String, usize)>,
    requirements: Vec<Draft>,
}

/// What the text under a requirement's heading is being read as.
#[derive(Clone, Copy, PartialEq)]
enum Section {
    Description,
    Criteria,
    Checks,
}

fn read_headings(body: &str, base: usize, lines: &Lines, path: &Path) -> Result<Headed, PrdError> {
    let mut out = Headed::default();
    let mut current: Option<(Draft, u32)> = None;
    let mut section = Section::Description;
    let mut text = String::new();
    let mut heading: Option<u32> = None;
    let mut item_depth = 0usize;
    let mut code: Option<(String, usize)> = None;
    let finish = |current: &mut Option<(Draft, u32)>, out: &mut Headed| {
        if let Some((d, _)) = current.take() {
            out.requirements.push(d);
        }
    };
    for (event, range) in Parser::new(body).into_offset_iter() {
        let at = base + range.start;
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                heading = Some(level as u32);
                text.clear();
            }
            Event::End(TagEnd::Heading(_)) => {
                let level = heading.take().unwrap_or(1);
                let title = text.trim().to_string();
                text.clear();
                if let Some((id, rest)) = requirement_heading(&title) {
                    finish(&mut current, &mut out);
                    let id_at = body[range.clone()].find(id).map_or(at, |i| at + i);
                    current = Some((
                        Draft {
                            id: id.to_string(),
                            id_at,
                            title: rest.to_string(),
                            description: String::new(),
                            criteria: Vec::new(),
                            priority: None,
                            depends_on: Vec::new(),
                            keywords: Vec::new(),
                            checks: Vec::new(),
                        },
                        level,
                    ));
                    section = Section::Description;
                } else if current.as_ref().is_some_and(|(_, l)| level > *l) {
                    section = label(&title).unwrap_or(Section::Description);
                } else {
                    finish(&mut current, &mut out);
                }
            }
            Event::Start(Tag::Paragraph) if item_depth == 0 => {
                text.clear();
            }
            Event::End(TagEnd::Paragraph) if item_depth == 0 => {
                let para = std::mem::take(&mut text);
                let src = &body[range.clone()];
                paragraph(&para, src, at, current.as_mut().map(|(d, _)| d), &mut out, &mut section);
            }
            Event::Start(Tag::Item) => {
                if item_depth == 0 {
                    text.clear();
                }
                item_depth += 1;
            }
            Event::End(TagEnd::Item) => {
                item_depth = item_depth.saturating_sub(1);
                if item_depth == 0 {
                    let item = std::mem::take(&mut text).trim().to_string();
                    if let Some((d, _)) = current.as_mut() {
                        match section {
                            Section::Criteria => d.criteria.push(item),
                            _ => {
                                d.description.push_str("\n- ");
                                d.description.push_str(&item);
                            }
                        }
                    }
                }
            }
            Event::End(TagEnd::List(_)) if item_depth == 0 && section == Section::Criteria => {
                section = Section::Description;
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let content_at = match kind {
                    CodeBlockKind::Fenced(_) => {
                        let nl = body[range.clone()]
                            .find('\n')
                            .map_or(range.end, |i| range.start + i + 1);
                        base + nl
                    }
                    CodeBlockKind::Indented => at,
                };
                code = Some((String::new(), content_at));
            }
            Event::End(TagEnd::CodeBlock) => {
                if let (Some((block, content_at)), Some((d, _))) = (code.take(), current.as_mut()) {
                    if section == Section::Checks {
                        let checks: Vec<Validator> = yaml_at(&block, content_at, path, lines)?;
                        d.checks.extend(checks);
                        section = Section::Description;
                    } else {
                        d.description.push_str("\n\n");
                        d.description.push_str(&block);
                    }
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((block, _)) = code.as_mut() {
                    block.push_str(&t);
                } else {
                    text.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => text.push('\n'),
            _ => {}
        }
    }
    finish(&mut current, &mut out);
    Ok(out)
}

/// A paragraph's lines: document fields before the first requirement; a requirement's fields,
/// section labels and description under one.
fn paragraph(para: &str, src: &str, at: usize, current: Option<&mut Draft>, out: &mut Headed, section: &mut Section) {
    let locate = |value: &str| src.find(value).map_or(at, |i| at + i);
    match current {
        None => {
            for line in para.lines() {
                match field_line(line) {
                    Some(("version", v)) if out.version.is_none() => out.version = Some((v.to_string(), locate(v))),
                    Some(("last updated", v)) if out.last_updated.is_none() => {
                        out.last_updated = Some((v.to_string(), locate(v)))
                    }
                    _ => {}
                }
            }
        }
        Some(d) => {
            let mut rest = Vec::new();
            for line in para.lines() {
                if let Some(s) = label(line) {
                    *section = s;
                    continue;
                }
                match field_line(line) {
                    Some(("priority", v)) => d.priority = Some((v.to_string(), locate(v))),
                    Some(("depends on", v)) => d
                        .depends_on
                        .extend(split_list(v).map(|id| (id.to_string(), locate(id)))),
                    Some(("keywords", v)) => d.keywords.extend(split_list(v).map(str::to_lowercase)),
                    _ => rest.push(line),
                }
            }
            if !rest.is_empty() {
                if *section == Section::Criteria {
                    // Criteria written as lines rather than a list.
                    d.criteria.extend(rest.iter().map(|l| l.trim().to_string()));
                } else {
                    if !d.description.is_empty() {
                        d.description.push_str("\n\n");
                    }
                    d.description.push_str(&rest.join("\n"));
                }
            }
        }
    }
}

fn split_list(v: &str) -> impl Iterator<Item = &str> {
    v.split([',', ' ']).map(str::trim).filter(|s| !s.is_empty())
}

/// `Acceptance criteria` / `Checks` as a line or heading (a trailing colon allowed).
fn label(line: &str) -> Option<Section> {
    let l = line.trim().trim_end_matches(':').trim().to_ascii_lowercase();
    match l.as_str() {
        "acceptance criteria" | "acceptance" | "criteria" => Some(Section::Criteria),
        "checks" => Some(Section::Checks),
        _ => None,
    }
}

/// `Key: value` for the keys the PRD knows, the key normalised (`last updated`, `depends on`).
fn field_line(line: &str) -> Option<(&'static str, &str)> {
    let (key, value) = line.split_once(':')?;
    let key = key.trim().to_ascii_lowercase().replace(['_', '-'], " ");
    let key = match key.as_str() {
        "version" => "version",
        "last updated" | "lastupdated" | "updated" => "last updated",
        "priority" => "priority",
        "depends on" | "dependencies" => "depends on",
        "keywords" => "keywords",
        _ => return None,
    };
    Some((key, value.trim()))
}

/// `REQ-1: Title` → (`REQ-1`, `Title`).
fn requirement_heading(text: &str) -> Option<(&str, &str)> {
    let (id, title) = text.split_once(':')?;
    let id = id.trim();
    is_id(id).then_some((id, title.trim()))
}

/// Letters and digits with at least one inner `-`, `_` or `.`, starting with a letter.
fn is_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    let Some(first) = bytes.first() else { return false };
    first.is_ascii_alphabetic()
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && bytes.iter().any(|b| matches!(b, b'-' | b'_' | b'.'))
        && id.len() <= 64
}

fn is_semver(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn is_date(v: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(v).is_ok() || chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d").is_ok()
}

/// Byte offset → 1-based line and column (in characters).
struct Lines {
    starts: Vec<usize>,
    text: String,
}

impl Lines {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines {
            starts,
            text: text.to_string(),
        }
    }

    fn at(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let column = self.text.get(start..offset).map_or(1, |s| s.chars().count() + 1);
        (line, column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADINGS: &str = "# Hello service\n\nVersion: 1.2.0\n**Last updated:** 2026-11-20\n\n## REQ-1: Greeting file\n\nPriority: critical\nKeywords: greeting, hello\n\nThe agent writes hello.txt with a greeting.\n\nAcceptance criteria:\n\n- hello.txt exists\n- it holds `hello`\n\nChecks:\n\n```yaml\n- file_exists: hello.txt\n```\n\n## REQ-2: Polite tone\n\nPriority: low\nDepends on: REQ-1\n\nNo shouting.\n\n### Acceptance criteria\n\n- no capitals\n";

    fn err(text: &str) -> (usize, usize, String) {
        match parse(text, Path::new("PRD.md")).unwrap_err() {
            PrdError::Invalid {
                line, column, message, ..
            } => (line, column, message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reads_the_heading_form() {
        let prd = parse(HEADINGS, Path::new("PRD.md")).unwrap();
        assert_eq!(prd.version, "1.2.0");
        assert_eq!(prd.last_updated, "2026-11-20");
        assert_eq!(prd.requirements.len(), 2);
        let r1 = &prd.requirements[0];
        assert_eq!((r1.id.as_str(), r1.title.as_str()), ("REQ-1", "Greeting file"));
        assert_eq!(r1.priority, Priority::Critical);
        assert_eq!(r1.keywords, vec!["greeting", "hello"]);
        assert_eq!(r1.description, "The agent writes hello.txt with a greeting.");
        assert_eq!(r1.acceptance_criteria, vec!["hello.txt exists", "it holds hello"]);
        assert_eq!(r1.checks.len(), 1);
        assert_eq!(r1.at, (6, 4));
        let r2 = &prd.requirements[1];
        assert_eq!(r2.depends_on, vec!["REQ-1"]);
        assert_eq!(r2.acceptance_criteria, vec!["no capitals"]);
        assert_eq!(r2.priority, Priority::Low);
    }

    #[test]
    fn reads_the_front_matter_form() {
        let text = "---\nversion: 2.0.0\nlastUpdated: 2026-11-20T10:00:00Z\nmetadata: {owner: qa}\nrequirements:\n  - id: API-1\n    title: Health\n    description: GET /health answers\n    acceptanceCriteria: [200 OK]\n    priority: high\n---\n# Notes\n";
        let prd = parse(text, Path::new("PRD.md")).unwrap();
        assert_eq!(prd.version, "2.0.0");
        assert_eq!(prd.requirements[0].id, "API-1");
        assert_eq!(prd.requirements[0].priority, Priority::High);
        assert_eq!(prd.requirements[0].at, (6, 9));
        assert_eq!(prd.metadata["owner"], "qa");
    }

    #[test]
    fn every_schema_violation_is_located() {
        let cases: &[(&str, &str, (usize, usize), &str)] = &[
            (
                "no version",
                &HEADINGS.replace("Version: 1.2.0\n", ""),
                (1, 1),
                "no version",
            ),
            (
                "bad version",
                &HEADINGS.replace("1.2.0", "1.2"),
                (3, 10),
                "not MAJOR.MINOR.PATCH",
            ),
            (
                "bad date",
                &HEADINGS.replace("2026-11-20", "yesterday"),
                (4, 19),
                "not a date",
            ),
            (
                "bad priority",
                &HEADINGS.replace("Priority: low", "Priority: urgent"),
                (26, 11),
                "`urgent`",
            ),
            (
                "no priority",
                &HEADINGS.replace("Priority: low\n", ""),
                (24, 4),
                "no priority",
            ),
            (
                "duplicate",
                &HEADINGS.replace("REQ-2:", "REQ-1:"),
                (24, 4),
                "defined twice",
            ),
            (
                "unknown dep",
                &HEADINGS.replace("Depends on: REQ-1", "Depends on: REQ-7"),
                (27, 13),
                "REQ-7",
            ),
            (
                "no criteria",
                &HEADINGS.replace("### Acceptance criteria\n\n- no capitals\n", ""),
                (24, 4),
                "acceptance criteria",
            ),
            (
                "bad check",
                &HEADINGS.replace("- file_exists: hello.txt", "- file_exist: hello.txt"),
                (21, 3),
                "file_exist",
            ),
            (
                "no requirements",
                "Version: 1.0.0\nLast updated: 2026-01-01\n\n# Intro\n",
                (1, 1),
                "no requirements",
            ),
            ("open front matter", "---\nversion: 1.0.0\n", (1, 1), "never closed"),
            (
                "unknown front key",
                "---\nversion: 1.0.0\nowner: me\n---\n",
                (3, 1),
                "owner",
            ),
        ];
        for (name, text, at, needle) in cases {
            let (line, column, message) = err(text);
            assert!(message.contains(needle), "{name}: {message}");
            assert_eq!((line, column), *at, "{name}: {message}");
        }
    }

    #[test]
    fn missing_file_is_its_own_error() {
        let e = load(Path::new("/nonexistent/PRD.md")).unwrap_err();
        assert!(matches!(e, PrdError::Missing { .. }));
        assert!(e.to_string().contains("does not exist"), "{e}");
    }

    #[test]
    fn diff_names_added_removed_and_changed() {
        let old = parse(HEADINGS, Path::new("PRD.md")).unwrap();
        let edited = HEADINGS
            .replace("Version: 1.2.0", "Version: 1.3.0")
            .replace("No shouting.", "No shouting at all.")
            + "\n## REQ-3: Farewell\n\nPriority: medium\n\nSay bye.\n\nAcceptance criteria:\n\n- bye.txt\n";
        let new = parse(&edited, Path::new("PRD.md")).unwrap();
        let d = old.diff(&new);
        assert_eq!(
            (d.added.clone(), d.removed.clone(), d.changed.clone()),
            (vec!["REQ-3".to_string()], vec![], vec!["REQ-2".to_string()])
        );
        assert_eq!(d.summary(), "1.2.0 → 1.3.0: added REQ-3; changed REQ-2");
        assert!(new.diff(&new).is_empty());
        let back = new.diff(&old);
        assert_eq!(back.removed, vec!["REQ-3"]);
    }
}

//! STAND-IN, deleted when the PRD layer (`src/prd/`, being written on main) is merged: the
//! few names of its API that `medin watch` uses, with a parser just good enough for the
//! watch's own tests (`version: X` on a line; one `## ID: title` heading per requirement,
//! its text below). Nothing else may use it.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    pub id: String,
    pub title: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Prd {
    pub requirements: Vec<Requirement>,
    pub version: String,
}

#[derive(Debug, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", path.display())]
pub struct PrdError {
    path: PathBuf,
    line: usize,
    column: usize,
    message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrdDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

impl PrdDiff {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    pub fn summary(&self) -> String {
        if self.is_empty() {
            return "no requirement added, removed or changed".into();
        }
        let part = |what: &str, ids: &[String]| (!ids.is_empty()).then(|| format!("{what}: {}", ids.join(", ")));
        [
            part("added", &self.added),
            part("removed", &self.removed),
            part("changed", &self.changed),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("; ")
    }
}

impl Prd {
    pub fn diff(&self, newer: &Prd) -> PrdDiff {
        let find = |prd: &Prd, id: &str| prd.requirements.iter().find(|r| r.id == id).cloned();
        let mut d = PrdDiff::default();
        for r in &newer.requirements {
            match find(self, &r.id) {
                None => d.added.push(r.id.clone()),
                Some(old) if old != *r => d.changed.push(r.id.clone()),
                Some(_) => {}
            }
        }
        for r in &self.requirements {
            if find(newer, &r.id).is_none() {
                d.removed.push(r.id.clone());
            }
        }
        d
    }
}

pub fn load(path: &Path) -> Result<Prd, PrdError> {
    let err = |line: usize, message: &str| PrdError {
        path: path.to_path_buf(),
        line,
        column: 1,
        message: message.into(),
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(1, &format!("cannot read: {e}")))?;
    let mut version = None;
    let mut requirements: Vec<Requirement> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if let Some(v) = line.strip_prefix("version:") {
            version = Some(v.trim().to_string());
        } else if let Some(h) = line.strip_prefix("## ") {
            let (id, title) = h
                .split_once(':')
                .ok_or_else(|| err(n + 1, "a requirement heading is `## ID: title`"))?;
            requirements.push(Requirement {
                id: id.trim().into(),
                title: title.trim().into(),
                text: String::new(),
            });
        } else if let Some(r) = requirements.last_mut() {
            r.text.push_str(line);
            r.text.push('\n');
        }
    }
    let version = version.ok_or_else(|| err(1, "no `version:` line"))?;
    Ok(Prd { requirements, version })
}

//! What changed between two versions of a PRD: requirements added, removed and changed (any
//! of title, description, criteria, priority, dependencies, keywords or checks), by id.

use serde::Serialize;

use super::parse::Prd;

/// Requirements added, removed and changed between two PRDs, each list sorted by id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PrdDiff {
    /// The versions compared, `old → new`.
    pub from_version: String,
    pub to_version: String,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

impl PrdDiff {
    /// No requirement was added, removed or changed (the text may still differ).
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// One line: `1.0.0 → 1.1.0: added REQ-4; removed REQ-2; changed REQ-1, REQ-3`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        for (what, ids) in [
            ("added", &self.added),
            ("removed", &self.removed),
            ("changed", &self.changed),
        ] {
            if !ids.is_empty() {
                parts.push(format!("{what} {}", ids.join(", ")));
            }
        }
        let body = if parts.is_empty() {
            "no requirement changed".to_string()
        } else {
            parts.join("; ")
        };
        format!("{} → {}: {body}", self.from_version, self.to_version)
    }
}

impl Prd {
    /// What `newer` changed in this PRD.
    pub fn diff(&self, newer: &Prd) -> PrdDiff {
        let find = |prd: &Prd, id: &str| prd.requirements.iter().find(|r| r.id == id).cloned();
        let mut diff = PrdDiff {
            from_version: self.version.clone(),
            to_version: newer.version.clone(),
            ..PrdDiff::default()
        };
        for old in &self.requirements {
            match find(newer, &old.id) {
                None => diff.removed.push(old.id.clone()),
                Some(mut new) => {
                    // Where it sits in the file is not what it requires.
                    new.at = old.at;
                    if &new != old {
                        diff.changed.push(old.id.clone());
                    }
                }
            }
        }
        for new in &newer.requirements {
            if find(self, &new.id).is_none() {
                diff.added.push(new.id.clone());
            }
        }
        diff.added.sort();
        diff.removed.sort();
        diff.changed.sort();
        diff
    }
}

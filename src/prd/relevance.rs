//! Which requirements a task is briefed with — the relevance rule, in one place:
//!
//! 1. the requirements the task names (`requirements: [REQ-3]`);
//! 2. what those depend on (`Depends on:`), transitively;
//! 3. every other requirement that shares a keyword with the task: its `Keywords:`, or when it
//!    has none the words of its title (four letters or more, common words left out), matched
//!    case-insensitively as whole words (a trailing `s` ignored) against the task's tags,
//!    description and prompt. At most [`MAX_BY_KEYWORD`] of these, critical first.
//!
//! So every requirement selected shares a keyword or a dependency with the task, or is named
//! by it (reference 000, property 4).

use std::collections::BTreeSet;

use serde::Serialize;

use super::parse::{Prd, Requirement};

/// The most requirements a task is briefed with for sharing a keyword alone.
pub const MAX_BY_KEYWORD: usize = 5;

/// Why a requirement is relevant to a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// The task names it.
    Named,
    /// A requirement the task names (or one of theirs) depends on it.
    DependencyOf(String),
    /// It shares this keyword with the task.
    Keyword(String),
}

/// A requirement selected for a task, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Relevant<'a> {
    pub requirement: &'a Requirement,
    pub why: Why,
}

/// Words too common to make a requirement relevant.
const COMMON: &[&str] = &[
    "able", "about", "after", "also", "been", "before", "being", "does", "each", "every", "from", "have", "into",
    "must", "only", "other", "should", "some", "than", "that", "their", "them", "then", "there", "these", "they",
    "this", "those", "under", "until", "user", "users", "when", "where", "which", "while", "will", "with", "within",
    "without", "work", "would", "your",
];

fn normalise(word: &str) -> Option<String> {
    let w = word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
    if w.chars().count() < 4 || COMMON.contains(&w.as_str()) {
        return None;
    }
    Some(w.strip_suffix('s').map(str::to_string).unwrap_or(w))
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .filter_map(normalise)
}

/// The words that make `r` relevant.
pub fn keywords_of(r: &Requirement) -> Vec<String> {
    let mut out: Vec<String> = if r.keywords.is_empty() {
        words(&r.title).collect()
    } else {
        r.keywords
            .iter()
            .filter_map(|k| {
                let w = k.trim().to_lowercase();
                (!w.is_empty()).then(|| w.strip_suffix('s').map(str::to_string).unwrap_or(w))
            })
            .collect()
    };
    out.sort();
    out.dedup();
    out
}

/// The requirements of `prd` relevant to a task that names `named` and reads as `context`
/// (its tags, description and prompt), in the order: named, dependencies, keywords. Ids the
/// PRD does not define are skipped (the loader reports them).
pub fn relevant<'a>(prd: &'a Prd, named: &[String], context: &[&str]) -> Vec<Relevant<'a>> {
    let by_id = |id: &str| prd.requirements.iter().find(|r| r.id == id);
    let mut out: Vec<Relevant<'a>> = Vec::new();
    let mut taken: BTreeSet<&str> = BTreeSet::new();
    for id in named {
        if let Some(r) = by_id(id) {
            if taken.insert(&r.id) {
                out.push(Relevant {
                    requirement: r,
                    why: Why::Named,
                });
            }
        }
    }
    let mut i = 0;
    while i < out.len() {
        let of = out[i].requirement;
        for dep in &of.depends_on {
            if let Some(r) = by_id(dep) {
                if taken.insert(&r.id) {
                    out.push(Relevant {
                        requirement: r,
                        why: Why::DependencyOf(of.id.clone()),
                    });
                }
            }
        }
        i += 1;
    }
    let task_words: BTreeSet<String> = context.iter().flat_map(|t| words(t)).collect();
    let mut by_keyword: Vec<Relevant<'a>> = prd
        .requirements
        .iter()
        .filter(|r| !taken.contains(r.id.as_str()))
        .filter_map(|r| {
            keywords_of(r)
                .into_iter()
                .find(|k| task_words.contains(k))
                .map(|k| Relevant {
                    requirement: r,
                    why: Why::Keyword(k),
                })
        })
        .collect();
    by_keyword.sort_by_key(|r| r.requirement.priority);
    out.extend(by_keyword.into_iter().take(MAX_BY_KEYWORD));
    out
}

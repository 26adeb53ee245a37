//! Properties 1–5 and 38–41 of reference 000: the PRD as the source of truth. PRDs are
//! generated as data, written out as markdown (both forms), and read back by medin's parser.
//! Pure properties: 128 cases each. Properties 38 and 42 (a watched change seen within 1 s;
//! freeze) are driven through `medin watch` in `tests/watch.rs`; property 1's order (the PRD
//! read before any task) is `tests/prd.rs`' halting test: a run with an invalid PRD leaves no
//! trial folder.

use std::collections::BTreeSet;
use std::path::Path;

use medin::internal::prd::{apply, parse, LivePrd, Prd, Priority, Reload, Why};
use proptest::prelude::*;

/// A requirement as generated: index-based ids, dependencies on earlier ones only.
#[derive(Debug, Clone)]
struct Gen {
    title: Vec<String>,
    description: String,
    criteria: Vec<String>,
    priority: Priority,
    depends: Vec<usize>,
    keywords: Vec<String>,
}

fn word() -> impl Strategy<Value = String> {
    "[a-z]{3,9}"
}

fn requirement(index: usize) -> impl Strategy<Value = Gen> {
    (
        prop::collection::vec(word(), 1..4),
        prop::collection::vec(word(), 1..8),
        prop::collection::vec(prop::collection::vec(word(), 1..4), 1..4),
        prop::sample::select(Priority::ALL.to_vec()),
        prop::collection::vec(0..index.max(1), 0..3),
        prop::collection::vec(word(), 0..3),
    )
        .prop_map(move |(title, description, criteria, priority, depends, keywords)| Gen {
            title,
            description: description.join(" "),
            criteria: criteria.into_iter().map(|c| c.join(" ")).collect(),
            priority,
            depends: if index == 0 {
                Vec::new()
            } else {
                depends.into_iter().collect::<BTreeSet<_>>().into_iter().collect()
            },
            keywords,
        })
}

fn requirements() -> impl Strategy<Value = Vec<Gen>> {
    (1usize..7).prop_flat_map(|n| (0..n).map(requirement).collect::<Vec<_>>())
}

fn id(i: usize) -> String {
    format!("REQ-{}", i + 1)
}

/// The heading form of a generated PRD.
fn headings(version: &str, reqs: &[Gen]) -> String {
    let mut out = format!("# Product\n\nVersion: {version}\nLast updated: 2026-11-20\n\n");
    for (i, r) in reqs.iter().enumerate() {
        out.push_str(&format!(
            "## {}: {}\n\nPriority: {}\n",
            id(i),
            r.title.join(" "),
            r.priority.as_str()
        ));
        if !r.depends.is_empty() {
            let deps: Vec<String> = r.depends.iter().map(|d| id(*d)).collect();
            out.push_str(&format!("Depends on: {}\n", deps.join(", ")));
        }
        if !r.keywords.is_empty() {
            out.push_str(&format!("Keywords: {}\n", r.keywords.join(", ")));
        }
        out.push_str(&format!("\n{}\n\nAcceptance criteria:\n\n", r.description));
        for c in &r.criteria {
            out.push_str(&format!("- {c}\n"));
        }
        out.push('\n');
    }
    out
}

/// The front-matter form of the same PRD.
fn front_matter(version: &str, reqs: &[Gen]) -> String {
    let mut out = format!("---\nversion: {version}\nlast_updated: 2026-11-20\nrequirements:\n");
    for (i, r) in reqs.iter().enumerate() {
        let deps: Vec<String> = r.depends.iter().map(|d| id(*d)).collect();
        out.push_str(&format!(
            "  - id: {}\n    title: {}\n    description: {}\n    acceptance_criteria: [{}]\n    priority: {}\n    depends_on: [{}]\n    keywords: [{}]\n",
            id(i),
            r.title.join(" "),
            r.description,
            r.criteria.join(", "),
            r.priority.as_str(),
            deps.join(", "),
            r.keywords.join(", ")
        ));
    }
    out.push_str("---\n# Notes\n");
    out
}

fn read(text: &str) -> Prd {
    parse(text, Path::new("PRD.md")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

proptest! {
    #![proptest_config(crate::cases(128))]

    /// Property 2: PRD validation halts execution — *for any invalid or missing PRD.md state,
    /// execution must halt.* medin: any one of the schema's violations, injected into a valid
    /// generated PRD, is refused with a location inside the file (the run then exits 2 before
    /// any task: `tests/prd.rs`).
    #[test]
    fn p02_an_invalid_prd_is_refused_with_its_location(
        reqs in requirements(),
        which in 0usize..6,
        at in any::<prop::sample::Index>(),
    ) {
        let valid = headings("1.0.0", &reqs);
        prop_assert!(parse(&valid, Path::new("PRD.md")).is_ok());
        let i = at.index(reqs.len());
        let heading = format!("## {}: {}\n", id(i), reqs[i].title.join(" "));
        let priority = format!("Priority: {}\n", reqs[i].priority.as_str());
        let broken = match which {
            0 => valid.replace("Version: 1.0.0", "Version: 1.0"),
            1 => valid.replace("Last updated: 2026-11-20", "Last updated: someday"),
            2 => valid.replacen(&format!("{heading}\n{priority}"), &format!("{heading}\nPriority: urgent\n"), 1),
            3 => valid.replacen(&format!("{heading}\n{priority}"), &format!("{heading}\n"), 1),
            4 => valid.replacen(&heading, &format!("## {}: {}\n", id(0), reqs[i].title.join(" ")), if i == 0 { 0 } else { 1 }),
            _ => valid.replace("Version: 1.0.0\n", ""),
        };
        prop_assume!(broken != valid);
        let lines = broken.lines().count().max(1);
        match parse(&broken, Path::new("PRD.md")) {
            Ok(_) => prop_assert!(false, "accepted:\n{broken}"),
            Err(e) => {
                let shown = e.to_string();
                let loc = shown.strip_prefix("PRD.md:").and_then(|r| r.split(':').next()).and_then(|l| l.parse::<usize>().ok());
                prop_assert!(loc.is_some_and(|l| (1..=lines).contains(&l)), "{shown}");
                prop_assert!(shown.contains("help:"), "{shown}");
            }
        }
    }

    /// Both written forms of any PRD read back as the same requirements (the schema's fields,
    /// dependencies and keywords): the reader's structure is independent of the form.
    #[test]
    fn p02_both_forms_read_the_same(reqs in requirements()) {
        let a = read(&headings("1.0.0", &reqs));
        let b = read(&front_matter("1.0.0", &reqs));
        prop_assert_eq!(a.requirements.len(), reqs.len());
        for (x, y) in a.requirements.iter().zip(&b.requirements) {
            prop_assert_eq!(&x.id, &y.id);
            prop_assert_eq!(&x.title, &y.title);
            prop_assert_eq!(&x.description, &y.description);
            prop_assert_eq!(&x.acceptance_criteria, &y.acceptance_criteria);
            prop_assert_eq!(x.priority, y.priority);
            prop_assert_eq!(&x.depends_on, &y.depends_on);
            prop_assert_eq!(&x.keywords, &y.keywords);
        }
    }

    /// Property 4: requirement extraction relevance — *extracted requirements must be relevant
    /// to the task context (share keywords or dependencies).* medin: every requirement a task
    /// is briefed with is named by it, a (transitive) dependency of one it names, or shares a
    /// keyword with its description; and every named one is briefed.
    #[test]
    fn p04_every_briefed_requirement_is_named_a_dependency_or_shares_a_keyword(
        reqs in requirements(),
        named in prop::collection::vec(any::<prop::sample::Index>(), 0..3),
        context in prop::collection::vec(word(), 0..12),
    ) {
        let prd = read(&headings("1.0.0", &reqs));
        let named: Vec<String> = named.iter().map(|i| id(i.index(reqs.len()))).collect::<BTreeSet<_>>().into_iter().collect();
        let description = context.join(" ");
        let yaml = format!("description: \"{description} x\"\nrequirements: [{}]\n", named.join(", "));
        let mut task = medin::internal::spec::parse_task(&yaml, Path::new("t.yaml")).unwrap();
        let applied = apply(&mut task, &std::sync::Arc::new(prd.clone()));
        let words: BTreeSet<String> = context.iter().map(|w| w.strip_suffix('s').unwrap_or(w).to_string()).collect();
        let mut closure: BTreeSet<String> = named.iter().cloned().collect();
        loop {
            let more: BTreeSet<String> = prd.requirements.iter().filter(|r| closure.contains(&r.id)).flat_map(|r| r.depends_on.clone()).collect();
            if more.is_subset(&closure) { break; }
            closure.extend(more);
        }
        for n in &named {
            prop_assert!(applied.relevant.iter().any(|(r, w)| &r.id == n && *w == Why::Named), "{n} not briefed");
        }
        for (r, why) in &applied.relevant {
            match why {
                Why::Named => prop_assert!(named.contains(&r.id)),
                Why::DependencyOf(_) => prop_assert!(closure.contains(&r.id)),
                Why::Keyword(k) => prop_assert!(words.contains(k), "{k} not in {words:?}"),
            }
        }
    }

    /// Property 3: PRD conflict resolution — *for any task whose expectations conflict with
    /// PRD.md, the PRD's requirements are prioritised and the conflict logged.* medin: after
    /// the PRD is applied, no file expectation of the task contradicts a check of a requirement
    /// it names (the checkable notion in `src/prd/apply.rs`), every expectation set aside is
    /// reported as a conflict, and every requirement check is judged.
    #[test]
    fn p03_no_contradiction_survives_and_each_is_reported(
        absent in prop::collection::vec(any::<bool>(), 3),
        exists_false in prop::collection::vec(any::<bool>(), 3),
        equals_hello in prop::collection::vec(prop::option::of(any::<bool>()), 3),
        checked in prop::collection::vec(0usize..3, 1..3),
    ) {
        let files = ["a.txt", "b.txt", "c.txt"];
        let checks: Vec<String> = checked.iter().map(|i| format!("- file_contains: {{path: {}, pattern: '^hello'}}", files[*i])).collect();
        let prd_text = format!("Version: 1.0.0\nLast updated: 2026-11-20\n\n## REQ-1: Files\n\nPriority: high\n\nFiles hold hello.\n\nAcceptance criteria:\n\n- hello\n\nChecks:\n\n```yaml\n{}\n```\n", checks.join("\n"));
        let prd = read(&prd_text);
        let mut yaml = String::from("description: d\nrequirements: [REQ-1]\nexpect:\n  files:\n");
        let mut contradictions = 0;
        let checked_set: BTreeSet<usize> = checked.iter().copied().collect();
        for (i, f) in files.iter().enumerate() {
            let mut fields = Vec::new();
            if absent[i] { fields.push("absent: true".to_string()); }
            if exists_false[i] { fields.push("exists: false".to_string()); }
            if let Some(hello) = equals_hello[i] {
                fields.push(format!("equals: {}", if hello { "hello" } else { "bye" }));
            }
            if fields.is_empty() { fields.push("contains: x".into()); }
            if checked_set.contains(&i) {
                contradictions += usize::from(absent[i]) + usize::from(exists_false[i]) + usize::from(equals_hello[i] == Some(false));
            }
            yaml.push_str(&format!("    {f}: {{ {} }}\n", fields.join(", ")));
        }
        let mut task = medin::internal::spec::parse_task(&yaml, Path::new("t.yaml")).unwrap();
        let applied = apply(&mut task, &std::sync::Arc::new(prd.clone()));
        prop_assert_eq!(applied.conflicts.len(), contradictions);
        prop_assert_eq!(applied.checks_added, checked.len());
        for i in &checked_set {
            if let Some(fe) = task.expect.files.get(files[*i]) {
                prop_assert!(!fe.absent && fe.exists != Some(false) && fe.equals.as_deref() != Some("bye"), "{fe:?}");
            }
        }
        let judged = task.expect.validate.iter().filter(|v| v.name.as_deref().is_some_and(|n| n.starts_with("REQ-1: "))).count();
        prop_assert_eq!(judged, checked.len());
    }
}

proptest! {
    #![proptest_config(crate::cases(32))]

    /// Properties 5, 39 and 41: *a PRD modified during execution is reloaded before the next
    /// task; execution pauses and requirements reload before continuing; each reload is
    /// logged with a diff summary.* medin: over any sequence of edits (valid or invalid) made
    /// between task starts, the PRD each task starts under is exactly the file's content at
    /// that moment; each reload reports exactly the old→new diff; an invalid file halts every
    /// start until a valid one replaces it. (32 cases of up to 6 edits: each writes a file.)
    #[test]
    fn p05_p39_p41_each_task_starts_under_the_prd_on_disk(
        first in requirements(),
        edits in prop::collection::vec(prop::option::of(requirements()), 1..6),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("PRD.md");
        std::fs::write(&path, headings("1.0.0", &first)).unwrap();
        let live = LivePrd::open(&path).unwrap();
        let mut in_use = read(&headings("1.0.0", &first));
        let mut halted = false;
        for (n, edit) in edits.iter().enumerate() {
            let version = format!("1.{}.0", n + 1);
            match edit {
                Some(reqs) => std::fs::write(&path, headings(&version, reqs)).unwrap(),
                None => std::fs::write(&path, "# broken\n").unwrap(),
            }
            let (now, reload) = live.before_task();
            match edit {
                Some(reqs) => {
                    let expected = read(&headings(&version, reqs));
                    let prd = now.map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(&prd.requirements, &expected.requirements);
                    match reload {
                        Some(Reload::Reloaded(diff)) => prop_assert_eq!(diff, in_use.diff(&expected)),
                        other => prop_assert!(false, "expected a reload, got {other:?}"),
                    }
                    in_use = expected;
                    halted = false;
                }
                None => {
                    prop_assert!(now.is_err());
                    // The first invalid edit is reported; a halted run stays halted silently.
                    prop_assert_eq!(matches!(reload, Some(Reload::Invalid(_))), !halted);
                    halted = true;
                }
            }
            // Nothing changed since: no reload, same PRD (or still halted).
            let (again, reload) = live.before_task();
            prop_assert!(reload.is_none());
            prop_assert_eq!(again.is_ok(), !halted);
        }
    }
}

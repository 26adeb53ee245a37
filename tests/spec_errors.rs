//! Broken task specs under `tests/data/spec/broken/` must fail with the exact `file:line:col`
//! and a hint that says how to fix them; the good specs under `tests/data/spec/good/` load into
//! the expected values and fit the published JSON Schema.

use std::path::{Path, PathBuf};
use std::time::Duration;

use medin::internal::spec::{
    check_paths, load_task, task_schema_json, FinalResult, Outcome, SpecError, Step, TaskKind, ValidatorSpec,
};
use serde_json::{json, Value};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/spec").join(rel)
}

/// (file under broken/, line, column, message, help) — message and help are substrings.
#[rustfmt::skip]
const BROKEN: &[(&str, usize, usize, &str, &str)] = &[
    ("unknown-top-key.yaml", 2, 1, "unknown key `promt` in the task", "did you mean `prompt`?"),
    ("unknown-limits-key.yaml", 4, 3, "unknown key `max_turn` in `limits`", "did you mean `max_turns`?"),
    ("unknown-limits-key-flow.yaml", 2, 25, "unknown key `max_turn` in `limits`", "did you mean `max_turns`?"),
    ("unknown-files-key.yaml", 7, 7, "unknown key `contain` in `expect.files.hello.txt`", "did you mean `contains`?"),
    ("unknown-agent-key.yaml", 3, 14, "unknown key `comand` in `agent.process`", "did you mean `command`?"),
    ("bad-outcome.yaml", 3, 12, "unknown outcome `sucess` for `expect.outcome`", "did you mean `success`?"),
    ("unknown-validator.yaml", 5, 7, "unknown validator `comand` in `expect.validate[1]`", "did you mean `command`?"),
    ("unknown-tool.yaml", 4, 5, "`solution[1]`: unknown tool `bsh` in solution step", "did you mean `bash`?"),
    ("unknown-tool-in-round.yaml", 6, 7, "unknown tool `bsh` in solution step", "did you mean `bash`?"),
    ("two-tools-one-step.yaml", 4, 5, "a step holds exactly one tool call, but `bash` follows `write_file`", "put `- bash: ..` on its own list item"),
    ("duplicate-key.yaml", 3, 1, "duplicate key `description` in the task", "remove one of them"),
    ("empty.yaml", 1, 1, "the task file is empty", "at least `description:`"),
    ("not-a-map.yaml", 1, 1, "a task file must be a map of keys such as `description:` and `prompt:`, found a list", "one `key: value` per line"),
    ("missing-description.yaml", 1, 1, "missing required key `description` in the task", "description: "),
    ("missing-justification.yaml", 4, 7, "missing required key `justification` in `policy.bypass[0]`", "add `justification: ...`"),
    ("wrong-type.yaml", 3, 14, "`limits.max_turns` must be a whole number (0 or more), found the text \"ten\"", ""),
    ("bad-duration.yaml", 3, 12, "`limits.timeout`: invalid duration `30 seconds` (unknown unit `seconds`", "write it like \"500ms\", \"30s\" or \"2m\""),
    ("bad-regex-files.yaml", 4, 27, "invalid regex `hel(lo` in `expect.files.hello.txt.matches`: unclosed group", "regular expression"),
    ("bad-regex-final.yaml", 7, 14, "invalid regex `a(b` in `expect.final.message`", "escape special characters"),
    ("bad-regex-receipts.yaml", 6, 16, "invalid regex `[unclosed` in `expect.receipts[1].message`: unclosed character class", "regular expression"),
    ("bad-regex-pattern.yaml", 6, 18, "invalid regex `*star` in `expect.validate[0].file_contains.pattern`", "regular expression"),
    ("bad-regex-stdout.yaml", 4, 35, "invalid regex `x{2,1}` in `expect.validate[0].command.stdout`", "regular expression"),
    ("missing-workspace.yaml", 2, 12, "workspace fixture `../fixtures/nope` does not exist", "relative to the spec file"),
    ("step-unknown-input.yaml", 6, 7, "unknown input `contnt` for `write_file` in `solution[1]`", "did you mean `content`?"),
    ("step-missing-input.yaml", 4, 5, "`write_file` in `solution[1]` needs `content`", "add `content: ..`"),
    ("step-wrong-input-type.yaml", 3, 31, "input `limit` of `read_file` in `solution[0]` must be a whole number, found `\"many\"`", "call: {tool: read_file"),
    ("limits-not-a-map.yaml", 2, 9, "`limits` must be a map, found the number 5", "its keys: command_timeout, cpu,"),
    ("syntax.yaml", 2, 9, "YAML syntax error: found unexpected end of stream", "add the closing quote"),
    ("tdd-without-block.yaml", 2, 7, "`kind: tdd` needs a `tdd:` block: the project's test command the loop runs", "add a top-level `tdd:` block, such as `tdd: { test: \"cargo test --offline\" }`"),
    ("prp-without-block.yaml", 3, 7, "`kind: prp` needs a `prp:` block: the requirement and the validation gates", "add a top-level `prp:` block, with `objective:` and `gates:`"),
    ("tdd-block-on-plain-task.yaml", 3, 1, "a `tdd:` block belongs to a `kind: tdd` task, but this task has no `kind:`, so it is `kind: task`", "add `kind: tdd` if this task is a TDD loop, or remove the `tdd:` block"),
    ("prp-block-on-tdd-task.yaml", 4, 1, "a `prp:` block belongs to a `kind: prp` task, but this task is `kind: tdd`", "change `kind: tdd` to `kind: prp` if this task is a PRP run, or remove the `prp:` block"),
    ("expect-tdd-on-prp-task.yaml", 10, 3, "`expect.tdd` checks a TDD loop, but this task is `kind: prp`", "remove `expect.tdd`, or change `kind: prp` to `kind: tdd` and add its `tdd:` block"),
    ("expect-prp-on-plain-task.yaml", 3, 29, "`expect.prp` checks a PRP run, but this task is `kind: task`", "remove `expect.prp`, or change `kind: task` to `kind: prp`"),
    ("rounds-in-plain-task.yaml", 4, 3, "`solution[1]` is a round (a nested list of steps), but this task has no `kind:`, so it is `kind: task`, which plays one round", "write its steps directly under `solution:`"),
    ("steps-after-final-in-plain-task.yaml", 6, 3, "`solution[2]` comes after `solution[1]` ended the round, but this task is `kind: task`, which plays one round", "remove the steps after it"),
    ("unknown-tdd-framework.yaml", 5, 14, "unknown test framework `pytset` in `tdd.framework`", "did you mean `pytest`?"),
    ("bad-regex-prp-error.yaml", 6, 12, "invalid regex `after (all fix attempts` in `expect.prp.error`", "regular expression"),
    ("bad-regex-tdd-state.yaml", 7, 30, "invalid regex `converged[` in `expect.tdd.state.summary.md.matches`", "regular expression"),
];

#[test]
fn broken_specs_fail_with_exact_location_and_hint() {
    let mut failures = Vec::new();
    for &(file, line, column, message, help) in BROKEN {
        let path = data("broken").join(file);
        let err = load_task(&path).expect_err(file);
        let shown = err.to_string();
        match &err {
            SpecError::Invalid {
                path: p,
                line: l,
                column: c,
                message: m,
                help: h,
            } => {
                let h = h.as_deref().unwrap_or("");
                if p != &path || (*l, *c) != (line, column) || !m.contains(message) || !h.contains(help) {
                    failures.push(format!(
                        "{file}: expected {line}:{column} `{message}` / `{help}`, got:\n{shown}"
                    ));
                }
                let prefix = format!("{}:{line}:{column}: ", path.display());
                if !shown.starts_with(&prefix) {
                    failures.push(format!("{file}: display does not start with {prefix}: {shown}"));
                }
                if !help.is_empty() && !shown.contains("\n  help: ") {
                    failures.push(format!("{file}: no help line in {shown}"));
                }
            }
            SpecError::Io { .. } => failures.push(format!("{file}: not located: {shown}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_broken_file_is_covered_by_the_table() {
    let mut on_disk: Vec<String> = std::fs::read_dir(data("broken"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = BROKEN.iter().map(|b| b.0.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

#[test]
fn design_example_loads_into_expected_values() {
    let spec = load_task(&data("good/gt-002-create-file.yaml")).unwrap();
    assert_eq!(spec.description, "Create a file with content; a receipt is returned");
    assert_eq!(spec.kind, TaskKind::Task);
    assert_eq!(spec.tags, vec!["files"]);
    assert_eq!(spec.workspace.as_deref(), Some("../fixtures/empty"));
    assert_eq!(spec.prompt, "Create hello.txt containing the line \"hello\".");
    assert_eq!(spec.limits.timeout.unwrap().0, Duration::from_secs(30));
    assert_eq!(spec.limits.max_turns, Some(10));
    assert_eq!(spec.limits.memory.unwrap().0, 256 << 20);
    assert_eq!(spec.policy.network, Some(false));
    assert_eq!(
        spec.solution,
        vec![
            Step::Tool {
                tool: "write_file".into(),
                input: json!({"path": "hello.txt", "content": "hello\n"})
            },
            Step::Tool {
                tool: "bash".into(),
                input: json!({"command": "cat hello.txt"})
            },
            Step::Final(medin::internal::spec::FinalReport {
                code: None,
                result: FinalResult::Success,
                message: "created hello.txt".into()
            }),
        ]
    );
    assert_eq!(spec.expect.outcome, Some(Outcome::Success));
    assert_eq!(spec.expect.files["hello.txt"].contains.as_deref(), Some("hello"));
    assert_eq!(spec.expect.receipts[0].source.as_deref(), Some("hello.txt"));
    assert_eq!(spec.expect.validate.len(), 2);
    assert_eq!(
        spec.expect.validate[0].check,
        ValidatorSpec::FileExists("hello.txt".into())
    );
    match &spec.expect.validate[1].check {
        ValidatorSpec::Command(c) => {
            assert_eq!(c.run, "grep -qx hello hello.txt");
            assert_eq!(c.exit_code, 0);
        }
        other => panic!("expected a command check, got {other:?}"),
    }
    assert_eq!(spec.expect.metrics.turns.as_ref().unwrap().max, Some(3));
}

#[test]
fn a_spec_with_every_key_loads() {
    let spec = load_task(&data("good/everything.yaml")).unwrap();
    assert_eq!(spec.id.as_deref(), Some("GT-900"));
    let TaskKind::Tdd { tdd, expect } = &spec.kind else {
        panic!("expected a TDD task, got {:?}", spec.kind)
    };
    assert_eq!(tdd.test, "cargo test --offline");
    assert_eq!(
        (tdd.max_iterations, tdd.breaker, tdd.coverage),
        (Some(3), Some(2), true)
    );
    let expect = expect.as_ref().expect("expect.tdd");
    assert_eq!(expect.stop_reason.as_deref(), Some("converged"));
    assert_eq!(expect.state["plan.md"].contains.as_deref(), Some("goal"));
    assert_eq!(spec.prompt, "Fix the bug.\nThen say so.\n");
    assert_eq!(spec.limits.command_timeout.unwrap().0, Duration::from_millis(500));
    assert_eq!(spec.limits.output.unwrap().0, 4096);
    assert_eq!(spec.policy.bypass[0].rule, "deletion.recursive_force");
    assert_eq!(
        spec.agent.as_ref().map(|a| a.label()).as_deref(),
        Some("process:python3 agent.py")
    );
    assert_eq!(
        spec.solution[0],
        Step::Tool {
            tool: "list_dir".into(),
            input: json!({"path": "."})
        }
    );
    assert_eq!(
        spec.solution[3],
        Step::Raw {
            tool: "write_file".into(),
            raw: "{\"path\": 3".into()
        }
    );
    assert!(spec.expect.files["gone.txt"].absent);
    assert_eq!(spec.expect.validate.len(), 4);
    assert!(matches!(&spec.expect.validate[2].check, ValidatorSpec::PortListening(p) if p.port == 8080));
}

#[test]
fn check_paths_reports_every_broken_file_and_accepts_good_ones() {
    let results = check_paths(&[data("good"), data("broken")]);
    assert_eq!(results.len(), 2 + BROKEN.len());
    let (good, bad): (Vec<_>, Vec<_>) = results.iter().partition(|(_, r)| r.is_ok());
    assert_eq!(good.len(), 2, "{:?}", good.iter().map(|g| &g.0).collect::<Vec<_>>());
    assert!(bad.iter().all(|(_, r)| r.as_ref().unwrap_err().location().is_some()));
    // Directory entries come out sorted.
    let names: Vec<&PathBuf> = results.iter().map(|(p, _)| p).collect();
    let mut sorted = names.clone();
    sorted[2..].sort();
    assert_eq!(names, sorted);
}

/// A small structural check against the schema: closed objects, required keys, known keys,
/// `$ref`s followed, simple types and values, and the `if`/`then`/`else` rules of the kind.
/// Enough to show the schema describes what the loader accepts.
fn conforms(value: &Value, schema: &Value, root: &Value, at: &str, errors: &mut Vec<String>) {
    let holds = |schema: &Value| {
        let mut e = Vec::new();
        conforms(value, schema, root, at, &mut e);
        e.is_empty()
    };
    if schema == &Value::Bool(false) {
        errors.push(format!("{at}: not allowed here"));
        return;
    }
    for rule in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        conforms(value, rule, root, at, errors);
    }
    if let Some(condition) = schema.get("if") {
        let branch = if holds(condition) { "then" } else { "else" };
        if let Some(s) = schema.get(branch) {
            conforms(value, s, root, &format!("{at} ({branch})"), errors);
        }
    }
    if let Some(not) = schema.get("not") {
        if holds(not) {
            errors.push(format!("{at}: matches `not` {not}"));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            errors.push(format!("{at}: {value} is not one of {options:?}"));
        }
    }
    if let Some(t) = schema.get("type") {
        let is = |t: &str| match t {
            "array" => value.is_array(),
            "object" => value.is_object(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            _ => true,
        };
        let ok = match t {
            Value::String(t) => is(t),
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(is),
            _ => true,
        };
        if !ok {
            errors.push(format!("{at}: {value} is not of type {t}"));
        }
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return conforms(value, &root["$defs"][name], root, at, errors);
    }
    for alt in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(alt).and_then(Value::as_array) {
            let ok = options.iter().any(|o| {
                let mut e = Vec::new();
                conforms(value, o, root, at, &mut e);
                e.is_empty()
            });
            if !ok {
                errors.push(format!("{at}: matches no alternative of {alt}"));
            }
            return;
        }
    }
    if let Some(obj) = value.as_object() {
        for req in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !obj.contains_key(req.as_str().unwrap()) {
                errors.push(format!("{at}: missing required {req}"));
            }
        }
    }
    if let (Some(obj), Some(props)) = (value.as_object(), schema.get("properties").and_then(Value::as_object)) {
        for (k, v) in obj {
            match props.get(k) {
                Some(s) => conforms(v, s, root, &format!("{at}.{k}"), errors),
                None if schema["additionalProperties"] == false => errors.push(format!("{at}: unknown key {k}")),
                None => {}
            }
        }
    }
    if let (Some(items), Some(item_schema)) = (value.as_array(), schema.get("items")) {
        for (i, v) in items.iter().enumerate() {
            conforms(v, item_schema, root, &format!("{at}[{i}]"), errors);
        }
    }
}

#[test]
fn good_specs_conform_to_the_schema_and_typos_do_not() {
    let schema: Value = serde_json::from_str(&task_schema_json()).unwrap();
    assert_eq!(schema["additionalProperties"], false);
    for file in ["good/gt-002-create-file.yaml", "good/everything.yaml"] {
        let text = std::fs::read_to_string(data(file)).unwrap();
        let value: Value = serde_yaml_ng::from_str(&text).unwrap();
        let mut errors = Vec::new();
        conforms(&value, &schema, &schema, "", &mut errors);
        assert!(errors.is_empty(), "{file}: {errors:?}");
    }
    for file in [
        "broken/unknown-top-key.yaml",
        "broken/missing-description.yaml",
        "broken/unknown-limits-key.yaml",
        // What the kind decides, as the schema's `if`/`then` rules.
        "broken/tdd-without-block.yaml",
        "broken/prp-without-block.yaml",
        "broken/tdd-block-on-plain-task.yaml",
        "broken/prp-block-on-tdd-task.yaml",
        "broken/expect-tdd-on-prp-task.yaml",
        "broken/expect-prp-on-plain-task.yaml",
        "broken/rounds-in-plain-task.yaml",
    ] {
        let text = std::fs::read_to_string(data(file)).unwrap();
        let value: Value = serde_yaml_ng::from_str(&text).unwrap();
        let mut errors = Vec::new();
        conforms(&value, &schema, &schema, "", &mut errors);
        if std::env::var("DUMP").is_ok() {
            println!("{file}: {errors:?}");
        }
        assert!(!errors.is_empty(), "{file} should not conform");
    }
}

/// The schema describes the YAML users write: every task of the bundled suite fits it, the
/// kind's `if`/`then` rules included (each kind is represented there).
#[test]
fn the_bundled_suite_conforms_to_the_schema() {
    let schema: Value = serde_json::from_str(&task_schema_json()).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut kinds = std::collections::BTreeSet::new();
    let mut errors = Vec::new();
    for folder in ["golden", "adversarial", "regression"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "yaml") {
                continue;
            }
            let value: Value = serde_yaml_ng::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            kinds.insert(value.get("kind").and_then(Value::as_str).unwrap_or("task").to_string());
            conforms(&value, &schema, &schema, &path.display().to_string(), &mut errors);
        }
    }
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(kinds.into_iter().collect::<Vec<_>>(), ["prp", "task", "tdd"]);
}

/// Mangles the bundled-style specs line by line (drop, duplicate, indent, truncate, tab,
/// unbalance) and checks that loading never panics and every error points inside the file.
#[test]
fn mangled_specs_never_panic_and_errors_stay_inside_the_file() {
    for file in ["good/gt-002-create-file.yaml", "good/everything.yaml"] {
        let path = data(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut variants = Vec::new();
        for i in 0..lines.len() {
            let mut edit = |f: &dyn Fn(&str) -> String| {
                let mut v: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                v[i] = f(lines[i]);
                variants.push(v.join("\n"));
            };
            edit(&|_| String::new());
            edit(&|l| format!("{l}\n{l}"));
            edit(&|l| format!("  {l}"));
            edit(&|l| l.chars().take(l.chars().count() / 2).collect());
            edit(&|l| format!("\t{l}"));
            edit(&|l| l.replace(':', "").to_string());
            edit(&|l| format!("{l} {{"));
            edit(&|l| l.replace('s', "z"));
        }
        let n = lines.len() + 2;
        for v in variants {
            let result = std::panic::catch_unwind(|| medin::internal::spec::parse_task(&v, &path));
            let result = result.unwrap_or_else(|_| panic!("panicked on:\n{v}"));
            if let Err(e) = result {
                if std::env::var("DUMP").is_ok() {
                    println!("{e}");
                }
                let (line, column) = e.location().unwrap_or_else(|| panic!("unlocated: {e}"));
                assert!(line >= 1 && line <= n && column >= 1, "{e} for:\n{v}");
            }
        }
    }
}

/// One mistake on one line of a valid spec (over-indented, key without `:`, line cut in half,
/// unclosed `{`): the error must point at that line (or, where two lines disagree on
/// indentation, name it), even where libyaml reports a later one.
#[test]
fn single_line_mistakes_are_reported_on_their_line() {
    type Mangle = fn(&str) -> String;
    let mangles: [(&str, Mangle); 4] = [
        ("indent", |l| format!("  {l}")),
        ("half", |l| l.chars().take(l.chars().count() / 2).collect()),
        ("no colon", |l| l.replacen(':', "", 1)),
        ("open brace", |l| format!("{l} {{")),
    ];
    let mut wrong = Vec::new();
    for file in ["good/gt-002-create-file.yaml", "good/everything.yaml"] {
        let path = data(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for i in 0..lines.len() {
            for (name, f) in mangles {
                let mut v: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                v[i] = f(lines[i]);
                if let Err(e) = medin::internal::spec::parse_task(&v.join("\n"), &path) {
                    let (l, _) = e.location().unwrap();
                    // Where the mistake is ambiguous (two lines disagree on indentation),
                    // the error may sit on the other line but must name this one.
                    if l != i + 1 && !e.to_string().contains(&format!("line {}", i + 1)) {
                        wrong.push(format!("{file}: {name} on line {}: `{}`\n  -> {e}", i + 1, v[i]));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_solution_may_be_written_as_rounds_of_steps() {
    // DESIGN §3: multi-round kinds take `solution` as a list of rounds, each a list of actions.
    // A round without its own `final` ends with an implicit `final: {result: success}`.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rounds.yaml");
    std::fs::write(
        &path,
        "description: x\nkind: tdd\ntdd: { test: \"true\" }\nsolution:\n  - - bash: echo one\n  - - bash: echo two\n    - final: { result: error, message: gave up }\n  - bash: echo three\n  - final: { result: success }\n",
    )
    .unwrap();
    let spec = load_task(&path).unwrap();
    let shape: Vec<String> = spec
        .solution
        .iter()
        .map(|s| match s {
            Step::Tool { input, .. } => input["command"].as_str().unwrap_or("?").to_string(),
            Step::Final(f) => format!("final {:?}", f.result),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        shape,
        [
            "echo one",
            "final Success",
            "echo two",
            "final Error",
            "echo three",
            "final Success"
        ]
    );
}

//! Terminal-Bench task directories: `task.yaml` (`instruction`, `difficulty`, `category`,
//! `tags`, `parser_name`, `max_agent_timeout_sec`, `max_test_timeout_sec`,
//! `run_tests_in_same_shell`), a `Dockerfile` (its build context is the task directory), an
//! optional `docker-compose.yaml`, `run-tests.sh`, `solution.sh` (or `solution.yaml`) and
//! `tests/`.
//!
//! The tests run the way the benchmark runs them: from the workspace root (Terminal-Bench's
//! working directory), with `TEST_DIR` naming the tests. A `run-tests.sh` that only sets up
//! pytest and runs it (Terminal-Bench's usual one, whose setup downloads `uv`) becomes that
//! pytest command, its packages provisioned by medin; any other is copied into `tests/` and
//! run with bash, and what it downloads is reported.

use std::path::Path;

use serde_yaml_ng::Value;

use super::shell::{self, Effect};
use super::writer::{Draft, VerifyDraft};
use super::{dockerfile, paths::RelPath, ImportError};

/// The benchmark's own files in a task directory, never part of the image's workspace.
const OWN_FILES: &[&str] = &[
    "task.yaml",
    "solution.sh",
    "solution.yaml",
    "run-tests.sh",
    "tests",
    "Dockerfile",
    "docker-compose.yaml",
    "docker-compose.yml",
];

/// Reads the Terminal-Bench task in `dir` as the medin task `name`.
pub fn read(dir: &Path, name: &str) -> Result<Draft, ImportError> {
    let text = super::read_text(dir, "task.yaml")?.unwrap_or_default();
    let meta: Value = serde_yaml_ng::from_str(&text).map_err(|e| ImportError::Unreadable {
        path: dir.join("task.yaml"),
        detail: format!("not YAML: {e}"),
    })?;
    let prompt = instruction(&meta).ok_or_else(|| ImportError::Unreadable {
        path: dir.join("task.yaml"),
        detail: "no `instruction` text: is this a Terminal-Bench task?".into(),
    })?;
    let text_of = |key: &str| meta.get(key).and_then(Value::as_str).map(str::to_string);
    let seconds = |key: &str| meta.get(key).and_then(Value::as_f64).and_then(super::whole_seconds);
    let tags: Vec<String> = meta
        .get("tags")
        .and_then(Value::as_sequence)
        .map(|s| s.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let mut draft = Draft {
        name: name.to_string(),
        source: dir.to_path_buf(),
        format: "terminal-bench",
        description: super::describe(&prompt),
        tags: super::tags_of(tags, text_of("difficulty"), text_of("category")),
        prompt,
        agent_timeout: seconds("max_agent_timeout_sec"),
        skip: OWN_FILES,
        ..Draft::default()
    };
    if meta.get("run_tests_in_same_shell").and_then(Value::as_bool) == Some(true) {
        draft.notes.push(
            "`run_tests_in_same_shell: true`: the tests ran in the agent's own shell there; medin runs them after the agent has stopped, in a fresh judged run"
                .into(),
        );
    }
    if let Some(parser) = text_of("parser_name").filter(|p| p != "pytest") {
        draft.notes.push(format!(
            "`parser_name: {parser}`: the results are read by medin's detected parser instead"
        ));
    }
    image(dir, &mut draft)?;
    compose(dir, &mut draft)?;
    solution(dir, &mut draft)?;
    verify(dir, &mut draft, seconds("max_test_timeout_sec"))?;
    Ok(draft)
}

/// `instruction`, or the `base` entry of the older `descriptions` list.
fn instruction(meta: &Value) -> Option<String> {
    if let Some(text) = meta.get("instruction").and_then(Value::as_str) {
        return Some(text.to_string());
    }
    meta.get("descriptions")?
        .as_sequence()?
        .iter()
        .find(|d| d.get("key").and_then(Value::as_str) == Some("base"))?
        .get("description")?
        .as_str()
        .map(str::to_string)
}

fn image(dir: &Path, draft: &mut Draft) -> Result<(), ImportError> {
    let Some(text) = super::read_text(dir, "Dockerfile")? else {
        draft
            .notes
            .push("no Dockerfile: the task's system and files are not known".into());
        return Ok(());
    };
    super::carry_image(&text, dir, None, draft);
    Ok(())
}

fn compose(dir: &Path, draft: &mut Draft) -> Result<(), ImportError> {
    for file in ["docker-compose.yaml", "docker-compose.yml"] {
        let Some(text) = super::read_text(dir, file)? else {
            continue;
        };
        let services = serde_yaml_ng::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("services").and_then(Value::as_mapping).map(|m| m.len()))
            .unwrap_or(0);
        if services > 1 {
            draft.notes.push(format!(
                "{file} runs {services} services: only the task's own container is carried over; the others (databases, servers) are not"
            ));
        }
    }
    Ok(())
}

fn solution(dir: &Path, draft: &mut Draft) -> Result<(), ImportError> {
    if let Some(script) = super::read_text(dir, "solution.sh")? {
        draft.solution = Some(script);
    } else if super::read_text(dir, "solution.yaml")?.is_some() {
        draft.notes.push(
            "solution.yaml (a list of terminal commands) is not carried over: write it as solution/solve.sh".into(),
        );
    } else {
        draft
            .notes
            .push("no solution.sh: the oracle agent has nothing to play".into());
    }
    Ok(())
}

fn verify(dir: &Path, draft: &mut Draft, timeout: Option<u64>) -> Result<(), ImportError> {
    draft.tests = super::folder(dir, "tests");
    let script = super::read_text(dir, "run-tests.sh")?;
    if draft.tests.is_none() && script.is_none() {
        draft
            .notes
            .push("no tests/ and no run-tests.sh: nothing verifies this task".into());
        return Ok(());
    }
    let command = match script {
        None => pytest_command(&["$TEST_DIR/test_outputs.py".into(), "-rA".into()], dir),
        Some(script) => match only_pytest(&script, draft) {
            Some(args) => pytest_command(&args, dir),
            None => {
                let name = if dir.join("tests/run-tests.sh").exists() {
                    "medin-run-tests.sh"
                } else {
                    "run-tests.sh"
                };
                for (text, effect) in shell::commands(&script) {
                    if let Effect::Download(_) = effect {
                        draft.notes.push(format!(
                            "run-tests.sh downloads at test time (`{}`), and the verifier has no network: provide it through `environment:` and remove the line",
                            dockerfile::cut(&text)
                        ));
                    }
                }
                let file = RelPath::name(name).unwrap_or_default();
                draft.test_files.push((file, script));
                format!("cd \"$MEDIN_WORKSPACE\" && TEST_DIR=\"$MEDIN_WORKSPACE/tests\" bash tests/{name}")
            }
        },
    };
    let uses_pytest = command.contains("pytest") || draft.test_files.iter().any(|(_, t)| t.contains("pytest"));
    if uses_pytest {
        draft.packages.ensure_pytest();
    }
    draft.verify = Some(VerifyDraft {
        command,
        framework: uses_pytest.then_some("pytest"),
        timeout,
        reward_file: None,
    });
    Ok(())
}

/// The pytest arguments of a `run-tests.sh` that does nothing but set pytest up (packages go
/// to `draft.packages`) and run it once; `None` for any other script.
fn only_pytest(script: &str, draft: &mut Draft) -> Option<Vec<String>> {
    let mut packages = shell::Packages::default();
    let mut args = None;
    for (text, effect) in shell::commands(script) {
        match effect {
            Effect::Install(p) => packages.extend(&p),
            Effect::Nothing => {}
            // Terminal-Bench's own helpers: install uv and pytest, then run the tests.
            Effect::Download(t) if t.contains("astral.sh/uv") => {}
            Effect::Other(t) if t.ends_with("setup-uv-pytest.sh") && t.starts_with("source") => {}
            Effect::Other(t) if t.ends_with("run-uv-pytest.sh") && args.is_none() => {
                args = Some(vec!["$TEST_DIR/test_outputs.py".to_string(), "-rA".to_string()]);
            }
            Effect::Pytest(a) if args.is_none() => args = Some(a),
            _ => {
                let _ = text;
                return None;
            }
        }
    }
    let args = args?;
    draft.packages.extend(&packages);
    Some(args)
}

/// The verify command running pytest with `args` from the workspace root, the tests folder
/// named `tests/` instead of `$TEST_DIR` or `/tests`.
fn pytest_command(args: &[String], dir: &Path) -> String {
    let mut words: Vec<String> = args
        .iter()
        .map(|a| {
            let mapped = ["$TEST_DIR/", "${TEST_DIR}/", "/tests/"]
                .iter()
                .find_map(|p| a.strip_prefix(p).map(|rest| format!("tests/{rest}")))
                .unwrap_or_else(|| match a.as_str() {
                    "$TEST_DIR" | "${TEST_DIR}" | "/tests" => "tests".into(),
                    _ => a.clone(),
                });
            quote(&mapped)
        })
        .collect();
    if words
        .iter()
        .all(|w| !w.starts_with('-') && !w.contains('/') && !w.ends_with(".py"))
    {
        words.insert(
            0,
            if dir.join("tests/test_outputs.py").exists() {
                "tests/test_outputs.py".into()
            } else {
                "tests".into()
            },
        );
    }
    if !words.iter().any(|w| w.starts_with("-r")) {
        words.push("-rA".into());
    }
    format!("cd \"$MEDIN_WORKSPACE\" && python3 -m pytest {}", words.join(" "))
}

/// `word` as one shell word.
fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./=:,@+%".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_run_tests_script_becomes_pytest() {
        let mut draft = Draft::default();
        let script = "#!/bin/bash\ncurl -LsSf https://astral.sh/uv/0.7.13/install.sh | sh\nsource $HOME/.local/bin/env\nuv venv .tbench-testing\nsource .tbench-testing/bin/activate\nuv pip install pytest==8.4.1\nuv run pytest $TEST_DIR/test_outputs.py -rA\n";
        let args = only_pytest(script, &mut draft).unwrap();
        assert_eq!(draft.packages.python, ["pytest==8.4.1"]);
        assert_eq!(
            pytest_command(&args, Path::new("/nonexistent")),
            "cd \"$MEDIN_WORKSPACE\" && python3 -m pytest tests/test_outputs.py -rA"
        );
        assert_eq!(quote("it's"), r"'it'\''s'");
        let mut other = Draft::default();
        assert_eq!(only_pytest("make test\npytest -rA\n", &mut other), None);
    }
}

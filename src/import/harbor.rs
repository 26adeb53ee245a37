//! Harbor task directories: `task.toml` (`[metadata]` difficulty, category, tags; `[task]`
//! description; `[agent]` and `[verifier]` `timeout_sec`), `instruction.md`,
//! `environment/Dockerfile` (its build context is `environment/`), `solution/solve.sh` and
//! `tests/test.sh`, which writes the reward to `/logs/verifier/reward.txt`.
//!
//! The verifier is `tests/test.sh`, run with bash from the workspace root (Harbor's working
//! directory). Harbor's fixed verifier paths are mapped into the workspace in the copied
//! script: `/tests` becomes `$MEDIN_WORKSPACE/tests` (where medin puts the tests) and
//! `/logs/verifier` becomes `$MEDIN_WORKSPACE/logs/verifier`, whose `reward.txt` is then
//! `verify.reward.file`. What the script downloads or installs at test time is reported: the
//! verifier has no network.

use std::path::Path;

use regex::Regex;
use toml_edit::{DocumentMut, Item};

use super::shell::{self, Effect};
use super::writer::{Draft, VerifyDraft};
use super::{dockerfile, paths::RelPath, ImportError};

/// The benchmark's own files in `environment/`, never part of the workspace.
const OWN_FILES: &[&str] = &["Dockerfile", "docker-compose.yaml", "docker-compose.yml"];

/// Where the verifier's reward lands once `/logs/verifier` is mapped into the workspace.
const REWARD_FILE: &str = "logs/verifier/reward.txt";

/// Reads the Harbor task in `dir` as the medin task `name`.
pub fn read(dir: &Path, name: &str) -> Result<Draft, ImportError> {
    let toml_text = super::read_text(dir, "task.toml")?.unwrap_or_default();
    let doc: DocumentMut = toml_text.parse().map_err(|e| ImportError::Unreadable {
        path: dir.join("task.toml"),
        detail: format!("not TOML: {e}"),
    })?;
    let prompt = super::read_text(dir, "instruction.md")?.ok_or_else(|| ImportError::Unreadable {
        path: dir.join("instruction.md"),
        detail: "missing: a Harbor task's instruction is its instruction.md".into(),
    })?;
    let text_of = |table: &str, key: &str| {
        doc.get(table)
            .and_then(|t| t.get(key))
            .and_then(Item::as_str)
            .map(str::to_string)
    };
    let seconds = |table: &str| {
        doc.get(table)
            .and_then(|t| t.get("timeout_sec"))
            .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
            .and_then(super::whole_seconds)
    };
    let tags: Vec<String> = doc
        .get("metadata")
        .and_then(|m| m.get("tags"))
        .and_then(Item::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str()).map(str::to_string).collect())
        .unwrap_or_default();
    let mut draft = Draft {
        name: name.to_string(),
        source: dir.to_path_buf(),
        format: "harbor",
        description: text_of("task", "description").unwrap_or_else(|| super::describe(&prompt)),
        tags: super::tags_of(tags, text_of("metadata", "difficulty"), text_of("metadata", "category")),
        prompt,
        agent_timeout: seconds("agent"),
        skip: OWN_FILES,
        ..Draft::default()
    };
    if doc
        .get("verifier")
        .and_then(|v| v.get("env"))
        .and_then(Item::as_table_like)
        .is_some_and(|t| !t.is_empty())
    {
        draft
            .notes
            .push("[verifier].env is not carried over: medin scrubs the verifier's environment".into());
    }
    // A prebuilt image runs as it is (`environment.image`); its Dockerfile still says where
    // the workspace goes.
    let prebuilt = text_of("environment", "docker_image");
    environment(dir, &mut draft, prebuilt)?;
    match super::read_text(dir, "solution/solve.sh")? {
        Some(script) => draft.solution = Some(script),
        None => draft
            .notes
            .push("no solution/solve.sh: the oracle agent has nothing to play".into()),
    }
    verify(dir, &mut draft, seconds("verifier"))?;
    Ok(draft)
}

fn environment(dir: &Path, draft: &mut Draft, prebuilt: Option<String>) -> Result<(), ImportError> {
    let Some(context) = super::folder(dir, "environment") else {
        match prebuilt {
            Some(image) => draft.image = Some(image),
            None => draft
                .notes
                .push("no environment/ folder: the task's system and files are not known".into()),
        }
        return Ok(());
    };
    for file in ["docker-compose.yaml", "docker-compose.yml"] {
        if let Some(text) = super::read_text(&context, file)? {
            let services = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&text)
                .ok()
                .and_then(|v| v.get("services").and_then(|s| s.as_mapping()).map(|m| m.len()))
                .unwrap_or(0);
            if services > 1 {
                draft.notes.push(format!(
                    "environment/{file} runs {services} services: only the task's own container is carried over"
                ));
            }
        }
    }
    let Some(text) = super::read_text(&context, "Dockerfile")? else {
        match prebuilt {
            Some(image) => draft.image = Some(image),
            None => draft
                .notes
                .push("no environment/Dockerfile: the task's system and files are not known".into()),
        }
        return Ok(());
    };
    super::carry_image(&text, &context, prebuilt, draft);
    Ok(())
}

fn verify(dir: &Path, draft: &mut Draft, timeout: Option<u64>) -> Result<(), ImportError> {
    draft.tests = super::folder(dir, "tests");
    let Some(script) = super::read_text(dir, "tests/test.sh")? else {
        draft.notes.push("no tests/test.sh: nothing verifies this task".into());
        return Ok(());
    };
    let (mapped, quoted_lines) = map_fixed_paths(&script);
    for line in quoted_lines {
        draft.notes.push(format!(
            "tests/test.sh line {line}: a verifier path was mapped inside quotes; check that `$MEDIN_WORKSPACE` expands there"
        ));
    }
    for (text, effect) in shell::commands(&script) {
        match effect {
            Effect::Download(_) => draft.notes.push(format!(
                "tests/test.sh downloads at test time (`{}`), and the verifier has no network: provide it through `environment:` and remove the line",
                dockerfile::cut(&text)
            )),
            Effect::Install(p) => {
                draft.packages.extend(&p);
                draft.notes.push(format!(
                    "tests/test.sh installs at test time (`{}`): the packages are now in `environment:`; remove the line",
                    dockerfile::cut(&text)
                ));
            }
            _ => {}
        }
    }
    if script.contains("reward.json") && !script.contains("reward.txt") {
        draft
            .notes
            .push("the verifier writes reward.json (several rewards); medin reads one reward from reward.txt".into());
    }
    let uses_pytest = script.contains("pytest");
    if uses_pytest {
        draft.packages.ensure_pytest();
    }
    draft
        .test_files
        .push((RelPath::name("test.sh").unwrap_or_default(), mapped));
    draft.verify = Some(VerifyDraft {
        command: "cd \"$MEDIN_WORKSPACE\" && bash tests/test.sh".into(),
        framework: uses_pytest.then_some("pytest"),
        timeout,
        reward_file: script.contains("reward.txt").then(|| REWARD_FILE.to_string()),
    });
    Ok(())
}

/// `script` with Harbor's `/tests` and `/logs/verifier` (as whole paths) mapped into the
/// workspace, and the numbers of the lines where a mapped path sits after a single quote
/// (where the variable would not expand).
fn map_fixed_paths(script: &str) -> (String, Vec<usize>) {
    let pattern = Regex::new(r#"(^|[\s"'=:(>])/(tests|logs/verifier)(/|$|[\s"';)&|])"#).expect("a valid pattern");
    let mut quoted = Vec::new();
    let mapped: Vec<String> = script
        .lines()
        .enumerate()
        .map(|(i, line)| {
            // Run twice: a match's trailing separator may start the next one.
            let once = pattern.replace_all(line, "${1}$$MEDIN_WORKSPACE/${2}${3}");
            let twice = pattern
                .replace_all(&once, "${1}$$MEDIN_WORKSPACE/${2}${3}")
                .into_owned();
            if twice != line && twice.contains('\'') {
                quoted.push(i + 1);
            }
            twice
        })
        .collect();
    let mut text = mapped.join("\n");
    if script.ends_with('\n') {
        text.push('\n');
    }
    (text, quoted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verifier_paths_are_mapped_into_the_workspace() {
        let (text, quoted) = map_fixed_paths(
            "mkdir -p /logs/verifier\npytest /tests/test_outputs.py -rA\necho 1 > /logs/verifier/reward.txt\ncat /testsuite /app/x\n",
        );
        assert_eq!(
            text,
            "mkdir -p $MEDIN_WORKSPACE/logs/verifier\npytest $MEDIN_WORKSPACE/tests/test_outputs.py -rA\necho 1 > $MEDIN_WORKSPACE/logs/verifier/reward.txt\ncat /testsuite /app/x\n"
        );
        assert!(quoted.is_empty());
        let (_, quoted) = map_fixed_paths("sh -c 'ls /tests'\n");
        assert_eq!(quoted, [1]);
    }
}

//! The JSON Schemas of a task file (`medin schema`) and of the suite file `medin.yaml`, used by
//! editors through the yaml-language-server modeline
//! (`# yaml-language-server: $schema=medin-task.schema.json`).
//!
//! The schemas are derived from the types the YAML deserializes into (schemars; for a task, the
//! file as written in `spec::raw`), so they cannot drift from what the loader accepts: every
//! object is closed (`additionalProperties: false`), enums written as one-key maps appear as
//! such. What the kind decides (`kind: tdd` needs `tdd:`, ...) is added as `if`/`then` rules.

use schemars::{schema_for, Schema};

use super::raw::RawTask;
use super::suite::SuiteConfig;

/// `$id` of the task schema.
pub const TASK_SCHEMA_ID: &str = "urn:medin:schema:task:v1";
/// `$id` of the suite schema.
pub const SUITE_SCHEMA_ID: &str = "urn:medin:schema:suite:v1";

/// The task-file JSON Schema as pretty JSON.
pub fn task_schema_json() -> String {
    let mut schema: Schema = schema_for!(RawTask);
    schema.insert("allOf".into(), kind_rules());
    pretty(
        schema,
        TASK_SCHEMA_ID,
        "medin task",
        "One medin task file: what the agent is asked, what it may do, and what must hold afterwards.",
    )
}

/// What the loader requires of the kind, for editors: `kind: tdd` needs a `tdd:` block and
/// `kind: prp` a `prp:` block; a block or `expect.tdd`/`expect.prp` of another kind is refused;
/// only `tdd` and `prp` write `solution` as rounds (nested lists).
fn kind_rules() -> serde_json::Value {
    let is = |kinds: &[&str]| serde_json::json!({ "required": ["kind"], "properties": { "kind": { "enum": kinds } } });
    let block = |kind: &str| {
        serde_json::json!({
            "if": is(&[kind]),
            "then": { "required": [kind] },
            "else": { "properties": { kind: false, "expect": { "properties": { kind: false } } } }
        })
    };
    serde_json::json!([
        block("tdd"),
        block("prp"),
        { "if": is(&["tdd", "prp"]), "else": { "properties": { "solution": { "items": { "not": { "type": "array" } } } } } }
    ])
}

/// The `medin.yaml` JSON Schema as pretty JSON.
pub fn suite_schema_json() -> String {
    pretty(
        schema_for!(SuiteConfig),
        SUITE_SCHEMA_ID,
        "medin suite (medin.yaml)",
        "The suite file: task folders, default agent, repeats and metric thresholds.",
    )
}

fn pretty(mut schema: Schema, id: &str, title: &str, description: &str) -> String {
    schema.insert("$id".into(), id.into());
    schema.insert("title".into(), title.into());
    schema.insert("description".into(), description.into());
    // Serializing a `serde_json::Value` tree cannot fail (string keys only).
    serde_json::to_string_pretty(schema.as_value()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn parse(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn task_schema_is_closed_and_lists_keys() {
        let v = parse(&task_schema_json());
        assert_eq!(v["$id"], TASK_SCHEMA_ID);
        assert_eq!(v["title"], "medin task");
        assert_eq!(v["additionalProperties"], false);
        assert_eq!(v["required"], serde_json::json!(["description"]));
        let props: Vec<&str> = v["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        for k in [
            "id",
            "description",
            "kind",
            "tags",
            "workspace",
            "setup",
            "prompt",
            "limits",
            "policy",
            "agent",
            "solution",
            "expect",
        ] {
            assert!(props.contains(&k), "missing {k} in {props:?}");
        }
        // Every nested object definition is closed too.
        for (name, def) in v["$defs"].as_object().unwrap() {
            if def["type"] == "object" && def.get("properties").is_some() {
                assert_eq!(def["additionalProperties"], false, "{name} is open");
            }
        }
    }

    #[test]
    fn suite_schema_lists_keys() {
        let v = parse(&suite_schema_json());
        assert_eq!(v["$id"], SUITE_SCHEMA_ID);
        assert_eq!(v["additionalProperties"], false);
        let props = v["properties"].as_object().unwrap();
        for k in ["suites", "agent", "repeat", "output", "thresholds"] {
            assert!(props.contains_key(k), "missing {k}");
        }
    }
}

//! The small value types of the spec format and how they read and write: durations
//! (`"500ms"`, `"30s"`, `"2m"`), sizes (`"64MiB"`), solution steps (one-key maps) and rounds of
//! them, command checks (a string or a map) and validators (one check, with an optional
//! `name:`). Their JSON Schemas are written by hand to match.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::model::{
    ByteSize, CommandCheck, CustomCheck, DockerCheck, DurationSpec, FileContainsCheck, FinalReport, HttpCheck,
    PortCheck, Step, Validator, ValidatorSpec,
};

// ---------------------------------------------------------------- durations

impl DurationSpec {
    /// Units allowed in a duration (the same set the JSON Schema's pattern allows).
    pub const UNITS: &'static [&'static str] = &["ns", "us", "ms", "s", "sec", "m", "min", "h", "hr", "d"];

    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        // humantime also takes `30 seconds`, `2 minutes`, ...; the format (and its schema) allow
        // only the short units, so one spelling is valid everywhere.
        for unit in t.split(|c: char| !c.is_ascii_alphabetic()).filter(|u| !u.is_empty()) {
            if !Self::UNITS.contains(&unit) {
                return Err(format!(
                    "invalid duration `{t}` (unknown unit `{unit}`, use one of {}); write it like \"500ms\", \"30s\" or \"2m\"",
                    Self::UNITS.join(", ")
                ));
            }
        }
        humantime::parse_duration(t)
            .map(DurationSpec)
            .map_err(|e| format!("invalid duration `{t}` ({e}); write it like \"500ms\", \"30s\" or \"2m\""))
    }
}

impl<'de> Deserialize<'de> for DurationSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = DurationSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as \"500ms\", \"30s\" or \"2m\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DurationSpec, E> {
                DurationSpec::parse(v).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DurationSpec, E> {
                Err(E::custom(format!(
                    "a bare number `{v}` is ambiguous as a duration; add a unit: \"{v}s\" or \"{v}ms\""
                )))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DurationSpec, E> {
                self.visit_u64(v.unsigned_abs())
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<DurationSpec, E> {
                Err(E::custom(format!(
                    "a bare number `{v}` is ambiguous as a duration; add a unit, e.g. \"{v}s\""
                )))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for DurationSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&humantime::format_duration(self.0).to_string())
    }
}

impl JsonSchema for DurationSpec {
    fn schema_name() -> Cow<'static, str> {
        "Duration".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "description": "A duration: \"500ms\", \"30s\", \"2m\", \"1h 30m\".",
            "pattern": "^\\s*[0-9]+(\\.[0-9]+)?\\s*(ns|us|ms|s|sec|m|min|h|hr|d)(\\s*[0-9]+\\s*(ns|us|ms|s|sec|m|min|h|hr|d))*\\s*$"
        })
    }
}

// ---------------------------------------------------------------- sizes

impl ByteSize {
    /// `"64MiB"`, `"512 KiB"`, `"1GB"`, `"4096"`, `"10B"`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let unit = unit.trim();
        let err = || format!("invalid size `{t}`; write it like \"64MiB\", \"512KiB\", \"1GB\" or a number of bytes");
        let n: f64 = num.parse().map_err(|_| err())?;
        let mult: u64 = match unit.to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kb" => 1_000,
            "kib" => 1 << 10,
            "m" | "mb" => 1_000_000,
            "mib" => 1 << 20,
            "g" | "gb" => 1_000_000_000,
            "gib" => 1 << 30,
            "t" | "tb" => 1_000_000_000_000,
            "tib" => 1 << 40,
            _ => return Err(err()),
        };
        let bytes = n * mult as f64;
        if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
            return Err(err());
        }
        Ok(ByteSize(bytes as u64))
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"64MiB\" or a number of bytes")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteSize, E> {
                ByteSize::parse(v).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ByteSize, E> {
                Ok(ByteSize(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ByteSize, E> {
                u64::try_from(v)
                    .map(ByteSize)
                    .map_err(|_| E::custom("a size cannot be negative"))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl JsonSchema for ByteSize {
    fn schema_name() -> Cow<'static, str> {
        "ByteSize".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A size: \"64MiB\", \"512KiB\", \"1GB\", or a number of bytes.",
            "anyOf": [
                { "type": "integer", "minimum": 0 },
                { "type": "string", "pattern": "^\\s*[0-9]+(\\.[0-9]+)?\\s*([kKmMgGtT]i?[bB]?|[bB])?\\s*$" }
            ]
        })
    }
}

// ---------------------------------------------------------------- solution steps

/// Input of `call:`: any tool name, with JSON input or a raw text.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCall {
    tool: String,
    #[serde(default)]
    input: Option<serde_json::Value>,
    #[serde(default)]
    raw: Option<String>,
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Step;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a one-key map such as `bash: ls`, `write_file: {path: .., content: ..}`, `call: {tool: .., input: ..}` or `final: {result: success}`")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Step, A::Error> {
                let Some(key) = map.next_key::<String>()? else {
                    return Err(de::Error::custom(
                        "empty step; write one tool call such as `bash: ls` or `final: {result: success}`",
                    ));
                };
                let step = match key.as_str() {
                    "final" => Step::Final(map.next_value::<FinalReport>()?),
                    "reply" => Step::Reply(map.next_value::<String>()?),
                    "call" => {
                        let call: RawCall = map.next_value()?;
                        match (call.input, call.raw) {
                            (Some(_), Some(_)) => {
                                return Err(de::Error::custom("`call` takes `input` or `raw`, not both"))
                            }
                            (None, Some(raw)) => Step::Raw { tool: call.tool, raw },
                            (input, None) => Step::Call {
                                tool: call.tool,
                                input: input.unwrap_or(serde_json::json!({})),
                            },
                        }
                    }
                    tool => {
                        let Some(info) = registry().iter().find(|t| t.name == tool) else {
                            let names: Vec<&str> = registry()
                                .iter()
                                .map(|t| t.name)
                                .chain(["final", "reply", "call"])
                                .collect::<Vec<_>>();
                            let hint = super::load::nearest(tool, &names)
                                .map(|n| format!("did you mean `{n}`?"))
                                .unwrap_or_else(|| format!("expected one of {}", names.join(", ")));
                            return Err(de::Error::custom(format!("unknown tool `{tool}` in solution step; {hint} (use `call: {{tool: {tool}, input: ..}}` to call an unregistered tool on purpose)")));
                        };
                        let value: serde_json::Value = map.next_value()?;
                        let input = match (value, info.shorthand) {
                            (serde_json::Value::Object(o), _) => serde_json::Value::Object(o),
                            (
                                v @ (serde_json::Value::String(_)
                                | serde_json::Value::Number(_)
                                | serde_json::Value::Bool(_)),
                                Some(key),
                            ) => {
                                serde_json::json!({ key: v })
                            }
                            (serde_json::Value::Null, _) => serde_json::json!({}),
                            (other, _) => {
                                return Err(de::Error::custom(format!(
                                    "`{tool}` takes a map of inputs, got `{other}`"
                                )));
                            }
                        };
                        Step::Tool {
                            tool: tool.to_string(),
                            input,
                        }
                    }
                };
                if let Some(extra) = map.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "a step holds exactly one tool call, but `{extra}` follows `{key}`; put `- {extra}: ..` on its own list item"
                    )));
                }
                Ok(step)
            }
        }
        d.deserialize_map(V)
    }
}

/// One item of `solution:` as written: a step, or (multi-round kinds, DESIGN §3: "a list of
/// rounds, each a list of actions") a whole round as a nested list of steps. The loader checks
/// that only a multi-round kind writes rounds, then flattens them with [`flatten_rounds`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum SolutionItem {
    Step(Step),
    Round(Vec<Step>),
}

impl<'de> Deserialize<'de> for SolutionItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SolutionItem;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a step (a one-key map such as `bash: ls`) or a round (a list of steps)")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<SolutionItem, A::Error> {
                Step::deserialize(de::value::MapAccessDeserializer::new(map)).map(SolutionItem::Step)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<SolutionItem, A::Error> {
                Vec::<Step>::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(SolutionItem::Round)
            }
        }
        d.deserialize_any(V)
    }
}

/// The flat list of steps the oracle plays: a nested round that does not end with `final` or
/// `reply` gets an implicit `final: {result: success}`, which is how a round ends in the flat
/// form.
pub(crate) fn flatten_rounds(items: Vec<SolutionItem>) -> Vec<Step> {
    let mut steps = Vec::new();
    for item in items {
        match item {
            SolutionItem::Step(step) => steps.push(step),
            SolutionItem::Round(round) => {
                let ends = matches!(round.last(), Some(Step::Final(_) | Step::Reply(_)));
                steps.extend(round);
                if !ends {
                    steps.push(Step::Final(FinalReport {
                        result: super::model::FinalResult::Success,
                        message: String::new(),
                        code: None,
                    }));
                }
            }
        }
    }
    steps
}

/// The JSON Schema of `solution:` (steps, or rounds of steps).
pub(crate) fn solution_schema(generator: &mut SchemaGenerator) -> Schema {
    let step = generator.subschema_for::<Step>();
    json_schema!({
        "type": "array",
        "description": "The reference solution the oracle plays: steps; multi-round kinds end each round with `final` (or write each round as a nested list).",
        "items": { "anyOf": [ step, { "type": "array", "items": step } ] }
    })
}

impl JsonSchema for Step {
    fn schema_name() -> Cow<'static, str> {
        "Step".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut variants: Vec<serde_json::Value> = Vec::new();
        for t in crate::tools::registry() {
            let mut input = t.input_schema.clone();
            if let Some(short) = t.shorthand {
                input = serde_json::json!({ "anyOf": [ input, { "type": ["string", "number", "boolean"], "description": format!("shorthand for {{{short}: ..}}") } ] });
            }
            variants.push(serde_json::json!({
                "type": "object", "additionalProperties": false, "required": [t.name],
                "description": t.description,
                "properties": { t.name: input }
            }));
        }
        let final_schema = generator.subschema_for::<FinalReport>();
        variants.push(serde_json::json!({
            "type": "object", "additionalProperties": false, "required": ["final"],
            "properties": { "final": final_schema }
        }));
        variants.push(serde_json::json!({
            "type": "object", "additionalProperties": false, "required": ["reply"],
            "description": "A free-text reply ending the round (parsed as {result, message} JSON, raw or fenced).",
            "properties": { "reply": { "type": "string" } }
        }));
        variants.push(serde_json::json!({
            "type": "object", "additionalProperties": false, "required": ["call"],
            "description": "Call any tool by name (registered or not); `raw` sends the input verbatim.",
            "properties": { "call": {
                "type": "object", "additionalProperties": false, "required": ["tool"],
                "properties": { "tool": {"type": "string"}, "input": {}, "raw": {"type": "string"} }
            } }
        }));
        json_schema!({ "description": "One solution step: a one-key map.", "oneOf": variants })
    }
}

// ---------------------------------------------------------------- command checks

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandCheckMap {
    run: String,
    #[serde(default)]
    exit_code: Option<i32>,
    #[serde(default)]
    stdout: Option<String>,
    #[serde(default)]
    timeout: Option<DurationSpec>,
}

impl<'de> Deserialize<'de> for CommandCheck {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CommandCheck;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a command line, or a map {run, exit_code, stdout, timeout}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CommandCheck, E> {
                Ok(CommandCheck {
                    run: v.to_string(),
                    exit_code: 0,
                    stdout: None,
                    timeout: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<CommandCheck, A::Error> {
                let m = CommandCheckMap::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(CommandCheck {
                    run: m.run,
                    exit_code: m.exit_code.unwrap_or(0),
                    stdout: m.stdout,
                    timeout: m.timeout,
                })
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for CommandCheck {
    fn schema_name() -> Cow<'static, str> {
        "CommandCheck".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let duration = generator.subschema_for::<DurationSpec>();
        json_schema!({
            "description": "A shell command run in the workspace: a string, or a map.",
            "anyOf": [
                { "type": "string" },
                { "type": "object", "additionalProperties": false, "required": ["run"], "properties": {
                    "run": { "type": "string" },
                    "exit_code": { "type": "integer", "description": "Expected exit code (default 0)." },
                    "stdout": { "type": "string", "description": "Regex stdout must match." },
                    "timeout": duration
                } }
            ]
        })
    }
}

// ---------------------------------------------------------------- validators

/// The checks a validator may name, as written (the keys of [`ValidatorSpec`]).
pub(crate) const VALIDATOR_KINDS: &[&str] = &[
    "file_exists",
    "file_contains",
    "command",
    "port_listening",
    "http",
    "custom",
    "docker",
];

impl<'de> Deserialize<'de> for Validator {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Validator;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a one-key map naming the check, such as `file_exists: hello.txt` or `command: \"make test\"`, with an optional `name:`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Validator, E> {
                // `- file_exists` with no value: the message the loader explains for any
                // one-key map written without its value.
                if VALIDATOR_KINDS.contains(&v) {
                    Err(E::invalid_type(de::Unexpected::UnitVariant, &"newtype variant"))
                } else {
                    Err(E::unknown_variant(v, VALIDATOR_KINDS))
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Validator, A::Error> {
                let mut name: Option<String> = None;
                let mut check: Option<(String, ValidatorSpec)> = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == "name" {
                        if name.is_some() {
                            return Err(de::Error::duplicate_field("name"));
                        }
                        name = Some(map.next_value()?);
                        continue;
                    }
                    if let Some((first, _)) = &check {
                        return Err(de::Error::custom(format!(
                            "a validator holds exactly one check, but `{key}` follows `{first}`; put `- {key}: ..` on its own list item (a validator is one check, with an optional `name:`)"
                        )));
                    }
                    let spec = match key.as_str() {
                        "file_exists" => ValidatorSpec::FileExists(map.next_value()?),
                        "file_contains" => ValidatorSpec::FileContains(map.next_value::<FileContainsCheck>()?),
                        "command" => ValidatorSpec::Command(map.next_value::<CommandCheck>()?),
                        "port_listening" => ValidatorSpec::PortListening(map.next_value::<PortCheck>()?),
                        "http" => ValidatorSpec::Http(map.next_value::<HttpCheck>()?),
                        "custom" => ValidatorSpec::Custom(map.next_value::<CustomCheck>()?),
                        "docker" => ValidatorSpec::Docker(map.next_value::<DockerCheck>()?),
                        other => return Err(de::Error::unknown_variant(other, VALIDATOR_KINDS)),
                    };
                    check = Some((key, spec));
                }
                match check {
                    Some((_, check)) => Ok(Validator { name, check }),
                    None => Err(de::Error::custom(
                        "a validator needs a check; write one such as `file_exists: hello.txt` or `command: \"make test\"` (with `name:` beside it, if you like)",
                    )),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for Validator {
    fn schema_name() -> Cow<'static, str> {
        "Validator".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let name = serde_json::json!({ "type": "string", "description": "Shown instead of the check when it fails, e.g. `tests pass`." });
        let checks: [(&str, &str, Schema); 7] = [
            (
                "file_exists",
                "A workspace path that must exist and be readable.",
                generator.subschema_for::<String>(),
            ),
            (
                "file_contains",
                "A workspace file whose content matches a regex.",
                generator.subschema_for::<FileContainsCheck>(),
            ),
            (
                "command",
                "A shell command run in the workspace through the sandbox (default timeout 60s).",
                generator.subschema_for::<CommandCheck>(),
            ),
            (
                "port_listening",
                "A TCP port that accepts connections.",
                generator.subschema_for::<PortCheck>(),
            ),
            (
                "http",
                "An HTTP GET and what its answer must hold.",
                generator.subschema_for::<HttpCheck>(),
            ),
            (
                "custom",
                "A script run through the sandbox like `command`; the last line of its stdout must be one JSON object {\"status\": \"passed\"|\"failed\"|\"pending\", \"message\": \"..\", \"evidence\": {..}} (default timeout 60s).",
                generator.subschema_for::<CustomCheck>(),
            ),
            (
                "docker",
                "A container's state from the installed engine (podman or docker, MEDIN_CONTAINER_ENGINE overrides); pending when no engine or daemon answers.",
                generator.subschema_for::<DockerCheck>(),
            ),
        ];
        let one_of: Vec<serde_json::Value> = checks
            .into_iter()
            .map(|(key, description, schema)| {
                serde_json::json!({
                    "type": "object",
                    "description": description,
                    "additionalProperties": false,
                    "required": [key],
                    "properties": { key: schema, "name": name.clone() }
                })
            })
            .collect();
        json_schema!({
            "description": "A real check of the end state: a one-key map naming it, with an optional `name:`.",
            "oneOf": one_of
        })
    }
}

/// The tool registry, built once: a solution may hold thousands of steps.
fn registry() -> &'static [crate::tools::ToolInfo] {
    static REGISTRY: std::sync::OnceLock<Vec<crate::tools::ToolInfo>> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(crate::tools::registry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_need_units() {
        assert_eq!(DurationSpec::parse("500ms").unwrap().0.as_millis(), 500);
        assert_eq!(DurationSpec::parse("2m").unwrap().0.as_secs(), 120);
        assert!(DurationSpec::parse("fast").is_err());
        assert!(DurationSpec::parse("30 seconds")
            .unwrap_err()
            .contains("unknown unit `seconds`"));
        assert_eq!(DurationSpec::parse("1h 30m").unwrap().0.as_secs(), 5400);
    }

    #[test]
    fn sizes_parse_binary_and_decimal_units() {
        assert_eq!(ByteSize::parse("64MiB").unwrap().0, 64 << 20);
        assert_eq!(ByteSize::parse("1GB").unwrap().0, 1_000_000_000);
        assert_eq!(ByteSize::parse("4096").unwrap().0, 4096);
        assert!(ByteSize::parse("12 parsecs").is_err());
        assert!(ByteSize::parse("-5").is_err());
    }
}

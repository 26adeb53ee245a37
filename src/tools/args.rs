//! Tool input: parsing an [`ActionInput`] and checking it against the tool's JSON Schema.
//!
//! The schemas in the registry use a small subset of JSON Schema (object with `properties`,
//! `required`, `additionalProperties: false`; property `type` string/integer/boolean, `enum`,
//! `minimum`, `minLength`). This module checks exactly that subset and names the offending key
//! in its message, with the nearest valid key for typos.

use serde_json::{Map, Value};

use super::{ActionInput, ToolInfo};
pub(crate) use crate::suggest::nearest;

/// A validated input object.
#[derive(Debug, Clone)]
pub(crate) struct Args(Map<String, Value>);

impl Args {
    pub(crate) fn str(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    pub(crate) fn bool(&self, key: &str) -> bool {
        self.0.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    pub(crate) fn into_value(self) -> Value {
        Value::Object(self.0)
    }

    pub(crate) fn u64(&self, key: &str) -> Option<u64> {
        self.0.get(key).and_then(Value::as_u64)
    }
}

/// An example input object for messages, e.g. `{"path": "..."}`.
pub(crate) fn example(info: &ToolInfo) -> String {
    let required: Vec<&str> = info
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let keys: Vec<&str> = if required.is_empty() {
        info.shorthand.into_iter().collect()
    } else {
        required
    };
    let body: Vec<String> = keys.iter().map(|k| format!("\"{k}\": \"...\"")).collect();
    format!("{{{}}}", body.join(", "))
}

/// Parses and validates `input` for `info`; the error is a message for the agent.
pub(crate) fn parse(info: &ToolInfo, input: &ActionInput) -> Result<Args, String> {
    let value = match input {
        ActionInput::Json(v) => v.clone(),
        ActionInput::Raw(text) => match serde_json::from_str::<Value>(text) {
            Ok(v) => v,
            Err(e) => {
                let shown: String = text.chars().take(80).collect();
                let more = if text.chars().count() > 80 { "..." } else { "" };
                return Err(format!(
                    "input is not valid JSON: {e} (got `{shown}{more}`); send an object such as {}",
                    example(info)
                ));
            }
        },
    };
    let value = match (value, info.shorthand) {
        (Value::String(s), Some(key)) => {
            let mut m = Map::new();
            m.insert(key.to_string(), Value::String(s));
            Value::Object(m)
        }
        (Value::Null, _) if !has_required(info) => Value::Object(Map::new()),
        (v, _) => v,
    };
    let Value::Object(map) = value else {
        return Err(format!(
            "input for `{}` must be a JSON object, got {}; send an object such as {}",
            info.name,
            kind_of(&value),
            example(info)
        ));
    };
    validate(info, &map)?;
    Ok(Args(map))
}

fn has_required(info: &ToolInfo) -> bool {
    info.input_schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty())
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn validate(info: &ToolInfo, map: &Map<String, Value>) -> Result<(), String> {
    let schema = &info.input_schema;
    let empty = Map::new();
    let props = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let names: Vec<&str> = props.keys().map(String::as_str).collect();
    for key in map.keys() {
        if !props.contains_key(key) {
            let hint = nearest(key, &names)
                .map(|n| format!(" did you mean `{n}`?"))
                .unwrap_or_default();
            return Err(format!(
                "unknown key `{key}` for tool `{}`;{hint} valid keys: {}",
                info.name,
                names.join(", ")
            ));
        }
    }
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(key) {
                return Err(format!(
                    "missing required key `{key}` for tool `{}`; send an object such as {}",
                    info.name,
                    example(info)
                ));
            }
        }
    }
    for (key, value) in map {
        let Some(prop) = props.get(key) else { continue };
        check_value(info.name, key, prop, value)?;
    }
    Ok(())
}

fn check_value(tool: &str, key: &str, prop: &Value, value: &Value) -> Result<(), String> {
    if let Some(allowed) = prop.get("enum").and_then(Value::as_array) {
        if !allowed.contains(value) {
            let list: Vec<String> = allowed.iter().map(|v| v.to_string()).collect();
            let got = value.to_string();
            let hint = value
                .as_str()
                .and_then(|s| {
                    let opts: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
                    nearest(s, &opts)
                })
                .map(|n| format!(" (did you mean \"{n}\"?)"))
                .unwrap_or_default();
            return Err(format!(
                "key `{key}` of `{tool}` must be one of {}, got {got}{hint}",
                list.join(", ")
            ));
        }
    }
    let Some(ty) = prop.get("type").and_then(Value::as_str) else {
        return Ok(());
    };
    let ok = match ty {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        _ => true,
    };
    if !ok {
        return Err(format!(
            "key `{key}` of `{tool}` must be {}, got {}",
            article(ty),
            kind_of(value)
        ));
    }
    if let (Some(min), Some(n)) = (prop.get("minimum").and_then(Value::as_i64), value.as_i64()) {
        if n < min {
            return Err(format!("key `{key}` of `{tool}` must be at least {min}, got {n}"));
        }
    }
    if let (Some(min), Some(s)) = (prop.get("minLength").and_then(Value::as_u64), value.as_str()) {
        if (s.chars().count() as u64) < min {
            return Err(format!("key `{key}` of `{tool}` must not be empty"));
        }
    }
    Ok(())
}

fn article(ty: &str) -> String {
    match ty {
        "integer" => "an integer".to_string(),
        "array" => "an array".to_string(),
        "object" => "an object".to_string(),
        other => format!("a {other}"),
    }
}

//! How a spec names an agent, as written: the value of `agent:` in `medin.yaml` or a task, of
//! `MEDIN_AGENT` and of `--agent`. This module only reads the syntax; which names exist and
//! what their arguments mean is the agent registry's ([`crate::agent::AgentRegistry`]), so an
//! embedding crate's agents are written exactly like the built-in ones.
//!
//! The forms:
//!
//! - a string `name` or `name:ARG` (`oracle`, `process:python3 agent.py`, `mine`): the text
//!   after the first `:` is the argument;
//! - a one-key map `{name: ARG}` (the same, in YAML's words) or `{name: {key: value, ..}}`
//!   (options, e.g. `{process: {command: ./agent, reply_timeout: 10s}}`).

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An agent as a spec names it, before the registry reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRef {
    /// The registered name (`oracle`, `process`, `exec`, or an embedding crate's).
    pub name: String,
    /// What follows the name.
    pub given: AgentGiven,
}

/// What follows an agent's name.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentGiven {
    /// The name alone: `oracle`.
    Nothing,
    /// `name:ARG` or `{name: ARG}`: `process:python3 agent.py`.
    Arg(String),
    /// `{name: {key: value, ..}}`: `{process: {command: ./agent, reply_timeout: 10s}}`.
    Options(serde_json::Map<String, serde_json::Value>),
}

impl AgentRef {
    /// Reads `name` or `name:ARG` (the form of `MEDIN_AGENT`, `--agent`, and a plain string in
    /// YAML). Surrounding blanks are dropped; whether the name exists is the registry's call.
    pub fn parse(text: &str) -> Self {
        let text = text.trim();
        match text.split_once(':') {
            Some((name, arg)) => AgentRef {
                name: name.trim().to_string(),
                given: AgentGiven::Arg(arg.trim().to_string()),
            },
            None => AgentRef {
                name: text.to_string(),
                given: AgentGiven::Nothing,
            },
        }
    }
}

impl fmt::Display for AgentRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.given {
            AgentGiven::Nothing => f.write_str(&self.name),
            AgentGiven::Arg(arg) => write!(f, "{}:{arg}", self.name),
            AgentGiven::Options(options) => write!(f, "{}{}", self.name, serde_json::Value::Object(options.clone())),
        }
    }
}

impl<'de> Deserialize<'de> for AgentRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AgentRef;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an agent: a name such as `oracle`, `\"process:python3 agent.py\"`, or a one-key map such as `{process: {command: ./agent}}`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<AgentRef, E> {
                if v.trim().is_empty() {
                    return Err(E::custom("the agent's name is empty; write e.g. `agent: oracle`"));
                }
                Ok(AgentRef::parse(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AgentRef, A::Error> {
                // A map of no key or of several is the spec loader's one-key-map error, which it
                // locates at the second key and words for `agent:`.
                let one_key = || de::Error::invalid_value(de::Unexpected::Map, &"map with a single key");
                let Some(name) = map.next_key::<String>()? else {
                    return Err(one_key());
                };
                let given = match map.next_value::<serde_json::Value>()? {
                    serde_json::Value::Null => AgentGiven::Nothing,
                    serde_json::Value::String(s) => AgentGiven::Arg(s),
                    v @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_)) => AgentGiven::Arg(v.to_string()),
                    serde_json::Value::Object(options) => AgentGiven::Options(options),
                    serde_json::Value::Array(_) => {
                        return Err(de::Error::custom(format!(
                            "`{name}` takes an argument (`{name}: ARG`) or options (`{name}: {{..}}`), not a list"
                        )))
                    }
                };
                match map.next_key::<String>()? {
                    // `process:` with nothing after it, then more keys: they were meant to be
                    // its options, indented under it.
                    Some(second) if given == AgentGiven::Nothing => {
                        return Err(de::Error::custom(format!(
                            "`{name}` has no value, and `{second}` follows it as another agent; indent `{name}`'s options under it"
                        )))
                    }
                    Some(_) => return Err(one_key()),
                    None => {}
                }
                Ok(AgentRef { name, given })
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for AgentRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.given {
            AgentGiven::Nothing | AgentGiven::Arg(_) => s.serialize_str(&self.to_string()),
            AgentGiven::Options(options) => {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry(&self.name, options)?;
                map.end()
            }
        }
    }
}

impl JsonSchema for AgentRef {
    fn schema_name() -> Cow<'static, str> {
        "Agent".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let builtin = crate::agent::builtin_option_schemas(generator);
        let mut properties = serde_json::Map::new();
        for (name, options) in builtin {
            properties.insert(
                name.to_string(),
                serde_json::json!({ "anyOf": [ { "type": "string" }, options.to_value() ] }),
            );
        }
        json_schema!({
            "description": "Who acts: a registered agent by name. `oracle` (plays the task's solution), `process:CMD` (a program speaking JSON lines), `exec:CMD` (a black-box command run in the workspace), `openai:MODEL` / `anthropic:MODEL` (a model behind the provider's API), `claude-code`, `codex`, `gemini-cli`, `aider` (a real CLI agent, `:MODEL` or `{claude-code: {..}}`), a named agent of medin.yaml's `agents`, or an agent an embedding crate registered (`name` or `name:ARG`).",
            "anyOf": [
                { "type": "string", "pattern": "^\\s*[a-z][a-z0-9_-]*(:.*)?$" },
                {
                    "type": "object",
                    "minProperties": 1,
                    "maxProperties": 1,
                    "properties": properties,
                    "additionalProperties": { "type": ["string", "null"] }
                }
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Result<AgentRef, String> {
        serde_yaml_ng::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn strings_split_at_the_first_colon() {
        assert_eq!(
            AgentRef::parse(" process: python3 a.py --x=1:2 "),
            AgentRef {
                name: "process".into(),
                given: AgentGiven::Arg("python3 a.py --x=1:2".into())
            }
        );
        assert_eq!(AgentRef::parse("oracle").given, AgentGiven::Nothing);
        assert_eq!(
            AgentRef::parse("process:python3 a.py").to_string(),
            "process:python3 a.py"
        );
    }

    #[test]
    fn yaml_forms_read_the_same() {
        assert_eq!(yaml("oracle").unwrap(), AgentRef::parse("oracle"));
        assert_eq!(yaml("'exec: ./run.sh'").unwrap(), AgentRef::parse("exec:./run.sh"));
        assert_eq!(yaml("{exec: ./run.sh}").unwrap(), AgentRef::parse("exec:./run.sh"));
        assert_eq!(yaml("{oracle: null}").unwrap(), AgentRef::parse("oracle"));
        let r = yaml("{process: {command: ./a, reply_timeout: 10s}}").unwrap();
        let AgentGiven::Options(o) = &r.given else {
            panic!("{r:?}")
        };
        assert_eq!((r.name.as_str(), o["command"].as_str()), ("process", Some("./a")));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"process": {"command": "./a", "reply_timeout": "10s"}})
        );
    }

    #[test]
    fn malformed_agents_say_what_to_write() {
        assert!(yaml("{a: x, b: y}").unwrap_err().contains("single key"));
        assert!(yaml("{process: null, command: x}")
            .unwrap_err()
            .contains("indent `process`'s options"));
        assert!(yaml("{}").unwrap_err().contains("single key"));
        assert!(yaml("{process: [a]}").unwrap_err().contains("not a list"));
        assert!(yaml("''").unwrap_err().contains("empty"));
        assert!(yaml("[oracle]").is_err());
    }
}

//! Agents by name. Every agent a spec, `MEDIN_AGENT` or `--agent` can name is an entry of an
//! [`AgentRegistry`]: `oracle`, `process:CMD` and `exec:CMD` are built-in entries, and an
//! embedding crate adds its own ([`crate::Harness::agent`]) the same way; a model agent
//! (`openai:MODEL`) or a CLI agent (`claude-code`) is one more entry, and nothing that runs
//! tasks changes for it.
//!
//! An entry reads what follows its name ([`AgentRef`]: `name`, `name:ARG` or
//! `{name: {options}}`) into an [`AgentKind`], which decides everything else: how the agent
//! starts, its label, how its process is confined. The result, an [`AgentSpec`], is what a
//! task or a run holds. A name nobody registered, an option an entry does not know, or a
//! missing argument is an [`AgentRefError`] that says what is registered and how to write it;
//! the spec loader turns it into a located `file:line:col` error.

use std::fmt;
use std::sync::Arc;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;

use crate::sandbox::SandboxConfig;
use crate::spec::{AgentGiven, AgentRef};

use super::kind::{AgentConfinement, AgentContext, AgentKind};
use super::{cli, exec, model, oracle, process, Agent, AgentFailure};

/// Reads what follows a registered name into a kind, or says what is wrong with it.
type Configure = Arc<dyn Fn(&AgentRef) -> Result<Arc<dyn AgentKind>, AgentRefError> + Send + Sync>;

/// An embedding crate's agent factory: one agent per attempt.
pub(crate) type Factory = Arc<dyn Fn(&AgentContext<'_>) -> Box<dyn Agent> + Send + Sync>;

/// The agents a run knows by name.
#[derive(Clone)]
pub struct AgentRegistry {
    /// In registration order (the built-ins first), as error messages list them.
    entries: Vec<Entry>,
}

#[derive(Clone)]
struct Entry {
    name: String,
    /// How the entry is written, for messages: `process:CMD`.
    usage: String,
    configure: Configure,
}

impl fmt::Debug for AgentRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|e| &e.usage)).finish()
    }
}

impl Default for AgentRegistry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl AgentRegistry {
    /// The built-in agents: `oracle`, `process:CMD`, `exec:CMD`, `openai:MODEL`,
    /// `anthropic:MODEL`.
    pub fn builtin() -> Self {
        let mut registry = AgentRegistry { entries: Vec::new() };
        let builtins: [(&str, &str, Configure); 9] = [
            ("oracle", "oracle", Arc::new(oracle::configure)),
            ("process", "process:CMD", Arc::new(process::configure)),
            ("exec", "exec:CMD", Arc::new(exec::configure)),
            ("openai", "openai:MODEL", Arc::new(model::configure_openai)),
            ("anthropic", "anthropic:MODEL", Arc::new(model::configure_anthropic)),
            ("claude-code", "claude-code[:MODEL]", Arc::new(cli::configure)),
            ("codex", "codex[:MODEL]", Arc::new(cli::configure)),
            ("gemini-cli", "gemini-cli[:MODEL]", Arc::new(cli::configure)),
            ("aider", "aider[:MODEL]", Arc::new(cli::configure)),
        ];
        for (name, usage, configure) in builtins {
            registry.entries.push(Entry {
                name: name.into(),
                usage: usage.into(),
                configure,
            });
        }
        registry
    }

    /// Registers an embedding crate's agent under `name`: named `name` or `name:ARG`, it runs
    /// in the harness process, shown as its name (with its argument), and `factory` makes one
    /// for each attempt.
    pub(crate) fn register_factory(&mut self, name: &str, factory: Factory) -> Result<(), RegistryError> {
        check_name(name)?;
        if self.entries.iter().any(|e| e.name == name) {
            return Err(RegistryError::Taken(name.to_string()));
        }
        let entry_name = name.to_string();
        let configure: Configure = Arc::new(move |r: &AgentRef| {
            let arg = match &r.given {
                AgentGiven::Nothing => None,
                AgentGiven::Arg(arg) => Some(arg.clone()),
                AgentGiven::Options(_) => {
                    return Err(AgentRefError::invalid(
                        r,
                        format!("takes no options; write `{0}` or `{0}:ARG`", r.name),
                    ))
                }
            };
            Ok(Arc::new(FactoryKind {
                name: entry_name.clone(),
                arg,
                factory: Arc::clone(&factory),
            }) as Arc<dyn AgentKind>)
        });
        self.entries.push(Entry {
            name: name.to_string(),
            usage: name.to_string(),
            configure,
        });
        Ok(())
    }

    /// Registers a named model agent of `medin.yaml` (`agents: {fast: {provider, model, ..}}`):
    /// written `fast`, shown as `fast`.
    pub fn register_model(&mut self, name: &str, settings: model::ModelSettings) -> Result<(), RegistryError> {
        check_name(name)?;
        if self.entries.iter().any(|e| e.name == name) {
            return Err(RegistryError::Taken(name.to_string()));
        }
        let kind: Arc<dyn AgentKind> = Arc::new(model::ModelKind::named(name, settings));
        let configure: Configure = Arc::new(move |r: &AgentRef| match &r.given {
            AgentGiven::Nothing => Ok(Arc::clone(&kind)),
            AgentGiven::Arg(_) | AgentGiven::Options(_) => Err(AgentRefError::invalid(
                r,
                format!(
                    "is a model agent of medin.yaml's `agents`: write `{0}` alone (its settings are in medin.yaml)",
                    r.name
                ),
            )),
        });
        self.entries.push(Entry {
            name: name.to_string(),
            usage: name.to_string(),
            configure,
        });
        Ok(())
    }

    /// Registers a named agent of `medin.yaml` (a model agent or a CLI agent), written by its
    /// name alone.
    pub fn register_named(&mut self, name: &str, agent: &super::NamedAgent) -> Result<(), RegistryError> {
        let cli = match agent {
            super::NamedAgent::Model(settings) => return self.register_model(name, settings.clone()),
            super::NamedAgent::Cli(cli) => cli,
        };
        check_name(name)?;
        if self.entries.iter().any(|e| e.name == name) {
            return Err(RegistryError::Taken(name.to_string()));
        }
        let kind = cli.kind(name).map_err(RegistryError::Invalid)?;
        let configure: Configure = Arc::new(move |r: &AgentRef| match &r.given {
            AgentGiven::Nothing => Ok(Arc::clone(&kind)),
            AgentGiven::Arg(_) | AgentGiven::Options(_) => Err(AgentRefError::invalid(
                r,
                format!(
                    "is a CLI agent of medin.yaml's `agents`: write `{0}` alone (its settings are in medin.yaml)",
                    r.name
                ),
            )),
        });
        self.entries.push(Entry {
            name: name.to_string(),
            usage: name.to_string(),
            configure,
        });
        Ok(())
    }

    /// Resolves an agent as written against the registered names.
    pub fn resolve(&self, written: &AgentRef) -> Result<AgentSpec, AgentRefError> {
        let entry = self
            .entries
            .iter()
            .find(|e| e.name == written.name)
            .ok_or_else(|| AgentRefError::Unknown {
                name: written.name.clone(),
                registered: self.usages(),
                nearest: crate::suggest::nearest(
                    &written.name,
                    &self.entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
                )
                .map(str::to_string),
            })?;
        let kind = (entry.configure)(written)?;
        Ok(AgentSpec {
            written: written.clone(),
            kind,
        })
    }

    /// Resolves `name` or `name:ARG` (the form of `MEDIN_AGENT` and `--agent`).
    pub fn parse(&self, text: &str) -> Result<AgentSpec, AgentRefError> {
        self.resolve(&AgentRef::parse(text))
    }

    /// The registered agents as they are written, for messages: `` `oracle`, `process:CMD` ``.
    pub fn usages(&self) -> String {
        self.entries
            .iter()
            .map(|e| format!("`{}`", e.usage))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Agent names: a lowercase letter, then lowercase letters, digits, `-` and `_` (the text
/// after a `:` is the argument, so a name has none).
fn check_name(name: &str) -> Result<(), RegistryError> {
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if valid {
        Ok(())
    } else {
        Err(RegistryError::InvalidName(name.to_string()))
    }
}

/// Why an agent could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("`{0}` is not a valid agent name: start with a lowercase letter, then use lowercase letters, digits, `-` and `_` (the text after a `:` is the agent's argument)")]
    InvalidName(String),
    #[error("an agent named `{0}` is already registered; choose another name")]
    Taken(String),
    /// A named agent whose settings cannot be used (a CLI option its CLI does not take).
    #[error("{0}")]
    Invalid(String),
}

/// Why an agent as written could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentRefError {
    /// No agent of that name is registered.
    #[error("unknown agent `{name}`; the registered agents are {registered}")]
    Unknown {
        name: String,
        /// The registered agents, as written (`` `oracle`, `process:CMD`, .. ``).
        registered: String,
        nearest: Option<String>,
    },
    /// `{name: {key: ..}}` with a key the agent does not know.
    #[error("unknown key `{key}` in `agent.{name}`")]
    UnknownKey {
        name: String,
        key: String,
        valid: Vec<String>,
    },
    /// `{name: {key: ..}}` with a value the agent cannot take.
    #[error("`agent.{name}.{key}`: {problem}")]
    InvalidOption { name: String, key: String, problem: String },
    /// The name is registered, but what follows it is not what it takes.
    #[error("agent `{name}` {problem}")]
    Invalid { name: String, problem: String },
}

impl AgentRefError {
    /// `written` is registered but `problem` (e.g. "has no command; write ..").
    pub(crate) fn invalid(written: &AgentRef, problem: String) -> Self {
        AgentRefError::Invalid {
            name: written.name.clone(),
            problem,
        }
    }

    /// What to do about it, when there is more to say than the message.
    pub fn help(&self) -> Option<String> {
        match self {
            AgentRefError::Unknown { nearest: Some(n), .. } => Some(format!("did you mean `{n}`?")),
            AgentRefError::Unknown { nearest: None, .. } => Some(
                "name a registered agent; an embedding crate registers its own with `medin::Harness::agent`".into(),
            ),
            AgentRefError::UnknownKey { key, valid, .. } => {
                let valid: Vec<&str> = valid.iter().map(String::as_str).collect();
                Some(match crate::suggest::nearest(key, &valid) {
                    Some(n) => format!("did you mean `{n}`?"),
                    None => format!("valid keys: {}", valid.join(", ")),
                })
            }
            AgentRefError::InvalidOption { .. } | AgentRefError::Invalid { .. } => None,
        }
    }

    /// The agent's name as written.
    pub(crate) fn name(&self) -> &str {
        match self {
            AgentRefError::Unknown { name, .. }
            | AgentRefError::UnknownKey { name, .. }
            | AgentRefError::InvalidOption { name, .. }
            | AgentRefError::Invalid { name, .. } => name,
        }
    }
}

/// Reads `{name: {options}}` into a kind's option type `T` (serde, closed): an unknown key is
/// [`AgentRefError::UnknownKey`] with the keys `T` has, a missing or mistyped value says so.
pub(crate) fn options<T: DeserializeOwned + JsonSchema>(
    written: &AgentRef,
    options: &serde_json::Map<String, serde_json::Value>,
) -> Result<T, AgentRefError> {
    let schema = schemars::schema_for!(T);
    let valid: Vec<String> = schema
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    if let Some(key) = options.keys().find(|k| !valid.contains(k)) {
        return Err(AgentRefError::UnknownKey {
            name: written.name.clone(),
            key: key.clone(),
            valid,
        });
    }
    // The entries are handed over one by one, so a value that does not fit is blamed on its key.
    let current: std::cell::RefCell<Option<String>> = std::cell::RefCell::new(None);
    let entries = options.iter().map(|(key, value)| {
        *current.borrow_mut() = Some(key.clone());
        (key.clone(), value.clone())
    });
    let map = serde::de::value::MapDeserializer::<_, serde_json::Error>::new(entries);
    T::deserialize(map).map_err(|e| {
        let text = e.to_string();
        match text.strip_prefix("missing field ") {
            Some(field) => AgentRefError::invalid(written, format!("needs {field}")),
            None => AgentRefError::InvalidOption {
                name: written.name.clone(),
                key: current.borrow().clone().unwrap_or_default(),
                problem: text,
            },
        }
    })
}

/// The option schemas of the built-in agents that take options, for the JSON Schema of
/// `agent:` (`{process: {..}}`, `{exec: {..}}`).
pub(crate) fn builtin_option_schemas(generator: &mut SchemaGenerator) -> Vec<(&'static str, Schema)> {
    let model = model_options_schema(generator);
    vec![
        ("process", generator.subschema_for::<process::ProcessOptions>()),
        ("exec", generator.subschema_for::<exec::ExecOptions>()),
        ("openai", model.clone()),
        ("anthropic", model),
        ("claude-code", generator.subschema_for::<cli::CliOptions>()),
        ("codex", generator.subschema_for::<cli::CliOptions>()),
        ("gemini-cli", generator.subschema_for::<cli::CliOptions>()),
        ("aider", generator.subschema_for::<cli::CliOptions>()),
    ]
}

/// `{openai: {model: .., ..}}` / `{anthropic: {..}}`: a model agent's settings, where the
/// provider is the key's and may be left out.
fn model_options_schema(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = generator.root_schema_for::<model::ModelSettings>();
    if let Some(required) = schema.get_mut("required").and_then(|r| r.as_array_mut()) {
        required.retain(|key| key != "provider");
    }
    schema.remove("$schema");
    // The settings' own definitions (price, durations) go where every other definition is.
    if let Some(serde_json::Value::Object(defs)) = schema.remove("$defs") {
        for (name, def) in defs {
            generator.definitions_mut().entry(name).or_insert(def);
        }
    }
    schema
}

/// An agent chosen by name and resolved by the registry: what a task or a run holds.
#[derive(Clone)]
pub struct AgentSpec {
    written: AgentRef,
    kind: Arc<dyn AgentKind>,
}

impl AgentSpec {
    /// The oracle (plays the task's solution): the agent of a suite that names none.
    pub fn oracle() -> Self {
        AgentSpec {
            written: AgentRef::parse("oracle"),
            kind: Arc::new(oracle::OracleKind),
        }
    }

    /// The agent as it was written.
    pub fn written(&self) -> &AgentRef {
        &self.written
    }

    /// The short name shown in trial lines, logs and results.
    pub fn label(&self) -> String {
        self.kind.label()
    }

    /// How the agent process itself is confined in an attempt with `sandbox`.
    pub(crate) fn confinement(&self, sandbox: &SandboxConfig) -> AgentConfinement {
        self.kind.confinement(sandbox)
    }

    /// Starts one agent for one attempt.
    pub(crate) fn start(
        &self,
        context: &AgentContext<'_>,
        sandbox: &SandboxConfig,
    ) -> Result<Box<dyn Agent>, AgentFailure> {
        self.kind.start(context, sandbox)
    }

    /// Whether the agent talks to a model API through medin (model agents): only these
    /// record and replay cassettes.
    pub(crate) fn speaks_model_api(&self) -> bool {
        self.kind.speaks_model_api()
    }
}

impl PartialEq for AgentSpec {
    /// Two specs are the same agent when they were written the same.
    fn eq(&self, other: &Self) -> bool {
        self.written == other.written
    }
}

impl fmt::Debug for AgentSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("AgentSpec").field(&self.kind).finish()
    }
}

/// An embedding crate's agent: made by its factory, inside the harness process.
struct FactoryKind {
    name: String,
    arg: Option<String>,
    factory: Factory,
}

impl fmt::Debug for FactoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl AgentKind for FactoryKind {
    fn label(&self) -> String {
        match &self.arg {
            Some(arg) => format!("{}:{arg}", self.name),
            None => self.name.clone(),
        }
    }

    fn confinement(&self, _sandbox: &SandboxConfig) -> AgentConfinement {
        AgentConfinement::InProcess
    }

    fn start(&self, context: &AgentContext<'_>, _sandbox: &SandboxConfig) -> Result<Box<dyn Agent>, AgentFailure> {
        Ok((self.factory)(&context.with_arg(self.arg.as_deref())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_agents_option_form_has_a_schema_whose_provider_is_the_key() {
        let mut generator = SchemaGenerator::default();
        let schemas = builtin_option_schemas(&mut generator);
        for name in ["openai", "anthropic"] {
            let (_, schema) = schemas.iter().find(|(n, _)| *n == name).expect("a schema per provider");
            let required = schema
                .get("required")
                .and_then(|r| r.as_array())
                .cloned()
                .unwrap_or_default();
            assert_eq!(required, vec![serde_json::json!("model")], "{name}");
            let properties = schema.get("properties").and_then(|p| p.as_object()).unwrap();
            assert!(
                properties.contains_key("base_url") && properties.contains_key("price"),
                "{name}"
            );
            assert_eq!(schema.get("additionalProperties"), Some(&serde_json::json!(false)));
        }
        assert!(
            generator.definitions().contains_key("Price"),
            "the settings' definitions are shared"
        );
    }

    #[test]
    fn builtins_resolve_from_every_form() {
        let r = AgentRegistry::builtin();
        assert_eq!(r.parse("oracle").unwrap().label(), "oracle");
        assert_eq!(
            r.parse("process:python3 examples/agent.py").unwrap().label(),
            "process:python3 examples/agent.py"
        );
        assert_eq!(r.parse(" exec: ./run.sh ").unwrap().label(), "exec:./run.sh");
        let written: AgentRef = serde_yaml_ng::from_str("{process: {command: ./a, reply_timeout: 2s}}").unwrap();
        assert_eq!(r.resolve(&written).unwrap().label(), "process:./a");
    }

    #[test]
    fn unknown_names_list_the_registered_ones() {
        let err = AgentRegistry::builtin().parse("claude").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("unknown agent `claude`") && text.contains("`process:CMD`") && text.contains("`exec:CMD`"),
            "{text}"
        );
        let err = AgentRegistry::builtin().parse("procss:x").unwrap_err();
        assert_eq!(err.help().as_deref(), Some("did you mean `process`?"));
    }

    #[test]
    fn wrong_arguments_say_how_to_write_them() {
        let r = AgentRegistry::builtin();
        assert!(r.parse("process:  ").unwrap_err().to_string().contains("no command"));
        assert!(r.parse("exec").unwrap_err().to_string().contains("no command"));
        assert!(r
            .parse("oracle:x")
            .unwrap_err()
            .to_string()
            .contains("takes no argument"));
        let typo: AgentRef = serde_yaml_ng::from_str("{process: {comand: ./a}}").unwrap();
        let err = r.resolve(&typo).unwrap_err();
        assert_eq!(err.to_string(), "unknown key `comand` in `agent.process`");
        assert_eq!(err.help().as_deref(), Some("did you mean `command`?"));
        let bad: AgentRef = serde_yaml_ng::from_str("{process: {command: ./a, reply_timeout: soon}}").unwrap();
        let err = r.resolve(&bad).unwrap_err().to_string();
        assert!(
            err.starts_with("`agent.process.reply_timeout`: invalid duration `soon`"),
            "{err}"
        );
        let missing: AgentRef = serde_yaml_ng::from_str("{exec: {}}").unwrap();
        assert!(r.resolve(&missing).unwrap_err().to_string().contains("needs `command`"));
    }

    #[test]
    fn embedded_agents_register_by_name_once() {
        let mut r = AgentRegistry::builtin();
        let factory: Factory = Arc::new(|_| Box::new(oracle::OracleAgent::new(Vec::new())));
        r.register_factory("mine", Arc::clone(&factory)).unwrap();
        assert_eq!(r.parse("mine").unwrap().label(), "mine");
        assert_eq!(r.parse("mine:v2").unwrap().label(), "mine:v2");
        assert!(r.usages().ends_with("`mine`"), "{}", r.usages());
        assert_eq!(
            r.register_factory("mine", Arc::clone(&factory)),
            Err(RegistryError::Taken("mine".into()))
        );
        assert_eq!(
            r.register_factory("oracle", Arc::clone(&factory)),
            Err(RegistryError::Taken("oracle".into()))
        );
        for bad in ["", "Mine", "my:agent", "1st", "my agent"] {
            assert!(matches!(
                r.register_factory(bad, Arc::clone(&factory)),
                Err(RegistryError::InvalidName(_))
            ));
        }
        let options: AgentRef = serde_yaml_ng::from_str("{mine: {model: x}}").unwrap();
        assert!(r
            .resolve(&options)
            .unwrap_err()
            .to_string()
            .contains("takes no options"));
    }
}

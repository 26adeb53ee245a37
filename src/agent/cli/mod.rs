//! CLI agents: the real Claude Code, Codex CLI, Gemini CLI and aider as agents under test,
//! installed at pinned versions, confined in the attempt's sandbox, their every tool call
//! judged by medin and logged.
//!
//! `--agent claude-code` (or `codex`, `gemini-cli`, `aider`), `claude-code:MODEL`, or
//! `{claude-code: {model, base_url, api_key_env, args, egress}}`:
//!
//! - **Installed** on first use ([`install`]): `<target>/medin/agents/<name>@<version>/`,
//!   from npm or PyPI, once, under a lock; `medin agents install NAME` does it ahead. A CLI
//!   that cannot be installed is the harness's failure, naming the command that fixes it.
//! - **Pointed at its model**: the endpoint is `base_url`, else the provider's variable
//!   (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`), else the provider's
//!   address; the key comes from `api_key_env` (default `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`,
//!   `GEMINI_API_KEY`), is handed to the CLI as a variable only, and is masked wherever medin
//!   writes. A key that is not set is the harness's failure, not the agent's.
//! - **Confined** ([`run`]): the CLI runs in the attempt's sandbox at the task's level, in a
//!   fresh home per attempt; under `strict` it joins the attempt's namespaces (its commands'
//!   services are on its `localhost`, validators see them) and reaches the network only
//!   through medin's egress proxy (`sandbox::egress`): its model endpoint and the hosts of
//!   `egress`, every attempt a receipt.
//! - **Judged** ([`hook`]): Claude Code, Codex and Gemini CLI call medin's relay before every
//!   tool call; aider has no hooks and is judged by what it changed.

pub mod adapter;
pub mod aider;
pub mod claude_code;
pub mod codex;
pub mod gemini_cli;
pub mod hook;
pub mod install;
pub mod mcp;
mod run;

use std::sync::mpsc;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::kind::{AgentConfinement, AgentContext, AgentKind};
use super::registry::{self, AgentRefError};
use super::{Action, Agent, AgentEvent, AgentFailure};
use crate::sandbox::SandboxConfig;
use crate::spec::{AgentGiven, AgentRef};
use crate::tools::Receipt;
use adapter::Adapter;

/// The CLI agents medin knows, by name.
pub fn adapters() -> [&'static dyn Adapter; 4] {
    [
        &claude_code::ClaudeCode,
        &codex::Codex,
        &gemini_cli::GeminiCli,
        &aider::Aider,
    ]
}

/// The adapter named `name`.
pub fn adapter(name: &str) -> Option<&'static dyn Adapter> {
    adapters().into_iter().find(|a| a.pin().name == name)
}

/// The options of `{claude-code: {..}}` (and the other CLIs).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CliOptions {
    /// The model, as the endpoint knows it (default: the CLI's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model endpoint (default: the provider's variable, else the provider's address).
    #[serde(default)]
    pub base_url: Option<String>,
    /// The variable holding the API key (default: the provider's, e.g. `ANTHROPIC_API_KEY`).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Extra arguments for the CLI.
    #[serde(default)]
    pub args: Vec<String>,
    /// More hosts the CLI may reach (`host:port`), through medin's egress proxy.
    #[serde(default)]
    pub egress: Vec<String>,
    /// `hooks` (default): the CLI's own tools, each call judged by medin through its pre-tool
    /// hook. `medin` (Claude Code, Codex): its own tools off, medin's offered through medin's
    /// MCP server, so medin runs every action itself.
    #[serde(default)]
    pub tools: ToolsMode,
}

/// Whose tools a CLI agent acts with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolsMode {
    /// Its own, judged by medin through its hooks.
    #[default]
    Hooks,
    /// medin's, through medin's MCP server.
    Medin,
}

/// A named CLI agent of `medin.yaml` (`agents: {reviewer: {cli: claude-code, model: ..}}`):
/// which CLI, and its options.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NamedCli {
    /// `claude-code`, `codex`, `gemini-cli` or `aider`.
    pub cli: String,
    #[serde(flatten)]
    pub options: CliOptions,
}

impl NamedCli {
    /// Reads `{cli: NAME, ..options}` (the options strictly: an unknown key is an error).
    pub fn from_value(mut value: serde_json::Value) -> Result<NamedCli, String> {
        let map = value
            .as_object_mut()
            .ok_or("a named CLI agent is a mapping: `{cli: claude-code, model: ..}`")?;
        let cli = match map.remove("cli") {
            Some(serde_json::Value::String(name)) => name,
            _ => return Err("`cli` names the CLI: claude-code, codex, gemini-cli or aider".into()),
        };
        if adapter(&cli).is_none() {
            let known: Vec<&str> = adapters().iter().map(|a| a.pin().name).collect();
            return Err(format!(
                "`cli: {cli}` is not a CLI agent medin knows; use one of {}",
                known.join(", ")
            ));
        }
        let options = CliOptions::deserialize(value).map_err(|e| e.to_string())?;
        Ok(NamedCli { cli, options })
    }

    /// The agent kind it names, shown under `name`.
    pub(crate) fn kind(&self, name: &str) -> Result<Arc<dyn AgentKind>, String> {
        let written = AgentRef {
            name: self.cli.clone(),
            given: AgentGiven::Nothing,
        };
        let adapter = adapter(&self.cli).ok_or_else(|| format!("`{}` is not a CLI agent medin knows", self.cli))?;
        check_options(&written, adapter, &self.options).map_err(|e| e.to_string())?;
        Ok(Arc::new(CliKind {
            adapter,
            options: self.options.clone(),
            name: Some(name.to_string()),
        }))
    }
}

/// The registry entry of CLI agent `name`: `name`, `name:MODEL` or `{name: {options}}`.
pub(crate) fn configure(written: &AgentRef) -> Result<Arc<dyn AgentKind>, AgentRefError> {
    let adapter = adapter(&written.name)
        .ok_or_else(|| AgentRefError::invalid(written, "is not a CLI agent medin knows".into()))?;
    let options = match &written.given {
        AgentGiven::Nothing => CliOptions::default(),
        AgentGiven::Arg(model) => CliOptions {
            model: Some(model.trim().to_string()).filter(|m| !m.is_empty()),
            ..CliOptions::default()
        },
        AgentGiven::Options(options) => registry::options::<CliOptions>(written, options)?,
    };
    check_options(written, adapter, &options)?;
    Ok(Arc::new(CliKind {
        adapter,
        options,
        name: None,
    }))
}

/// What the options of one CLI may not say.
fn check_options(written: &AgentRef, adapter: &dyn Adapter, options: &CliOptions) -> Result<(), AgentRefError> {
    if options.tools == ToolsMode::Medin && !adapter.takes_medin_tools() {
        return Err(AgentRefError::invalid(
            written,
            "cannot be restricted to medin's tools (`tools: medin` needs MCP-only mode: claude-code or codex); remove `tools: medin`".into(),
        ));
    }
    for host in &options.egress {
        if parse_host_port(host).is_none() {
            return Err(AgentRefError::invalid(
                written,
                format!("has egress entry `{host}`, which is not `host:port` (e.g. `pypi.org:443`)"),
            ));
        }
    }
    Ok(())
}

/// `host:port` (a name or an address; `[v6]:port`).
pub fn parse_host_port(text: &str) -> Option<(String, u16)> {
    let (host, port) = text.trim().rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port: u16 = port.parse().ok().filter(|p| *p > 0)?;
    (!host.is_empty() && !host.contains(['/', ' '])).then(|| (host.to_string(), port))
}

/// The `host:port` a base URL names (`http` defaults to 80, `https` to 443).
pub fn endpoint_of(url: &str) -> Option<(String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    let default = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    if let Some((host, port)) = parse_host_port(authority) {
        return Some((host, port));
    }
    let host = authority.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then(|| (host.to_string(), default))
}

/// A CLI agent with its settings read.
#[derive(Debug)]
struct CliKind {
    adapter: &'static dyn Adapter,
    options: CliOptions,
    /// The name of a named agent of `medin.yaml`, shown instead of `claude-code:MODEL`.
    name: Option<String>,
}

impl AgentKind for CliKind {
    fn label(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        match &self.options.model {
            Some(model) => format!("{}:{model}", self.adapter.pin().name),
            None => self.adapter.pin().name.to_string(),
        }
    }

    fn confinement(&self, sandbox: &SandboxConfig) -> AgentConfinement {
        match (self.adapter.hooks(), self.options.tools) {
            // Every receipt of an aider run says that its edits were not judged one by one.
            (adapter::Hooks::None, _) => AgentConfinement::Unhooked(sandbox.isolation),
            _ => AgentConfinement::Sandboxed(sandbox.isolation),
        }
    }

    fn start(&self, context: &AgentContext<'_>, sandbox: &SandboxConfig) -> Result<Box<dyn Agent>, AgentFailure> {
        match self.prepare(context, sandbox) {
            Ok(agent) => Ok(agent),
            Err(Prepare::Harness(detail)) => Ok(Box::new(HarnessBroken {
                name: self.label(),
                detail: Some(detail),
            })),
            Err(Prepare::Agent(failure)) => Err(failure),
        }
    }
}

/// Why a CLI agent could not start: the harness's fault (a CLI that cannot be installed, a
/// key that is not set) or the agent's.
enum Prepare {
    Harness(String),
    Agent(AgentFailure),
}

impl CliKind {
    fn prepare(&self, context: &AgentContext<'_>, sandbox: &SandboxConfig) -> Result<Box<dyn Agent>, Prepare> {
        let pin = self.adapter.pin();
        let installed = install::install(pin, &install::cache_dir()).map_err(|e| Prepare::Harness(e.to_string()))?;
        let (url_var, url_default) = self.adapter.base_url_default();
        let base_url = self
            .options
            .base_url
            .clone()
            .or_else(|| std::env::var(url_var).ok().filter(|v| !v.trim().is_empty()))
            .unwrap_or_else(|| url_default.to_string());
        let endpoint = endpoint_of(&base_url).ok_or_else(|| {
            Prepare::Harness(format!(
                "{}'s model endpoint `{base_url}` is not an http(s) URL; set `base_url` or {url_var}",
                pin.name
            ))
        })?;
        let key_var = self.options.api_key_env.as_deref().unwrap_or(self.adapter.key_var());
        let key = std::env::var(key_var).ok().filter(|k| !k.is_empty()).ok_or_else(|| {
            Prepare::Harness(format!(
                "{} needs an API key in {key_var}, which is not set; export it (or name another variable with `api_key_env`)",
                pin.name
            ))
        })?;
        crate::secrets::register(key_var, &key);

        let mut cfg = sandbox.clone();
        cfg.cgroup = Some(false);
        cfg.write_paths.clear();
        cfg.env = vec![
            ("MEDIN_TASK_ID".into(), context.brief().task_id.clone()),
            (self.adapter.key_var().into(), key),
        ];
        cfg.read_paths.push(installed.entry.clone());
        // The runtime the CLI runs on (node for npm CLIs, the venv's interpreter for pip
        // ones), where it lies outside the system directories (a pyenv or nvm install).
        let runtime = match pin.ecosystem {
            install::Ecosystem::Npm => crate::spec::Toolchain::Node,
            install::Ecosystem::Pip => crate::spec::Toolchain::Python,
        };
        let setup = crate::runner::toolchain::toolchain_setup(&[runtime], crate::sandbox::SANDBOX_PATH);
        cfg.read_paths.extend(setup.read_paths);
        cfg.env.extend(setup.env);
        let (tx, rx) = mpsc::channel();
        let medin_tools = self.options.tools == ToolsMode::Medin;
        let net = network::open(
            self.adapter,
            &mut cfg,
            &endpoint,
            &self.options.egress,
            medin_tools,
            &tx,
        )
        .map_err(Prepare::Harness)?;
        let label = self.label();
        let agent = run::CliAgent::start(run::Start {
            adapter: self.adapter,
            program: &installed.program,
            label,
            prompt: &context.brief().prompt,
            model: self.options.model.as_deref(),
            base_url: &base_url,
            extra_args: &self.options.args,
            cfg,
            hook_listener: net.hook_listener,
            mcp_listener: net.mcp_listener,
            tools: &context.brief().tools,
            inputs: (tx, rx),
            keep: net.keep,
        })
        .map_err(Prepare::Agent)?;
        Ok(Box::new(agent))
    }
}

mod network {
    //! The CLI's ways out: the hook listener and the egress proxy, where the CLI runs. Under
    //! `strict` with the task's network off, both are bound inside the attempt's network
    //! namespace and served by the harness (`sandbox::egress`): the model endpoint is reached
    //! through a forward (a loopback endpoint, mirrored at the same address) or the proxy (any
    //! other host, with `policy.egress` and the agent's `egress`), every attempt a receipt,
    //! nothing else reachable. Elsewhere (`process`, `none`, or the task's network on) the CLI
    //! keeps the network its level gives and the proxy is only advisory.

    use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
    use std::str::FromStr;
    use std::sync::mpsc::Sender;

    use super::adapter::{Adapter, Hooks};
    use super::run::Input;
    use crate::agent::Connection;
    use crate::sandbox::egress::{bind_inside, Egress, EgressRules, EgressVia, HostPort};
    use crate::sandbox::{Isolation, SandboxConfig};

    pub(super) struct Net {
        pub hook_listener: Option<TcpListener>,
        /// medin's MCP server's listener (`tools: medin`).
        pub mcp_listener: Option<TcpListener>,
        pub keep: Vec<Box<dyn std::any::Any + Send>>,
    }

    /// The egress rules of a CLI whose model is at `endpoint`, with `extra` hosts allowed.
    pub(super) fn rules(endpoint: &(String, u16), extra: &[String]) -> Result<EgressRules, String> {
        let mut rules = EgressRules::default();
        let (host, port) = endpoint;
        let loopback = match host.as_str() {
            "localhost" => Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            h => IpAddr::from_str(h).ok().filter(IpAddr::is_loopback),
        };
        match loopback {
            Some(ip) => rules.forwards.push(SocketAddr::new(ip, *port)),
            None => rules
                .allow
                .push(HostPort::from_str(&format!("{host}:{port}")).map_err(|e| e.to_string())?),
        }
        for entry in extra {
            rules.allow.push(HostPort::from_str(entry).map_err(|e| e.to_string())?);
        }
        Ok(rules)
    }

    /// Opens the hook listener and the egress proxy for a CLI about to run in `cfg`.
    pub(super) fn open(
        adapter: &dyn Adapter,
        cfg: &mut SandboxConfig,
        endpoint: &(String, u16),
        egress: &[String],
        medin_tools: bool,
        tx: &Sender<Input>,
    ) -> Result<Net, String> {
        let mut extra = egress.to_vec();
        extra.extend(cfg.egress.iter().cloned());
        let rules = rules(endpoint, &extra)?;
        let attempt = cfg.attempt.clone();
        let netns = (cfg.isolation == Isolation::Strict && !cfg.network)
            .then(|| attempt.as_ref().and_then(|a| a.network_namespace()))
            .flatten();
        let sink_tx = tx.clone();
        let sink = Box::new(move |ev: crate::sandbox::egress::EgressEvent| {
            let via = match ev.via {
                EgressVia::Forward => "forward",
                EgressVia::Proxy => "proxy",
                EgressVia::Direct => "direct",
                EgressVia::Dns => "dns",
                EgressVia::Summary => "summary",
            };
            let _ = sink_tx.send(Input::Connection(Connection {
                host: ev.host,
                port: ev.port,
                allowed: ev.allowed,
                via: via.into(),
                detail: ev.detail,
            }));
        });
        let proxy = Egress::start(netns, rules, sink).map_err(|e| format!("cannot start the egress proxy: {e}"))?;
        // A listener where the CLI runs: inside the attempt's namespace, or on the host.
        let listen = |what: &str| match netns {
            Some(net) => bind_inside(net, SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
                .map_err(|e| format!("cannot open {what} in the attempt's network namespace: {e}")),
            None => {
                TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| format!("cannot open {what} on 127.0.0.1: {e}"))
            }
        };
        let hook_listener = match adapter.hooks() {
            Hooks::None => None,
            _ => Some(listen("the hook channel")?),
        };
        let mcp_listener = medin_tools.then(|| listen("medin's MCP server")).transpose()?;
        cfg.env.extend(proxy.proxy_env());
        if netns.is_none() {
            // No namespace of the attempt's to serve: the CLI keeps the network its level
            // gives, to reach its model; the proxy is advisory there.
            cfg.network = true;
        }
        Ok(Net {
            hook_listener,
            mcp_listener,
            keep: vec![Box::new(proxy)],
        })
    }
}

/// A CLI agent the harness could not start: its first event is the harness's failure.
#[derive(Debug)]
struct HarnessBroken {
    name: String,
    detail: Option<String>,
}

impl Agent for HarnessBroken {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn next(&mut self, _last: Option<(&Action, &Receipt)>, _deadline: std::time::Instant) -> AgentEvent {
        match self.detail.take() {
            Some(detail) => AgentEvent::HarnessFailed(detail),
            None => AgentEvent::Failed(AgentFailure::NoFinal),
        }
    }

    fn finish(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_read_from_base_urls() {
        assert_eq!(
            endpoint_of("http://127.0.0.1:8080/v1"),
            Some(("127.0.0.1".into(), 8080))
        );
        assert_eq!(
            endpoint_of("https://api.anthropic.com"),
            Some(("api.anthropic.com".into(), 443))
        );
        assert_eq!(endpoint_of("http://[::1]:9/x"), Some(("::1".into(), 9)));
        assert_eq!(endpoint_of("ftp://x"), None);
        assert_eq!(parse_host_port("pypi.org:443"), Some(("pypi.org".into(), 443)));
        assert_eq!(parse_host_port("pypi.org"), None);
        assert_eq!(parse_host_port("a b:1"), None);
    }

    #[test]
    fn a_loopback_model_is_forwarded_and_any_other_is_allowed_through_the_proxy() {
        let r = network::rules(&("127.0.0.1".into(), 8080), &["pypi.org:443".into()]).unwrap();
        assert_eq!(r.forwards, vec!["127.0.0.1:8080".parse().unwrap()]);
        assert!(r.allows("pypi.org", 443) && !r.allows("pypi.org", 80) && !r.allows("example.com", 443));
        let r = network::rules(&("api.anthropic.com".into(), 443), &[]).unwrap();
        assert!(r.forwards.is_empty() && r.allows("api.anthropic.com", 443));
        assert!(network::rules(&("localhost".into(), 1), &["no-port".into()]).is_err());
    }

    #[test]
    fn every_cli_is_registered_by_its_pinned_name() {
        let names: Vec<&str> = adapters().iter().map(|a| a.pin().name).collect();
        assert_eq!(names, ["claude-code", "codex", "gemini-cli", "aider"]);
        for a in adapters() {
            assert!(a.pin().version.chars().all(|c| c.is_ascii_digit() || c == '.'));
        }
    }
}

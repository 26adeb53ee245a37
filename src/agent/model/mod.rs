//! Model agents: medin itself runs the tool-calling loop against a provider's API.
//!
//! `openai:MODEL` speaks Chat Completions ([`openai`], every OpenAI-compatible server),
//! `anthropic:MODEL` speaks Messages ([`anthropic`]); a named agent of `medin.yaml`
//! (`agents: {fast: {provider, model, ..}}`, [`ModelSettings`]) is either, with its own base URL,
//! key variable, sampling settings and price. medin's tools are offered as the model's functions;
//! each tool call the model makes is an [`AgentEvent::Call`] that takes guard → sandbox →
//! validate → log, and its receipt goes back as the tool result (cut to
//! [`TOOL_RESULT_BUDGET`] with the SHA-256 of the whole). A model turn without a tool call ends
//! the round with its text ([`AgentEvent::Reply`]); feedback of multi-round kinds is the next
//! user turn. Every exchange reports its tokens and cost ([`AgentEvent::ModelCall`]).
//!
//! Responses may stream: `stream: true` asks for server-sent events, and a body that is an
//! event stream (declared `text/event-stream`, or starting with `data:` / `event:` lines) is
//! read as one whether asked for or not. The body is read whole, parsed ([`stream`]) and
//! assembled by the dialect into the response it reads when nothing streams, so everything
//! below (tool calls, usage, failures) is the same for both.
//!
//! Failures, as the episode needs them: 429, 5xx (529 too), 408, timeouts and broken bodies (a
//! body cut short of its `Content-Length`, a stream that ends without its end marker, an
//! overloaded or server error sent inside a stream) are retried here with exponential backoff
//! and jitter, honouring `Retry-After`, within [`DEFAULT_MAX_RETRIES`] and the task's deadline,
//! then end the round with a `RATE_LIMIT` / `NETWORK_ERROR` report the episode may retry; no
//! call of a turn that did not arrive whole is ever run. 401/403 end it with `AUTH`, naming the
//! variable to set; a context-length error is [`AgentFailure::ContextLengthExceeded`]; a
//! response body that is not the API's JSON (or events), or is larger than
//! [`transport::MAX_RESPONSE_BYTES`], is answered as a malformed line (the request is sent
//! again, at the cost of a turn); tool arguments that are not JSON (a stream's too) or name an
//! unknown tool become receipts the model sees.
//!
//! Every exchange crosses one seam, [`transport::ModelTransport`]: HTTP, or a cassette being
//! recorded or replayed ([`cassette`]; a replayed request that does not match its recording is
//! the harness's error, [`AgentEvent::HarnessFailed`]). The API key is a [`transport::Secret`]
//! that no log, receipt, transcript, cassette or message ever holds.

pub mod anthropic;
pub mod cassette;
pub mod openai;
pub(crate) mod stream;
pub mod transport;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::sandbox::SandboxConfig;
use crate::spec::{AgentGiven, AgentRef, DurationSpec, FinalReport, FinalResult};
use crate::tools::receipt::cut_text;
use crate::tools::{ActionInput, ErrorCode, Receipt};

use super::kind::{AgentConfinement, AgentContext, AgentKind};
use super::registry::{self, AgentRefError};
use super::{Action, Agent, AgentEvent, AgentFailure, Cost, ModelCall, Usage};
use transport::{ModelRequest, ModelResponse, ModelTransport, Secret, TransportError};

/// Retries of one exchange after a rate limit, a server error or a timeout (a named agent sets
/// its own with `max_retries`).
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// The first backoff; it doubles per retry, up to [`MAX_BACKOFF`], with up to 50% jitter.
pub const INITIAL_BACKOFF: Duration = Duration::from_millis(500);
/// The longest backoff between two tries.
pub const MAX_BACKOFF: Duration = Duration::from_secs(20);
/// The longest `Retry-After` medin honours (a longer one is waited this long).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// How long one exchange may take when the agent sets no `request_timeout`.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
/// Bytes of one receipt a model is shown as a tool result; a longer one is cut, with the
/// length and SHA-256 of the whole.
pub const TOOL_RESULT_BUDGET: usize = 16 * 1024;
/// An exchange that timed out this close to the task's deadline ran into it.
const DEADLINE_SLACK: Duration = Duration::from_millis(200);
/// Bytes of a server's error body kept in a message.
const ERROR_BODY_CHARS: usize = 500;

/// The instructions every model agent is given after its system prompt: how a round ends.
const REPORT_RULE: &str = "When you are done, answer without calling a tool, with only a JSON object: \
{\"result\": \"success\" | \"error\" | \"issue\", \"message\": \"what you did\"}. \
Report \"error\" when you could not do the task and \"issue\" when the task itself is wrong.";
/// The system prompt when an agent sets none.
const DEFAULT_SYSTEM_PROMPT: &str = "You are a coding agent working in a project workspace. \
Act only through the tools you are given; paths are relative to the workspace. \
Every tool call returns a receipt in JSON: read it before your next step.";

/// Which API a model agent speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// Chat Completions (OpenAI and every compatible server).
    #[serde(rename = "openai")]
    OpenAi,
    /// Messages (Anthropic).
    Anthropic,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
        }
    }

    /// The variable that holds the key, unless the agent names another.
    pub fn key_var(self) -> &'static str {
        match self {
            Provider::OpenAi => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    /// The variable that holds the base URL, unless the agent sets one.
    pub fn base_var(self) -> &'static str {
        match self {
            Provider::OpenAi => "OPENAI_BASE_URL",
            Provider::Anthropic => "ANTHROPIC_BASE_URL",
        }
    }

    fn default_base(self) -> &'static str {
        match self {
            Provider::OpenAi => openai::DEFAULT_BASE_URL,
            Provider::Anthropic => anthropic::DEFAULT_BASE_URL,
        }
    }
}

/// Dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    /// Input tokens read from the provider's cache (default: the input price).
    #[serde(default)]
    pub cached_input_per_mtok: Option<f64>,
}

impl Price {
    /// The cost of `usage`: uncached input, cached input and output at their prices.
    pub fn cost(&self, input: u64, cached_input: u64, output: u64) -> f64 {
        let cached = cached_input.min(input);
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(input - cached, self.input_per_mtok)
            + per(cached, self.cached_input_per_mtok.unwrap_or(self.input_per_mtok))
            + per(output, self.output_per_mtok)
    }
}

/// Published list prices of well-known models (USD per million tokens: input, output, cached
/// input), matched by the longest prefix of the model's name. Costs from it are marked as
/// estimates: prices change and servers differ.
const BUILTIN_PRICES: &[(&str, f64, f64, f64)] = &[
    ("gpt-4o-mini", 0.15, 0.60, 0.075),
    ("gpt-4o", 2.50, 10.00, 1.25),
    ("gpt-4.1-nano", 0.10, 0.40, 0.025),
    ("gpt-4.1-mini", 0.40, 1.60, 0.10),
    ("gpt-4.1", 2.00, 8.00, 0.50),
    ("o4-mini", 1.10, 4.40, 0.275),
    ("o3", 2.00, 8.00, 0.50),
    ("claude-3-5-haiku", 0.80, 4.00, 0.08),
    ("claude-haiku-4", 1.00, 5.00, 0.10),
    ("claude-3-7-sonnet", 3.00, 15.00, 0.30),
    ("claude-sonnet-4", 3.00, 15.00, 0.30),
    ("claude-opus-4", 15.00, 75.00, 1.50),
];

/// The built-in price of `model`, if the table knows it.
pub fn builtin_price(model: &str) -> Option<Price> {
    BUILTIN_PRICES
        .iter()
        .filter(|(prefix, ..)| model.starts_with(prefix))
        .max_by_key(|(prefix, ..)| prefix.len())
        .map(|&(_, input, output, cached)| Price {
            input_per_mtok: input,
            output_per_mtok: output,
            cached_input_per_mtok: Some(cached),
        })
}

/// A model agent's settings: a named agent of `medin.yaml` (`agents: {fast: {..}}`), or what
/// `openai:MODEL` / `anthropic:MODEL` / `{openai: {model: .., ..}}` say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelSettings {
    /// `openai` (Chat Completions, any compatible server) or `anthropic` (Messages).
    pub provider: Provider,
    /// The model's name, as the server knows it.
    pub model: String,
    /// The API's base URL (default: `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`, else the
    /// provider's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The variable holding the API key (default `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Most output tokens per model turn (Anthropic requires one: default 4096).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling seed (Chat Completions only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Replaces medin's default system prompt (the rule for the final report is always added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The model's context window in tokens: a request estimated larger (4 bytes a token) ends
    /// the attempt as `context_length_exceeded` without being sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// The price per million tokens (default: medin's table of well-known models, an estimate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
    /// Retries of one exchange after 429, 5xx or a timeout (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// The first backoff between retries (default 500ms; it doubles per retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_backoff: Option<DurationSpec>,
    /// How long one exchange may take (default 5m; never past the task's deadline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout: Option<DurationSpec>,
    /// Ask for the response as a stream of server-sent events (default false). A streamed
    /// response is read whole, then assembled; a response streamed unasked is read the same.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
}

impl ModelSettings {
    /// `provider` with `model` and nothing else set.
    pub fn new(provider: Provider, model: impl Into<String>) -> Self {
        ModelSettings {
            provider,
            model: model.into(),
            base_url: None,
            api_key_env: None,
            temperature: None,
            max_tokens: None,
            seed: None,
            system_prompt: None,
            context_window: None,
            price: None,
            max_retries: None,
            initial_backoff: None,
            request_timeout: None,
            stream: false,
        }
    }

    #[cfg(test)]
    pub(crate) fn for_test(model: &str) -> Self {
        Self::new(Provider::OpenAi, model)
    }

    /// The variable the key is read from.
    pub fn key_var(&self) -> &str {
        self.api_key_env.as_deref().unwrap_or(self.provider.key_var())
    }

    /// The price costs are computed with, and whether it is medin's estimate.
    fn pricing(&self) -> Option<(Price, bool)> {
        match self.price {
            Some(p) => Some((p, false)),
            None => builtin_price(&self.model).map(|p| (p, true)),
        }
    }
}

/// The `openai` entry of the registry: `openai:MODEL` or `{openai: {model: .., ..}}`.
pub(crate) fn configure_openai(written: &AgentRef) -> Result<Arc<dyn AgentKind>, AgentRefError> {
    configure(written, Provider::OpenAi)
}

/// The `anthropic` entry of the registry: `anthropic:MODEL` or `{anthropic: {model: .., ..}}`.
pub(crate) fn configure_anthropic(written: &AgentRef) -> Result<Arc<dyn AgentKind>, AgentRefError> {
    configure(written, Provider::Anthropic)
}

fn configure(written: &AgentRef, provider: Provider) -> Result<Arc<dyn AgentKind>, AgentRefError> {
    let name = provider.as_str();
    let settings = match &written.given {
        AgentGiven::Arg(model) if !model.trim().is_empty() => ModelSettings::new(provider, model.trim()),
        AgentGiven::Options(options) => {
            let mut options = options.clone();
            match options.get("provider") {
                None => {
                    options.insert("provider".into(), serde_json::json!(name));
                }
                Some(p) if p == name => {}
                Some(other) => {
                    return Err(AgentRefError::InvalidOption {
                        name: name.into(),
                        key: "provider".into(),
                        problem: format!("is {other}, but this agent speaks the {name} API; leave `provider` out"),
                    })
                }
            }
            registry::options::<ModelSettings>(written, &options)?
        }
        AgentGiven::Nothing | AgentGiven::Arg(_) => {
            return Err(AgentRefError::invalid(
                written,
                format!(
                    "needs a model; write `{name}:MODEL`, e.g. `{name}:{}`",
                    example_model(provider)
                ),
            ))
        }
    };
    let label = format!("{name}:{}", settings.model);
    Ok(Arc::new(ModelKind { label, settings }))
}

fn example_model(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenAi => "gpt-4.1-mini",
        Provider::Anthropic => "claude-sonnet-4-5",
    }
}

/// A model agent's kind: its settings and the label it is shown under.
#[derive(Debug)]
pub(crate) struct ModelKind {
    label: String,
    settings: ModelSettings,
}

impl ModelKind {
    /// A named agent of `medin.yaml`: shown under its name.
    pub(crate) fn named(name: &str, settings: ModelSettings) -> Self {
        ModelKind {
            label: name.to_string(),
            settings,
        }
    }
}

impl AgentKind for ModelKind {
    fn label(&self) -> String {
        self.label.clone()
    }

    fn confinement(&self, _sandbox: &SandboxConfig) -> AgentConfinement {
        // No process of its own: the loop runs inside medin, its actions take guard → sandbox.
        AgentConfinement::InProcess
    }

    fn start(&self, context: &AgentContext<'_>, _sandbox: &SandboxConfig) -> Result<Box<dyn Agent>, AgentFailure> {
        let transport = match context.model().transport() {
            Ok(transport) => transport,
            // A cassette that cannot be opened is the harness's problem: the agent's first
            // answer says so, and the runner ends the trial as an infrastructure error.
            Err(e) => return Ok(Box::new(Unserved(self.label.clone(), e.to_string()))),
        };
        Ok(Box::new(ModelAgent::new(
            self.label.clone(),
            &self.settings,
            context.brief(),
            transport,
        )))
    }

    fn speaks_model_api(&self) -> bool {
        true
    }
}

/// A model agent whose transport could not be made (a cassette missing or unreadable).
#[derive(Debug)]
struct Unserved(String, String);

impl Agent for Unserved {
    fn name(&self) -> String {
        self.0.clone()
    }

    fn next(&mut self, _last: Option<(&Action, &Receipt)>, _deadline: Instant) -> AgentEvent {
        AgentEvent::HarnessFailed(self.1.clone())
    }

    fn finish(&mut self) {}
}

/// One tool call of a model turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments, or their raw text when they are not JSON.
    pub input: Result<serde_json::Value, String>,
}

/// Tokens of one exchange. `input` counts every input token, `cached_input` those of them read
/// from the provider's cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TokenCounts {
    pub input: u64,
    pub output: u64,
    pub cached_input: u64,
}

/// One model turn, read from a response.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Turn {
    pub text: String,
    pub calls: Vec<ToolCall>,
    pub usage: TokenCounts,
}

/// One provider's wire format and the conversation kept in it.
pub(crate) trait Dialect: Send + std::fmt::Debug {
    /// The URL requests go to, from the base URL.
    fn endpoint(&self, base: &str) -> String;
    /// The headers that carry the key (and the API version).
    fn auth(&self, key: Option<&Secret>) -> Vec<(String, transport::HeaderValue)>;
    /// The next request's body: the whole conversation so far.
    fn request(&mut self) -> serde_json::Value;
    /// Assembles the events of a streamed response into the body [`Dialect::read`] takes.
    fn assemble_stream(&self, events: &[stream::SseEvent]) -> Result<serde_json::Value, stream::StreamFailure>;
    /// Reads a response body into a turn and adds the turn to the conversation; `Err` says why
    /// the body is not a response of this API.
    fn read(&mut self, body: serde_json::Value) -> Result<Turn, String>;
    /// The result of tool call `id`.
    fn tool_result(&mut self, id: &str, content: String, is_error: bool);
    /// A user turn (feedback).
    fn user(&mut self, text: String);
}

/// A string field of a tool description.
fn field(tool: &serde_json::Value, key: &str) -> String {
    tool.get(key).and_then(|v| v.as_str()).unwrap_or_default().to_string()
}

/// How one exchange failed, after its retries.
#[derive(Debug, Clone, PartialEq)]
enum ExchangeFailure {
    /// 401/403: the key is missing or wrong.
    Auth { status: u16, detail: String },
    /// Rate limited or the server kept failing: transient.
    GaveUp { code: ErrorCode, detail: String },
    /// The conversation no longer fits the model's context.
    ContextLength(String),
    /// Another 4xx: the request was refused.
    Refused { status: u16, detail: String },
    /// The task's deadline came first.
    Deadline { after: Duration },
    /// A 2xx whose body is not the API's JSON.
    NotUnderstood { body: String, reason: String },
    /// The cassette could not serve or keep the exchange: the harness's failure.
    Cassette(String),
}

/// A model agent for one attempt.
pub struct ModelAgent {
    label: String,
    provider: Provider,
    key_var: String,
    key: Option<Secret>,
    url: String,
    dialect: Box<dyn Dialect>,
    transport: Arc<dyn ModelTransport>,
    pricing: Option<(Price, bool)>,
    max_retries: u32,
    initial_backoff: Duration,
    request_timeout: Duration,
    context_window: Option<u64>,
    /// Events of the last model turn not yet handed to the runner.
    queue: VecDeque<AgentEvent>,
    /// Calls handed out: a receipt for one of these goes back as its tool result.
    pending_ids: Vec<String>,
    started: Instant,
    calls: u32,
    /// What the environment told the model so far (tool results, feedback).
    observations: transport::Observations,
}

impl std::fmt::Debug for ModelAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelAgent")
            .field("label", &self.label)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl ModelAgent {
    /// A model agent for one attempt, talking through `transport`. The key and base URL are
    /// read from the environment here (the settings' `base_url` wins over the variable).
    pub fn new(
        label: String,
        settings: &ModelSettings,
        brief: &super::TaskBrief,
        transport: Arc<dyn ModelTransport>,
    ) -> Self {
        let provider = settings.provider;
        let key_var = settings.key_var().to_string();
        let key = std::env::var(&key_var).ok().and_then(Secret::new);
        // Masked wherever medin writes, like the host variables tasks pass.
        if let Some(key) = &key {
            crate::secrets::register(&key_var, key.expose());
        }
        let base = settings
            .base_url
            .clone()
            .or_else(|| std::env::var(provider.base_var()).ok().filter(|v| !v.trim().is_empty()))
            .unwrap_or_else(|| provider.default_base().to_string());
        let system = format!(
            "{}\n\n{REPORT_RULE}",
            settings.system_prompt.as_deref().unwrap_or(DEFAULT_SYSTEM_PROMPT)
        );
        let prompt = brief.prompt.clone();
        let dialect: Box<dyn Dialect> = match provider {
            Provider::OpenAi => Box::new(openai::OpenAiChat::new(settings, system, prompt, &brief.tools)),
            Provider::Anthropic => Box::new(anthropic::AnthropicMessages::new(
                settings,
                system,
                prompt,
                &brief.tools,
            )),
        };
        ModelAgent {
            label,
            provider,
            key_var,
            key,
            url: dialect.endpoint(base.trim()),
            dialect,
            transport,
            pricing: settings.pricing(),
            max_retries: settings.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
            initial_backoff: settings.initial_backoff.map(|d| d.0).unwrap_or(INITIAL_BACKOFF),
            request_timeout: settings.request_timeout.map(|d| d.0).unwrap_or(DEFAULT_REQUEST_TIMEOUT),
            context_window: settings.context_window,
            queue: VecDeque::new(),
            pending_ids: Vec::new(),
            started: Instant::now(),
            calls: 0,
            observations: transport::Observations::default(),
        }
    }

    /// Sends the conversation, retrying what is transient, and queues what the turn holds.
    fn take_turn(&mut self, deadline: Instant) {
        let body = self.dialect.request();
        if let Some(window) = self.context_window {
            let estimate = (body.to_string().len() as u64) / 4;
            if estimate > window {
                self.queue.push_back(AgentEvent::Failed(AgentFailure::ContextLengthExceeded {
                    detail: format!("the request is about {estimate} tokens, more than the context window of {window} set for this agent"),
                }));
                return;
            }
        }
        let (retries, outcome) = self.exchange(body, deadline);
        let turn = outcome.and_then(|value| {
            self.dialect
                .read(value.clone())
                .map_err(|reason| ExchangeFailure::NotUnderstood {
                    body: value.to_string(),
                    reason,
                })
        });
        let usage = turn.as_ref().map(|t| t.usage).unwrap_or_default();
        self.queue
            .push_back(AgentEvent::ModelCall(self.model_call(usage, retries)));
        match turn {
            Ok(turn) if turn.calls.is_empty() => self.queue.push_back(AgentEvent::Reply(turn.text)),
            Ok(turn) => {
                for call in turn.calls {
                    self.calls += 1;
                    let id = if call.id.is_empty() {
                        format!("call-{}", self.calls)
                    } else {
                        call.id
                    };
                    self.queue.push_back(AgentEvent::Call(Action {
                        id,
                        tool: call.name,
                        input: match call.input {
                            Ok(v) => ActionInput::Json(v),
                            Err(raw) => ActionInput::Raw(raw),
                        },
                    }));
                }
            }
            Err(failure) => {
                let event = self.failure_event(failure, retries);
                self.queue.push_back(event);
            }
        }
    }

    fn model_call(&self, usage: TokenCounts, retries: u32) -> ModelCall {
        let cost = self.pricing.map(|(price, estimated)| Cost {
            usd: price.cost(usage.input, usage.cached_input, usage.output),
            estimated,
        });
        ModelCall {
            usage: Usage {
                input_tokens: usage.input,
                output_tokens: usage.output,
            },
            cached_input_tokens: usage.cached_input,
            cost,
            retries,
        }
    }

    fn failure_event(&self, failure: ExchangeFailure, retries: u32) -> AgentEvent {
        let provider = self.provider.as_str();
        let report = |code: ErrorCode, message: String| {
            AgentEvent::Final(FinalReport {
                code: Some(code),
                result: FinalResult::Error,
                message,
            })
        };
        match failure {
            ExchangeFailure::Auth { status, detail } => report(
                ErrorCode::Auth,
                format!(
                    "the {provider} API at {} refused the key ({status}: {detail}); set {} to a valid API key",
                    self.url, self.key_var
                ),
            ),
            ExchangeFailure::GaveUp { code, detail } => report(
                code,
                format!(
                    "the {provider} API at {} did not answer after {} tr{} ({detail})",
                    self.url,
                    retries + 1,
                    if retries == 0 { "y" } else { "ies" }
                ),
            ),
            ExchangeFailure::Refused { status, detail } => report(
                ErrorCode::InvalidInput,
                format!(
                    "the {provider} API at {} refused the request ({status}: {detail})",
                    self.url
                ),
            ),
            ExchangeFailure::ContextLength(detail) => {
                AgentEvent::Failed(AgentFailure::ContextLengthExceeded { detail })
            }
            ExchangeFailure::Deadline { after } => AgentEvent::Failed(AgentFailure::TimedOut { after }),
            ExchangeFailure::Cassette(detail) => AgentEvent::HarnessFailed(self.redact(&detail)),
            ExchangeFailure::NotUnderstood { body, reason } => AgentEvent::Malformed {
                line: self.redact(&cut_text(&body, TOOL_RESULT_BUDGET)),
                reason: format!("the {provider} API's response is not understood ({reason}); medin asks again"),
            },
        }
    }

    /// One exchange: sent again after a rate limit, a server error or a timeout, with backoff,
    /// while retries and the deadline last. Returns the retries spent and the response's JSON.
    fn exchange(
        &self,
        body: serde_json::Value,
        deadline: Instant,
    ) -> (u32, Result<serde_json::Value, ExchangeFailure>) {
        let mut headers = self.dialect.auth(self.key.as_ref());
        headers.retain(|(name, _)| !name.is_empty());
        let mut request = ModelRequest {
            url: self.url.clone(),
            headers,
            body,
            observations: self.observations.clone(),
            timeout: self.request_timeout,
        };
        let mut retries = 0;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return (
                    retries,
                    Err(ExchangeFailure::Deadline {
                        after: self.started.elapsed(),
                    }),
                );
            }
            request.timeout = self.request_timeout.min(left);
            let (code, detail, retry_after) = match self.transport.send(&request) {
                Ok(response) => match self.classify(response) {
                    Ok(value) => return (retries, Ok(value)),
                    Err(Retry::No(failure)) => return (retries, Err(failure)),
                    Err(Retry::After { code, detail, after }) => (code, detail, after),
                },
                Err(TransportError::TimedOut { .. })
                    if deadline.saturating_duration_since(Instant::now()) < DEADLINE_SLACK =>
                {
                    // The exchange ran into the task's deadline: wait out the last moments, so
                    // the runner sees the task's time spent (a timeout, not a broken agent).
                    std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
                    return (
                        retries,
                        Err(ExchangeFailure::Deadline {
                            after: self.started.elapsed(),
                        }),
                    );
                }
                Err(TransportError::Cassette(detail)) => return (retries, Err(ExchangeFailure::Cassette(detail))),
                // Sending it again would read the same flood: the model is asked again instead.
                Err(TransportError::TooLarge { limit, .. }) => {
                    return (
                        retries,
                        Err(ExchangeFailure::NotUnderstood {
                            body: String::new(),
                            reason: format!(
                                "its body is larger than the {} MiB medin reads of a response",
                                limit / (1024 * 1024)
                            ),
                        }),
                    )
                }
                Err(e) => (ErrorCode::NetworkError, self.redact(&e.to_string()), None),
            };
            if retries >= self.max_retries {
                return (retries, Err(ExchangeFailure::GaveUp { code, detail }));
            }
            let delay = match retry_after {
                Some(after) => after.min(MAX_RETRY_AFTER),
                None => backoff(self.initial_backoff, retries, fastrand::f64()),
            };
            if Instant::now() + delay >= deadline {
                let detail = format!("{detail}; the task's deadline comes before the next try");
                return (retries, Err(ExchangeFailure::GaveUp { code, detail }));
            }
            std::thread::sleep(delay);
            retries += 1;
        }
    }

    /// What a response means: its JSON, a failure to end on, or one worth another try.
    fn classify(&self, response: ModelResponse) -> Result<serde_json::Value, Retry> {
        let status = response.status;
        let detail = || format!("{status}: {}", self.redact(&cut_text(&response.body, ERROR_BODY_CHARS)));
        match status {
            200..=299 if response.event_stream || stream::looks_like_event_stream(&response.body) => {
                self.classify_stream(&response)
            }
            200..=299 => serde_json::from_str(&response.body).map_err(|e| {
                Retry::No(ExchangeFailure::NotUnderstood {
                    body: response.body.clone(),
                    reason: format!("not JSON: {e}"),
                })
            }),
            401 | 403 => Err(Retry::No(ExchangeFailure::Auth {
                status,
                detail: self.redact(&cut_text(&response.body, ERROR_BODY_CHARS)),
            })),
            429 => Err(Retry::After {
                code: ErrorCode::RateLimit,
                detail: detail(),
                after: response.retry_after,
            }),
            408 | 500..=599 => Err(Retry::After {
                code: ErrorCode::NetworkError,
                detail: detail(),
                after: response.retry_after,
            }),
            _ if is_context_length(&response.body) => Err(Retry::No(ExchangeFailure::ContextLength(detail()))),
            _ => Err(Retry::No(ExchangeFailure::Refused {
                status,
                detail: self.redact(&cut_text(&response.body, ERROR_BODY_CHARS)),
            })),
        }
    }

    /// What a streamed response means: the response it assembles into, a stream cut short
    /// (transient, like a dropped connection), the error the server sent inside it, or events
    /// that are not the API's.
    fn classify_stream(&self, response: &ModelResponse) -> Result<serde_json::Value, Retry> {
        let events = stream::parse(&response.body);
        match self.dialect.assemble_stream(&events) {
            Ok(value) => Ok(value),
            Err(stream::StreamFailure::Truncated { end_marker, events }) => Err(Retry::After {
                code: ErrorCode::NetworkError,
                detail: format!(
                    "the response stream ended after {events} event(s) without `{end_marker}`: it was cut short"
                ),
                after: None,
            }),
            Err(stream::StreamFailure::ServerError { kind, message }) => {
                let detail = self.redact(&cut_text(
                    &format!("an error inside the response stream: {kind}: {message}"),
                    ERROR_BODY_CHARS,
                ));
                let kind_has = |needles: &[&str]| needles.iter().any(|n| kind.contains(n));
                if kind_has(&["rate_limit"]) {
                    Err(Retry::After {
                        code: ErrorCode::RateLimit,
                        detail,
                        after: None,
                    })
                } else if kind_has(&["overloaded", "api_error", "server_error", "timeout", "unavailable"]) {
                    Err(Retry::After {
                        code: ErrorCode::NetworkError,
                        detail,
                        after: None,
                    })
                } else if is_context_length(&message) || is_context_length(&kind) {
                    Err(Retry::No(ExchangeFailure::ContextLength(detail)))
                } else {
                    Err(Retry::No(ExchangeFailure::Refused {
                        status: response.status,
                        detail,
                    }))
                }
            }
            Err(stream::StreamFailure::NotUnderstood(reason)) => Err(Retry::No(ExchangeFailure::NotUnderstood {
                body: response.body.clone(),
                reason,
            })),
        }
    }

    fn redact(&self, text: &str) -> String {
        match &self.key {
            Some(key) => key.redact(text),
            None => text.to_string(),
        }
    }
}

/// Whether a response is worth another try.
enum Retry {
    No(ExchangeFailure),
    After {
        code: ErrorCode,
        detail: String,
        after: Option<Duration>,
    },
}

/// The wait before retry `retry` (0-based): `initial` doubled per retry, at most
/// [`MAX_BACKOFF`], stretched by up to 50% (`jitter` in 0..1).
fn backoff(initial: Duration, retry: u32, jitter: f64) -> Duration {
    let base = initial.saturating_mul(1u32 << retry.min(16)).min(MAX_BACKOFF);
    base.mul_f64(1.0 + 0.5 * jitter.clamp(0.0, 1.0))
}

/// Whether an error body says the conversation is longer than the model's context.
fn is_context_length(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "context length",
        "context window",
        "maximum context",
        "prompt is too long",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

impl Agent for ModelAgent {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn next(&mut self, last: Option<(&Action, &Receipt)>, deadline: Instant) -> AgentEvent {
        if let Some((action, receipt)) = last {
            // A receipt for a call of the model goes back as its tool result; the answer to a
            // malformed response (empty id) is not the model's to see: the request is sent again.
            if let Some(i) = self.pending_ids.iter().position(|id| *id == action.id) {
                self.pending_ids.remove(i);
                let text = serde_json::to_string(receipt).unwrap_or_default();
                let is_error = receipt.status == crate::tools::ReceiptStatus::Error;
                let content = cut_text(&text, TOOL_RESULT_BUDGET);
                self.observations.add(&content);
                self.dialect.tool_result(&action.id, content, is_error);
            }
        }
        if self.queue.is_empty() {
            self.take_turn(deadline);
        }
        let event = self
            .queue
            .pop_front()
            .unwrap_or(AgentEvent::Failed(AgentFailure::NoFinal));
        if let AgentEvent::Call(action) = &event {
            self.pending_ids.push(action.id.clone());
        }
        event
    }

    fn feedback(&mut self, feedback: &serde_json::Value) {
        // A retry of a round that ended on a transient failure sends the same conversation
        // again; any other feedback is the next user turn.
        if feedback.get("kind").and_then(|k| k.as_str()) == Some("retry") {
            return;
        }
        let text = format!(
            "Feedback from medin:\n{}",
            serde_json::to_string_pretty(feedback).unwrap_or_default()
        );
        self.observations.add(&text);
        self.dialect.user(text);
    }

    fn finish(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A transport that plays canned responses and keeps what it was sent.
    struct Canned {
        responses: Mutex<VecDeque<Result<ModelResponse, TransportError>>>,
        sent: Mutex<Vec<ModelRequest>>,
    }

    impl ModelTransport for Canned {
        fn send(&self, request: &ModelRequest) -> Result<ModelResponse, TransportError> {
            self.sent.lock().unwrap().push(request.clone());
            self.responses.lock().unwrap().pop_front().unwrap_or(Ok(ok(say("{}"))))
        }
    }

    fn ok(body: serde_json::Value) -> ModelResponse {
        ModelResponse {
            status: 200,
            retry_after: None,
            event_stream: false,
            body: body.to_string(),
        }
    }

    fn status(code: u16) -> ModelResponse {
        ModelResponse {
            status: code,
            retry_after: Some(Duration::from_millis(1)),
            event_stream: false,
            body: "{}".into(),
        }
    }

    fn say(text: &str) -> serde_json::Value {
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": text}}], "usage": {"prompt_tokens": 7, "completion_tokens": 2}})
    }

    fn agent(responses: Vec<Result<ModelResponse, TransportError>>) -> (ModelAgent, Arc<Canned>) {
        let transport = Arc::new(Canned {
            responses: Mutex::new(responses.into()),
            sent: Mutex::new(Vec::new()),
        });
        let brief = super::super::TaskBrief {
            task_id: "t".into(),
            prompt: "do it".into(),
            tools: vec![serde_json::json!({"name": "bash", "description": "run", "input_schema": {"type": "object"}})],
            limits: serde_json::Value::Null,
            workspace: std::path::PathBuf::from("/tmp"),
            retry: None,
            requirements: Vec::new(),
        };
        let mut settings = ModelSettings::new(Provider::OpenAi, "gpt-4o-mini");
        settings.base_url = Some("http://127.0.0.1:9".into());
        settings.initial_backoff = Some(DurationSpec(Duration::from_millis(1)));
        let transport_dyn: Arc<dyn ModelTransport> = transport.clone();
        (
            ModelAgent::new("openai:gpt-4o-mini".into(), &settings, &brief, transport_dyn),
            transport,
        )
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    #[test]
    fn a_turn_reports_its_cost_then_calls_then_the_reply_and_feedback_is_the_next_user_turn() {
        let call = serde_json::json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 10}});
        let (mut a, sent) = agent(vec![Ok(ok(call)), Ok(ok(say("first"))), Ok(ok(say("second")))]);
        let AgentEvent::ModelCall(cost) = a.next(None, far()) else {
            panic!("a model call first")
        };
        assert_eq!(cost.usage.input_tokens, 1000);
        assert_eq!(
            cost.cost.map(|c| c.estimated),
            Some(true),
            "gpt-4o-mini is in the table"
        );
        let AgentEvent::Call(action) = a.next(None, far()) else {
            panic!("then the call")
        };
        assert_eq!(action.tool, "bash");
        let big = Receipt::success(serde_json::json!({"stdout": "x".repeat(3 * TOOL_RESULT_BUDGET)}));
        assert!(matches!(a.next(Some((&action, &big)), far()), AgentEvent::ModelCall(_)));
        assert_eq!(a.next(None, far()), AgentEvent::Reply("first".into()));
        let tool_message = sent.sent.lock().unwrap()[1].body["messages"][3].clone();
        assert_eq!(tool_message["tool_call_id"], "c1");
        assert!(tool_message["content"]
            .as_str()
            .unwrap()
            .contains("bytes in all, sha256:"));
        a.feedback(&serde_json::json!({"kind": "tests", "failing": ["t1"]}));
        assert!(matches!(a.next(None, far()), AgentEvent::ModelCall(_)));
        assert_eq!(a.next(None, far()), AgentEvent::Reply("second".into()));
        let last = sent.sent.lock().unwrap()[2].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(last["role"], "user");
        assert!(last["content"].as_str().unwrap().contains("failing"));
    }

    #[test]
    fn transient_errors_are_retried_then_reported_and_a_retry_sends_the_same_conversation() {
        let (mut a, sent) = agent(vec![
            Ok(status(503)),
            Err(TransportError::Network {
                url: "u".into(),
                detail: "reset".into(),
            }),
            Ok(status(429)),
            Ok(status(429)),
            Ok(ok(say("done"))),
        ]);
        let AgentEvent::ModelCall(call) = a.next(None, far()) else {
            panic!()
        };
        assert_eq!(call.retries, 3);
        let AgentEvent::Final(report) = a.next(None, far()) else {
            panic!()
        };
        assert_eq!(report.code, Some(ErrorCode::RateLimit), "{}", report.message);
        assert!(report.message.contains("after 4 tries"), "{}", report.message);
        a.feedback(&serde_json::json!({"kind": "retry", "attempt": 2}));
        assert!(matches!(a.next(None, far()), AgentEvent::ModelCall(_)));
        assert_eq!(a.next(None, far()), AgentEvent::Reply("done".into()));
        let sent = sent.sent.lock().unwrap();
        assert_eq!(sent.len(), 5);
        assert_eq!(sent[0].body, sent[4].body, "a retried round asks the same thing again");
    }

    #[test]
    fn a_deadline_that_comes_before_the_retry_ends_the_exchange_now() {
        let mut slow = status(429);
        slow.retry_after = Some(Duration::from_secs(30));
        let (mut a, sent) = agent(vec![Ok(slow)]);
        let started = Instant::now();
        assert!(matches!(
            a.next(None, Instant::now() + Duration::from_secs(2)),
            AgentEvent::ModelCall(_)
        ));
        let AgentEvent::Final(report) = a.next(None, far()) else {
            panic!()
        };
        assert_eq!(report.code, Some(ErrorCode::RateLimit));
        assert!(report.message.contains("deadline"), "{}", report.message);
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(sent.sent.lock().unwrap().len(), 1);
        let past = Instant::now();
        let (mut late, _) = agent(vec![]);
        late.queue.clear();
        assert!(matches!(late.next(None, past), AgentEvent::ModelCall(_)));
        assert!(matches!(
            late.next(None, past),
            AgentEvent::Failed(AgentFailure::TimedOut { .. })
        ));
    }

    /// A 200 whose body is `body`, declared an event stream or not.
    fn streamed(body: &str, declared: bool) -> ModelResponse {
        ModelResponse {
            status: 200,
            retry_after: None,
            event_stream: declared,
            body: body.into(),
        }
    }

    #[test]
    fn a_stream_cut_short_or_an_overloaded_one_is_retried_and_no_half_read_call_is_made() {
        let cut = "data: {\"choices\": [{\"index\": 0, \"delta\": {\"tool_calls\": [{\"index\": 0, \"id\": \"c1\", \"function\": {\"name\": \"bash\", \"arguments\": \"{\\\"command\\\": \\\"rm -rf\"}}]}}]}\n\n";
        let overloaded = "data: {\"error\": {\"type\": \"overloaded_error\", \"message\": \"busy\"}}\n\n";
        let whole = "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"do\"}}]}\n\n\
                     data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"ne\"}}]}\n\n\
                     data: {\"choices\": [], \"usage\": {\"prompt_tokens\": 9, \"completion_tokens\": 4}}\n\n\
                     data: [DONE]\n\n";
        // Declared or not, a body of events is read as a stream.
        let (mut a, sent) = agent(vec![
            Ok(streamed(cut, true)),
            Ok(streamed(overloaded, false)),
            Ok(streamed(whole, false)),
        ]);
        let AgentEvent::ModelCall(call) = a.next(None, far()) else {
            panic!("a model call")
        };
        assert_eq!(
            (call.retries, call.usage.input_tokens, call.usage.output_tokens),
            (2, 9, 4)
        );
        assert_eq!(a.next(None, far()), AgentEvent::Reply("done".into()));
        assert_eq!(sent.sent.lock().unwrap().len(), 3);

        let (mut a, _) = agent(vec![Ok(streamed(cut, true)); 4]);
        assert!(matches!(a.next(None, far()), AgentEvent::ModelCall(_)));
        let AgentEvent::Final(report) = a.next(None, far()) else {
            panic!("the retry budget ends the round")
        };
        assert_eq!(report.code, Some(ErrorCode::NetworkError));
        assert!(
            report.message.contains("without `data: [DONE]`") && report.message.contains("after 4 tries"),
            "{}",
            report.message
        );
        assert!(a.queue.is_empty(), "the half-read call is never handed out");
    }

    #[test]
    fn a_body_over_the_limit_is_answered_as_not_understood_naming_the_limit_and_not_retried() {
        let (mut a, sent) = agent(vec![
            Err(TransportError::TooLarge {
                url: "u".into(),
                limit: transport::MAX_RESPONSE_BYTES,
            }),
            Ok(ok(say("done"))),
        ]);
        assert!(matches!(a.next(None, far()), AgentEvent::ModelCall(_)));
        let AgentEvent::Malformed { reason, .. } = a.next(None, far()) else {
            panic!("answered as a malformed turn")
        };
        assert!(reason.contains("larger than the 16 MiB"), "{reason}");
        assert_eq!(sent.sent.lock().unwrap().len(), 1, "not retried");
        assert!(matches!(a.next(None, far()), AgentEvent::ModelCall(_)));
        assert_eq!(a.next(None, far()), AgentEvent::Reply("done".into()));
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_with_bounded_jitter() {
        let ms = |retry, jitter| backoff(Duration::from_millis(100), retry, jitter).as_millis();
        assert_eq!((ms(0, 0.0), ms(1, 0.0), ms(2, 0.0)), (100, 200, 400));
        assert_eq!(ms(1, 1.0), 300);
        assert_eq!(ms(30, 0.0), MAX_BACKOFF.as_millis());
    }

    #[test]
    fn costs_come_from_the_price_or_the_table_as_an_estimate() {
        let p = Price {
            input_per_mtok: 2.0,
            output_per_mtok: 8.0,
            cached_input_per_mtok: Some(0.5),
        };
        let cost = p.cost(1_000_000, 400_000, 500_000);
        assert!((cost - (1.2 + 0.2 + 4.0)).abs() < 1e-9, "{cost}");
        assert_eq!(builtin_price("gpt-4o-mini-2024-07-18").unwrap().input_per_mtok, 0.15);
        assert_eq!(builtin_price("gpt-4o-2024-08-06").unwrap().input_per_mtok, 2.50);
        assert!(builtin_price("scripted").is_none());
        let mut s = ModelSettings::new(Provider::Anthropic, "claude-sonnet-4-5");
        assert_eq!(s.pricing().map(|(_, estimated)| estimated), Some(true));
        s.price = Some(p);
        assert_eq!(s.pricing(), Some((p, false)));
    }

    #[test]
    fn context_length_errors_are_told_from_other_refusals() {
        assert!(is_context_length(
            r#"{"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 8192 tokens"}}"#
        ));
        assert!(is_context_length(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#
        ));
        assert!(!is_context_length(r#"{"error":{"message":"unknown parameter"}}"#));
    }

    #[test]
    fn long_tool_results_are_cut_with_the_hash_of_the_whole() {
        let text = "é".repeat(TOOL_RESULT_BUDGET);
        let cut = cut_text(&text, TOOL_RESULT_BUDGET);
        assert!(cut.len() < TOOL_RESULT_BUDGET + 200);
        assert!(
            cut.contains(&format!("{} bytes in all, sha256:", text.len())),
            "{}",
            &cut[cut.len() - 120..]
        );
        assert_eq!(cut_text("short", 10), "short");
    }
}

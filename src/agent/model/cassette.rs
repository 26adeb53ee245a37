//! Cassettes: a model agent's exchanges recorded in a run, and served again in a later one with
//! no network, so a suite run once against a real model becomes a deterministic CI job.
//!
//! A cassette is one JSON-lines file per attempt (`cassette.jsonl` in the attempt's folder): a
//! header line, then one line per exchange, appended and flushed as it happens, so a crash keeps
//! every exchange that completed. An exchange holds the URL, the request's JSON body, what came
//! back (status, `Retry-After`, whether it was an event stream, and the body as sent; or the
//! transport's error) and how long it took.
//! Headers are never written, and every key the request carried ([`Secret`]) is replaced by
//! `[redacted]` anywhere in the line (a server that echoes the key cannot put it in a cassette);
//! the host secrets tasks pass are masked too ([`crate::secrets`]).
//!
//! [`Recorder`] wraps the live transport; [`Player`] replaces it. The player serves exchange n
//! to the agent's n-th request after checking that the request is the recorded one: the model's
//! settings, medin's system prompt, the task's prompt, the tools with their schemas and every
//! turn of the model must be what they were, and each observation (a tool result, feedback)
//! must have the same gist — status, error codes, kind ([`Gist`]). A request that differs is a
//! harness error naming the first differing field (`tools[3].function.description`,
//! `messages[1].content`), never an answer served to the wrong question. The rest of an
//! observation is left out of the comparison because it is the environment's output, full of
//! durations, timestamps, absolute paths and test timings that differ between any two runs; a
//! replay still runs every tool call for real and the workspace is judged for real at its end,
//! so a changed environment shows in the verdict. The URL is not compared: a replay needs no
//! base URL, and no request leaves the machine.
//!
//! A recorded timeout is replayed as a wait of the recorded length (at most the request's own
//! timeout, which the task's deadline already cuts), so a run that ended on the deadline ends on
//! it again; a rate limit's `Retry-After` is honoured again by the agent as it was the first time.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::transport::{
    HeaderValue, HttpTransport, ModelRequest, ModelResponse, ModelTransport, Secret, TransportError,
};
use crate::plan::ModelTraffic;

/// The file name of an attempt's cassette.
pub const CASSETTE_FILE: &str = "cassette.jsonl";

/// The cassette format's version (the header's `version`).
pub const CASSETTE_VERSION: u32 = 1;

/// A cassette that cannot be read, written or played.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CassetteError {
    #[error("no cassette at {}: {reason}; record one with `medin run --record`, or replay a run folder that has one", path.display())]
    Missing { path: PathBuf, reason: String },
    #[error("{}:{line}: {reason}; this is not a medin cassette (record it again with `medin run --record`)", path.display())]
    Unreadable { path: PathBuf, line: usize, reason: String },
    #[error("cannot write the cassette {}: {reason}; check free space and permissions of the run folder", path.display())]
    Write { path: PathBuf, reason: String },
    #[error(
        "exchange {exchange} does not match the cassette {}: {difference}; the task, its tools or medin's prompts \
         changed since it was recorded: record it again with `medin run --record`", path.display()
    )]
    Mismatch {
        path: PathBuf,
        exchange: usize,
        difference: Difference,
    },
    #[error(
        "the cassette {} holds {recorded} exchange(s) and this run asks for exchange {asked}: the model's conversation \
         went further than when it was recorded; record it again with `medin run --record`", path.display()
    )]
    Exhausted {
        path: PathBuf,
        recorded: usize,
        asked: usize,
    },
}

/// The first place two requests differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// Where: `messages[3].content`, `tools[1].function.description`; a JSON text inside a
    /// string is entered with `→` (`messages[3].content → data.stdout`).
    pub field: String,
    /// An excerpt of the recorded value around the difference (`absent` when missing).
    pub recorded: String,
    /// The same for this run's request.
    pub sent: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` differs: the cassette has {}, this run sends {}",
            self.field, self.recorded, self.sent
        )
    }
}

/// One line of a cassette.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Line {
    Header { version: u32, medin: String },
    Exchange(Exchange),
}

/// One recorded exchange.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Exchange {
    /// 1 for the attempt's first exchange.
    seq: usize,
    url: String,
    request: Value,
    #[serde(flatten)]
    result: Recorded,
    elapsed_ms: u64,
}

/// What an exchange produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Recorded {
    Response {
        status: u16,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
        /// The server declared an event stream (absent: it did not).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        event_stream: bool,
        body: String,
    },
    Error(RecordedError),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum RecordedError {
    TimedOut,
    Network { detail: String },
    TooLarge { limit: u64 },
}

/// An attempt's way to its model's API, made once per attempt from the trial's
/// [`ModelTraffic`] and shared by every agent the attempt starts (a restarted agent goes on
/// where the cassette was). Nothing is opened until a model agent asks.
pub struct ModelLink {
    traffic: ModelTraffic,
    transport: OnceLock<Result<Arc<dyn ModelTransport>, CassetteError>>,
}

impl std::fmt::Debug for ModelLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelLink")
            .field("traffic", &self.traffic)
            .finish_non_exhaustive()
    }
}

impl ModelLink {
    /// A link straight to the model's endpoint (no cassette).
    pub fn live() -> Self {
        Self::new(ModelTraffic::Live)
    }

    pub fn new(traffic: ModelTraffic) -> Self {
        ModelLink {
            traffic,
            transport: OnceLock::new(),
        }
    }

    /// How this attempt's model traffic goes.
    pub fn traffic(&self) -> &ModelTraffic {
        &self.traffic
    }

    /// The transport: HTTP, HTTP recorded to the cassette, or the cassette played back.
    pub fn transport(&self) -> Result<Arc<dyn ModelTransport>, CassetteError> {
        self.transport
            .get_or_init(|| {
                Ok(match &self.traffic {
                    ModelTraffic::Live => Arc::new(HttpTransport::default()) as Arc<dyn ModelTransport>,
                    ModelTraffic::Record { cassette } => {
                        Arc::new(Recorder::create(cassette, Arc::new(HttpTransport::default()))?)
                    }
                    ModelTraffic::Replay { cassette } => Arc::new(Player::open(cassette)?),
                })
            })
            .clone()
    }
}

/// Records every exchange of `inner` to a cassette.
pub struct Recorder {
    inner: Arc<dyn ModelTransport>,
    path: PathBuf,
    state: Mutex<RecorderState>,
}

struct RecorderState {
    file: BufWriter<File>,
    seq: usize,
}

impl Recorder {
    /// Starts the cassette at `path` (replacing any), with its header.
    pub fn create(path: &Path, inner: Arc<dyn ModelTransport>) -> Result<Self, CassetteError> {
        let failed = |e: std::io::Error| CassetteError::Write {
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(failed)?;
        }
        let mut file = BufWriter::new(File::create(path).map_err(failed)?);
        let header = Line::Header {
            version: CASSETTE_VERSION,
            medin: env!("CARGO_PKG_VERSION").to_string(),
        };
        write_line(&mut file, &header, &[]).map_err(failed)?;
        Ok(Recorder {
            inner,
            path: path.to_path_buf(),
            state: Mutex::new(RecorderState { file, seq: 0 }),
        })
    }
}

/// Writes `line`, with every secret redacted, and flushes it.
fn write_line(file: &mut BufWriter<File>, line: &Line, secrets: &[&Secret]) -> std::io::Result<()> {
    let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
    for secret in secrets {
        text = secret.redact(&text);
    }
    // And every host secret and key registered with the mask (`pass_env:` values a tool
    // result carried to the model).
    let text = crate::secrets::mask_json(&text);
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.flush()
}

impl ModelTransport for Recorder {
    fn send(&self, request: &ModelRequest) -> Result<ModelResponse, TransportError> {
        let started = Instant::now();
        let result = self.inner.send(request);
        let elapsed_ms = started.elapsed().as_millis() as u64;
        let recorded = match &result {
            Ok(r) => Recorded::Response {
                status: r.status,
                retry_after_ms: r.retry_after.map(|d| d.as_millis() as u64),
                event_stream: r.event_stream,
                body: r.body.clone(),
            },
            Err(TransportError::TimedOut { .. }) => Recorded::Error(RecordedError::TimedOut),
            Err(TransportError::Network { detail, .. }) => {
                Recorded::Error(RecordedError::Network { detail: detail.clone() })
            }
            Err(TransportError::TooLarge { limit, .. }) => Recorded::Error(RecordedError::TooLarge { limit: *limit }),
            Err(e @ TransportError::Cassette(_)) => return Err(e.clone()),
        };
        let secrets: Vec<&Secret> = request
            .headers
            .iter()
            .filter_map(|(_, v)| match v {
                HeaderValue::Secret { key, .. } => Some(key),
                HeaderValue::Plain(_) => None,
            })
            .collect();
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.seq += 1;
        let line = Line::Exchange(Exchange {
            seq: state.seq,
            url: request.url.clone(),
            request: request.body.clone(),
            result: recorded,
            elapsed_ms,
        });
        write_line(&mut state.file, &line, &secrets).map_err(|e| {
            TransportError::Cassette(
                CassetteError::Write {
                    path: self.path.clone(),
                    reason: e.to_string(),
                }
                .to_string(),
            )
        })?;
        result
    }
}

/// Serves a cassette's exchanges, in order, to the requests that match them.
#[derive(Debug)]
pub struct Player {
    path: PathBuf,
    exchanges: Vec<Exchange>,
    next: Mutex<usize>,
}

impl Player {
    /// Reads the cassette at `path`.
    pub fn open(path: &Path) -> Result<Self, CassetteError> {
        let text = std::fs::read_to_string(path).map_err(|e| CassetteError::Missing {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let mut exchanges = Vec::new();
        let mut header = false;
        for (i, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let unreadable = |reason: String| CassetteError::Unreadable {
                path: path.to_path_buf(),
                line: i + 1,
                reason,
            };
            match serde_json::from_str::<Line>(raw).map_err(|e| unreadable(e.to_string()))? {
                Line::Header { version, .. } if version == CASSETTE_VERSION => header = true,
                Line::Header { version, .. } => {
                    return Err(unreadable(format!(
                        "cassette version {version}, this medin reads version {CASSETTE_VERSION}"
                    )))
                }
                Line::Exchange(_) if !header => return Err(unreadable("an exchange before the header".into())),
                Line::Exchange(e) => exchanges.push(e),
            }
        }
        if !header {
            return Err(CassetteError::Unreadable {
                path: path.to_path_buf(),
                line: 1,
                reason: "no header line".into(),
            });
        }
        Ok(Player {
            path: path.to_path_buf(),
            exchanges,
            next: Mutex::new(0),
        })
    }

    /// How many exchanges the cassette holds.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.exchanges.len()
    }

    fn serve(&self, request: &ModelRequest) -> Result<ModelResponse, CassetteErrorOr> {
        let index = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let index = *next;
            *next += 1;
            index
        };
        let Some(exchange) = self.exchanges.get(index) else {
            return Err(CassetteErrorOr::Cassette(CassetteError::Exhausted {
                path: self.path.clone(),
                recorded: self.exchanges.len(),
                asked: index + 1,
            }));
        };
        let observed = |text: &str| request.observations.contains(text);
        if let Some(difference) = first_difference(&exchange.request, &request.body, &observed) {
            return Err(CassetteErrorOr::Cassette(CassetteError::Mismatch {
                path: self.path.clone(),
                exchange: index + 1,
                difference,
            }));
        }
        match &exchange.result {
            Recorded::Response {
                status,
                retry_after_ms,
                event_stream,
                body,
            } => Ok(ModelResponse {
                status: *status,
                retry_after: retry_after_ms.map(Duration::from_millis),
                event_stream: *event_stream,
                body: body.clone(),
            }),
            Recorded::Error(RecordedError::TimedOut) => {
                std::thread::sleep(Duration::from_millis(exchange.elapsed_ms).min(request.timeout));
                Err(CassetteErrorOr::Transport(TransportError::TimedOut {
                    url: request.url.clone(),
                    after: request.timeout,
                }))
            }
            Recorded::Error(RecordedError::Network { detail }) => {
                Err(CassetteErrorOr::Transport(TransportError::Network {
                    url: request.url.clone(),
                    detail: detail.clone(),
                }))
            }
            Recorded::Error(RecordedError::TooLarge { limit }) => {
                Err(CassetteErrorOr::Transport(TransportError::TooLarge {
                    url: request.url.clone(),
                    limit: *limit,
                }))
            }
        }
    }
}

enum CassetteErrorOr {
    Cassette(CassetteError),
    Transport(TransportError),
}

impl ModelTransport for Player {
    fn send(&self, request: &ModelRequest) -> Result<ModelResponse, TransportError> {
        self.serve(request).map_err(|e| match e {
            CassetteErrorOr::Cassette(c) => TransportError::Cassette(c.to_string()),
            CassetteErrorOr::Transport(t) => t,
        })
    }
}

/// The first field where `sent` differs from `recorded`. A string of `sent` that
/// `is_observation` names (what the environment told the model: a tool result, feedback) is
/// compared by its [`Gist`] only; everything else must be equal.
pub fn first_difference(recorded: &Value, sent: &Value, is_observation: &dyn Fn(&str) -> bool) -> Option<Difference> {
    difference_at(String::new(), recorded, sent, is_observation)
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn difference_at(
    path: String,
    recorded: &Value,
    sent: &Value,
    is_observation: &dyn Fn(&str) -> bool,
) -> Option<Difference> {
    use Value::{Array, Object, String as Text};
    let absent = || "nothing (absent)".to_string();
    match (recorded, sent) {
        (Object(a), Object(b)) => {
            for (key, value) in a {
                let here = join(&path, key);
                match b.get(key) {
                    Some(other) => {
                        if let Some(d) = difference_at(here, value, other, is_observation) {
                            return Some(d);
                        }
                    }
                    None => {
                        return Some(Difference {
                            field: here,
                            recorded: excerpt_value(value),
                            sent: absent(),
                        })
                    }
                }
            }
            b.iter()
                .find(|(key, _)| !a.contains_key(*key))
                .map(|(key, value)| Difference {
                    field: join(&path, key),
                    recorded: absent(),
                    sent: excerpt_value(value),
                })
        }
        (Array(a), Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let here = format!("{path}[{i}]");
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => {
                        if let Some(d) = difference_at(here, x, y, is_observation) {
                            return Some(d);
                        }
                    }
                    (Some(x), None) => {
                        return Some(Difference {
                            field: here,
                            recorded: excerpt_value(x),
                            sent: absent(),
                        })
                    }
                    (None, Some(y)) => {
                        return Some(Difference {
                            field: here,
                            recorded: absent(),
                            sent: excerpt_value(y),
                        })
                    }
                    (None, None) => {}
                }
            }
            None
        }
        (Text(a), Text(b)) if a == b => None,
        (Text(a), Text(b)) if is_observation(b) => {
            let (x, y) = (Gist::of(a), Gist::of(b));
            (x != y).then(|| Difference {
                field: format!("{path} (what the tools answered)"),
                recorded: x.to_string(),
                sent: y.to_string(),
            })
        }
        (Text(a), Text(b)) => {
            let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            Some(Difference {
                field: path,
                recorded: excerpt_text(a, at),
                sent: excerpt_text(b, at),
            })
        }
        _ if recorded == sent => None,
        _ => Some(Difference {
            field: path,
            recorded: excerpt_value(recorded),
            sent: excerpt_value(sent),
        }),
    }
}

/// What a replay compares of an observation (a receipt shown as a tool result, feedback): its
/// status, its error codes and its kind, as they appear in its JSON text. The rest is the
/// environment's output, which holds durations, timestamps, absolute paths and test timings
/// that differ between any two runs; the harness judges the workspace for real at the end of a
/// replay anyway, so a changed environment shows in the verdict, and a changed *path* (a tool
/// that now fails, a test run that now passes) shows here.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Gist {
    status: Option<String>,
    codes: Vec<String>,
    kind: Option<String>,
}

impl Gist {
    fn of(text: &str) -> Self {
        static PATTERNS: OnceLock<[regex::Regex; 3]> = OnceLock::new();
        let [status, code, kind] = PATTERNS.get_or_init(|| {
            [
                r#""status":\s*"([a-z_]+)""#,
                r#""code":\s*"([A-Z_]+)""#,
                r#""kind":\s*"([a-z_]+)""#,
            ]
            .map(|p| regex::Regex::new(p).expect("a valid pattern"))
        });
        let first = |re: &regex::Regex| re.captures(text).map(|c| c[1].to_string());
        Gist {
            status: first(status),
            codes: code.captures_iter(text).map(|c| c[1].to_string()).collect(),
            kind: first(kind),
        }
    }
}

impl std::fmt::Display for Gist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some(s) = &self.status {
            parts.push(format!("status {s}"));
        }
        if !self.codes.is_empty() {
            parts.push(format!("errors {}", self.codes.join(", ")));
        }
        if let Some(k) = &self.kind {
            parts.push(format!("kind {k}"));
        }
        if parts.is_empty() {
            f.write_str("text")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// Up to 40 characters either side of byte `at`, quoted.
fn excerpt_text(text: &str, at: usize) -> String {
    let mut start = at.saturating_sub(40).min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + 40).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    format!(
        "{}{:?}{}",
        if start > 0 { "…" } else { "" },
        &text[start..end],
        if end < text.len() { "…" } else { "" }
    )
}

fn excerpt_value(value: &Value) -> String {
    let text = value.to_string();
    if text.len() <= 80 {
        text
    } else {
        excerpt_text(&text, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strict(_: &str) -> bool {
        false
    }

    #[test]
    fn the_first_differing_field_is_named_with_its_path() {
        let a = json!({"model": "m", "messages": [{"role": "user", "content": "make hello.txt"}], "tools": [{"function": {"name": "bash", "description": "run a command"}}]});
        let mut b = a.clone();
        b["tools"][0]["function"]["description"] = json!("run one command");
        let d = first_difference(&a, &b, &strict).unwrap();
        assert_eq!(d.field, "tools[0].function.description");
        assert!(
            d.recorded.contains("run a command") && d.sent.contains("run one command"),
            "{d}"
        );
        let mut c = a.clone();
        c["messages"]
            .as_array_mut()
            .unwrap()
            .push(json!({"role": "user", "content": "more"}));
        let d = first_difference(&a, &c, &strict).unwrap();
        assert_eq!(d.field, "messages[1]");
        assert!(d.recorded.contains("absent"), "{d}");
        assert_eq!(first_difference(&a, &a.clone(), &strict), None);
        let mut e = a.clone();
        e.as_object_mut().unwrap().insert("seed".into(), json!(7));
        assert_eq!(first_difference(&a, &e, &strict).unwrap().field, "seed");
    }

    #[test]
    fn observations_are_compared_by_their_gist_and_the_rest_exactly() {
        let receipt = |ms: u64, status: &str, code: Option<&str>| {
            json!({"status": status, "data": {"duration_ms": ms, "stdout": format!("Ran 3 tests in 0.{ms}s"), "workspace": format!("/tmp/run-{ms}/ws")},
                   "errors": code.map(|c| vec![json!({"code": c, "message": "m"})]).unwrap_or_default()})
            .to_string()
        };
        let body = |tool: String, prompt: &str| json!({"messages": [{"role": "user", "content": prompt}, {"role": "tool", "content": tool}]});
        let (then, now) = (receipt(3, "success", None), receipt(170, "success", None));
        let observed = |text: &str| text == now;
        assert_eq!(
            first_difference(&body(then.clone(), "p"), &body(now.clone(), "p"), &observed),
            None,
            "timings, paths and output differ between runs"
        );
        let failing = receipt(170, "error", Some("TOOL_EXECUTION_FAILED"));
        let observed_failing = |text: &str| text == failing;
        let d = first_difference(&body(then.clone(), "p"), &body(failing.clone(), "p"), &observed_failing).unwrap();
        assert_eq!(d.field, "messages[1].content (what the tools answered)");
        assert!(
            d.recorded.contains("success") && d.sent.contains("TOOL_EXECUTION_FAILED"),
            "{d}"
        );
        let d = first_difference(&body(then.clone(), "p"), &body(now.clone(), "q"), &observed).unwrap();
        assert_eq!(
            d.field, "messages[0].content",
            "the prompt is the task's: compared exactly"
        );
        assert!(
            first_difference(&body(then, "p"), &body(now, "p"), &strict).is_some(),
            "a text that is no observation is compared exactly"
        );
    }

    fn request(body: Value) -> ModelRequest {
        ModelRequest {
            url: "http://127.0.0.1:1/chat/completions".into(),
            headers: vec![(
                "authorization".into(),
                HeaderValue::Secret {
                    prefix: "Bearer ",
                    key: Secret::new("sk-cassette-key".into()).unwrap(),
                },
            )],
            body,
            observations: Default::default(),
            timeout: Duration::from_secs(5),
        }
    }

    /// A transport answering every request with the same response, which echoes the key.
    struct Echo;

    impl ModelTransport for Echo {
        fn send(&self, _request: &ModelRequest) -> Result<ModelResponse, TransportError> {
            Ok(ModelResponse {
                status: 200,
                retry_after: Some(Duration::from_secs(2)),
                event_stream: true,
                body: "{\"echo\": \"Bearer sk-cassette-key\"}".into(),
            })
        }
    }

    #[test]
    fn a_recording_plays_back_without_its_key_and_refuses_other_requests() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/cassette.jsonl");
        let recorder = Recorder::create(&path, Arc::new(Echo)).unwrap();
        let first = json!({"messages": [{"role": "user", "content": "key sk-cassette-key"}]});
        let second = json!({"messages": [{"role": "user", "content": "two"}]});
        recorder.send(&request(first.clone())).unwrap();
        recorder.send(&request(second.clone())).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("sk-cassette-key"), "{text}");
        assert_eq!(text.lines().count(), 3, "a header and two exchanges");

        let player = Player::open(&path).unwrap();
        assert_eq!(player.len(), 2);
        let redacted = json!({"messages": [{"role": "user", "content": "key [redacted]"}]});
        let answer = player.send(&request(redacted)).unwrap();
        assert_eq!(answer.retry_after, Some(Duration::from_secs(2)));
        assert!(answer.event_stream, "whether the server streamed is kept");
        assert!(answer.body.contains("[redacted]"));
        let TransportError::Cassette(message) = player.send(&request(first)).unwrap_err() else {
            panic!("a mismatch is the cassette's error")
        };
        assert!(
            message.contains("exchange 2") && message.contains("messages[0].content"),
            "{message}"
        );
        let TransportError::Cassette(message) = player.send(&request(second)).unwrap_err() else {
            panic!()
        };
        assert!(message.contains("holds 2 exchange(s)"), "{message}");
    }

    #[test]
    fn broken_cassettes_say_where_and_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let missing = Player::open(&dir.path().join("none.jsonl")).unwrap_err();
        assert!(missing.to_string().contains("--record"), "{missing}");
        let path = dir.path().join("c.jsonl");
        std::fs::write(&path, "{\"kind\":\"header\",\"version\":1,\"medin\":\"x\"}\nnot json\n").unwrap();
        let e = Player::open(&path).unwrap_err();
        assert!(matches!(e, CassetteError::Unreadable { line: 2, .. }), "{e}");
        std::fs::write(&path, "{\"kind\":\"header\",\"version\":99,\"medin\":\"x\"}\n").unwrap();
        assert!(Player::open(&path).unwrap_err().to_string().contains("version 99"));
    }
}

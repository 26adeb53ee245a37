//! The tool receipt: the one shape every action's result takes.
//!
//! A receipt is what medin hands back to the agent and writes to `receipts.jsonl`. It says
//! whether the action succeeded, the data it produced, the errors (each with one code from the
//! closed [`ErrorCode`] taxonomy), warnings, the evidence entries (file reads and writes with the
//! SHA-256 of the content, commands with their duration), and what the agent might do next.
//! Receipts are plain data: building one never touches the file system.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The closed error taxonomy. Every failing receipt carries one of these codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// The input did not match the tool's schema (or was not JSON at all).
    InvalidInput,
    /// Authentication or authorisation failed.
    Auth,
    /// A rate limit was hit.
    RateLimit,
    /// A file, directory or resource does not exist.
    NotFound,
    /// The operation ran past its time limit and was stopped.
    Timeout,
    /// A required service or program is unavailable.
    DependencyFail,
    /// A critical assumption was violated; the task stops.
    InvariantBroken,
    /// Policy, the guard or the workspace boundary refused the action.
    PermissionDenied,
    /// A value failed a semantic validation after parsing.
    ValidationError,
    /// No tool of that name is registered.
    ToolNotFound,
    /// The tool itself failed while running (I/O error, non-zero exit, ...).
    ToolExecutionFailed,
    /// A post-execution check did not hold.
    VerificationFailed,
    /// A resource conflict (git merge conflict, file changed under us).
    Conflict,
    /// A network operation failed.
    NetworkError,
    /// Output could not be parsed.
    ParseError,
    /// The agent produced output that does not follow the protocol.
    MalformedOutput,
}

impl ErrorCode {
    /// The wire spelling, e.g. `INVALID_INPUT`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::Auth => "AUTH",
            ErrorCode::RateLimit => "RATE_LIMIT",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::DependencyFail => "DEPENDENCY_FAIL",
            ErrorCode::InvariantBroken => "INVARIANT_BROKEN",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::ValidationError => "VALIDATION_ERROR",
            ErrorCode::ToolNotFound => "TOOL_NOT_FOUND",
            ErrorCode::ToolExecutionFailed => "TOOL_EXECUTION_FAILED",
            ErrorCode::VerificationFailed => "VERIFICATION_FAILED",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::NetworkError => "NETWORK_ERROR",
            ErrorCode::ParseError => "PARSE_ERROR",
            ErrorCode::MalformedOutput => "MALFORMED_OUTPUT",
        }
    }

    /// Errors worth retrying as they are (the reference retry policy).
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            ErrorCode::Timeout | ErrorCode::NetworkError | ErrorCode::RateLimit
        )
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Overall result of one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptStatus {
    Success,
    Error,
    /// Some of the work happened (e.g. output truncated, some files moved).
    Partial,
    /// Dry run: nothing changed; see `would_affect`.
    DryRun,
}

/// One error in a receipt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub context: serde_json::Value,
}

/// What kind of evidence an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    FileRead,
    FileWrite,
    FileDelete,
    FileMove,
    DirList,
    Command,
    Network,
    Git,
    Verify,
    Guard,
}

/// One piece of evidence: what was touched, when, and the hash of the content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    #[serde(rename = "type")]
    pub kind: EvidenceKind,
    /// Workspace-relative path, or the command line.
    pub source: String,
    /// Milliseconds since the Unix epoch.
    pub timestamp: i64,
    /// `sha256:<hex>` of the file content (for file evidence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    pub duration_ms: u64,
}

/// What a dry run would touch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WouldAffect {
    #[serde(rename = "type")]
    pub kind: String,
    pub target: String,
    pub action: String,
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Receipt {
    pub status: ReceiptStatus,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub data: serde_json::Value,
    #[serde(default)]
    pub errors: Vec<ToolError>,
    #[serde(default)]
    pub warnings: Vec<String>,
    #[serde(default)]
    pub receipts: Vec<Evidence>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub next_actions: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub would_affect: Vec<WouldAffect>,
    /// How the agent process that asked for this action is itself confined, set by the runner
    /// on every receipt of an attempt: for a `process:` agent the level its program runs at
    /// (the task's: `strict`, `process`; `strict+network` when its commands have no network
    /// but the agent keeps it to reach its model; `none` when its spec says
    /// `agent_isolation: none`: the harness's environment, no limits, no walls), the isolation
    /// level of its commands for an `exec:` agent (it is one of them), `builtin` for the oracle
    /// (no agent process), `in-process` for an embedding crate's agent. The level each command
    /// got is in `data.isolation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_isolation: Option<String>,
}

impl Receipt {
    /// A successful receipt carrying `data`.
    pub fn success(data: serde_json::Value) -> Self {
        Receipt {
            status: ReceiptStatus::Success,
            data,
            errors: Vec::new(),
            warnings: Vec::new(),
            receipts: Vec::new(),
            next_actions: Vec::new(),
            would_affect: Vec::new(),
            agent_isolation: None,
        }
    }

    /// A failing receipt with one error.
    pub fn error(code: ErrorCode, message: impl Into<String>) -> Self {
        let mut r = Receipt::success(serde_json::Value::Null);
        r.status = ReceiptStatus::Error;
        r.errors.push(ToolError {
            code,
            message: message.into(),
            context: serde_json::Value::Null,
        });
        r
    }

    /// A dry-run receipt listing what would be affected.
    pub fn dry_run(would_affect: Vec<WouldAffect>) -> Self {
        let mut r = Receipt::success(serde_json::Value::Null);
        r.status = ReceiptStatus::DryRun;
        r.would_affect = would_affect;
        r
    }

    pub fn with_context(mut self, context: serde_json::Value) -> Self {
        if let Some(e) = self.errors.last_mut() {
            e.context = context;
        }
        self
    }

    pub fn with_evidence(mut self, e: Evidence) -> Self {
        self.receipts.push(e);
        self
    }

    pub fn with_next(mut self, actions: &[&str]) -> Self {
        self.next_actions.extend(actions.iter().map(|s| s.to_string()));
        self
    }

    pub fn with_warning(mut self, w: impl Into<String>) -> Self {
        self.warnings.push(w.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.status == ReceiptStatus::Error
    }

    /// The code of the first error, if any.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.errors.first().map(|e| e.code)
    }
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256_tagged(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// `text` cut to at most `max` bytes (at a character boundary), ending with the length and
/// SHA-256 of the whole when anything was cut: how medin keeps a bounded copy of agent text
/// (retained records, model tool results and error bodies) without losing what it was.
pub(crate) fn cut_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}… [cut by medin: {} bytes in all, {}]",
        &text[..end],
        text.len(),
        sha256_tagged(text.as_bytes())
    )
}

/// `sha256:<hex>` of what `reader` gives, read in pieces (constant memory: the same value as
/// [`sha256_tagged`] of the bytes); `Ok(None)` once more than `limit` bytes came.
pub fn sha256_read(mut reader: impl std::io::Read, limit: u64) -> std::io::Result<Option<String>> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total: u64 = 0;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        total += n as u64;
        if total > limit {
            return Ok(None);
        }
        hasher.update(&buf[..n]);
    }
    Ok(Some(format!("sha256:{}", hex::encode(hasher.finalize()))))
}

/// Milliseconds since the Unix epoch, now.
pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_serialize_in_screaming_snake_case() {
        let json = serde_json::to_string(&ErrorCode::MalformedOutput).unwrap();
        assert_eq!(json, "\"MALFORMED_OUTPUT\"");
        assert_eq!(ErrorCode::ToolExecutionFailed.as_str(), "TOOL_EXECUTION_FAILED");
        let back: ErrorCode = serde_json::from_str("\"INVARIANT_BROKEN\"").unwrap();
        assert_eq!(back, ErrorCode::InvariantBroken);
    }

    #[test]
    fn a_file_hashes_like_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        assert_eq!(sha256_read(file, u64::MAX).unwrap(), Some(sha256_tagged(&bytes)));
        let file = std::fs::File::open(&path).unwrap();
        assert_eq!(
            sha256_read(file, bytes.len() as u64 - 1).unwrap(),
            None,
            "past the limit"
        );
    }

    #[test]
    fn hash_is_tagged_sha256() {
        assert_eq!(
            sha256_tagged(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}

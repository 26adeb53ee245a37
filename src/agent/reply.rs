//! An agent's free-text reply read as its final report. The agent owns this reading: a model
//! that answers in prose ends its round with a reply, and this is the one place that turns it
//! into `{"result": .., "message": ..}` or says why it could not.

/// Reads a free-text reply as `{"result": "success|error|issue", "message": ..}`, raw or inside
/// a fenced markdown block (```json ... ``` or ``` ... ```). Anything else is an `error` report
/// that quotes the raw reply (the `Err` side, so the caller can log a PARSE_ERROR).
pub fn parse_reply(text: &str) -> Result<crate::spec::FinalReport, crate::spec::FinalReport> {
    use crate::spec::{FinalReport, FinalResult};
    let fenced = fenced_block(text);
    let candidate = fenced.unwrap_or(text).trim();
    let parsed = serde_json::from_str::<serde_json::Value>(candidate).ok().and_then(|v| {
        let result = match v.get("result")?.as_str()? {
            "success" => FinalResult::Success,
            "error" => FinalResult::Error,
            "issue" => FinalResult::Issue,
            _ => return None,
        };
        let message = match v.get("message") {
            None | Some(serde_json::Value::Null) => String::new(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        let code = v.get("code").and_then(|c| serde_json::from_value(c.clone()).ok());
        Some(FinalReport { code, result, message })
    });
    parsed.ok_or_else(|| {
        let quoted: String = text.chars().take(2000).collect();
        FinalReport { code: None,
            result: FinalResult::Error,
            message: format!("could not parse the agent's reply as {{\"result\": \"success|error|issue\", \"message\": ..}} (raw or in a ```json fence); the reply was: {quoted}"),
        }
    })
}

/// The body of the first fenced code block in `text`, if any.
fn fenced_block(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let after = &text[start + 3..];
    let body_start = after.find('\n').map(|i| i + 1)?;
    let body = &after[body_start..];
    let end = body.find("```")?;
    Some(&body[..end])
}

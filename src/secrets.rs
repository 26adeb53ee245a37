//! Secrets: the values of the host variables a task passes to its commands and its agent
//! (`pass_env:`, in a task or in `medin.yaml`), and the one place that keeps them out of
//! everything medin writes or prints.
//!
//! A value leaves the host environment only through [`HostSecrets::take`], which registers it
//! with the process-wide mask before it hands it out, so no command or agent can hold a value
//! the mask does not know. The mask is applied by [`crate::inert`] — the module every text
//! medin writes or shows already passes through: `receipts.jsonl`, `transcript.jsonl`,
//! `metrics.json`, `ACTIVITY_LOG.md`, the trial-result parts, `summary.json`, `results.json`,
//! JUnit, the HTML report, the GitHub summary, TDD state and PRP artifacts, the verifier's log
//! and every terminal line and failure message — and by the model cassette's writer. A model
//! agent's API key is registered the same way when the agent reads it.
//!
//! The mask is process-wide on purpose (the model of a CI runner's secret masker): the values
//! are the host's, the same for every trial of the run, and a value one trial's agent carried
//! into a shared report must be masked there too. Registered values stay masked until the
//! process ends.
//!
//! **What is masked**, each as `[redacted:NAME]`: the value; the value trimmed of surrounding
//! whitespace; each line of a multi-line value; its JSON-escaped and percent-encoded forms; its
//! base64, in the standard and the URL-safe alphabet, at each of the three alignments a value
//! can take inside a longer base64 text (`echo $KEY | base64`); and a piece of at least
//! [`EDGE_CHARS`] characters of any of these that a cut left at the very start or end of a text
//! (a tail of a command's output, a capped stream). Inside JSON the mask works on each string
//! (keys included), so the line stays valid JSON.
//!
//! **What cannot be masked** (see README, "Host secrets and the network"): any other transformation of
//! the value (hex, reversed, split, compressed, encrypted, one character per line); files
//! in the workspace and in output folders, which are the agent's and are kept as it left them;
//! the SHA-256 of a cut output (a receipt names the hash of the whole text); a cut piece
//! shorter than [`EDGE_CHARS`]; and whatever the agent sends elsewhere over a network it was
//! given.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

/// The fewest characters a passed value may have: a shorter one cannot be masked without
/// masking unrelated text, and is no secret.
pub const MIN_VALUE_CHARS: usize = 6;

/// The fewest characters of a masked form that a cut at a text's edge must leave for the piece
/// to be masked.
pub const EDGE_CHARS: usize = 8;

/// A form of a value the mask looks for, and the variable it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Needle {
    text: String,
    name: String,
}

impl Needle {
    fn marker(&self) -> String {
        format!("[redacted:{}]", self.name)
    }
}

/// Every form of every registered value, longest first.
static NEEDLES: RwLock<Vec<Needle>> = RwLock::new(Vec::new());
/// Whether anything is registered (the fast path of every text when nothing is).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Why a task's passed variable cannot be given to it: the host does not provide it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("the task passes the host variable `{name}` (`pass_env:`), but it is not set where medin runs; set it (e.g. `export {name}=...` or a CI secret) and run again")]
    Unset { name: String },
    #[error("the task passes the host variable `{name}` (`pass_env:`), but it is empty; set it to the value the task needs and run again")]
    Empty { name: String },
    #[error(
        "the task passes the host variable `{name}` (`pass_env:`), but it is not valid UTF-8; medin can only mask text"
    )]
    NotText { name: String },
    #[error("the task passes the host variable `{name}` (`pass_env:`), but its value has only {chars} characters: too short to keep out of the logs without masking unrelated text (at least {MIN_VALUE_CHARS}); pass a real secret, or set the value in the task's own commands")]
    TooShort { name: String, chars: usize },
}

/// The values of a trial's passed variables, read from the host and registered with the mask.
/// `Debug` never shows a value.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct HostSecrets(Vec<(String, String)>);

impl std::fmt::Debug for HostSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(name, _)| format!("{name}=[redacted]")))
            .finish()
    }
}

impl HostSecrets {
    /// Reads each of `names` from medin's own environment and registers its value with the
    /// mask. The first name that is unset, empty, not text or too short is an error naming it:
    /// the trial cannot run as written (an infrastructure error, never the agent's failure).
    pub fn take<S: AsRef<str>>(names: &[S]) -> Result<Self, SecretError> {
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let name = name.as_ref();
            let value = match std::env::var(name) {
                Ok(v) => v,
                Err(std::env::VarError::NotPresent) => return Err(SecretError::Unset { name: name.into() }),
                Err(std::env::VarError::NotUnicode(_)) => return Err(SecretError::NotText { name: name.into() }),
            };
            if value.trim().is_empty() {
                return Err(SecretError::Empty { name: name.into() });
            }
            let chars = value.trim().chars().count();
            if chars < MIN_VALUE_CHARS {
                return Err(SecretError::TooShort {
                    name: name.into(),
                    chars,
                });
            }
            register(name, &value);
            out.push((name.to_string(), value));
        }
        Ok(HostSecrets(out))
    }

    /// The variables, as `(name, value)`, for a command's environment.
    pub fn env(&self) -> &[(String, String)] {
        &self.0
    }

    /// The names of the variables.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }
}

/// Registers `value` (the value of the variable `name`) with the process-wide mask: from now
/// on every text [`crate::inert`] handles has it, and its encoded forms, masked. A value of
/// fewer than [`MIN_VALUE_CHARS`] characters is ignored (it would mask unrelated text;
/// [`HostSecrets::take`] refuses one).
pub fn register(name: &str, value: &str) {
    if value.trim().chars().count() < MIN_VALUE_CHARS {
        return;
    }
    let mut forms = forms(value);
    forms.retain(|f| !f.trim().is_empty());
    let mut needles = NEEDLES.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    for text in forms {
        if !needles.iter().any(|n| n.text == text) {
            needles.push(Needle {
                text,
                name: name.to_string(),
            });
        }
    }
    needles.sort_by(|a, b| b.text.len().cmp(&a.text.len()).then_with(|| a.text.cmp(&b.text)));
    ACTIVE.store(true, Ordering::Release);
}

/// The forms of `value` the mask looks for (see the module documentation).
fn forms(value: &str) -> Vec<String> {
    let mut bases = vec![value.to_string()];
    let trimmed = value.trim();
    if trimmed != value {
        bases.push(trimmed.to_string());
    }
    if trimmed.contains('\n') {
        bases.extend(
            trimmed
                .lines()
                .map(str::trim)
                .filter(|l| l.chars().count() >= EDGE_CHARS)
                .map(str::to_string),
        );
    }
    let mut out = Vec::new();
    for base in &bases {
        out.push(base.clone());
        let json = serde_json::to_string(base).unwrap_or_default();
        let json = json.trim_start_matches('"').trim_end_matches('"');
        out.push(json.to_string());
        out.push(percent_encoded(base));
        for shift in 0..3 {
            if let Some(b64) = base64_at(base.as_bytes(), shift) {
                out.push(b64.replace('+', "-").replace('/', "_"));
                out.push(b64);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `text` with every byte outside RFC 3986's unreserved set written `%XX`.
fn percent_encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The base64 characters that `bytes` alone decide when they start `shift` bytes into a group
/// of three of a longer base64 text (0, 1 or 2): the characters shared with the bytes before
/// and after are left out. `None` when fewer than [`EDGE_CHARS`] remain.
fn base64_at(bytes: &[u8], shift: usize) -> Option<String> {
    let mut padded = vec![0u8; shift];
    padded.extend_from_slice(bytes);
    let encoded = crate::tools::base64(&padded);
    let encoded = encoded.trim_end_matches('=');
    // A partial last group: its last character mixes in the bytes after the value.
    let tail = usize::from(!padded.len().is_multiple_of(3));
    // The leading characters that mix in the `shift` bytes before it.
    let head = match shift {
        0 => 0,
        1 => 2,
        _ => 3,
    };
    let pure = encoded.get(head..encoded.len().checked_sub(tail)?)?;
    (pure.len() >= EDGE_CHARS).then(|| pure.to_string())
}

/// `text` with every registered value masked (see the module documentation). Borrowed when
/// nothing was registered or nothing matched.
pub fn mask_text(text: &str) -> Cow<'_, str> {
    if !ACTIVE.load(Ordering::Acquire) {
        return Cow::Borrowed(text);
    }
    let needles = NEEDLES.read().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut out: Cow<'_, str> = Cow::Borrowed(text);
    for needle in needles.iter() {
        if out.contains(needle.text.as_str()) {
            out = Cow::Owned(out.replace(needle.text.as_str(), &needle.marker()));
        }
    }
    for needle in needles.iter() {
        if let Some(cut) = mask_edges(&out, needle) {
            out = Cow::Owned(cut);
        }
    }
    out
}

/// `text` with a piece of `needle` that a cut left at its end (a prefix of the needle) or at
/// its start (a suffix of it) masked, when the piece has at least [`EDGE_CHARS`] characters.
fn mask_edges(text: &str, needle: &Needle) -> Option<String> {
    let whole = needle.text.as_str();
    // The byte offset of each character of the needle, and its length.
    let bounds: Vec<usize> = whole.char_indices().map(|(i, _)| i).chain([whole.len()]).collect();
    let chars = bounds.len() - 1;
    if chars <= EDGE_CHARS {
        return None;
    }
    let (first, last) = match (text.as_bytes().first(), text.as_bytes().last()) {
        (Some(f), Some(l)) => (*f, *l),
        _ => return None,
    };
    let bytes = whole.as_bytes();
    let mut out = None;
    // A proper prefix of the needle at the end of the text, the longest first (a cheap byte
    // test before each comparison).
    if let Some(&end) = bounds[EDGE_CHARS..chars]
        .iter()
        .rev()
        .find(|&&i| bytes[i - 1] == last && text.ends_with(&whole[..i]))
    {
        out = Some(format!("{}{}", &text[..text.len() - end], needle.marker()));
    }
    let current = out.as_deref().unwrap_or(text);
    // A proper suffix of the needle at the start of the text, the longest first.
    if let Some(&start) = bounds[1..=chars - EDGE_CHARS]
        .iter()
        .find(|&&i| (out.is_some() || bytes[i] == first) && current.starts_with(&whole[i..]))
    {
        out = Some(format!("{}{}", needle.marker(), &current[whole.len() - start..]));
    }
    out
}

/// Serialized JSON with every registered value masked inside its strings (keys included);
/// the structure is never touched, so the result is JSON that reads the same, the values
/// masked. Borrowed when nothing was registered or nothing matched.
pub fn mask_json(serialized: &str) -> Cow<'_, str> {
    if !ACTIVE.load(Ordering::Acquire) {
        return Cow::Borrowed(serialized);
    }
    let bytes = serialized.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        // A string token: up to the next quote that no backslash escapes.
        let start = i;
        let mut j = i + 1;
        while j < bytes.len() && bytes[j] != b'"' {
            j += if bytes[j] == b'\\' { 2 } else { 1 };
        }
        let end = (j + 1).min(bytes.len());
        let token = &serialized[start..end];
        if let Some(masked) = mask_token(token) {
            let o = out.get_or_insert_with(|| String::with_capacity(serialized.len()));
            o.push_str(&serialized[copied..start]);
            o.push_str(&masked);
            copied = end;
        }
        i = end;
    }
    match out {
        None => Cow::Borrowed(serialized),
        Some(mut o) => {
            o.push_str(&serialized[copied..]);
            Cow::Owned(o)
        }
    }
}

/// One JSON string token (quotes included) with its text masked, re-encoded; `None` when
/// nothing in it is masked. A token that is not valid JSON is masked as plain text.
fn mask_token(token: &str) -> Option<String> {
    if !token.contains('\\') {
        let inner = token.strip_prefix('"')?.strip_suffix('"').unwrap_or(&token[1..]);
        return match mask_text(inner) {
            Cow::Borrowed(_) => None,
            Cow::Owned(masked) => Some(format!("\"{masked}\"")),
        };
    }
    match serde_json::from_str::<String>(token) {
        Ok(decoded) => match mask_text(&decoded) {
            Cow::Borrowed(_) => None,
            Cow::Owned(masked) => serde_json::to_string(&masked).ok(),
        },
        Err(_) => match mask_text(token) {
            Cow::Borrowed(_) => None,
            Cow::Owned(masked) => Some(masked),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value no other test registers (the mask is process-wide).
    fn unique(tag: &str) -> String {
        format!("{tag}-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
    }

    #[test]
    fn a_registered_value_and_its_encodings_are_masked_in_text() {
        let value = unique("sk-test");
        register("TEST_KEY_A", &value);
        let marker = "[redacted:TEST_KEY_A]";
        assert_eq!(mask_text(&format!("key={value}!")), format!("key={marker}!"));
        // `echo $KEY | base64`: the value then a newline, at offset 0.
        let b64 = crate::tools::base64(format!("{value}\n").as_bytes());
        assert!(!mask_text(&b64).contains(&b64[..20]), "{}", mask_text(&b64));
        // Inside a longer base64 text, at every alignment.
        for prefix in ["", "a", "ab"] {
            let enc = crate::tools::base64(format!("{prefix}{value} and more").as_bytes());
            let masked = mask_text(&enc).into_owned();
            assert!(masked.contains(marker), "shift {}: {masked}", prefix.len());
        }
        let url = percent_encoded(&format!("{value}/x"));
        assert!(mask_text(&url).contains(marker));
        assert!(matches!(mask_text("nothing secret here"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_piece_a_cut_left_at_either_edge_is_masked() {
        let value = unique("edge");
        register("TEST_KEY_EDGE", &value);
        let head = format!("output ends {}", &value[..12]);
        assert_eq!(mask_text(&head), "output ends [redacted:TEST_KEY_EDGE]");
        let tail = format!("{} and on", &value[value.len() - 10..]);
        assert_eq!(mask_text(&tail), "[redacted:TEST_KEY_EDGE] and on");
        // Shorter than EDGE_CHARS: left alone.
        let short = format!("ends {}", &value[..EDGE_CHARS - 1]);
        assert_eq!(mask_text(&short), short);
    }

    #[test]
    fn json_stays_json_with_the_values_masked_in_strings_and_keys() {
        let value = unique("quo\"te\\d");
        register("TEST_KEY_JSON", &value);
        let doc = serde_json::json!({
            "stdout": format!("{value}\n"),
            value.clone(): 1,
            "n": 12345,
            "nested": ["x", format!("before {value} after")],
        });
        let text = serde_json::to_string(&doc).unwrap();
        let masked = mask_json(&text).into_owned();
        let back: serde_json::Value = serde_json::from_str(&masked).expect("still JSON");
        assert!(!masked.contains(&value) && !masked.contains("quo\\\"te"), "{masked}");
        assert_eq!(back["stdout"], "[redacted:TEST_KEY_JSON]\n");
        assert_eq!(back["[redacted:TEST_KEY_JSON]"], 1);
        assert_eq!(back["n"], 12345);
        assert_eq!(back["nested"][1], "before [redacted:TEST_KEY_JSON] after");
        let plain = r#"{"a":"nothing","b":[1,2]}"#;
        assert!(matches!(mask_json(plain), Cow::Borrowed(_)));
    }

    #[test]
    fn an_escape_next_to_a_value_cannot_break_the_json() {
        // `n` + value: in JSON the `\n` escape's letter sits right before the value.
        let value = unique("nvalue");
        register("TEST_KEY_ESC", &value);
        let text = serde_json::to_string(&serde_json::json!({ "s": format!("\n{value}") })).unwrap();
        let back: serde_json::Value = serde_json::from_str(&mask_json(&text)).expect("still JSON");
        assert_eq!(back["s"], "\n[redacted:TEST_KEY_ESC]");
    }

    #[test]
    fn taking_names_the_missing_or_unusable_variable_and_never_shows_a_value() {
        let missing = format!("MEDIN_TEST_UNSET_{}", fastrand::u32(..));
        assert_eq!(
            HostSecrets::take(&[missing.as_str()]).unwrap_err(),
            SecretError::Unset { name: missing.clone() }
        );
        let e = SecretError::Unset { name: missing.clone() }.to_string();
        assert!(e.contains(&missing) && e.contains("not set"), "{e}");
        let name = format!("SECRETS_TEST_{}", fastrand::u32(..));
        std::env::set_var(&name, "abc");
        assert_eq!(
            HostSecrets::take(&[name.as_str()]).unwrap_err(),
            SecretError::TooShort {
                name: name.clone(),
                chars: 3
            }
        );
        let value = unique("taken");
        std::env::set_var(&name, &value);
        let taken = HostSecrets::take(&[name.as_str()]).unwrap();
        assert_eq!(taken.env(), &[(name.clone(), value.clone())]);
        assert_eq!(format!("{taken:?}"), format!("[\"{name}=[redacted]\"]"));
        assert_eq!(mask_text(&value), format!("[redacted:{name}]"), "registered when taken");
    }
}

//! Network validators: `port_listening` (a TCP connection is accepted) and `http` (a plain
//! HTTP/1.1 GET answers with the expected status and body), both over `std::net` with a deadline.
//!
//! A refused connection is a real answer ("nothing listens") and so **failed**; a host that does
//! not resolve, an unreachable network or a timeout says nothing about the service and so is
//! **pending**. `https://` is not spoken here (no TLS stack): such a check is pending with a
//! hint to use a `command` validator with `curl`. Redirects are not followed: the status checked
//! is the one the server sent.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::{first_chars, human, millis, Observation};
use crate::spec::{HttpCheck, PortCheck};

/// The host a port check looks at when the spec names none.
pub const DEFAULT_HOST: &str = "127.0.0.1";
/// Headers larger than this are refused.
const MAX_HEADER: usize = 64 * 1024;
/// Body bytes read at most; `body_contains` looks at this much.
pub const MAX_BODY: usize = 1024 * 1024;

pub(crate) fn port_host(p: &PortCheck) -> &str {
    p.host
        .as_deref()
        .filter(|h| !h.trim().is_empty())
        .unwrap_or(DEFAULT_HOST)
}

/// `host:port`, with IPv6 literals in brackets.
pub(crate) fn host_port(host: &str, port: u16) -> String {
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V6(_)) => format!("[{host}]:{port}"),
        _ => format!("{host}:{port}"),
    }
}

/// How a connection attempt ended.
#[derive(Debug)]
enum Connect {
    Connected(TcpStream, SocketAddr),
    /// Every address refused the connection.
    Refused(Vec<SocketAddr>),
    /// The name did not resolve, or resolved to nothing.
    Unresolvable(String),
    TimedOut,
    /// Another network error (unreachable, ...): no answer about the service.
    Other(String),
}

fn connect(host: &str, port: u16, deadline: Instant) -> Connect {
    let addrs: Vec<SocketAddr> = match (host, port).to_socket_addrs() {
        Ok(a) => a.collect(),
        Err(e) => return Connect::Unresolvable(e.to_string()),
    };
    if addrs.is_empty() {
        return Connect::Unresolvable("no addresses".into());
    }
    let mut refused = Vec::new();
    let mut other = None;
    for addr in addrs {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match TcpStream::connect_timeout(&addr, left) {
            Ok(s) => return Connect::Connected(s, addr),
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => refused.push(addr),
            Err(e) if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) => {}
            Err(e) => other = Some(format!("{addr}: {e}")),
        }
    }
    if !refused.is_empty() {
        Connect::Refused(refused)
    } else if let Some(o) = other {
        Connect::Other(o)
    } else {
        Connect::TimedOut
    }
}

fn list(addrs: &[SocketAddr]) -> String {
    addrs.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ")
}

/// `port_listening`: a TCP connection to host:port is accepted within `timeout`.
pub(crate) fn port_listening(p: &PortCheck, timeout: Duration) -> Observation {
    let host = port_host(p);
    let target = host_port(host, p.port);
    let started = Instant::now();
    match connect(host, p.port, started + timeout) {
        Connect::Connected(_, addr) => {
            Observation::passed(format!("connected to {addr} in {} ms", millis(started.elapsed())), 100)
        }
        Connect::Refused(addrs) => Observation::failed(
            format!(
                "connection refused by {}: nothing listens on port {}",
                list(&addrs),
                p.port
            ),
            100,
            format!("nothing listens on {target} (connection refused)"),
            format!("a listener on {target}"),
            "connection refused",
        ),
        Connect::Unresolvable(e) => Observation::pending(
            format!("host `{host}` did not resolve"),
            format!("cannot resolve host `{host}`: {e}"),
        ),
        Connect::TimedOut => Observation::pending(
            format!("no answer from {target} within {}", human(timeout)),
            format!("timed out after {}", human(timeout)),
        ),
        Connect::Other(e) => {
            Observation::pending(format!("cannot reach {target}"), format!("cannot reach {target}: {e}"))
        }
    }
}

/// A parsed `http://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl {
    /// Host without brackets.
    pub host: String,
    pub port: u16,
    /// Path and query, starting with `/`.
    pub path: String,
    /// The `Host:` header value.
    pub host_header: String,
}

/// Why a URL cannot be checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("https is not supported by the built-in http validator; use a command validator with curl")]
    Https,
    #[error("invalid URL `{url}`: {why}; write it like http://127.0.0.1:8080/health")]
    Invalid { url: String, why: String },
}

/// Parses `http://host[:port][/path][?query]`; `#fragment` and `user@` are dropped.
pub fn parse_http_url(url: &str) -> Result<HttpUrl, UrlError> {
    let invalid = |why: &str| UrlError::Invalid {
        url: url.to_string(),
        why: why.to_string(),
    };
    let trimmed = url.trim();
    let (scheme, rest) = trimmed.split_once("://").ok_or_else(|| invalid("no scheme"))?;
    if scheme.eq_ignore_ascii_case("https") {
        return Err(UrlError::Https);
    }
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(invalid(&format!("unsupported scheme `{scheme}`, only http")));
    }
    let rest = rest.split('#').next().unwrap_or_default();
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(split);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or_else(|| invalid("unclosed `[` in the host"))?;
        (h, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(invalid("no host"));
    }
    let port = match port {
        None | Some("") => 80,
        Some(p) => p.parse::<u16>().map_err(|_| invalid(&format!("bad port `{p}`")))?,
    };
    if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid("whitespace in the path; percent-encode it"));
    }
    let path = match path {
        "" => "/".to_string(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_string(),
    };
    let host_header = if port == 80 {
        bracket(host)
    } else {
        format!("{}:{port}", bracket(host))
    };
    Ok(HttpUrl {
        host: host.to_string(),
        port,
        path,
        host_header,
    })
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// A response as read: status line, headers, body (at most [`MAX_BODY`] bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    pub reason: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body was longer than [`MAX_BODY`] and was cut.
    pub truncated: bool,
}

/// Why a GET did not produce a response.
#[derive(Debug)]
enum GetError {
    Connect(Connect),
    TimedOut,
    /// The peer spoke, but not HTTP, or hung up mid-response.
    Protocol(String),
    /// The connection broke (reset, ...).
    Io(String),
}

fn get(url: &HttpUrl, deadline: Instant) -> Result<HttpResponse, GetError> {
    let mut stream = match connect(&url.host, url.port, deadline) {
        Connect::Connected(s, _) => s,
        other => return Err(GetError::Connect(other)),
    };
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: medin-validate\r\nAccept: */*\r\nConnection: close\r\n\r\n",
        url.path, url.host_header
    );
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    stream.set_write_timeout(Some(left)).map_err(io_err)?;
    stream.write_all(request.as_bytes()).map_err(io_err)?;

    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    // Headers.
    let header_end = loop {
        if let Some(i) = find(&raw, b"\r\n\r\n") {
            break i + 4;
        }
        if raw.len() > MAX_HEADER {
            return Err(GetError::Protocol(format!(
                "response headers longer than {MAX_HEADER} bytes"
            )));
        }
        match read_some(&mut stream, &mut buf, deadline)? {
            0 if raw.is_empty() => {
                return Err(GetError::Protocol(
                    "the server closed the connection without answering".into(),
                ))
            }
            0 => {
                return Err(GetError::Protocol(
                    "the server closed the connection mid-headers".into(),
                ))
            }
            n => raw.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&raw[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let (status, reason) = parse_status_line(status_line)
        .ok_or_else(|| GetError::Protocol(format!("not an HTTP status line: {:?}", first_chars(status_line, 80))))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let chunked = header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let length: Option<usize> = header("content-length").and_then(|v| v.parse().ok());
    let no_body = (100..200).contains(&status) || status == 204 || status == 304;

    let mut body_raw = raw[header_end..].to_vec();
    let mut truncated = false;
    if !no_body {
        loop {
            let done = if chunked {
                decode_chunked(&body_raw).1
            } else if let Some(len) = length {
                body_raw.len() >= len
            } else {
                false
            };
            if done {
                break;
            }
            if body_raw.len() >= MAX_BODY + MAX_HEADER {
                truncated = true;
                break;
            }
            match read_some(&mut stream, &mut buf, deadline) {
                Ok(0) => break,
                Ok(n) => body_raw.extend_from_slice(&buf[..n]),
                // A close-delimited body ends at EOF; some servers reset instead of closing.
                Err(GetError::Io(_)) if length.is_none() && !chunked => break,
                Err(e) => return Err(e),
            }
        }
    }
    let mut body = if no_body {
        Vec::new()
    } else if chunked {
        decode_chunked(&body_raw).0
    } else {
        body_raw
    };
    if let Some(len) = length.filter(|_| !chunked) {
        body.truncate(len);
    }
    if body.len() > MAX_BODY {
        body.truncate(MAX_BODY);
        truncated = true;
    }
    Ok(HttpResponse {
        status,
        reason,
        headers,
        body,
        truncated,
    })
}

fn io_err(e: io::Error) -> GetError {
    if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) {
        GetError::TimedOut
    } else {
        GetError::Io(e.to_string())
    }
}

fn read_some(stream: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> Result<usize, GetError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(GetError::TimedOut);
    }
    stream.set_read_timeout(Some(left)).map_err(io_err)?;
    loop {
        match stream.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err(e)),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `HTTP/1.1 200 OK` → (200, "OK").
fn parse_status_line(line: &str) -> Option<(u16, String)> {
    let mut parts = line.splitn(3, ' ');
    let version = parts.next()?;
    if !version.starts_with("HTTP/") {
        return None;
    }
    let code = parts.next()?;
    if code.len() != 3 {
        return None;
    }
    let status = code.parse().ok()?;
    Some((status, parts.next().unwrap_or_default().trim().to_string()))
}

/// Decodes a chunked body as far as it goes: (body so far, complete).
pub fn decode_chunked(raw: &[u8]) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        let Some(eol) = find(&raw[pos..], b"\r\n") else {
            return (out, false);
        };
        let size_text = String::from_utf8_lossy(&raw[pos..pos + eol]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let Ok(size) = usize::from_str_radix(size_text, 16) else {
            return (out, false);
        };
        pos += eol + 2;
        if size == 0 {
            return (out, true);
        }
        let end = pos.saturating_add(size);
        if end > raw.len() {
            out.extend_from_slice(&raw[pos..]);
            return (out, false);
        }
        out.extend_from_slice(&raw[pos..end]);
        pos = end;
        match raw.get(pos..pos + 2) {
            Some(b"\r\n") => pos += 2,
            _ => return (out, false),
        }
    }
}

/// `http`: GET the URL; the status must be the expected one (200 by default) and the body must
/// contain `body_contains` when given.
pub(crate) fn http(check: &HttpCheck, timeout: Duration) -> Observation {
    let url = match parse_http_url(&check.url) {
        Ok(u) => u,
        Err(UrlError::Https) => {
            return Observation::pending(format!("{} was not requested", check.url), UrlError::Https.to_string())
        }
        Err(e) => {
            return Observation::failed(
                format!("{} is not a URL the http validator can request", check.url),
                100,
                e.to_string(),
                "an http:// URL",
                check.url.clone(),
            )
        }
    };
    let target = host_port(&url.host, url.port);
    let expected_status = check.status.unwrap_or(200);
    let started = Instant::now();
    let timed_out = || {
        Observation::pending(
            format!("no complete answer from {} within {}", check.url, human(timeout)),
            format!("timed out after {}", human(timeout)),
        )
    };
    let resp = match get(&url, started + timeout) {
        Ok(r) => r,
        Err(GetError::Connect(Connect::Refused(addrs))) => {
            return Observation::failed(
                format!(
                    "connection refused by {}: nothing listens on port {}",
                    list(&addrs),
                    url.port
                ),
                100,
                format!("nothing listens on {target} (connection refused)"),
                format!("status {expected_status}"),
                "connection refused",
            )
        }
        Err(GetError::Connect(Connect::Unresolvable(e))) => {
            return Observation::pending(
                format!("host `{}` did not resolve", url.host),
                format!("cannot resolve host `{}`: {e}", url.host),
            )
        }
        Err(GetError::Connect(Connect::TimedOut)) | Err(GetError::TimedOut) => return timed_out(),
        Err(GetError::Connect(Connect::Other(e))) => {
            return Observation::pending(format!("cannot reach {target}"), format!("cannot reach {target}: {e}"))
        }
        Err(GetError::Connect(Connect::Connected(..))) => {
            return Observation::pending(
                "internal: connected but no stream",
                "internal error in the http validator",
            )
        }
        Err(GetError::Protocol(why)) => {
            return Observation::failed(
                format!("{target} accepted the connection but did not answer HTTP: {why}"),
                90,
                format!("no valid HTTP response from {}: {why}", check.url),
                format!("status {expected_status}"),
                why,
            )
        }
        Err(GetError::Io(e)) => {
            return Observation::failed(
                format!("the connection to {target} broke: {e}"),
                90,
                format!("the connection to {target} broke before a response: {e}"),
                format!("status {expected_status}"),
                e,
            )
        }
    };
    let body = String::from_utf8_lossy(&resp.body);
    let cut = if resp.truncated {
        format!(" (first {MAX_BODY} bytes)")
    } else {
        String::new()
    };
    let seen = format!(
        "GET {} → {} {} in {} ms, body {} bytes{cut}",
        check.url,
        resp.status,
        resp.reason,
        millis(started.elapsed()),
        resp.body.len()
    );
    if resp.status != expected_status {
        return Observation::failed(
            format!("{seen}: {:?}", first_chars(&body, 200)),
            100,
            format!("status {}, expected {expected_status}", resp.status),
            format!("status {expected_status}"),
            format!("status {} {}", resp.status, resp.reason),
        );
    }
    match &check.body_contains {
        None => Observation::passed(seen, 100),
        Some(want) if body.contains(want.as_str()) => Observation::passed(format!("{seen}, contains {want:?}"), 90),
        Some(want) => Observation::failed(
            format!("{seen}, does not contain {want:?}"),
            90,
            format!("the body does not contain {want:?}"),
            want.clone(),
            first_chars(&body, 200),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse() {
        let u = parse_http_url("http://127.0.0.1:8080/health?x=1#frag").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 8080, "/health?x=1")
        );
        assert_eq!(u.host_header, "127.0.0.1:8080");
        let u = parse_http_url("HTTP://example.com").unwrap();
        assert_eq!(
            (u.port, u.path.as_str(), u.host_header.as_str()),
            (80, "/", "example.com")
        );
        let u = parse_http_url("http://[::1]:9/?q").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.path.as_str()), ("::1", 9, "/?q"));
        assert_eq!(u.host_header, "[::1]:9");
        assert_eq!(parse_http_url("https://x/"), Err(UrlError::Https));
        assert!(parse_http_url("ftp://x/").is_err());
        assert!(parse_http_url("http://:80/").is_err());
        assert!(parse_http_url("http://x:99999/").is_err());
        assert!(parse_http_url("localhost:80").is_err());
        assert!(parse_http_url("http://x/a b").is_err());
    }

    #[test]
    fn status_lines_parse() {
        assert_eq!(
            parse_status_line("HTTP/1.1 404 Not Found"),
            Some((404, "Not Found".into()))
        );
        assert_eq!(parse_status_line("HTTP/1.0 200"), Some((200, String::new())));
        assert_eq!(parse_status_line("SSH-2.0-OpenSSH"), None);
        assert_eq!(parse_status_line("HTTP/1.1 2000 x"), None);
    }

    #[test]
    fn chunked_bodies_decode() {
        assert_eq!(
            decode_chunked(b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n"),
            (b"hello world".to_vec(), true)
        );
        assert_eq!(decode_chunked(b"5\r\nhel"), (b"hel".to_vec(), false));
        assert_eq!(decode_chunked(b"zz\r\n"), (Vec::new(), false));
        assert_eq!(decode_chunked(b""), (Vec::new(), false));
    }
}

//! The HTTP proxy and the forwards: how an allowed connection is made from the host and
//! joined to its client.
//!
//! The proxy understands `CONNECT host:port` (HTTPS and any TCP tunnel) and absolute-URI
//! requests (`GET http://host[:port]/path`). It reads at most [`MAX_HEAD`] bytes of request
//! head within [`HEAD_TIMEOUT`] (a client that sends nothing, or one byte at a time, cannot
//! hold a thread), checks the target against the rules, then connects from the host's network
//! (names are resolved by the host) and splices. A refusal is a `403` whose body says why in
//! one line. A plain-HTTP request is passed on in origin form with `Connection: close` (so a
//! second request on the same connection cannot ride to another host) and without the
//! `Proxy-*` headers.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::events::{EgressEvent, EgressVia};
use super::relay::splice;
use super::rules::{canonical_host, is_host_name};
use super::Shared;

/// The longest request head the proxy reads.
pub(super) const MAX_HEAD: usize = 16 * 1024;

/// How long a client has to send its whole request head.
pub(super) const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// How long connecting to an allowed target may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves one forwarded connection: an event, a connection to the same address on the
/// host's loopback, a splice.
pub(super) fn serve_forward(client: TcpStream, target: SocketAddr, shared: &Arc<Shared>) {
    let upstream = TcpStream::connect_timeout(&target, CONNECT_TIMEOUT);
    shared.events.emit(EgressEvent {
        host: target.ip().to_string(),
        port: target.port(),
        allowed: true,
        via: EgressVia::Forward,
        detail: upstream
            .as_ref()
            .err()
            .map(|e| format!("forwarded, but the host's endpoint did not answer: {e}")),
    });
    if let Ok(upstream) = upstream {
        splice(client, upstream, &shared.stop);
    }
}

/// A request the proxy understood.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    tunnel: bool,
    host: String,
    port: u16,
    /// For a plain request: the head to send upstream (origin form, headers rewritten).
    upstream_head: Vec<u8>,
}

/// Serves one proxy client from its first byte to the end of its splice.
pub(super) fn serve_client(mut client: TcpStream, shared: &Arc<Shared>) {
    let Some(_tracked) = shared.stop.track(&client) else {
        return;
    };
    let (head, rest) = match read_head(&mut client) {
        Ok(read) => read,
        Err(why) => {
            respond(&mut client, 400, "Bad Request", &why);
            return;
        }
    };
    let request = match parse_request(&head) {
        Ok(r) => r,
        Err(why) => {
            respond(&mut client, 400, "Bad Request", &why);
            return;
        }
    };
    let what = if request.tunnel { "CONNECT" } else { "plain HTTP" };
    if !shared.rules.allows(&request.host, request.port) {
        shared.events.emit(EgressEvent {
            host: request.host.clone(),
            port: request.port,
            allowed: false,
            via: EgressVia::Proxy,
            detail: Some(format!("{what} refused: not in the task's egress allowlist")),
        });
        respond(
            &mut client,
            403,
            "Forbidden",
            &format!(
                "medin egress: {}:{} is not in this task's egress allowlist",
                request.host, request.port
            ),
        );
        return;
    }
    let upstream = connect(&request.host, request.port);
    shared.events.emit(EgressEvent {
        host: request.host.clone(),
        port: request.port,
        allowed: true,
        via: EgressVia::Proxy,
        detail: Some(match &upstream {
            Ok(_) => what.to_string(),
            Err(e) => format!("{what} allowed, but the connection failed: {e}"),
        }),
    });
    let mut upstream = match upstream {
        Ok(u) => u,
        Err(e) => {
            respond(
                &mut client,
                502,
                "Bad Gateway",
                &format!("medin egress: cannot reach {}:{}: {e}", request.host, request.port),
            );
            return;
        }
    };
    let _ = client.set_read_timeout(None);
    let sent = if request.tunnel {
        client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .and_then(|()| upstream.write_all(&rest))
    } else {
        upstream
            .write_all(&request.upstream_head)
            .and_then(|()| upstream.write_all(&rest))
    };
    if sent.is_ok() {
        splice(client, upstream, &shared.stop);
    }
}

/// Reads the request head (through the blank line) within [`HEAD_TIMEOUT`] and
/// [`MAX_HEAD`]; returns it and whatever came after it.
fn read_head(client: &mut TcpStream) -> Result<(Vec<u8>, Vec<u8>), String> {
    let deadline = Instant::now() + HEAD_TIMEOUT;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = find_blank_line(&buf) {
            let rest = buf.split_off(end);
            return Ok((buf, rest));
        }
        if buf.len() >= MAX_HEAD {
            return Err(format!("medin egress: the request head is over {MAX_HEAD} bytes"));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "medin egress: no complete request head within {} s",
                HEAD_TIMEOUT.as_secs()
            ));
        }
        let _ = client.set_read_timeout(Some(left));
        match client.read(&mut chunk) {
            Ok(0) => return Err("medin egress: the client closed before its request head ended".into()),
            Ok(n) => buf.extend(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(e) => return Err(format!("medin egress: reading the request failed: {e}")),
        }
    }
}

/// The index just past the first `\r\n\r\n`.
fn find_blank_line(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Parses a proxy request head.
fn parse_request(head: &[u8]) -> Result<Request, String> {
    let text = std::str::from_utf8(head).map_err(|_| "medin egress: the request head is not UTF-8".to_string())?;
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("medin egress: not an HTTP request line: `{}`", clip(first)));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(format!("medin egress: HTTP version `{}` is not served", clip(version)));
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_authority(target, None)?;
        return Ok(Request {
            tunnel: true,
            host,
            port,
            upstream_head: Vec::new(),
        });
    }
    let Some(after) = strip_prefix_ignore_case(target, "http://") else {
        return Err(format!(
            "medin egress: `{}` is not a proxy request: send `CONNECT host:port` or an absolute `http://` URL",
            clip(target)
        ));
    };
    let split = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, path) = after.split_at(split);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let (host, port) = split_authority(authority, Some(80))?;
    let path = match path {
        "" => "/".to_string(),
        p if p.starts_with('/') => p.to_string(),
        p => format!("/{p}"),
    };
    let mut upstream = format!("{method} {path} {version}\r\n");
    let mut has_host = false;
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim().to_ascii_lowercase();
        match name.as_str() {
            "proxy-connection" | "proxy-authorization" | "connection" | "keep-alive" => continue,
            "host" => has_host = true,
            _ => {}
        }
        upstream.push_str(line);
        upstream.push_str("\r\n");
    }
    if !has_host {
        upstream.push_str(&format!("Host: {authority}\r\n"));
    }
    upstream.push_str("Connection: close\r\n\r\n");
    Ok(Request {
        tunnel: false,
        host,
        port,
        upstream_head: upstream.into_bytes(),
    })
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &s[prefix.len()..])
}

/// `host:port` (`[v6]:port`); `default` when the port may be left out.
fn split_authority(authority: &str, default: Option<u16>) -> Result<(String, u16), String> {
    let bad = || format!("medin egress: `{}` is not a `host:port`", clip(authority));
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or_else(bad)?;
        (format!("[{h}]"), after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let port = match (port, default) {
        (Some(p), _) => p.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(bad)?,
        (None, Some(d)) => d,
        (None, None) => return Err(bad()),
    };
    let canonical = canonical_host(&host);
    if canonical.parse::<IpAddr>().is_err() && !is_host_name(&canonical) {
        return Err(bad());
    }
    Ok((canonical, port))
}

/// Connects from the host's network to `host:port`, trying each address it resolves to.
fn connect(host: &str, port: u16) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{host} resolves to no address"));
    for addr in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Writes a short plain-text answer and ends the exchange.
fn respond(client: &mut TcpStream, code: u16, reason: &str, line: &str) {
    let body = format!("{line}\n");
    let answer = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(answer.as_bytes());
    let _ = client.flush();
}

/// At most 80 characters of client text, for a message.
fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_requests_name_their_target() {
        let r = parse_request(b"CONNECT api.Example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert!(r.tunnel);
        assert_eq!((r.host.as_str(), r.port), ("api.example.com", 443));
        let v6 = parse_request(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 8443));
        assert!(
            parse_request(b"CONNECT example.com HTTP/1.1\r\n\r\n").is_err(),
            "a tunnel needs a port"
        );
    }

    #[test]
    fn a_plain_request_goes_upstream_in_origin_form_without_proxy_headers() {
        let r = parse_request(
            b"GET http://user@Example.com:8080/a?b=1 HTTP/1.1\r\nHost: example.com:8080\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nAccept: */*\r\n\r\n",
        )
        .unwrap();
        assert!(!r.tunnel);
        assert_eq!((r.host.as_str(), r.port), ("example.com", 8080));
        let up = String::from_utf8(r.upstream_head).unwrap();
        assert_eq!(
            up,
            "GET /a?b=1 HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let bare = parse_request(b"GET http://example.com HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!(bare.port, 80);
        assert!(String::from_utf8(bare.upstream_head)
            .unwrap()
            .starts_with("GET / HTTP/1.0\r\nHost: example.com\r\n"));
    }

    #[test]
    fn what_is_not_a_proxy_request_says_so() {
        for bad in [
            &b"GET /index.html HTTP/1.1\r\n\r\n"[..],
            b"GET https://example.com/ HTTP/1.1\r\n\r\n",
            b"CONNECT exa mple.com:443 HTTP/1.1\r\n\r\n",
            b"CONNECT example.com:99999 HTTP/1.1\r\n\r\n",
            b"HELLO\r\n\r\n",
            b"GET http://example.com/ SPDY/3\r\n\r\n",
        ] {
            let err = parse_request(bad).unwrap_err();
            assert!(err.starts_with("medin egress:"), "{err}");
        }
    }

    #[test]
    fn the_head_ends_at_the_blank_line() {
        assert_eq!(find_blank_line(b"GET / HTTP/1.1\r\n\r\nbody"), Some(18));
        assert_eq!(find_blank_line(b"GET / HTTP/1.1\r\n"), None);
    }
}

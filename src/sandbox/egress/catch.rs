//! The catch-all: inside the attempt's network namespace, every packet that is not for
//! loopback is refused *and* logged, so an agent that ignores `HTTPS_PROXY` is both stopped
//! and seen.
//!
//! - `ip route add local 0.0.0.0/0 dev lo` (and `::/0` for IPv6): every destination is
//!   local, so a `connect` to any address sends its first packet (without a route it would
//!   fail with `ENETUNREACH` before anything could be logged). Nothing can leave anyway: the
//!   namespace has no interface but `lo`.
//! - an nftables table `inet medin_egress`: UDP to port 53 (any address) is redirected to
//!   medin's DNS responder on loopback, which answers every question REFUSED and logs the name;
//!   every other packet not for loopback is sent to NFLOG group [`NFLOG_GROUP`] (read here
//!   from a netlink socket made inside the namespace) and rejected — a TCP `SYN` with a reset
//!   (so `connect` fails at once with `ECONNREFUSED`), anything else with ICMP
//!   port-unreachable. The resets and ICMP errors the rejection itself sends pass, and so do
//!   the DNS responder's answers (their connection was redirected: `ct status dnat`).
//!
//! Needs `ip` and `nft` on the host (run inside the namespace by the harness). Without them
//! the catch-all is skipped with a note: direct attempts still fail (no route) but are not
//! logged.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, UdpSocket};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::events::{EgressEvent, EgressVia};
use super::inside::{InsideSocket, Namespace};
use super::Shared;

/// The NFLOG group the refusing rule logs to (NFLOG groups are per network namespace).
pub(super) const NFLOG_GROUP: u16 = 7;

/// Bytes of each refused packet copied to the log: enough for the IP and transport headers.
const NFLOG_COPY: u32 = 128;

/// A DNS message read is at most this long (a question fits in far less).
const DNS_MAX: usize = 1500;

/// What [`install`] made: the sockets to serve, or why the catch-all is off.
pub(super) struct CatchAll {
    pub(super) dns: Vec<UdpSocket>,
    pub(super) log: OwnedFd,
    /// What holds only in part (IPv6 not caught).
    pub(super) notes: Vec<String>,
}

/// Installs the catch-all in `ns`: makes the DNS sockets and the NFLOG socket inside, binds
/// the log group, then loads the rules and routes. `Err` carries the note saying why the
/// catch-all is off (nothing is half-installed that would change what the namespace
/// reaches: the route goes in last).
pub(super) fn install(ns: &Namespace<'_>) -> Result<CatchAll, String> {
    let ip = find_program("ip").ok_or_else(|| missing("ip (iproute2)"))?;
    let nft = find_program("nft").ok_or_else(|| missing("nft (nftables)"))?;
    let mut notes = Vec::new();
    let mut made = ns
        .open(&[
            InsideSocket::Udp((Ipv4Addr::LOCALHOST, 0).into()),
            InsideSocket::NetfilterNetlink,
        ])
        .map_err(|e| format!("the catch-all is off: cannot make its sockets inside the namespace: {e}"))?;
    let log = made.pop().ok_or("the catch-all is off: no netlink socket came back")?;
    let dns4 = UdpSocket::from(made.pop().ok_or("the catch-all is off: no DNS socket came back")?);
    let dns_port = dns4.local_addr().map_err(|e| e.to_string())?.port();
    // IPv6 where the namespace has it (loopback's ::1), at the same port.
    let dns6 = ns
        .open(&[InsideSocket::Udp((Ipv6Addr::LOCALHOST, dns_port).into())])
        .ok()
        .and_then(|mut v| v.pop())
        .map(UdpSocket::from);
    if dns6.is_none() {
        notes.push(
            "IPv6 is not caught (the namespace has no ::1): IPv6 destinations fail without a route and are not logged"
                .to_string(),
        );
    }
    bind_log_group(&log).map_err(|e| format!("the catch-all is off: cannot read the namespace's packet log: {e}"))?;
    let rules = ruleset(dns_port, dns6.is_some());
    let out = ns
        .run(&nft, &["-f", "-"], rules.as_bytes())
        .map_err(|e| format!("the catch-all is off: cannot run {}: {e}", nft.display()))?;
    if !out.status.success() {
        return Err(format!(
            "the catch-all is off: nft refused its rules: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let route = |args: &[&str]| -> Result<(), String> {
        let out = ns
            .run(&ip, args, b"")
            .map_err(|e| format!("cannot run {}: {e}", ip.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    };
    route(&["route", "add", "local", "0.0.0.0/0", "dev", "lo"]).map_err(|e| {
        format!("the catch-all is off: cannot route IPv4 to loopback ({e}); direct attempts fail unlogged")
    })?;
    if dns6.is_some() {
        if let Err(e) = route(&["-6", "route", "add", "local", "::/0", "dev", "lo"]) {
            notes.push(format!(
                "IPv6 is not caught ({e}): IPv6 destinations fail without a route and are not logged"
            ));
        }
    }
    let mut dns = vec![dns4];
    dns.extend(dns6);
    Ok(CatchAll { dns, log, notes })
}

fn missing(what: &str) -> String {
    format!(
        "the catch-all is off: {what} is not installed, so direct connections and DNS lookups from inside fail \
         (there is no route) but are not logged; install it (Debian: apt-get install iproute2 nftables)"
    )
}

fn find_program(name: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// The nftables rules (see the module documentation).
fn ruleset(dns_port: u16, ipv6: bool) -> String {
    let dns6 = if ipv6 {
        format!("\n        meta nfproto ipv6 udp dport 53 redirect to :{dns_port}")
    } else {
        String::new()
    };
    format!(
        "table inet medin_egress {{
    chain dns {{
        type nat hook output priority -100; policy accept;
        meta nfproto ipv4 udp dport 53 redirect to :{dns_port}{dns6}
    }}
    chain out {{
        type filter hook output priority 0; policy accept;
        ip daddr 127.0.0.0/8 accept
        ip6 daddr ::1 accept
        ct status dnat accept
        tcp flags rst accept
        icmp type destination-unreachable accept
        icmpv6 type destination-unreachable accept
        tcp flags & (syn | ack) == syn log group {NFLOG_GROUP} reject with tcp reset
        meta l4proto tcp reject with tcp reset
        log group {NFLOG_GROUP} reject
    }}
}}
"
    )
}

// --- NFLOG (nfnetlink_log) -------------------------------------------------------------------

const NFNL_SUBSYS_ULOG: u16 = 4;
const NFULNL_MSG_PACKET: u16 = 0;
const NFULNL_MSG_CONFIG: u16 = 1;
const NFULA_CFG_CMD: u16 = 1;
const NFULA_CFG_MODE: u16 = 2;
const NFULA_CFG_QTHRESH: u16 = 4;
const NFULNL_CFG_CMD_BIND: u8 = 1;
const NFULNL_COPY_PACKET: u8 = 2;
const NFULA_PAYLOAD: u16 = 9;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLMSG_ERROR: u16 = 2;

/// Binds the netlink socket to [`NFLOG_GROUP`], copying packets, one message per packet.
fn bind_log_group(sock: &OwnedFd) -> io::Result<()> {
    let mut mode = NFLOG_COPY.to_be_bytes().to_vec();
    mode.extend([NFULNL_COPY_PACKET, 0]);
    let steps: [(u16, Vec<u8>); 3] = [
        (NFULA_CFG_CMD, vec![NFULNL_CFG_CMD_BIND]),
        (NFULA_CFG_MODE, mode),
        (NFULA_CFG_QTHRESH, 1u32.to_be_bytes().to_vec()),
    ];
    for (seq, (attr, payload)) in steps.into_iter().enumerate() {
        let msg = config_message(seq as u32 + 1, attr, &payload);
        // SAFETY: send from our own buffer on a descriptor we own.
        if unsafe { libc::send(sock.as_raw_fd(), msg.as_ptr().cast(), msg.len(), 0) } < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut ack = [0u8; 256];
        // SAFETY: recv into our own buffer.
        let n = unsafe { libc::recv(sock.as_raw_fd(), ack.as_mut_ptr().cast(), ack.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        if n >= 20 && u16::from_ne_bytes([ack[4], ack[5]]) == NLMSG_ERROR {
            let code = i32::from_ne_bytes([ack[16], ack[17], ack[18], ack[19]]);
            if code != 0 {
                return Err(io::Error::from_raw_os_error(-code));
            }
        }
    }
    Ok(())
}

/// One `NFULNL_MSG_CONFIG` request for [`NFLOG_GROUP`] with one attribute.
fn config_message(seq: u32, attr: u16, payload: &[u8]) -> Vec<u8> {
    let attr_len = 4 + payload.len();
    let padded = (attr_len + 3) & !3;
    let total = 16 + 4 + padded;
    let mut m = Vec::with_capacity(total);
    m.extend((total as u32).to_ne_bytes());
    m.extend(((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG).to_ne_bytes());
    m.extend((NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    m.extend(seq.to_ne_bytes());
    m.extend(0u32.to_ne_bytes());
    m.extend([libc::AF_UNSPEC as u8, 0]);
    m.extend(NFLOG_GROUP.to_be_bytes());
    m.extend((attr_len as u16).to_ne_bytes());
    m.extend(attr.to_ne_bytes());
    m.extend(payload);
    m.resize(total, 0);
    m
}

/// Reads the packet log until the egress stops: one `Direct` event per refused packet.
pub(super) fn serve_log(log: OwnedFd, shared: Arc<Shared>) {
    let mut buf = vec![0u8; 64 * 1024];
    while shared.stop.readable(log.as_raw_fd()) {
        // SAFETY: recv into our own buffer from a descriptor we own.
        let n = unsafe { libc::recv(log.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        if n <= 0 {
            // ENOBUFS (a flood overran the socket) or EAGAIN: go on reading.
            continue;
        }
        for packet in logged_packets(&buf[..n as usize]) {
            if let Some((ip, port, proto)) = packet_destination(packet) {
                shared.events.emit(EgressEvent {
                    host: ip.to_string(),
                    port,
                    allowed: false,
                    via: EgressVia::Direct,
                    detail: Some(format!(
                        "{proto} refused inside the namespace: only the proxy ({}) and the forwarded endpoints lead out",
                        shared.proxy_url
                    )),
                });
            }
        }
    }
}

/// The payloads (network headers on) of the `NFULNL_MSG_PACKET` messages in one read.
fn logged_packets(mut buf: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while buf.len() >= 16 {
        let len = u32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
        if len < 16 || len > buf.len() {
            break;
        }
        let kind = u16::from_ne_bytes([buf[4], buf[5]]);
        if kind == (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET && len >= 20 {
            let mut attrs = &buf[20..len];
            while attrs.len() >= 4 {
                let alen = u16::from_ne_bytes([attrs[0], attrs[1]]) as usize;
                let atype = u16::from_ne_bytes([attrs[2], attrs[3]]) & 0x3fff;
                if alen < 4 || alen > attrs.len() {
                    break;
                }
                if atype == NFULA_PAYLOAD {
                    out.push(&attrs[4..alen]);
                }
                attrs = &attrs[((alen + 3) & !3).min(attrs.len())..];
            }
        }
        buf = &buf[((len + 3) & !3).min(buf.len())..];
    }
    out
}

/// The destination of an IPv4 or IPv6 packet: address, port (0 without one) and protocol.
fn packet_destination(p: &[u8]) -> Option<(IpAddr, u16, &'static str)> {
    let version = p.first()? >> 4;
    let (dst, proto, l4) = match version {
        4 => {
            let ihl = usize::from(p[0] & 0x0f) * 4;
            let dst: [u8; 4] = p.get(16..20)?.try_into().ok()?;
            (IpAddr::from(dst), *p.get(9)?, ihl)
        }
        6 => {
            let dst: [u8; 16] = p.get(24..40)?.try_into().ok()?;
            (IpAddr::from(dst), *p.get(6)?, 40)
        }
        _ => return None,
    };
    let port = || p.get(l4 + 2..l4 + 4).map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
    Some(match proto {
        6 => (dst, port(), "TCP connection"),
        17 => (dst, port(), "UDP datagram"),
        1 | 58 => (dst, 0, "ICMP packet"),
        _ => (dst, 0, "packet"),
    })
}

// --- DNS -------------------------------------------------------------------------------------

/// Answers every DNS question on `sock` REFUSED until the egress stops: one `Dns` event each.
pub(super) fn serve_dns(sock: UdpSocket, shared: Arc<Shared>) {
    let _ = sock.set_nonblocking(true);
    let mut buf = [0u8; DNS_MAX];
    while shared.stop.readable(sock.as_raw_fd()) {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let query = &buf[..n];
        let question = parse_question(query);
        if let Some(answer) = refusal(query, question.as_ref()) {
            let _ = sock.send_to(&answer, from);
        }
        let (host, detail) = match &question {
            Some(q) => (
                q.name.clone(),
                format!(
                    "DNS question ({}) answered REFUSED inside the namespace: names are resolved by the proxy ({})",
                    type_name(q.qtype),
                    shared.proxy_url
                ),
            ),
            None => (
                "?".to_string(),
                format!("a malformed DNS message of {n} bytes, answered REFUSED"),
            ),
        };
        shared.events.emit(EgressEvent {
            host,
            port: 53,
            allowed: false,
            via: EgressVia::Dns,
            detail: Some(detail),
        });
    }
}

/// The first question of a DNS query.
#[derive(Debug, PartialEq, Eq)]
struct Question {
    /// Dotted, lower case; bytes outside printable ASCII as `\DDD`.
    name: String,
    qtype: u16,
    /// Where the question ends in the message.
    end: usize,
}

/// Parses the first question (no compression pointers: a question is the first name of the
/// message). `None` for anything malformed.
fn parse_question(msg: &[u8]) -> Option<Question> {
    if msg.len() < 12 || u16::from_be_bytes([msg[4], msg[5]]) == 0 {
        return None;
    }
    let mut at = 12;
    let mut name = String::new();
    let mut wire_len = 0usize;
    loop {
        let len = usize::from(*msg.get(at)?);
        at += 1;
        if len == 0 {
            break;
        }
        if len > 63 {
            return None;
        }
        wire_len += len + 1;
        if wire_len > 255 {
            return None;
        }
        let label = msg.get(at..at + len)?;
        if !name.is_empty() {
            name.push('.');
        }
        for &b in label {
            if b.is_ascii_graphic() && b != b'.' && b != b'\\' {
                name.push(b.to_ascii_lowercase() as char);
            } else {
                name.push_str(&format!("\\{b:03}"));
            }
        }
        at += len;
    }
    let qtype = u16::from_be_bytes([*msg.get(at)?, *msg.get(at + 1)?]);
    msg.get(at + 2..at + 4)?;
    Some(Question {
        name: if name.is_empty() { ".".to_string() } else { name },
        qtype,
        end: at + 4,
    })
}

/// The REFUSED answer to `query` (its id, opcode and RD bit; its question when it had one).
fn refusal(query: &[u8], question: Option<&Question>) -> Option<Vec<u8>> {
    let head = query.get(..12)?;
    if head[2] & 0x80 != 0 {
        return None; // a response: never answer it
    }
    let mut a = Vec::with_capacity(question.map_or(12, |q| q.end));
    a.extend(&head[..2]);
    a.push(0x80 | (head[2] & 0x79)); // QR, the query's opcode and RD
    a.push(5); // RA off, RCODE REFUSED
    a.extend(if question.is_some() { [0, 1] } else { [0, 0] });
    a.extend([0; 6]);
    if let Some(q) = question {
        a.extend(&query[12..q.end]);
    }
    Some(a)
}

fn type_name(qtype: u16) -> String {
    match qtype {
        1 => "A".into(),
        2 => "NS".into(),
        5 => "CNAME".into(),
        12 => "PTR".into(),
        15 => "MX".into(),
        16 => "TXT".into(),
        28 => "AAAA".into(),
        33 => "SRV".into(),
        64 => "SVCB".into(),
        65 => "HTTPS".into(),
        other => format!("type {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(name: &str, qtype: u16) -> Vec<u8> {
        let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for label in name.split('.') {
            q.push(label.len() as u8);
            q.extend(label.as_bytes());
        }
        q.push(0);
        q.extend(qtype.to_be_bytes());
        q.extend(1u16.to_be_bytes());
        q
    }

    #[test]
    fn a_question_is_read_and_refused_with_its_id_and_question() {
        let q = query("Example.COM", 28);
        let parsed = parse_question(&q).unwrap();
        assert_eq!(parsed.name, "example.com");
        assert_eq!(type_name(parsed.qtype), "AAAA");
        let a = refusal(&q, Some(&parsed)).unwrap();
        assert_eq!(&a[..2], &[0x12, 0x34], "same id");
        assert_eq!(a[2], 0x81, "a response, with RD kept");
        assert_eq!(a[3] & 0x0f, 5, "REFUSED");
        assert_eq!(&a[4..6], &[0, 1]);
        assert_eq!(&a[12..], &q[12..], "the question echoed");
    }

    #[test]
    fn malformed_questions_are_refused_without_a_name() {
        assert_eq!(parse_question(&[0; 5]), None);
        let mut pointer = query("a.b", 1);
        pointer[12] = 0xc0;
        assert_eq!(parse_question(&pointer), None);
        let truncated = &query("example.com", 1)[..20];
        assert_eq!(parse_question(truncated), None);
        let long: Vec<u8> = {
            let mut q = vec![0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
            for _ in 0..10 {
                q.push(63);
                q.extend([b'a'; 63]);
            }
            q.push(0);
            q.extend([0, 1, 0, 1]);
            q
        };
        assert_eq!(parse_question(&long), None, "a name over 255 bytes");
        let odd = query("a\u{7f}b.example", 1);
        assert_eq!(parse_question(&odd).unwrap().name, "a\\127b.example");
        let a = refusal(&[0xab, 0xcd, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], None).unwrap();
        assert_eq!(a.len(), 12);
        assert_eq!(
            refusal(&[0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0], None),
            None,
            "never answers an answer"
        );
    }

    #[test]
    fn a_logged_packet_names_its_destination() {
        let mut v4 = vec![0u8; 40];
        v4[0] = 0x45;
        v4[9] = 6;
        v4[16..20].copy_from_slice(&[93, 184, 216, 34]);
        v4[22..24].copy_from_slice(&443u16.to_be_bytes());
        assert_eq!(
            packet_destination(&v4),
            Some((IpAddr::from([93, 184, 216, 34]), 443, "TCP connection"))
        );
        let mut v6 = vec![0u8; 48];
        v6[0] = 0x60;
        v6[6] = 17;
        v6[24..40].copy_from_slice(&"2001:db8::1".parse::<Ipv6Addr>().unwrap().octets());
        v6[42..44].copy_from_slice(&53u16.to_be_bytes());
        assert_eq!(
            packet_destination(&v6),
            Some(("2001:db8::1".parse().unwrap(), 53, "UDP datagram"))
        );
        assert_eq!(packet_destination(&[0x45, 0, 0]), None);
    }

    #[test]
    fn log_messages_are_split_into_their_payloads() {
        let payload = [0x45u8, 1, 2, 3, 4];
        let attr_len = 4 + payload.len();
        let mut msg = Vec::new();
        let total = 20 + ((attr_len + 3) & !3);
        msg.extend((total as u32).to_ne_bytes());
        msg.extend(((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET).to_ne_bytes());
        msg.extend([0u8; 10]);
        msg.extend([2, 0, 0, 7]);
        msg.extend((attr_len as u16).to_ne_bytes());
        msg.extend(NFULA_PAYLOAD.to_ne_bytes());
        msg.extend(payload);
        msg.resize(total, 0);
        let two = [msg.clone(), msg].concat();
        assert_eq!(logged_packets(&two), vec![&payload[..], &payload[..]]);
        assert!(logged_packets(&two[..10]).is_empty());
    }

    #[test]
    fn the_ruleset_redirects_dns_and_refuses_the_rest() {
        let r = ruleset(5353, false);
        assert!(r.contains("udp dport 53 redirect to :5353"));
        assert!(!r.contains("ipv6 udp dport 53"));
        assert!(r.contains(&format!("log group {NFLOG_GROUP} reject with tcp reset")));
        assert!(ruleset(5353, true).contains("meta nfproto ipv6 udp dport 53 redirect to :5353"));
    }
}

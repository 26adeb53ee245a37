//! medin's egress: every way out of an attempt's network namespace, provided by the harness.
//!
//! Under `strict` with the network off, an attempt has a network namespace of its own whose
//! only interface is loopback: nothing leaves. A CLI agent in it must still reach its model
//! endpoint, and nothing else. [`Egress`] provides exactly that, and records every attempt.
//!
//! # How
//!
//! Every socket the egress serves is *bound inside* the namespace but *owned by the harness*
//! ([`bind_inside`], see `inside.rs`): a socket stays in the namespace it was made in, whoever
//! holds its descriptor. The accept loops and copies run on threads of the harness, outside the
//! attempt's PID namespace, so no process of the attempt can see, signal or kill them; the
//! connections out are made from the host's network namespace.
//!
//! - **forwards** ([`EgressRules::forwards`]): each host loopback endpoint (a scripted model
//!   server at `127.0.0.1:PORT`, a local model at `127.0.0.1:11434`) is mirrored inside at
//!   the *same* address, so a base URL needs no rewriting. Every connection is an event
//!   (`Forward`, allowed) and is spliced both ways to the host's endpoint.
//! - **the proxy** at [`Egress::proxy_url`] (loopback, inside): `CONNECT host:port` and
//!   absolute-URI plain HTTP. A target in [`EgressRules::allow`] (or a forward) is connected
//!   from the host and spliced; any other gets `403` with a one-line reason. Either way an
//!   event (`Proxy`). Request heads are bounded (16 KiB, 10 s). [`Egress::proxy_env`] gives
//!   the variables that point clients at it.
//! - **the catch-all** (`catch.rs`), for an agent that ignores the proxy variables: every
//!   packet to a non-loopback address is refused inside the namespace *and* logged (`Direct`,
//!   with the address and port), a TCP connection at once with a reset; every DNS question is
//!   answered REFUSED and logged with its name (`Dns`). It needs `ip` and `nft` on the host;
//!   without them it is skipped and [`Egress::notes`] says so — direct attempts then still
//!   fail (no route out) but are not logged. IPv6 is caught the same way where the namespace
//!   has `::1`, else noted.
//!
//! # Guarantees
//!
//! - Nothing but the forwards and the allowed targets is reached from inside, whatever the
//!   agent does: it holds no capability to change the namespace's routes or rules (strict
//!   drops `CAP_NET_ADMIN` and denies `setns`/`unshare`), and the namespace has no interface
//!   out. The egress adds ways out; it never opens the namespace.
//! - Every attempt is an [`EgressEvent`], up to [`EVENTS_PER_SECOND`] a second one by one;
//!   the rest of a second is summed up in one `Summary` event, so a flood cannot flood the
//!   receipts. `Forward` and `Proxy` events are delivered before the client gets its first
//!   byte; `Direct` and `Dns` events come from the harness's log and DNS threads a moment
//!   (milliseconds) after the refused packet, so they may arrive just after the command that
//!   sent it has ended. Events come from the egress's threads, never from the caller's.
//! - [`Egress::stop`] (also on drop) wakes every accept and receive loop, shuts every open
//!   connection both ways, joins every thread and closes every socket (the ports inside are
//!   free again). It waits at most for a connection to an allowed host that is being made
//!   (up to 10 s). The nftables rules and routes stay until the namespace ends: after a stop
//!   a direct attempt is still refused, only no longer logged.
//! - At most [`MAX_CONNECTIONS`] connections are served at once (two threads each); one more
//!   is closed at once, with an event that says why.
//!
//! Without a namespace (`net: None`: isolation `process` or `none`, or the network on) the
//! proxy runs on the host's loopback with no forwards and [`Egress::enforced`] is `false`:
//! clients that honour the proxy variables are filtered and recorded, others are not stopped.
//!
//! Owns nothing outside the egress: it never decides policy (the allowlist comes from the
//! caller) and never writes receipts (the caller turns events into them).

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::Arc;

#[cfg(target_os = "linux")]
mod catch;
mod events;
#[cfg(target_os = "linux")]
mod inside;
mod proxy;
mod relay;
mod rules;

pub use events::{EgressEvent, EgressVia, EventSink, EVENTS_PER_SECOND};
#[cfg(target_os = "linux")]
pub use inside::bind_inside;

/// Network namespaces are Linux's: elsewhere there is no namespace to bind in.
#[cfg(not(target_os = "linux"))]
pub fn bind_inside(_net: BorrowedFd<'_>, _addr: SocketAddr) -> io::Result<TcpListener> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "network namespaces exist only on Linux",
    ))
}
pub use relay::MAX_CONNECTIONS;
pub use rules::{EgressRules, HostPort, HostPortError};

use events::Events;
use relay::{Stop, Workers};

/// Why the egress could not start.
#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    #[error("egress forward {0} is not a loopback address with a port: a forward mirrors one of the host's own loopback endpoints (e.g. 127.0.0.1:8080); reach other hosts through the allowlist")]
    ForwardNotLoopback(SocketAddr),
    #[error("egress forward {0} is listed twice; list each endpoint once")]
    DuplicateForward(SocketAddr),
    #[error("cannot open {what} inside the attempt's network namespace: {source}")]
    Inside {
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot open {what} on the host's loopback: {source}")]
    Host {
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot start the egress's threads: {0}; the machine may be out of threads (ulimit -u)")]
    Threads(#[source] io::Error),
    #[error("egress confinement needs Linux network namespaces, which this platform lacks; run the attempt without a namespace (the proxy then runs on the host, not enforced)")]
    NoNamespaces,
}

/// What the egress's threads share.
pub(crate) struct Shared {
    stop: Arc<Stop>,
    workers: Workers,
    events: Events,
    rules: EgressRules,
    proxy_url: String,
}

/// A running egress (see the module documentation). Stops on drop.
pub struct Egress {
    shared: Arc<Shared>,
    proxy: SocketAddr,
    enforced: bool,
    notes: Vec<String>,
}

impl std::fmt::Debug for Egress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Egress")
            .field("proxy", &self.proxy)
            .field("enforced", &self.enforced)
            .field("rules", &self.shared.rules)
            .finish()
    }
}

impl Egress {
    /// Starts the egress for the network namespace `net` (an attempt's, from
    /// [`super::AttemptSandbox::network_namespace`]), or on the host's loopback when `None`.
    /// `events` receives every attempt, from the egress's threads.
    pub fn start(
        net: Option<BorrowedFd<'_>>,
        rules: EgressRules,
        events: EventSink,
    ) -> Result<Egress, super::SandboxError> {
        Ok(Self::start_inner(net, rules, events)?)
    }

    fn start_inner(net: Option<BorrowedFd<'_>>, rules: EgressRules, events: EventSink) -> Result<Egress, EgressError> {
        for (i, f) in rules.forwards.iter().enumerate() {
            if !f.ip().is_loopback() || f.port() == 0 {
                return Err(EgressError::ForwardNotLoopback(*f));
            }
            if rules.forwards[..i].contains(f) {
                return Err(EgressError::DuplicateForward(*f));
            }
        }
        let stop = Arc::new(Stop::new().map_err(EgressError::Threads)?);
        let mut notes = Vec::new();
        let opened = match net {
            Some(net) => open_inside(net, &rules, &mut notes)?,
            None => {
                notes.push(
                    "egress is not enforced: the attempt has no network namespace of its own, so only clients that \
                     honour the proxy variables are filtered and recorded"
                        .to_string(),
                );
                let proxy = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|source| EgressError::Host {
                    what: "the egress proxy's listener".into(),
                    source,
                })?;
                Opened {
                    proxy,
                    forwards: Vec::new(),
                    #[cfg(target_os = "linux")]
                    catch: None,
                }
            }
        };
        let proxy_addr = opened.proxy.local_addr().map_err(|source| EgressError::Host {
            what: "the egress proxy's address".into(),
            source,
        })?;
        let shared = Arc::new(Shared {
            stop,
            workers: Workers::default(),
            events: Events::new(events, EVENTS_PER_SECOND),
            rules,
            proxy_url: format!("http://{proxy_addr}"),
        });
        let egress = Egress {
            shared: shared.clone(),
            proxy: proxy_addr,
            enforced: net.is_some(),
            notes,
        };
        // From here on a failure drops `egress`, which stops what was started.
        spawn_accept_loop(&shared, opened.proxy, None)?;
        for (listener, target) in opened.forwards {
            spawn_accept_loop(&shared, listener, Some(target))?;
        }
        #[cfg(target_os = "linux")]
        if let Some(catch) = opened.catch {
            for sock in catch.dns {
                let s = shared.clone();
                shared
                    .workers
                    .spawn("medin-egress-dns", move || catch::serve_dns(sock, s))
                    .map_err(EgressError::Threads)?;
            }
            let s = shared.clone();
            let log = catch.log;
            shared
                .workers
                .spawn("medin-egress-log", move || catch::serve_log(log, s))
                .map_err(EgressError::Threads)?;
        }
        Ok(egress)
    }

    /// The proxy's URL, `http://127.0.0.1:PORT`, valid inside the namespace (on the host when
    /// not enforced).
    pub fn proxy_url(&self) -> String {
        self.shared.proxy_url.clone()
    }

    /// The proxy's address.
    pub fn proxy_addr(&self) -> SocketAddr {
        self.proxy
    }

    /// The variables that send clients through the proxy: `HTTP_PROXY`, `HTTPS_PROXY`,
    /// `ALL_PROXY` and their lower-case twins; `NO_PROXY`/`no_proxy` name loopback (the
    /// attempt's own services and the forwards, which are reached directly).
    pub fn proxy_env(&self) -> Vec<(String, String)> {
        let url = self.proxy_url();
        let mut no_proxy = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
        no_proxy.extend(self.shared.rules.forwards.iter().map(|f| f.to_string()));
        let no_proxy = no_proxy.join(",");
        let mut env = Vec::new();
        for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
            env.push((name.to_string(), url.clone()));
            env.push((name.to_ascii_lowercase(), url.clone()));
        }
        env.push(("NO_PROXY".to_string(), no_proxy.clone()));
        env.push(("no_proxy".to_string(), no_proxy));
        env
    }

    /// Whether the egress is the only way out (it serves a namespace of its own); `false`
    /// on the host's network, where it is advisory only.
    pub fn enforced(&self) -> bool {
        self.enforced
    }

    /// What holds only in part, one sentence each (the catch-all skipped, IPv6 not caught,
    /// not enforced). Empty when everything in the module documentation holds.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Stops every thread and closes every socket; delivers what the event gate held back.
    /// Idempotent.
    pub fn stop(&self) {
        self.shared.stop.trigger();
        self.shared.workers.join_all();
        self.shared.events.close();
    }
}

impl Drop for Egress {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The sockets the egress serves.
struct Opened {
    proxy: TcpListener,
    forwards: Vec<(TcpListener, SocketAddr)>,
    #[cfg(target_os = "linux")]
    catch: Option<catch::CatchAll>,
}

#[cfg(target_os = "linux")]
fn open_inside(net: BorrowedFd<'_>, rules: &EgressRules, notes: &mut Vec<String>) -> Result<Opened, EgressError> {
    use inside::InsideSocket;
    let inside_err = |what: &str| {
        let what = what.to_string();
        move |source| EgressError::Inside { what, source }
    };
    let ns = inside::Namespace::of(net).map_err(inside_err("the namespace's owner"))?;
    // The forwards first: their ports are fixed (the host's), while the proxy takes any free
    // port, which could otherwise be a forward's (bind(0) draws from a few thousand ports).
    let mut forwards = Vec::new();
    for &target in &rules.forwards {
        let listener = ns
            .open(&[InsideSocket::TcpListener(target)])
            .map_err(inside_err(&format!("the forward of {target}")))?
            .pop()
            .map(TcpListener::from)
            .ok_or_else(|| EgressError::Inside {
                what: format!("the forward of {target}"),
                source: io::Error::other("no socket came back"),
            })?;
        forwards.push((listener, target));
    }
    let proxy = ns
        .open(&[InsideSocket::TcpListener((Ipv4Addr::LOCALHOST, 0).into())])
        .map_err(inside_err("the egress proxy's listener"))?
        .pop()
        .map(TcpListener::from)
        .ok_or_else(|| EgressError::Inside {
            what: "the egress proxy's listener".into(),
            source: io::Error::other("no socket came back"),
        })?;
    let catch = match catch::install(&ns) {
        Ok(c) => {
            notes.extend(c.notes.iter().cloned());
            Some(c)
        }
        Err(note) => {
            notes.push(note);
            None
        }
    };
    Ok(Opened { proxy, forwards, catch })
}

#[cfg(not(target_os = "linux"))]
fn open_inside(_: BorrowedFd<'_>, _: &EgressRules, _: &mut Vec<String>) -> Result<Opened, EgressError> {
    Err(EgressError::NoNamespaces)
}

/// Accepts on `listener` until the egress stops: each client on a thread of its own, served
/// as a forward of `target` or, when `None`, by the proxy.
fn spawn_accept_loop(
    shared: &Arc<Shared>,
    listener: TcpListener,
    target: Option<SocketAddr>,
) -> Result<(), EgressError> {
    listener.set_nonblocking(true).map_err(EgressError::Threads)?;
    let s = shared.clone();
    let name = if target.is_some() {
        "medin-egress-forward"
    } else {
        "medin-egress-proxy"
    };
    shared
        .workers
        .spawn(name, move || accept_loop(listener, target, &s))
        .map_err(EgressError::Threads)
}

fn accept_loop(listener: TcpListener, target: Option<SocketAddr>, shared: &Arc<Shared>) {
    while shared.stop.readable(listener.as_raw_fd()) {
        let Ok((client, _)) = listener.accept() else {
            continue;
        };
        let _ = client.set_nonblocking(false);
        let Some(slot) = shared.workers.slot() else {
            refuse_busy(client, target, shared);
            continue;
        };
        let s = shared.clone();
        let _ = shared.workers.spawn("medin-egress-conn", move || {
            let _slot = slot;
            match target {
                Some(t) => proxy::serve_forward(client, t, &s),
                None => proxy::serve_client(client, &s),
            }
        });
    }
}

/// Closes a connection over [`MAX_CONNECTIONS`], with an event.
fn refuse_busy(client: TcpStream, target: Option<SocketAddr>, shared: &Shared) {
    drop(client);
    shared.events.emit(EgressEvent {
        host: target.map_or_else(|| "*".to_string(), |t| t.ip().to_string()),
        port: target.map_or(0, |t| t.port()),
        allowed: false,
        via: if target.is_some() {
            EgressVia::Forward
        } else {
            EgressVia::Proxy
        },
        detail: Some(format!("closed unread: {MAX_CONNECTIONS} connections are open already")),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::sync::Mutex;

    fn collecting() -> (Arc<Mutex<Vec<EgressEvent>>>, EventSink) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        (seen, Box::new(move |e| s.lock().unwrap().push(e)))
    }

    fn ask(proxy: SocketAddr, request: &str) -> String {
        let mut c = TcpStream::connect(proxy).unwrap();
        c.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = c.read_to_string(&mut answer);
        answer
    }

    #[test]
    fn on_the_host_the_proxy_refuses_what_is_not_allowed_and_tunnels_what_is() {
        let server = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let allowed = server.local_addr().unwrap();
        let serving = std::thread::spawn(move || {
            let (mut s, _) = server.accept().unwrap();
            let mut b = [0u8; 4];
            s.read_exact(&mut b).unwrap();
            s.write_all(b"pong").unwrap();
        });
        let (seen, sink) = collecting();
        let rules = EgressRules {
            allow: vec![HostPort::addr(allowed)],
            forwards: vec![],
        };
        let egress = Egress::start(None, rules, sink).unwrap();
        assert!(!egress.enforced());
        assert!(!egress.notes().is_empty(), "not enforced is said");
        let refused = ask(egress.proxy_addr(), "CONNECT example.com:443 HTTP/1.1\r\n\r\n");
        assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
        assert!(
            refused.contains("example.com:443 is not in this task's egress allowlist"),
            "{refused}"
        );

        let mut c = TcpStream::connect(egress.proxy_addr()).unwrap();
        c.write_all(format!("CONNECT {allowed} HTTP/1.1\r\n\r\nping").as_bytes())
            .unwrap();
        let mut answer = String::new();
        c.read_to_string(&mut answer).unwrap();
        assert_eq!(answer, "HTTP/1.1 200 Connection established\r\n\r\npong");
        serving.join().unwrap();
        drop(egress);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(
            (seen[0].host.as_str(), seen[0].port, seen[0].allowed),
            ("example.com", 443, false)
        );
        assert_eq!(
            (seen[1].port, seen[1].allowed, seen[1].via),
            (allowed.port(), true, EgressVia::Proxy)
        );
    }

    #[test]
    fn a_client_that_sends_nothing_is_cut_off_when_the_egress_stops() {
        let (_seen, sink) = collecting();
        let egress = Egress::start(None, EgressRules::default(), sink).unwrap();
        let _silent = TcpStream::connect(egress.proxy_addr()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let started = std::time::Instant::now();
        let addr = egress.proxy_addr();
        drop(egress);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "stop waits for no timeout"
        );
        assert!(TcpStream::connect(addr).is_err(), "the port is closed");
    }

    #[test]
    fn forwards_must_be_loopback_and_listed_once() {
        let (_s, sink) = collecting();
        let far = EgressRules {
            allow: vec![],
            forwards: vec!["192.0.2.1:80".parse().unwrap()],
        };
        let err = Egress::start_inner(None, far, sink).unwrap_err();
        assert!(matches!(err, EgressError::ForwardNotLoopback(_)), "{err}");
        let (_s, sink) = collecting();
        let twice = EgressRules {
            allow: vec![],
            forwards: vec!["127.0.0.1:80".parse().unwrap(), "127.0.0.1:80".parse().unwrap()],
        };
        assert!(matches!(
            Egress::start_inner(None, twice, sink),
            Err(EgressError::DuplicateForward(_))
        ));
    }

    #[test]
    fn the_proxy_variables_point_at_the_proxy_and_spare_loopback() {
        let (_s, sink) = collecting();
        let egress = Egress::start(None, EgressRules::default(), sink).unwrap();
        let env = egress.proxy_env();
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap();
        assert_eq!(get("HTTPS_PROXY"), egress.proxy_url());
        assert_eq!(get("all_proxy"), egress.proxy_url());
        assert!(get("NO_PROXY").contains("127.0.0.1"));
        assert!(egress.proxy_url().starts_with("http://127.0.0.1:"));
    }
}

//! medin's egress against real namespaces: a strict attempt (its own network namespace, only
//! loopback up) whose commands reach the host's loopback "model" through a forward, other hosts
//! only through the proxy's allowlist, and nothing directly — every attempt an event. Nothing
//! here sends a packet off the machine: the direct attempts are refused inside the namespace,
//! which the events prove. Skipped (with a message) where strict isolation is missing.
//!
//! The tests of this file run one at a time (they count the harness's egress threads).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use medin::internal::sandbox::{
    self, AttemptSandbox, Egress, EgressEvent, EgressRules, EgressVia, ExitKind, HostPort, Isolation, SandboxConfig,
    EVENTS_PER_SECOND,
};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// A loopback HTTP server on the host answering every request with `body`; counts connections.
struct HostServer {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
}

impl HostServer {
    fn start(body: &'static str) -> HostServer {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
                    let mut head: Vec<u8> = Vec::new();
                    let mut b = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match conn.read(&mut b) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend(&b[..n]),
                        }
                    }
                    let _ = conn.write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        )
                        .as_bytes(),
                    );
                });
            }
        });
        HostServer { addr, connections }
    }
}

/// A strict attempt with an egress on its namespace, and the events it saw.
struct Fixture {
    _ws: tempfile::TempDir,
    cfg: SandboxConfig,
    attempt: AttemptSandbox,
    egress: Option<Egress>,
    events: Arc<Mutex<Vec<EgressEvent>>>,
}

impl Fixture {
    fn start(rules: EgressRules) -> Option<Fixture> {
        if let Err(e) = sandbox::check_isolation(Isolation::Strict) {
            eprintln!("skipped: strict isolation is not available here: {e}");
            return None;
        }
        let ws = tempfile::tempdir().unwrap();
        let mut cfg = SandboxConfig::new(ws.path());
        cfg.timeout = Duration::from_secs(20);
        cfg.grace = Duration::from_millis(300);
        cfg.isolation = Isolation::Strict;
        let attempt = AttemptSandbox::start(&cfg).expect("attempt starts");
        cfg.attempt = Some(attempt.clone());
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let events = events.clone();
            Box::new(move |e: EgressEvent| events.lock().unwrap().push(e))
        };
        let net = attempt
            .network_namespace()
            .expect("a strict attempt has its own network namespace");
        let egress = Egress::start(Some(net), rules, sink).expect("egress starts");
        assert!(egress.enforced());
        assert!(
            egress.notes().iter().all(|n| !n.contains("catch-all is off")),
            "the catch-all is needed here (ip and nft are installed): {:?}",
            egress.notes()
        );
        cfg.env = egress.proxy_env();
        Some(Fixture {
            _ws: ws,
            cfg,
            attempt,
            egress: Some(egress),
            events,
        })
    }

    fn egress(&self) -> &Egress {
        self.egress.as_ref().unwrap()
    }

    /// Runs `cmd` in the attempt; (exit code, stdout, stderr).
    fn run(&self, cmd: &str) -> (i32, String, String) {
        let o = sandbox::run_shell(&self.cfg, cmd, None).expect("sandbox runs");
        let code = match o.exit {
            ExitKind::Code(c) => c,
            ExitKind::Signal(s) => 128 + s,
        };
        (code, o.stdout.text, o.stderr.text)
    }

    fn events(&self) -> Vec<EgressEvent> {
        self.events.lock().unwrap().clone()
    }

    fn events_via(&self, via: EgressVia) -> Vec<EgressEvent> {
        self.events().into_iter().filter(|e| e.via == via).collect()
    }

    /// The events by `via` once there are at least `n` (logged packets arrive on the
    /// harness's log thread a moment after the command saw its refusal), or after 3 s.
    fn await_via(&self, via: EgressVia, n: usize) -> Vec<EgressEvent> {
        let end = std::time::Instant::now() + Duration::from_secs(3);
        loop {
            let got = self.events_via(via);
            if got.len() >= n || std::time::Instant::now() > end {
                return got;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn rules(allow: &[&str], forwards: &[SocketAddr]) -> EgressRules {
    EgressRules {
        allow: allow.iter().map(|a| a.parse::<HostPort>().unwrap()).collect(),
        forwards: forwards.to_vec(),
    }
}

/// The thread ids of the egress threads running in this process now.
fn egress_threads() -> std::collections::BTreeSet<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with("medin-egress")))
        .map(|t| t.file_name().to_string_lossy().into_owned())
        .collect()
}

fn python_connect(addr: &str, port: u16) -> String {
    format!(
        "python3 -c 'import socket; socket.create_connection((\"{addr}\", {port}), timeout=5); print(\"connected\")'"
    )
}

#[test]
fn the_hosts_model_is_reached_at_the_same_address_inside_and_each_connection_is_an_event() {
    let _one = serial();
    let model = HostServer::start("model says hi");
    let Some(f) = Fixture::start(rules(&[], &[model.addr])) else {
        return;
    };
    let url = format!("http://{}/v1/messages", model.addr);
    for _ in 0..2 {
        let (code, out, err) = f.run(&format!("curl -sS --max-time 10 {url}"));
        assert_eq!((code, out.as_str()), (0, "model says hi"), "{err}");
    }
    assert_eq!(model.connections.load(Ordering::SeqCst), 2);
    let forwards = f.events_via(EgressVia::Forward);
    assert_eq!(forwards.len(), 2, "{:?}", f.events());
    for e in forwards {
        assert_eq!(
            (e.host.as_str(), e.port, e.allowed),
            ("127.0.0.1", model.addr.port(), true)
        );
    }
}

#[test]
fn a_host_not_allowed_gets_403_through_the_proxy_and_an_event() {
    let _one = serial();
    let Some(f) = Fixture::start(rules(&["api.anthropic.com:443"], &[])) else {
        return;
    };
    // HTTPS_PROXY from proxy_env: curl sends CONNECT, the proxy answers 403.
    let (code, out, _) = f.run("curl -s --max-time 10 -o /dev/null -w '%{http_connect}' https://example.com/");
    assert_ne!(code, 0, "the tunnel was refused");
    assert_eq!(out, "403");
    // HTTP_PROXY: an absolute-URI request, answered 403 with the reason.
    let (_, out, _) = f.run("curl -s --max-time 10 -w ' %{http_code}' http://example.com/page");
    assert!(
        out.contains("example.com:80 is not in this task's egress allowlist") && out.ends_with(" 403"),
        "{out}"
    );
    let refused = f.events_via(EgressVia::Proxy);
    let seen: Vec<(&str, u16, bool)> = refused.iter().map(|e| (e.host.as_str(), e.port, e.allowed)).collect();
    assert_eq!(
        seen,
        [("example.com", 443, false), ("example.com", 80, false)],
        "{refused:?}"
    );
    std::thread::sleep(Duration::from_millis(300)); // a logged packet would be in by now
    assert!(
        f.events_via(EgressVia::Direct).is_empty(),
        "curl used the proxy: {:?}",
        f.events()
    );
}

#[test]
fn an_allowed_host_is_reached_through_connect_and_plain_http() {
    let _one = serial();
    let other = HostServer::start("allowed host here");
    let allow = other.addr.to_string();
    let Some(f) = Fixture::start(rules(&[allow.as_str()], &[])) else {
        return;
    };
    let proxy = f.egress().proxy_url();
    // --noproxy '': loopback is in NO_PROXY (the attempt's own services), so ask explicitly.
    let (code, out, err) = f.run(&format!(
        "curl -sS --max-time 10 --noproxy '' -p -x {proxy} http://{}/ && echo && curl -sS --max-time 10 --noproxy '' -x {proxy} http://{}/",
        other.addr, other.addr
    ));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "allowed host here\nallowed host here");
    let allowed: Vec<EgressEvent> = f.events_via(EgressVia::Proxy);
    assert_eq!(allowed.len(), 2, "{allowed:?}");
    assert!(allowed.iter().all(|e| e.allowed && e.port == other.addr.port()));
    assert_eq!(allowed[0].detail.as_deref(), Some("CONNECT"));
    assert_eq!(allowed[1].detail.as_deref(), Some("plain HTTP"));
    // The same host at another port is not allowed.
    let (_, out, _) = f.run(&format!(
        "curl -s --max-time 10 --noproxy '' -x {proxy} -w '%{{http_code}}' -o /dev/null http://127.0.0.1:{}/",
        other.addr.port() + 1
    ));
    assert_eq!(out, "403");
}

#[test]
fn a_direct_connection_is_refused_inside_and_is_an_event() {
    let _one = serial();
    let Some(f) = Fixture::start(rules(&[], &[])) else {
        return;
    };
    let started = std::time::Instant::now();
    let (code, out, err) = f.run(&python_connect("93.184.216.34", 443));
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("ConnectionRefusedError"),
        "refused at once, not timed out: {err}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let direct = f.await_via(EgressVia::Direct, 1);
    assert_eq!(direct.len(), 1, "{:?}", f.events());
    assert_eq!(
        (direct[0].host.as_str(), direct[0].port, direct[0].allowed),
        ("93.184.216.34", 443, false)
    );
    // A UDP datagram too (QUIC): refused and logged.
    let (_, _, _) = f.run("python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\"x\", (\"198.51.100.7\", 443))'");
    assert!(
        f.await_via(EgressVia::Direct, 2)
            .iter()
            .any(|e| e.host == "198.51.100.7" && e.port == 443),
        "{:?}",
        f.events()
    );
    // IPv6 the same, where the namespace has it.
    if f.egress().notes().iter().all(|n| !n.contains("IPv6")) {
        let (code, _, err) = f.run(&python_connect("2001:db8::1", 443));
        assert!(code != 0 && err.contains("ConnectionRefusedError"), "{err}");
        assert!(
            f.await_via(EgressVia::Direct, 3)
                .iter()
                .any(|e| e.host == "2001:db8::1" && e.port == 443),
            "{:?}",
            f.events()
        );
    } else {
        eprintln!("IPv6 not checked: {:?}", f.egress().notes());
    }
    // Loopback inside is the attempt's own: a service there still answers.
    let (code, out, err) = f.run(
        "python3 -c 'import socket; l=socket.socket(); l.bind((\"127.0.0.1\", 0)); l.listen(); c=socket.create_connection(l.getsockname(), timeout=5); print(\"local ok\")'",
    );
    assert_eq!((code, out.trim()), (0, "local ok"), "{err}");
}

#[test]
fn a_flood_of_direct_attempts_is_recorded_up_to_the_rate_then_summed_up() {
    let _one = serial();
    let Some(mut f) = Fixture::start(rules(&[], &[])) else {
        return;
    };
    let (code, out, err) = f.run(
        "python3 -c '\nimport socket\nn=0\nfor p in range(1000, 1300):\n    try: socket.create_connection((\"203.0.113.9\", p), timeout=2)\n    except ConnectionRefusedError: n+=1\nprint(n)'",
    );
    assert_eq!((code, out.trim()), (0, "300"), "{err}");
    f.await_via(EgressVia::Direct, EVENTS_PER_SECOND as usize);
    std::thread::sleep(Duration::from_millis(300));
    f.egress.take(); // delivers the summary held back
    let direct = f.events_via(EgressVia::Direct).len();
    let summaries = f.events_via(EgressVia::Summary);
    assert!(direct < 300, "every attempt was recorded one by one: {direct}");
    assert!(!summaries.is_empty());
    let summed: usize = summaries
        .iter()
        .map(|s| {
            let d = s.detail.as_deref().unwrap();
            d.split(' ').next().unwrap().parse::<usize>().unwrap()
        })
        .sum();
    assert_eq!(direct + summed, 300, "{summaries:?}");
}

#[test]
fn a_dns_lookup_fails_inside_and_is_an_event() {
    let _one = serial();
    let Some(f) = Fixture::start(rules(&[], &[])) else {
        return;
    };
    let started = std::time::Instant::now();
    let (code, _, err) = f.run("python3 -c 'import socket; socket.getaddrinfo(\"example.com\", 443)'");
    assert_ne!(code, 0, "the name resolved: {err}");
    assert!(err.contains("gaierror"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "answered, not timed out: {:?}",
        started.elapsed()
    );
    let dns = f.await_via(EgressVia::Dns, 1);
    assert!(!dns.is_empty(), "{:?}", f.events());
    assert!(
        dns.iter()
            .all(|e| e.host == "example.com" && e.port == 53 && !e.allowed),
        "{dns:?}"
    );
    std::thread::sleep(Duration::from_millis(300)); // a logged packet would be in by now
    assert!(
        f.events_via(EgressVia::Direct).is_empty(),
        "the REFUSED answers got back to the resolver: {:?}",
        f.events()
    );
}

#[test]
fn after_the_egress_stops_its_threads_are_gone_and_its_ports_closed() {
    let _one = serial();
    let model = HostServer::start("model");
    // An earlier test's egress may still be winding its threads down (the tests take turns,
    // but a stopped thread leaves /proc a moment later on a loaded machine): this egress's
    // threads are the ones whose ids were not there before it started, whatever the earlier
    // ones do meanwhile.
    let before = egress_threads();
    let Some(mut f) = Fixture::start(rules(&[], &[model.addr])) else {
        return;
    };
    let own = |now: std::collections::BTreeSet<String>| now.difference(&before).cloned().collect::<Vec<_>>();
    // A thread takes its name itself once it runs: on a loaded machine, a moment after spawn.
    let started = std::time::Instant::now();
    while own(egress_threads()).is_empty() && started.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!own(egress_threads()).is_empty(), "the egress runs threads");
    let (code, _, err) = f.run(&format!("curl -sS --max-time 10 http://{}/", model.addr));
    assert_eq!(code, 0, "{err}");
    let proxy_port = f.egress().proxy_addr().port();
    // A client holding a proxy connection open must not keep the egress alive.
    let (code, _, err) = f.run(&format!(
        "(python3 -c 'import socket,time; s=socket.create_connection((\"127.0.0.1\", {proxy_port})); time.sleep(30)' &) ; sleep 0.3; echo held"
    ));
    assert_eq!(code, 0, "{err}");
    let stopping = std::time::Instant::now();
    f.egress.take();
    assert!(
        stopping.elapsed() < Duration::from_secs(3),
        "stopping waited for a client"
    );
    // Joined threads leave /proc a moment after the join returns.
    let gone = std::time::Instant::now();
    while !own(egress_threads()).is_empty() && gone.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        own(egress_threads()),
        Vec::<String>::new(),
        "egress threads left running"
    );
    for port in [proxy_port, model.addr.port()] {
        let (code, out, _) = f.run(&python_connect("127.0.0.1", port));
        assert_ne!(code, 0, "port {port} still open inside: {out}");
    }
    f.attempt.end();
}

#[test]
fn an_agent_cannot_kill_the_egress() {
    let _one = serial();
    let model = HostServer::start("still here");
    let Some(f) = Fixture::start(rules(&[], &[model.addr])) else {
        return;
    };
    let (_, _, _) = f.run("pkill -9 -f medin; kill -9 -1; true");
    let (code, out, err) = f.run(&format!("curl -sS --max-time 10 http://{}/", model.addr));
    assert_eq!((code, out.as_str()), (0, "still here"), "{err}");
    let (_, out, _) = f.run("curl -s --max-time 10 -o /dev/null -w '%{http_connect}' https://example.com/");
    assert_eq!(out, "403", "the proxy still answers");
}

#[test]
fn proxy_env_is_what_a_command_sees() {
    let _one = serial();
    let Some(f) = Fixture::start(rules(&[], &[])) else {
        return;
    };
    let (_, out, _) = f.run("echo $HTTPS_PROXY; echo $no_proxy");
    let url = f.egress().proxy_url();
    assert_eq!(out.lines().next(), Some(url.as_str()));
    assert!(out.contains("127.0.0.1"));
}

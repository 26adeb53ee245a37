//! Latency the egress adds to a model request: a request/response of 64 bytes each way to a
//! loopback server on the host, made directly on the host's loopback, against the same
//! request made from inside a strict attempt's network namespace through a forward (which
//! mirrors the server at the same address; the harness accepts inside and splices to the
//! host). Two shapes: a new connection per request (a client without keep-alive) and one
//! request on a connection already open (the splice alone).
//!
//! Run: `cargo bench --bench egress` (as root, where strict isolation is available; skipped
//! with a message otherwise).
//!
//! Measured on the 2-core development machine while others worked on it (load ~3.8), medians:
//! a new connection per request 0.73 ms direct, 1.37 ms through the forward (+0.64 ms: the
//! accept inside, two threads started, the connect to the host, the event); a request on an
//! open connection 54 us direct, 74 us through the forward (+20 us: two more copies through
//! the harness). A model call takes hundreds of milliseconds, so a forward adds well under 1%
//! even without keep-alive; on a quiet machine every figure is smaller.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use medin::internal::sandbox::{self, AttemptSandbox, Egress, EgressRules, Isolation, SandboxConfig};

const MESSAGE: usize = 64;

/// A loopback server on the host answering every 64-byte message with 64 bytes, on every
/// connection, until the process ends.
fn echo_server() -> SocketAddr {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            std::thread::spawn(move || {
                let _ = conn.set_nodelay(true);
                let mut buf = [0u8; MESSAGE];
                while conn.read_exact(&mut buf).is_ok() {
                    if conn.write_all(&buf).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

fn round_trip(conn: &mut TcpStream) {
    let mut buf = [7u8; MESSAGE];
    conn.write_all(&buf).expect("write");
    conn.read_exact(&mut buf).expect("read");
}

fn connect_and_ask(addr: SocketAddr) {
    let mut conn = TcpStream::connect(addr).expect("connect");
    let _ = conn.set_nodelay(true);
    round_trip(&mut conn);
}

fn timed(iters: u64, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    if let Err(e) = sandbox::check_isolation(Isolation::Strict) {
        eprintln!("skipped: strict isolation is not available here: {e}");
        return;
    }
    let server = echo_server();
    let ws = tempfile::tempdir().expect("tempdir");
    let mut cfg = SandboxConfig::new(ws.path());
    cfg.isolation = Isolation::Strict;
    let attempt = AttemptSandbox::start(&cfg).expect("attempt");
    let net = attempt.network_namespace().expect("own network namespace");
    let rules = EgressRules {
        allow: vec![],
        forwards: vec![server],
    };
    let egress = Egress::start(Some(net), rules, Box::new(|_| {})).expect("egress");

    let mut g = c.benchmark_group("egress_request");
    g.sample_size(100);
    g.bench_function("new_connection_direct", |b| {
        b.iter_custom(|iters| timed(iters, || connect_and_ask(server)))
    });
    g.bench_function("new_connection_forward", |b| {
        b.iter_custom(|iters| attempt.in_network(|| timed(iters, || connect_and_ask(server))))
    });
    g.bench_function("open_connection_direct", |b| {
        let mut conn = TcpStream::connect(server).expect("connect");
        let _ = conn.set_nodelay(true);
        b.iter_custom(|iters| timed(iters, || round_trip(&mut conn)))
    });
    g.bench_function("open_connection_forward", |b| {
        // Connected from inside (the socket stays in the namespace), used from here.
        let mut conn = attempt
            .in_network(|| TcpStream::connect(server))
            .expect("connect inside");
        let _ = conn.set_nodelay(true);
        b.iter_custom(|iters| timed(iters, || round_trip(&mut conn)))
    });
    g.finish();
    drop(egress);
    attempt.end();
}

criterion_group!(benches, bench);
criterion_main!(benches);

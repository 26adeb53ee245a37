//! The egress's threads and how they end: a [`Stop`] every loop waits on, the connections it
//! shuts down when triggered, a bound on concurrent connections, and the two-way copy that
//! joins a client to its target.
//!
//! Ending is prompt and complete: [`Stop::trigger`] closes the write end of a pipe every
//! accept and receive loop polls beside its socket (so each wakes and returns), and shuts
//! down every tracked connection both ways (so a copy blocked in `read` or in `write` to a
//! peer that reads nothing returns at once). [`Workers::join_all`] then joins every thread.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// At most this many client connections are served at once (each holds two threads while it
/// is spliced); one more is closed at once, and its event says why.
pub const MAX_CONNECTIONS: usize = 128;

/// Each direction of a spliced connection copies through a buffer of this size.
const COPY_BUFFER: usize = 64 * 1024;

/// The egress's off switch.
pub(super) struct Stop {
    stopped: AtomicBool,
    wake_read: OwnedFd,
    wake_write: Mutex<Option<OwnedFd>>,
    connections: Mutex<HashMap<u64, TcpStream>>,
    next_id: AtomicU64,
}

impl Stop {
    pub(super) fn new() -> io::Result<Stop> {
        // Close-on-exec on every platform (`std::io::pipe`).
        let (r, w) = io::pipe()?;
        let (r, w) = (OwnedFd::from(r), OwnedFd::from(w));
        Ok(Stop {
            stopped: AtomicBool::new(false),
            wake_read: r,
            wake_write: Mutex::new(Some(w)),
            connections: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
        })
    }

    pub(super) fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Wakes every loop and shuts every tracked connection. Idempotent.
    pub(super) fn trigger(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        lock(&self.wake_write).take();
        for (_, conn) in lock(&self.connections).drain() {
            let _ = conn.shutdown(Shutdown::Both);
        }
    }

    /// Waits until `fd` is readable (`true`) or the egress stops (`false`).
    pub(super) fn readable(&self, fd: RawFd) -> bool {
        loop {
            if self.stopped() {
                return false;
            }
            let mut fds = [
                libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.wake_read.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: poll on two valid pollfds of our own.
            let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            if r < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return false;
            }
            if fds[1].revents != 0 || self.stopped() {
                return false;
            }
            if fds[0].revents != 0 {
                return true;
            }
        }
    }

    /// Tracks `conn` until the returned guard drops, so that stopping shuts it down; `None`
    /// when the egress has stopped already.
    pub(super) fn track(self: &Arc<Self>, conn: &TcpStream) -> Option<Tracked> {
        let clone = conn.try_clone().ok()?;
        let mut all = lock(&self.connections);
        if self.stopped() {
            return None;
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        all.insert(id, clone);
        Some(Tracked { stop: self.clone(), id })
    }
}

/// A connection [`Stop`] shuts down when triggered; untracked on drop.
pub(super) struct Tracked {
    stop: Arc<Stop>,
    id: u64,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        lock(&self.stop.connections).remove(&self.id);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The egress's threads, joined when it stops.
#[derive(Default)]
pub(super) struct Workers {
    handles: Mutex<Vec<JoinHandle<()>>>,
    connections: Arc<AtomicUsize>,
}

/// One of the [`MAX_CONNECTIONS`] connection slots, given back on drop.
pub(super) struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Workers {
    /// Starts a thread named `name` (finished threads are joined on the way).
    pub(super) fn spawn(&self, name: &str, f: impl FnOnce() + Send + 'static) -> io::Result<()> {
        let handle = std::thread::Builder::new().name(name.to_string()).spawn(f)?;
        let mut handles = lock(&self.handles);
        let (done, running): (Vec<_>, Vec<_>) = handles.drain(..).partition(|h| h.is_finished());
        *handles = running;
        handles.push(handle);
        drop(handles);
        for h in done {
            let _ = h.join();
        }
        Ok(())
    }

    /// A connection slot, or `None` when [`MAX_CONNECTIONS`] are being served.
    pub(super) fn slot(&self) -> Option<Slot> {
        let prev = self.connections.fetch_add(1, Ordering::SeqCst);
        let slot = Slot(self.connections.clone());
        (prev < MAX_CONNECTIONS).then_some(slot)
    }

    /// Joins every thread, including those started while joining (once the stop is
    /// triggered no loop starts another).
    pub(super) fn join_all(&self) {
        loop {
            let handles: Vec<_> = lock(&self.handles).drain(..).collect();
            if handles.is_empty() {
                return;
            }
            for h in handles {
                let _ = h.join();
            }
        }
    }
}

/// Copies both ways between `client` and `target` until both directions are closed (each
/// half-close passed on as a `shutdown(Write)`), either side fails, or the egress stops.
/// Blocks the calling thread (which copies client → target) and one more.
pub(super) fn splice(client: TcpStream, target: TcpStream, stop: &Arc<Stop>) {
    let (Some(_client_tracked), Some(_target_tracked)) = (stop.track(&client), stop.track(&target)) else {
        return;
    };
    // A relay passes each write on as it comes: Nagle would hold a small request back.
    let _ = client.set_nodelay(true);
    let _ = target.set_nodelay(true);
    let (Ok(client_back), Ok(target_back)) = (client.try_clone(), target.try_clone()) else {
        return;
    };
    std::thread::scope(|s| {
        s.spawn(|| copy_half(target_back, client_back));
        copy_half(client, target);
    });
}

/// Copies `from` → `to` until `from` ends (then half-closes `to`) or either fails (then
/// closes both, so the other direction ends too).
fn copy_half(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = vec![0u8; COPY_BUFFER];
    loop {
        match from.read(&mut buf) {
            Ok(0) => {
                let _ = to.shutdown(Shutdown::Write);
                return;
            }
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, TcpListener};
    use std::time::{Duration, Instant};

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    #[test]
    fn a_half_close_passes_through_and_the_answer_still_comes_back() {
        let stop = Arc::new(Stop::new().unwrap());
        let (mut client, client_proxy_end) = pair();
        let (target_proxy_end, mut server) = pair();
        let s = stop.clone();
        let t = std::thread::spawn(move || splice(client_proxy_end, target_proxy_end, &s));
        client.write_all(b"question").unwrap();
        client.shutdown(Shutdown::Write).unwrap();
        let mut got = String::new();
        server.read_to_string(&mut got).unwrap();
        assert_eq!(got, "question", "the server sees the client's EOF");
        server.write_all(b"answer").unwrap();
        drop(server);
        let mut back = String::new();
        client.read_to_string(&mut back).unwrap();
        assert_eq!(back, "answer");
        t.join().unwrap();
    }

    #[test]
    fn stopping_ends_a_splice_whose_peers_send_nothing() {
        let stop = Arc::new(Stop::new().unwrap());
        let (_client, client_proxy_end) = pair();
        let (target_proxy_end, _server) = pair();
        let s = stop.clone();
        let t = std::thread::spawn(move || splice(client_proxy_end, target_proxy_end, &s));
        std::thread::sleep(Duration::from_millis(50));
        let started = Instant::now();
        stop.trigger();
        t.join().unwrap();
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_stopped_wait_returns_false_at_once() {
        let stop = Stop::new().unwrap();
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        std::thread::scope(|s| {
            let waiting = s.spawn(|| stop.readable(l.as_raw_fd()));
            std::thread::sleep(Duration::from_millis(50));
            stop.trigger();
            assert!(!waiting.join().unwrap());
        });
    }

    #[test]
    fn connection_slots_are_bounded_and_given_back() {
        let w = Workers::default();
        let slots: Vec<Slot> = (0..MAX_CONNECTIONS).map(|_| w.slot().unwrap()).collect();
        assert!(w.slot().is_none());
        drop(slots);
        assert!(w.slot().is_some());
    }
}

//! What the egress saw, and the gate that keeps a flood of attempts from flooding the
//! receipts: at most [`EVENTS_PER_SECOND`] events a second are delivered one by one; the rest
//! of that second is counted and delivered as one [`EgressVia::Summary`] event when the
//! second is over (at the next event, or when the egress stops).

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Events delivered one by one per second before the rest is summarised.
pub const EVENTS_PER_SECOND: u32 = 50;

/// One connection attempt (or, for [`EgressVia::Summary`], many).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressEvent {
    /// The name or address asked for (a DNS question's name for [`EgressVia::Dns`]; `*` for
    /// a summary).
    pub host: String,
    /// The port asked for (53 for DNS; 0 for a summary or a protocol without ports).
    pub port: u16,
    /// Whether it was let through (a summary: whether every attempt it stands for was).
    pub allowed: bool,
    pub via: EgressVia,
    /// More about it: why it was refused, that the connection to an allowed host failed, how
    /// many attempts a summary stands for.
    pub detail: Option<String>,
}

/// Which way out was tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EgressVia {
    /// A connection to a forwarded loopback endpoint (always allowed).
    Forward,
    /// A request to the HTTP proxy (`CONNECT` or an absolute-URI request).
    Proxy,
    /// A packet to any other address, bypassing the proxy: refused inside the namespace.
    Direct,
    /// A DNS question: answered REFUSED inside the namespace (names are resolved by the proxy).
    Dns,
    /// Attempts beyond [`EVENTS_PER_SECOND`] in one second, counted in `detail`.
    Summary,
}

impl EgressVia {
    fn name(self) -> &'static str {
        match self {
            EgressVia::Forward => "forward",
            EgressVia::Proxy => "proxy",
            EgressVia::Direct => "direct",
            EgressVia::Dns => "dns",
            EgressVia::Summary => "summary",
        }
    }
}

/// Where events go.
pub type EventSink = Box<dyn Fn(EgressEvent) + Send + Sync>;

/// The rate gate in front of the sink.
pub(super) struct Events {
    sink: EventSink,
    per_second: u32,
    window: Mutex<Window>,
}

struct Window {
    started: Instant,
    delivered: u32,
    held: Held,
    closed: bool,
}

/// Attempts counted, not delivered, in the current second.
#[derive(Default)]
struct Held {
    total: u32,
    denied: u32,
    /// (via, count) in the order first seen.
    by_via: Vec<(EgressVia, u32)>,
}

impl Held {
    fn add(&mut self, e: &EgressEvent) {
        self.total = self.total.saturating_add(1);
        if !e.allowed {
            self.denied = self.denied.saturating_add(1);
        }
        match self.by_via.iter_mut().find(|(v, _)| *v == e.via) {
            Some((_, n)) => *n = n.saturating_add(1),
            None => self.by_via.push((e.via, 1)),
        }
    }

    fn summary(&self) -> EgressEvent {
        let by_via: Vec<String> = self.by_via.iter().map(|(v, n)| format!("{} {n}", v.name())).collect();
        EgressEvent {
            host: "*".to_string(),
            port: 0,
            allowed: self.denied == 0,
            via: EgressVia::Summary,
            detail: Some(format!(
                "{} more attempts within one second, not recorded one by one: {} allowed, {} refused ({})",
                self.total,
                self.total - self.denied,
                self.denied,
                by_via.join(", ")
            )),
        }
    }
}

impl Events {
    pub(super) fn new(sink: EventSink, per_second: u32) -> Events {
        Events {
            sink,
            per_second,
            window: Mutex::new(Window {
                started: Instant::now(),
                delivered: 0,
                held: Held::default(),
                closed: false,
            }),
        }
    }

    /// Delivers `e`, or counts it when this second's share is used up. Nothing is delivered
    /// once the gate is closed.
    pub(super) fn emit(&self, e: EgressEvent) {
        let mut w = match self.window.lock() {
            Ok(w) => w,
            Err(poisoned) => poisoned.into_inner(),
        };
        if w.closed {
            return;
        }
        if w.started.elapsed() >= Duration::from_secs(1) {
            self.flush(&mut w);
            w.started = Instant::now();
            w.delivered = 0;
        }
        if w.delivered < self.per_second {
            w.delivered += 1;
            (self.sink)(e);
        } else {
            w.held.add(&e);
        }
    }

    /// Delivers what is held and delivers nothing more.
    pub(super) fn close(&self) {
        let mut w = match self.window.lock() {
            Ok(w) => w,
            Err(poisoned) => poisoned.into_inner(),
        };
        if !w.closed {
            self.flush(&mut w);
            w.closed = true;
        }
    }

    fn flush(&self, w: &mut Window) {
        if w.held.total > 0 {
            (self.sink)(w.held.summary());
            w.held = Held::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn event(via: EgressVia, allowed: bool) -> EgressEvent {
        EgressEvent {
            host: "192.0.2.1".into(),
            port: 443,
            allowed,
            via,
            detail: None,
        }
    }

    #[test]
    fn a_flood_is_delivered_up_to_the_limit_then_summarised_once() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = seen.clone();
            Box::new(move |e: EgressEvent| seen.lock().unwrap().push(e))
        };
        let events = Events::new(sink, 3);
        for _ in 0..10 {
            events.emit(event(EgressVia::Direct, false));
        }
        events.emit(event(EgressVia::Forward, true));
        assert_eq!(seen.lock().unwrap().len(), 3, "only the first 3 one by one");
        events.close();
        events.emit(event(EgressVia::Direct, false));
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 4, "one summary, nothing after close: {seen:?}");
        let summary = &seen[3];
        assert_eq!(summary.via, EgressVia::Summary);
        assert!(!summary.allowed);
        let detail = summary.detail.as_deref().unwrap();
        assert!(detail.starts_with("8 more attempts"), "{detail}");
        assert!(
            detail.contains("1 allowed, 7 refused (direct 7, forward 1)"),
            "{detail}"
        );
    }

    #[test]
    fn a_new_second_delivers_again_after_summarising_the_last() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = seen.clone();
            Box::new(move |e: EgressEvent| seen.lock().unwrap().push(e))
        };
        let events = Events::new(sink, 1);
        events.emit(event(EgressVia::Dns, false));
        events.emit(event(EgressVia::Dns, false));
        std::thread::sleep(Duration::from_millis(1050));
        events.emit(event(EgressVia::Proxy, true));
        let seen = seen.lock().unwrap();
        let vias: Vec<EgressVia> = seen.iter().map(|e| e.via).collect();
        assert_eq!(vias, [EgressVia::Dns, EgressVia::Summary, EgressVia::Proxy]);
    }
}

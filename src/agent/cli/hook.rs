//! The pre-tool hook channel: how a CLI agent's every tool call reaches medin before it runs.
//!
//! medin installs a small relay as the CLI's command hook (Claude Code's and Codex's
//! `PreToolUse`/`PostToolUse`, Gemini CLI's `BeforeTool`/`AfterTool`). The CLI runs the relay
//! with the call as JSON on stdin; the relay connects to medin's [`HookServer`] on
//! `127.0.0.1:PORT` (inside the attempt's network namespace under `strict`: the listener is
//! bound there but served by the harness, outside the agent's PID namespace, so nothing the
//! agent runs can stop it), sends `EVENT LENGTH\n` and the payload, and prints what medin
//! answers: an exit status on the first line, then the text the CLI reads as the hook's
//! output (its allow or deny in the CLI's own format).
//!
//! **Fail closed.** A relay that cannot reach medin, or gets no answer, exits 2 — a blocking
//! error for all three CLIs — so a broken channel denies the call instead of letting it run
//! unjudged. The relay lives in a read-only folder of the agent's sandbox (under `strict`),
//! so the agent cannot rewrite it; what a hook that was bypassed all the same lets through is
//! caught afterwards by comparing the CLI's own output with the calls medin was asked about
//! (`AgentEvent::Unguarded`).
//!
//! **Bounded.** The header line is at most 64 bytes and a payload at most [`MAX_PAYLOAD`];
//! at most [`MAX_OPEN`] hook calls wait at once (more are refused, i.e. denied); a relay that
//! sends nothing is dropped after [`READ_TIMEOUT`]. Anyone in the sandbox can connect (the
//! agent's own commands too): a forged call only asks medin a question, and each costs a turn.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

/// Largest hook payload read (4 MiB: a Write of a large file carries its content).
pub const MAX_PAYLOAD: usize = 4 * 1024 * 1024;
/// Hook calls waiting for medin's answer at once.
pub const MAX_OPEN: usize = 16;
/// How long a relay may take to send its call.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Which hook ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// Before the tool runs: medin's answer allows or denies it.
    Pre,
    /// After it ran: medin counts what it changed; the answer only lets the CLI go on.
    Post,
}

impl HookEvent {
    fn parse(word: &str) -> Option<HookEvent> {
        match word {
            "pre" => Some(HookEvent::Pre),
            "post" => Some(HookEvent::Post),
            _ => None,
        }
    }
}

/// What the relay prints: its exit status and its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookAnswer {
    pub exit: i32,
    pub stdout: String,
}

impl HookAnswer {
    /// A blocking error (exit 2) with `reason` on stderr's place: every CLI treats it as a denial.
    pub fn refuse(reason: &str) -> HookAnswer {
        HookAnswer {
            exit: 2,
            stdout: reason.to_string(),
        }
    }
}

/// One call of the hook, waiting for medin's answer.
#[derive(Debug)]
pub struct HookCall {
    pub event: HookEvent,
    pub payload: Value,
    pub answer: SyncSender<HookAnswer>,
}

/// The harness's end of the channel: accepts relays, hands each call to the agent.
#[derive(Debug)]
pub struct HookServer {
    port: u16,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl HookServer {
    /// Serves `listener` (bound where the CLI runs), sending every call to `calls`.
    pub fn start(listener: TcpListener, calls: Sender<HookCall>) -> std::io::Result<HookServer> {
        let port = listener.local_addr()?.port();
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let open = Arc::new(AtomicUsize::new(0));
        let accept = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("medin-hook".into())
                .spawn(move || accept_loop(&listener, &calls, &stop, &open))?
        };
        Ok(HookServer {
            port,
            stop,
            accept: Some(accept),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for HookServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, calls: &Sender<HookCall>, stop: &AtomicBool, open: &Arc<AtomicUsize>) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                if open.fetch_add(1, Ordering::SeqCst) >= MAX_OPEN {
                    open.fetch_sub(1, Ordering::SeqCst);
                    let _ = answer(
                        stream,
                        &HookAnswer::refuse("medin: too many tool calls at once; try again"),
                    );
                    continue;
                }
                let (calls, held) = (calls.clone(), Arc::clone(open));
                let spawned = std::thread::Builder::new()
                    .name("medin-hook-call".into())
                    .spawn(move || {
                        serve(stream, &calls);
                        held.fetch_sub(1, Ordering::SeqCst);
                    });
                // A thread that cannot start drops its stream: the relay sees no answer and
                // refuses the call. Its place is given back here.
                if spawned.is_err() {
                    open.fetch_sub(1, Ordering::SeqCst);
                }
            }
            // Nothing to accept: wait until a relay connects (answered at once) or a short
            // while passes (so a stop is seen).
            Err(_) => wait_readable(listener, STOP_POLL),
        }
    }
}

/// How often an idle accept loop looks whether its server was stopped.
const STOP_POLL: Duration = Duration::from_millis(100);

/// Waits until `listener` has a connection to accept, at most `limit`.
fn wait_readable(listener: &TcpListener, limit: Duration) {
    use std::os::fd::AsRawFd;
    let mut fds = [libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    let ms = libc::c_int::try_from(limit.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd for the duration of the call.
    let _ = unsafe { libc::poll(fds.as_mut_ptr(), 1, ms) };
}

/// Reads one call, waits for the agent's answer, writes it back.
fn serve(stream: TcpStream, calls: &Sender<HookCall>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let reply = match read_call(&stream) {
        Ok((event, payload)) => {
            let (tx, rx) = mpsc::sync_channel(1);
            let call = HookCall {
                event,
                payload,
                answer: tx,
            };
            if calls.send(call).is_err() {
                HookAnswer::refuse("medin: the attempt is over; the call is refused")
            } else {
                wait_answer(&rx)
            }
        }
        Err(reason) => HookAnswer::refuse(&format!("medin: {reason}; the call is refused")),
    };
    let _ = answer(stream, &reply);
}

/// The agent answers every call it receives; a call it drops (its attempt ended) is refused.
fn wait_answer(rx: &Receiver<HookAnswer>) -> HookAnswer {
    rx.recv()
        .unwrap_or_else(|_| HookAnswer::refuse("medin: the attempt is over; the call is refused"))
}

fn read_call(stream: &TcpStream) -> Result<(HookEvent, Value), String> {
    let mut reader = BufReader::new(stream.take(64 + MAX_PAYLOAD as u64));
    let mut header = String::new();
    (&mut reader)
        .take(64)
        .read_line(&mut header)
        .map_err(|e| format!("cannot read the hook's header: {e}"))?;
    let mut words = header.split_whitespace();
    let event = words
        .next()
        .and_then(HookEvent::parse)
        .ok_or_else(|| format!("malformed hook header {:?}", header.trim()))?;
    let length: usize = words
        .next()
        .and_then(|w| w.parse().ok())
        .filter(|n| *n <= MAX_PAYLOAD)
        .ok_or_else(|| format!("hook payload length missing or over {MAX_PAYLOAD} bytes"))?;
    let mut body = vec![0u8; length];
    reader
        .read_exact(&mut body)
        .map_err(|e| format!("hook payload cut short: {e}"))?;
    let payload = serde_json::from_slice(&body).map_err(|e| format!("hook payload is not JSON: {e}"))?;
    Ok((event, payload))
}

fn answer(mut stream: TcpStream, reply: &HookAnswer) -> std::io::Result<()> {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_write_timeout(Some(READ_TIMEOUT));
    stream.write_all(format!("{}\n{}", reply.exit, reply.stdout).as_bytes())?;
    stream.flush()
}

/// The relay the CLI runs as its hook (bash: `/dev/tcp` needs no other program). `event` is
/// `pre` or `post`. Any failure exits 2: the call is refused, never let through unjudged.
pub fn relay_script(port: u16, event: HookEvent) -> String {
    let word = match event {
        HookEvent::Pre => "pre",
        HookEvent::Post => "post",
    };
    format!(
        r#"#!/bin/bash
# medin's hook relay: hands the CLI's tool call to medin and prints medin's answer.
# Written by medin for one attempt; it fails closed (exit 2 refuses the call).
export LC_ALL=C
IFS= read -r -d '' payload
exec 3<>/dev/tcp/127.0.0.1/{port} || {{ echo "medin hook: cannot reach medin; the call is refused" >&2; exit 2; }}
printf '%s %d\n%s' {word} "${{#payload}}" "$payload" >&3 || exit 2
IFS= read -r status <&3 || {{ echo "medin hook: no answer from medin; the call is refused" >&2; exit 2; }}
case "$status" in
  0) cat <&3; echo; exit 0 ;;
  2) cat <&3 >&2; echo >&2; exit 2 ;;
  *) exit 2 ;;
esac
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    /// Runs the real relay script with `stdin`, against `server`'s port.
    fn relay(port: u16, event: HookEvent, stdin: &str) -> (i32, String, String) {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("hook.sh");
        std::fs::write(&script, relay_script(port, event)).unwrap();
        let mut child = Command::new("bash")
            .arg(&script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    #[test]
    fn a_call_reaches_medin_and_its_answer_is_the_hooks_output() {
        let (tx, rx) = mpsc::channel();
        let server = HookServer::start(TcpListener::bind("127.0.0.1:0").unwrap(), tx).unwrap();
        let answering = std::thread::spawn(move || {
            let call = rx.recv().unwrap();
            assert_eq!(call.event, HookEvent::Pre);
            let cmd = call.payload["tool_input"]["command"].as_str().unwrap().to_string();
            let deny = cmd.contains("rm");
            call.answer
                .send(if deny {
                    HookAnswer {
                        exit: 0,
                        stdout: r#"{"decision":"deny"}"#.into(),
                    }
                } else {
                    HookAnswer {
                        exit: 0,
                        stdout: "{}".into(),
                    }
                })
                .unwrap();
            cmd
        });
        // Multi-byte text: the length the relay sends is in bytes.
        let (code, out, _) = relay(
            server.port(),
            HookEvent::Pre,
            r#"{"tool_input":{"command":"rm -rf ~ # é ✓"}}"#,
        );
        assert_eq!(answering.join().unwrap(), "rm -rf ~ # é ✓");
        assert_eq!((code, out.trim()), (0, r#"{"decision":"deny"}"#));
    }

    #[test]
    fn a_refusal_exits_2_with_the_reason_on_stderr() {
        let (tx, rx) = mpsc::channel();
        let server = HookServer::start(TcpListener::bind("127.0.0.1:0").unwrap(), tx).unwrap();
        std::thread::spawn(move || {
            let call = rx.recv().unwrap();
            call.answer.send(HookAnswer::refuse("limit reached")).unwrap();
        });
        let (code, out, err) = relay(server.port(), HookEvent::Post, "{}");
        assert_eq!((code, out.as_str()), (2, ""));
        assert!(err.contains("limit reached"), "{err}");
    }

    #[test]
    fn the_relay_fails_closed_when_medin_is_gone_or_the_input_is_not_json() {
        // Nobody listens on the port any more.
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let (code, _, err) = relay(port, HookEvent::Pre, "{}");
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("cannot reach medin"), "{err}");
        // The server refuses what is not JSON, without asking the agent.
        let (tx, rx) = mpsc::channel();
        let server = HookServer::start(TcpListener::bind("127.0.0.1:0").unwrap(), tx).unwrap();
        let (code, _, err) = relay(server.port(), HookEvent::Pre, "not json");
        assert_eq!(code, 2);
        assert!(err.contains("not JSON"), "{err}");
        assert!(rx.try_recv().is_err(), "a malformed call never reaches the agent");
        // An attempt that ended (its receiver dropped) refuses every later call.
        drop(rx);
        let (code, _, err) = relay(server.port(), HookEvent::Pre, "{}");
        assert_eq!(code, 2);
        assert!(err.contains("attempt is over"), "{err}");
    }

    #[test]
    fn a_forged_header_or_an_oversized_length_is_refused() {
        let (tx, rx) = mpsc::channel();
        let server = HookServer::start(TcpListener::bind("127.0.0.1:0").unwrap(), tx).unwrap();
        for header in ["allow 2\n{}".to_string(), format!("pre {}\n", MAX_PAYLOAD + 1)] {
            let mut s = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
            s.write_all(header.as_bytes()).unwrap();
            s.shutdown(std::net::Shutdown::Write).unwrap();
            let mut reply = String::new();
            s.read_to_string(&mut reply).unwrap();
            assert!(reply.starts_with("2\n"), "{header:?} → {reply:?}");
        }
        assert!(rx.try_recv().is_err());
    }
}

//! An attempt's persistent shell: one `bash` per attempt, fed one command per call, where
//! `cd`, `export`, variables and functions persist between calls as in a terminal.
//!
//! The shell is started like a command of the attempt (`process::spawn_session`: the same
//! environment, limits and level; under `strict`, in the attempt's namespaces and view) and
//! reads its calls on stdin. Each call is sent as one line:
//!
//! ```text
//! { eval $'<the command, every byte outside [A-Za-z0-9/._-] escaped>' ; } </dev/null; <marker>
//! ```
//!
//! - the command is quoted with `$'…'` escapes, so no byte of it can end the line or the
//!   quote early; it reads `/dev/null`, never the rest of the harness's input;
//! - after it, the shell prints a marker with a fresh random nonce and `$?` on stdout, and a
//!   marker on stderr; the call's output is what came before the markers. The nonce is new
//!   for every call, so output cannot end a call by accident. A command can learn its own
//!   call's nonce (it is in the shell's input line) and print a marker early: it then only
//!   ends its own call early, as `&` would — nothing judged rests on what a session call
//!   reports (verdicts come from validators and verification, which never run here);
//! - the per-call timeout holds: a call without its markers by then ends the whole shell
//!   (SIGTERM, grace, SIGKILL to its tree), is reported as `TIMEOUT`, and the next call
//!   starts a new shell — its state is lost, and the outcome says so;
//! - the output cap holds per call: bytes past it are counted and hashed, not kept;
//! - a command that ends the shell (`exit 3`) is reported with the shell's status, and the
//!   next call starts a new one.
//!
//! What a call starts in the background stays in the shell's process group and writes to the
//! shell's streams: its output shows up in later calls' output, as in a terminal. Between
//! calls the harness holds at most [`QUEUED_READS`] reads of it; a job that writes more waits
//! until the next call takes them (each call's own cap then applies).
//!
//! What the framing cannot stop: a process the shell started shares its sandbox and its
//! Landlock domain, so it can open the shell's descriptors through `/proc`, read the harness's
//! next line (and its nonce) from the shell's stdin and answer it with a forged marker. It only
//! forges the agent's own tool result, as the agent could by printing whatever it likes;
//! nothing judged runs in the shell.

use std::io::{Read, Write};
use std::path::Path;
use std::process::ChildStdin;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::process::spawn_session;
use super::{CapturedOutput, CommandOutcome, ExitKind, LimitHit, PipedChild, SandboxConfig, SandboxError};

/// The shell, and how it is started: no profile or rc file (nothing of the host's), reading
/// commands on stdin.
const SHELL: &str = "/bin/bash";
const SHELL_ARGS: &[&str] = &["--noprofile", "--norc"];

/// The byte that opens and closes a marker (ASCII record separator).
const MARK: u8 = 0x1e;

/// Bytes of a stream held back while looking for a marker (longer than any marker).
const HOLD: usize = 128;

/// Reads of the shell's streams (up to 64 KiB each) held for the next call. Between calls no
/// one takes them: a background job writing without end then waits on a full pipe, as it
/// would on a terminal nobody reads, instead of growing the harness's memory.
const QUEUED_READS: usize = 16;

/// Which stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Out,
    Err,
}

/// One read from the shell's streams; an empty chunk is the stream's end.
type Chunk = (Stream, Vec<u8>);

pub(crate) struct Session {
    child: PipedChild,
    stdin: ChildStdin,
    chunks: Receiver<Chunk>,
    /// What arrived after the last call's marker, per stream (output of background work).
    carry: [Vec<u8>; 2],
    /// Streams that have ended.
    closed: [bool; 2],
    alive: bool,
}

impl Session {
    /// Starts the shell for the attempt `cfg` belongs to.
    pub(crate) fn start(cfg: &SandboxConfig) -> Result<Session, SandboxError> {
        if !Path::new(SHELL).exists() {
            return Err(SandboxError::Spawn {
                command: SHELL.to_string(),
                workspace: cfg.workspace.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "the persistent shell needs bash; install it (`apt-get install -y bash`)",
                ),
            });
        }
        let mut child = spawn_session(cfg, SHELL, SHELL_ARGS)?;
        let missing = |what: &str| SandboxError::Spawn {
            command: SHELL.to_string(),
            workspace: cfg.workspace.clone(),
            source: std::io::Error::other(format!("the persistent shell's {what} was not piped")),
        };
        let stdin = child.take_stdin().ok_or_else(|| missing("stdin"))?;
        let stdout = child.take_stdout().ok_or_else(|| missing("stdout"))?;
        let stderr = child.take_stderr().ok_or_else(|| missing("stderr"))?;
        let (tx, chunks) = mpsc::sync_channel(QUEUED_READS);
        for (stream, mut source) in [
            (Stream::Out, Box::new(stdout) as Box<dyn Read + Send>),
            (Stream::Err, Box::new(stderr) as Box<dyn Read + Send>),
        ] {
            let tx = tx.clone();
            thread::spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    match source.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            if tx.send((stream, buf[..n].to_vec())).is_err() {
                                return;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => break,
                    }
                }
                let _ = tx.send((stream, Vec::new()));
            });
        }
        Ok(Session {
            child,
            stdin,
            chunks,
            carry: [Vec::new(), Vec::new()],
            closed: [false, false],
            alive: true,
        })
    }

    /// Whether the shell can take another call.
    pub(crate) fn alive(&self) -> bool {
        self.alive
    }

    /// Runs `command` (in `cwd`, a workspace-relative directory, when given) under `cfg`'s
    /// timeout and output cap.
    pub(crate) fn run(
        &mut self,
        cfg: &SandboxConfig,
        command: &str,
        cwd: Option<&Path>,
    ) -> Result<CommandOutcome, SandboxError> {
        let started = Instant::now();
        let nonce = nonce();
        let mut line = String::from("{ ");
        if let Some(dir) = cwd {
            let seen = cfg.workspace_seen().join(dir);
            line.push_str(&format!(
                "cd -- {} && ",
                ansi_c_quote(seen.as_os_str().as_encoded_bytes())
            ));
        }
        line.push_str(&format!(
            "eval {} ; }} </dev/null; __medin_status=$?; printf '\\n\\036{nonce} %d\\036\\n' \"$__medin_status\"; printf '\\036{nonce}\\036\\n' >&2\n",
            ansi_c_quote(command.as_bytes())
        ));
        let mut out = CallStream::new(cfg.output_cap, std::mem::take(&mut self.carry[0]));
        let mut err = CallStream::new(cfg.output_cap, std::mem::take(&mut self.carry[1]));
        let out_marker = format!("\n\x1e{nonce} ").into_bytes();
        let err_marker = format!("\x1e{nonce}\x1e\n").into_bytes();
        let sent = self.stdin.write_all(line.as_bytes()).and_then(|()| self.stdin.flush());
        let mut status: Option<i32> = None;
        let mut err_done = false;
        let deadline = started + cfg.timeout;
        let mut timed_out = false;
        if sent.is_ok() {
            // The carried bytes may already hold nothing of this call (a new nonce); look in
            // what arrives.
            loop {
                if status.is_some() && err_done {
                    break;
                }
                if self.closed == [true, true] {
                    break;
                }
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    timed_out = true;
                    break;
                }
                match self.chunks.recv_timeout(left) {
                    Ok((stream, data)) if data.is_empty() => self.closed[stream as usize] = true,
                    Ok((Stream::Out, data)) => {
                        if status.is_none() {
                            if let Some((code, rest)) = out.push_until(&data, &out_marker) {
                                status = Some(code);
                                self.carry[0] = rest;
                            }
                        } else {
                            self.carry[0].extend_from_slice(&data);
                        }
                    }
                    Ok((Stream::Err, data)) => {
                        if !err_done {
                            if let Some(rest) = err.push_until_plain(&data, &err_marker) {
                                err_done = true;
                                self.carry[1] = rest;
                            }
                        } else {
                            self.carry[1].extend_from_slice(&data);
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {
                        timed_out = true;
                        break;
                    }
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
        }
        let exit = match status {
            Some(code) if !timed_out => ExitKind::Code(code),
            _ => {
                // Timed out, or the shell ended (`exit`, a signal, a broken pipe): end its
                // tree and report how the shell ended.
                self.alive = false;
                match self.child.kill_tree(cfg.grace) {
                    Ok(st) => {
                        use std::os::unix::process::ExitStatusExt;
                        match (st.code(), st.signal()) {
                            (Some(c), _) => ExitKind::Code(c),
                            (None, Some(s)) => ExitKind::Signal(s),
                            (None, None) => ExitKind::Signal(libc::SIGKILL),
                        }
                    }
                    Err(_) => ExitKind::Signal(libc::SIGKILL),
                }
            }
        };
        let mut stderr = err.finish();
        if !self.alive {
            let note = if timed_out {
                "medin: the call timed out; the persistent shell was ended and its state (cwd, variables, functions) is lost: the next call starts a new one\n"
            } else {
                "medin: the persistent shell ended; the next call starts a new one\n"
            };
            stderr.text.push_str(note);
        }
        Ok(CommandOutcome {
            exit,
            stdout: out.finish(),
            stderr,
            duration_ms: started.elapsed().as_millis() as u64,
            timed_out,
            limit: timed_out.then_some(LimitHit::Timeout),
            isolation: cfg.isolation,
            usage: Default::default(),
        })
    }

    /// Ends the shell's tree.
    pub(crate) fn end(&mut self, grace: Duration) {
        self.alive = false;
        let _ = self.child.kill_tree(grace);
    }
}

/// One call's output of one stream: kept up to the cap, counted and hashed in full, with the
/// last bytes held back until it is known that they are not the marker.
struct CallStream {
    kept: Vec<u8>,
    total: u64,
    hasher: Sha256,
    cap: usize,
    held: Vec<u8>,
}

impl CallStream {
    fn new(cap: usize, carried: Vec<u8>) -> CallStream {
        let mut s = CallStream {
            kept: Vec::new(),
            total: 0,
            hasher: Sha256::new(),
            cap,
            held: Vec::new(),
        };
        s.held = carried;
        s
    }

    fn commit(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        self.hasher.update(bytes);
        let room = self.cap.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&bytes[..room.min(bytes.len())]);
    }

    /// Adds `data`; when the stdout marker (`marker`, then the status digits and a closing
    /// mark) is complete, returns the status and whatever followed it.
    fn push_until(&mut self, data: &[u8], marker: &[u8]) -> Option<(i32, Vec<u8>)> {
        self.held.extend_from_slice(data);
        if let Some(at) = find(&self.held, marker) {
            let after = &self.held[at + marker.len()..];
            if let Some(end) = after.iter().position(|b| *b == MARK) {
                let code = std::str::from_utf8(&after[..end])
                    .ok()
                    .and_then(|t| t.trim().parse::<i32>().ok())
                    .unwrap_or(-1);
                // The closing mark is followed by a newline.
                let rest_from = at + marker.len() + end + 2;
                let rest = self.held.get(rest_from..).map(<[u8]>::to_vec).unwrap_or_default();
                let body = self.held[..at].to_vec();
                self.held.clear();
                self.commit(&body);
                return Some((code, rest));
            }
            return None;
        }
        self.release();
        None
    }

    /// Adds `data`; when `marker` is complete, returns whatever followed it.
    fn push_until_plain(&mut self, data: &[u8], marker: &[u8]) -> Option<Vec<u8>> {
        self.held.extend_from_slice(data);
        if let Some(at) = find(&self.held, marker) {
            let rest = self.held[at + marker.len()..].to_vec();
            let body = self.held[..at].to_vec();
            self.held.clear();
            self.commit(&body);
            return Some(rest);
        }
        self.release();
        None
    }

    /// Commits all but the last [`HOLD`] bytes.
    fn release(&mut self) {
        if self.held.len() > HOLD {
            let cut = self.held.len() - HOLD;
            let head: Vec<u8> = self.held.drain(..cut).collect();
            self.commit(&head);
        }
    }

    fn finish(mut self) -> CapturedOutput {
        let held = std::mem::take(&mut self.held);
        self.commit(&held);
        CapturedOutput {
            text: String::from_utf8_lossy(&self.kept).into_owned(),
            total_bytes: self.total,
            truncated: self.total > self.kept.len() as u64,
            sha256: format!("sha256:{}", hex::encode(self.hasher.finalize())),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `$'…'` quoting: every byte outside a plain set becomes `\xHH`, so nothing in `bytes` can
/// end the quote or the line.
fn ansi_c_quote(bytes: &[u8]) -> String {
    let mut q = String::with_capacity(bytes.len() * 2 + 3);
    q.push_str("$'");
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"/._-".contains(&b) {
            q.push(b as char);
        } else {
            q.push_str(&format!("\\x{b:02x}"));
        }
    }
    q.push('\'');
    q
}

/// 16 random bytes as hex, from the kernel.
fn nonce() -> String {
    let mut bytes = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut bytes);
    }
    if bytes == [0u8; 16] {
        // No /dev/urandom: the time and a counter still differ per call.
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        return format!("{t:x}{n:x}");
    }
    hex::encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_leaves_no_byte_that_ends_the_quote_or_the_line() {
        let q = ansi_c_quote(b"echo 'a'\n$(x) \\ \x00");
        assert_eq!(q, "$'echo\\x20\\x27a\\x27\\x0a\\x24\\x28x\\x29\\x20\\x5c\\x20\\x00'");
    }

    #[test]
    fn a_marker_split_across_reads_is_found_and_what_follows_is_carried() {
        let mut s = CallStream::new(1024, Vec::new());
        let marker = b"\n\x1eabc ";
        assert!(s.push_until(b"hello\n\x1eab", marker).is_none());
        let (code, rest) = s.push_until(b"c 7\x1e\nlater", marker).expect("marker");
        assert_eq!(code, 7);
        assert_eq!(rest, b"later");
        assert_eq!(s.finish().text, "hello");
    }

    #[test]
    fn the_cap_keeps_the_head_and_counts_everything() {
        let mut s = CallStream::new(4, Vec::new());
        let big = vec![b'x'; 1000];
        assert!(s.push_until(&big, b"\n\x1eabc ").is_none());
        let out = s.finish();
        assert_eq!(out.text, "xxxx");
        assert_eq!(out.total_bytes, 1000);
        assert!(out.truncated);
    }
}

//! Capturing one output stream of a sandboxed command: keep up to a cap, count and hash all.
//!
//! Each stream is drained by its own thread so a command that floods stdout and stderr at the
//! same time never blocks on a full pipe.

use std::io::Read;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::CapturedOutput;

/// What a reader thread has seen so far.
struct StreamState {
    kept: Vec<u8>,
    total: u64,
    hasher: Sha256,
}

/// A stream being drained in the background.
pub(crate) struct StreamReader {
    state: Arc<Mutex<StreamState>>,
    done: mpsc::Receiver<()>,
}

impl StreamReader {
    /// Starts draining `source`, keeping at most `cap` bytes.
    pub(crate) fn start<R: Read + Send + 'static>(mut source: R, cap: usize) -> StreamReader {
        let state = Arc::new(Mutex::new(StreamState {
            kept: Vec::new(),
            total: 0,
            hasher: Sha256::new(),
        }));
        let (tx, done) = mpsc::channel();
        let shared = Arc::clone(&state);
        thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match source.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let chunk = &buf[..n];
                        let Ok(mut st) = shared.lock() else { break };
                        st.total += n as u64;
                        st.hasher.update(chunk);
                        let room = cap.saturating_sub(st.kept.len());
                        let take = room.min(n);
                        st.kept.extend_from_slice(&chunk[..take]);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
            let _ = tx.send(());
        });
        StreamReader { state, done }
    }

    /// Waits up to `wait` for the end of the stream, then returns what was captured.
    ///
    /// The wait is bounded because a process that escaped the process group could hold the pipe
    /// open forever; in that case the output seen so far is returned and the reader thread is
    /// left to finish on its own.
    pub(crate) fn finish(self, wait: Duration) -> CapturedOutput {
        let _ = self.done.recv_timeout(wait);
        let (kept, total, hasher) = match self.state.lock() {
            Ok(st) => (st.kept.clone(), st.total, st.hasher.clone()),
            Err(poisoned) => {
                let st = poisoned.into_inner();
                (st.kept.clone(), st.total, st.hasher.clone())
            }
        };
        CapturedOutput {
            text: String::from_utf8_lossy(&kept).into_owned(),
            total_bytes: total,
            truncated: total > kept.len() as u64,
            sha256: format!("sha256:{}", hex::encode(hasher.finalize())),
        }
    }
}

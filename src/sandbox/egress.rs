//! medin's egress: every way out of an attempt's network namespace, served by the harness.
//!
//! (The proxy, forwards and catch-all follow; see `inside.rs` for how sockets are made inside.)

#[cfg(target_os = "linux")]
#[allow(dead_code)] // the proxy and catch-all (next commits) use all of it
mod inside;

#[cfg(target_os = "linux")]
pub use inside::bind_inside;

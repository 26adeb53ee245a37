//! What may leave: `host:port` patterns of the allowlist, and the loopback endpoints mirrored
//! inside. Parsing is strict (a pattern that cannot match anything is an error naming it), and
//! matching is exact: a name is compared without case and without a trailing dot, a wildcard
//! `*.example.com` matches names *below* `example.com` (not `example.com` itself), and the
//! port always has to be equal.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

/// One allowed destination: `host:port`, `*.suffix:port`, `1.2.3.4:port` or `[::1]:port`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostPort {
    host: HostPattern,
    port: u16,
}

/// The host half of a [`HostPort`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum HostPattern {
    /// One name (lower case, no trailing dot).
    Name(String),
    /// Any name below this suffix (lower case, without the leading `*.`).
    Below(String),
    /// One address.
    Ip(IpAddr),
}

/// A `host:port` that cannot be an allowlist entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostPortError {
    #[error("egress entry `{0}` has no port: write it as `host:port`, e.g. `api.anthropic.com:443`")]
    NoPort(String),
    #[error("egress entry `{entry}` has port `{port}`, which is not a number from 1 to 65535")]
    BadPort { entry: String, port: String },
    #[error("egress entry `{entry}` has host `{host}`, which is not a host name, an IP address or `*.name`: names are letters, digits, `-`, `_` and dots")]
    BadHost { entry: String, host: String },
}

impl HostPort {
    /// The entry for one address (a forward, or an IP the caller allows).
    pub fn addr(addr: SocketAddr) -> HostPort {
        HostPort {
            host: HostPattern::Ip(addr.ip()),
            port: addr.port(),
        }
    }

    /// The port this entry allows.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether a connection to `host` (a name or an address as a client wrote it, IPv6 in
    /// brackets or not) at `port` is this entry.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        if port != self.port {
            return false;
        }
        let host = canonical_host(host);
        match &self.host {
            HostPattern::Ip(ip) => host.parse::<IpAddr>().is_ok_and(|h| h == *ip),
            HostPattern::Name(name) => host == *name,
            HostPattern::Below(suffix) => host.strip_suffix(suffix.as_str()).is_some_and(|head| !head.is_empty()),
        }
    }
}

/// A host as a client wrote it, compared: lower case, no brackets, no trailing dot.
pub(super) fn canonical_host(host: &str) -> String {
    let host = host.trim();
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

/// Whether `name` is a host name medin will match (not an address): labels of letters,
/// digits, `-` and `_`, 1..=63 bytes each, at most 253 in all.
pub(super) fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

impl FromStr for HostPort {
    type Err = HostPortError;

    fn from_str(entry: &str) -> Result<HostPort, HostPortError> {
        let trimmed = entry.trim();
        let (host, port) = trimmed
            .rsplit_once(':')
            .filter(|(h, _)| !h.is_empty() && (!h.contains(':') || h.starts_with('[')))
            .ok_or_else(|| HostPortError::NoPort(entry.to_string()))?;
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| HostPortError::BadPort {
                entry: entry.to_string(),
                port: port.to_string(),
            })?;
        let bad_host = || HostPortError::BadHost {
            entry: entry.to_string(),
            host: host.to_string(),
        };
        let canonical = canonical_host(host);
        let pattern = if let Ok(ip) = canonical.parse::<IpAddr>() {
            HostPattern::Ip(ip)
        } else if host.starts_with('[') {
            return Err(bad_host());
        } else if let Some(suffix) = canonical.strip_prefix("*.") {
            if !is_host_name(suffix) {
                return Err(bad_host());
            }
            HostPattern::Below(format!(".{suffix}"))
        } else if is_host_name(&canonical) {
            HostPattern::Name(canonical)
        } else {
            return Err(bad_host());
        };
        Ok(HostPort { host: pattern, port })
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostPattern::Name(n) => write!(f, "{n}:{}", self.port),
            HostPattern::Below(s) => write!(f, "*{s}:{}", self.port),
            HostPattern::Ip(ip) => write!(f, "{}", SocketAddr::new(*ip, self.port)),
        }
    }
}

/// What an attempt may reach (see the module documentation of [`super`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EgressRules {
    /// Reachable through the proxy, from the host's network.
    pub allow: Vec<HostPort>,
    /// Loopback endpoints of the host mirrored inside the namespace at the same address
    /// (a model server at `127.0.0.1:8080` inside reaches the host's `127.0.0.1:8080`).
    /// Each must be a loopback address with a port.
    pub forwards: Vec<SocketAddr>,
}

impl EgressRules {
    /// Whether `host:port` may be reached through the proxy: an allowlist entry or a forward.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        self.allow.iter().any(|a| a.matches(host, port))
            || self.forwards.iter().any(|f| HostPort::addr(*f).matches(host, port))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hp(s: &str) -> HostPort {
        s.parse().unwrap()
    }

    #[test]
    fn names_match_without_case_or_trailing_dot_and_only_at_their_port() {
        let a = hp("API.Anthropic.com:443");
        assert!(a.matches("api.anthropic.com", 443));
        assert!(a.matches("api.ANTHROPIC.com.", 443));
        assert!(!a.matches("api.anthropic.com", 80));
        assert!(!a.matches("evil-api.anthropic.com", 443));
        assert!(!a.matches("api.anthropic.com.evil.net", 443));
    }

    #[test]
    fn a_wildcard_matches_names_below_its_suffix_only() {
        let w = hp("*.example.com:443");
        assert!(w.matches("a.example.com", 443));
        assert!(w.matches("a.b.example.com", 443));
        assert!(!w.matches("example.com", 443));
        assert!(!w.matches("badexample.com", 443));
        assert!(!w.matches(".example.com", 443));
        assert_eq!(w.to_string(), "*.example.com:443");
    }

    #[test]
    fn addresses_match_as_addresses() {
        assert!(hp("127.0.0.1:8080").matches("127.0.0.1", 8080));
        assert!(!hp("127.0.0.1:8080").matches("localhost", 8080));
        assert!(hp("[::1]:8080").matches("[::1]", 8080));
        assert!(hp("[::1]:8080").matches("0:0::1", 8080));
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        assert!(matches!(
            "example.com".parse::<HostPort>(),
            Err(HostPortError::NoPort(_))
        ));
        assert!(matches!(
            "example.com:0".parse::<HostPort>(),
            Err(HostPortError::BadPort { .. })
        ));
        assert!(matches!(
            "example.com:https".parse::<HostPort>(),
            Err(HostPortError::BadPort { .. })
        ));
        assert!(matches!(
            "exa mple.com:443".parse::<HostPort>(),
            Err(HostPortError::BadHost { .. })
        ));
        assert!(matches!(
            "*.:443".parse::<HostPort>(),
            Err(HostPortError::BadHost { .. })
        ));
        assert!(matches!(
            "a.*.com:443".parse::<HostPort>(),
            Err(HostPortError::BadHost { .. })
        ));
        assert!(matches!("::1:443".parse::<HostPort>(), Err(HostPortError::NoPort(_))));
        let msg = "example.com".parse::<HostPort>().unwrap_err().to_string();
        assert!(msg.contains("host:port"), "{msg}");
    }

    #[test]
    fn rules_allow_their_entries_and_their_forwards() {
        let rules = EgressRules {
            allow: vec![hp("api.openai.com:443")],
            forwards: vec!["127.0.0.1:9999".parse().unwrap()],
        };
        assert!(rules.allows("api.openai.com", 443));
        assert!(rules.allows("127.0.0.1", 9999));
        assert!(!rules.allows("127.0.0.1", 9998));
        assert!(!rules.allows("example.com", 443));
    }
}

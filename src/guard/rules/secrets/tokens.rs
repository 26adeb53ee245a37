//! The token formats `secrets.token` knows, each its own regex, compiled only the first time a
//! text holds a literal that every match of that format contains (`ghp_`, `AKIA`, `-----BEGIN `);
//! one set of all those literals names, in one pass over a text, the formats it may hold.
//!
//! One regex of all formats cost ~6 M instructions to compile (the counted repetitions unroll
//! into hundreds of NFA states, built forwards and in reverse), paid by every `medin guard
//! --hook` process on its first argument, though almost no command holds a token. Here a
//! command without any format's literal compiles nothing, and one with a GitHub token compiles
//! only the GitHub format (in its ASCII form on ASCII text, see `guard::regexes`).
//!
//! [`find_iter`] yields exactly what `find_iter` of the alternation `F1|F2|..` of the formats
//! (in table order) would: the leftmost match, the earlier format on a tie, the next search
//! starting where a match ended. The unit tests check that against the alternation.
//!
//! Owns only the token patterns; what counts as a real secret (entropy, placeholders) is
//! `secrets`'.

use std::sync::OnceLock;

use crate::guard::needles::Needles;
use crate::guard::regexes::Pattern;

/// One token format: literals of which every match holds at least one, and its pattern.
struct Format {
    needles: &'static [&'static str],
    pattern: Pattern,
}

impl Format {
    const fn new(needles: &'static [&'static str], pattern: &'static str) -> Self {
        Self {
            needles,
            pattern: Pattern::new(pattern),
        }
    }
}

/// Every format's needles in one set, and the format each needle belongs to: one pass over a
/// text names the formats it may hold (one `contains` per needle was a tenth of the guard's
/// time).
fn prefilter() -> &'static (Needles, Vec<usize>) {
    static PREFILTER: OnceLock<(Needles, Vec<usize>)> = OnceLock::new();
    PREFILTER.get_or_init(|| {
        let needles: Vec<(usize, &'static str)> = FORMATS
            .iter()
            .enumerate()
            .flat_map(|(i, f)| f.needles.iter().map(move |n| (i, *n)))
            .collect();
        let format_of = needles.iter().map(|(i, _)| *i).collect();
        (
            Needles::exact_from(needles.into_iter().map(|(_, n)| n).collect()),
            format_of,
        )
    })
}

/// The formats, in the order of priority when two match at the same place.
static FORMATS: [Format; 30] = [
    Format::new(
        &["AKIA", "ASIA", "AGPA", "AIDA", "AROA"],
        r"(?-u:\b)((?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16})(?-u:\b)",
    ),
    Format::new(
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"(?-u:\b)(gh[pousr]_[A-Za-z0-9]{36,})(?-u:\b)",
    ),
    Format::new(&["github_pat_"], r"(?-u:\b)(github_pat_[A-Za-z0-9_]{40,})(?-u:\b)"),
    Format::new(&["glpat-"], r"(?-u:\b)(glpat-[A-Za-z0-9_\-]{20,})(?-u:\b)"),
    Format::new(&["xox"], r"(?-u:\b)(xox[abposr]-[A-Za-z0-9\-]{10,})(?-u:\b)"),
    Format::new(&["k_live_"], r"(?-u:\b)([sr]k_live_[0-9A-Za-z]{20,})(?-u:\b)"),
    Format::new(
        &["sk-"],
        r"(?-u:\b)(sk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_\-]{20,})(?-u:\b)",
    ),
    Format::new(&["AIza"], r"(?-u:\b)(AIza[0-9A-Za-z_\-]{35})(?-u:\b)"),
    Format::new(&["npm_"], r"(?-u:\b)(npm_[A-Za-z0-9]{36})(?-u:\b)"),
    Format::new(&["hf_"], r"(?-u:\b)(hf_[A-Za-z]{34})(?-u:\b)"),
    Format::new(&["dop_v1_"], r"(?-u:\b)(dop_v1_[a-f0-9]{64})(?-u:\b)"),
    Format::new(
        &["pypi-AgEIcHlwaS5vcmc"],
        r"(?-u:\b)(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})",
    ),
    Format::new(&["dapi"], r"(?-u:\b)(dapi[a-f0-9]{32})(?-u:\b)"),
    Format::new(&["shp"], r"(?-u:\b)(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})(?-u:\b)"),
    Format::new(
        &["SG."],
        r"(?-u:\b)(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})(?-u:\b)",
    ),
    // Google OAuth refresh and access tokens (`gcloud`, `firebase --token`).
    Format::new(&["1//0"], r"(?-u:\b)(1//0[A-Za-z0-9_\-]{40,})"),
    Format::new(&["ya29."], r"(?-u:\b)(ya29\.[A-Za-z0-9_\-]{40,})"),
    // Terraform Cloud / Enterprise API tokens (`~/.terraformrc`, `TF_TOKEN_*`).
    Format::new(
        &[".atlasv1."],
        r"(?-u:\b)([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-]{60,})",
    ),
    // RubyGems API keys and NuGet API keys.
    Format::new(&["rubygems_"], r"(?-u:\b)(rubygems_[a-f0-9]{48})(?-u:\b)"),
    Format::new(&["oy2"], r"(?-u:\b)(oy2[a-z0-9]{43})(?-u:\b)"),
    Format::new(
        &["-----BEGIN "],
        r"(-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----)",
    ),
    Format::new(
        &[".eyJ"],
        r"(?-u:\b)(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})",
    ),
    Format::new(
        &["hooks.slack.com/"],
        r"(hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]{6,}/[A-Za-z0-9]{6,}/[A-Za-z0-9]{16,})",
    ),
    // A Telegram bot's token (`7412589630:AAF3kL..`): the bot id, a colon, and its secret.
    Format::new(&[":AA"], r"(?-u:\b)([0-9]{8,10}:AA[A-Za-z0-9_\-]{30,34})(?-u:\b)"),
    Format::new(
        &[".com/api/webhooks/"],
        r"(discord(?:app)?\.com/api/webhooks/[0-9]{15,}/[A-Za-z0-9_\-]{40,})",
    ),
    // Other chat and automation webhooks: the URL is the credential.
    Format::new(
        &["/IncomingWebhook/"],
        r"((?:outlook\.office(?:365)?\.com/webhook|[a-z0-9-]+\.webhook\.office\.com/webhookb2)/[A-Za-z0-9@\-]{30,}/IncomingWebhook/[A-Za-z0-9]{16,})",
    ),
    Format::new(
        &["hooks.zapier.com/"],
        r"(hooks\.zapier\.com/hooks/catch/[0-9]{4,}/[A-Za-z0-9]{5,})",
    ),
    Format::new(
        &["maker.ifttt.com/"],
        r"(maker\.ifttt\.com/trigger/[^/\s]+/with/key/[A-Za-z0-9_\-]{16,})",
    ),
    Format::new(
        &["api.telegram.org/bot"],
        r"(api\.telegram\.org/bot[0-9]{6,}:[A-Za-z0-9_\-]{30,})",
    ),
    Format::new(
        &["chat.googleapis.com/"],
        r"(chat\.googleapis\.com/v1/spaces/[A-Za-z0-9_\-]+/messages\?key=[A-Za-z0-9_\-]{20,}&token=[A-Za-z0-9_\-=%]{20,})",
    ),
];

/// No format matches fewer bytes than this (`xox?-` and ten more): shorter texts, most argv
/// words, are not searched for needles at all.
const SHORTEST_MATCH: usize = 15;

/// The token-shaped matches in `text`, in order, as the alternation of all formats finds them.
pub(super) fn find_iter(text: &str) -> Matches<'_> {
    let candidates = if text.len() < SHORTEST_MATCH {
        Vec::new()
    } else {
        let (needles, format_of) = prefilter();
        let mut held = [false; FORMATS.len()];
        for needle in needles.held_in(text) {
            held[format_of[needle]] = true;
        }
        FORMATS
            .iter()
            .zip(held)
            .filter(|(_, held)| *held)
            .map(|(f, _)| (f, None))
            .collect()
    };
    Matches {
        text,
        at: 0,
        candidates,
    }
}

/// Iterator of [`find_iter`].
pub(super) struct Matches<'t> {
    text: &'t str,
    /// Where the next search starts.
    at: usize,
    /// The formats that may still match, each with its next match found so far (start, end).
    candidates: Vec<(&'static Format, Option<(usize, usize)>)>,
}

impl<'t> Iterator for Matches<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let (text, at) = (self.text, self.at);
        // A format's earlier match that starts at or after `at` is still its leftmost one.
        for (format, next) in &mut self.candidates {
            if next.is_none_or(|(start, _)| start < at) {
                *next = format.pattern.find_at(text, at).map(|m| (m.start, m.end));
            }
        }
        self.candidates.retain(|(_, next)| next.is_some());
        // Leftmost start wins; on a tie the format listed first would (`min_by_key` keeps the
        // first), though no two formats can start a match at the same place (distinct prefixes).
        let (start, end) = self
            .candidates
            .iter()
            .filter_map(|(_, next)| *next)
            .min_by_key(|m| m.0)?;
        self.at = end;
        Some(&text[start..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `find_iter` must equal: the one regex of every format.
    fn alternation() -> &'static regex::Regex {
        static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        RE.get_or_init(|| {
            let all: Vec<&str> = FORMATS.iter().map(|f| f.pattern.source()).collect();
            regex::Regex::new(&all.join("|")).expect("the alternation compiles")
        })
    }

    fn same_as_alternation(text: &str) {
        let split: Vec<&str> = find_iter(text).collect();
        let one: Vec<&str> = alternation().find_iter(text).map(|m| m.as_str()).collect();
        assert_eq!(split, one, "on {text:?}");
    }

    #[test]
    fn each_format_matches_its_sample_which_holds_a_needle() {
        let samples = [
            "AKIAZ7Q2J4K6L8M0N2P4",
            "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5",
            "github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz0123456789",
            "glpat-abcdefghij0123456789",
            "xoxb-0123456789",
            "rk_live_abcdefghij0123456789",
            "sk-ant-api03-abcdefghij0123456789",
            "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
            "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "pypi-AgEIcHlwaS5vcmcabcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz",
            "dapi0123456789abcdef0123456789abcdef",
            "shpat_0123456789abcdef0123456789abcdef",
            "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
            "1//0eG3dLSv8pDXiGp9rpG730RWzRA4wSYUxaujbht3x3",
            "ya29.a0AfH6SMBx3dLSv8pDXiGp9rpG730RWzRA4wSYUxau",
            "ERaQDvyAa1mn8g.atlasv1.05U0anBTVF4jupebBgSg3IXSZt9t4wXAvbr0Hh94DtIjZ3PedvBBOm9qKy25ETmN",
            "rubygems_6111afb8de0646910122e2a1b8bb47327605f4cc7ad50d21",
            "oy2p8s0wy1lbccacxwgduwgwgf7moenvx97pqr1p9xtzg8",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlMTIz",
            "hooks.slack.com/services/T0123456/B0123456/abcdefghijklmnop",
            "7412589630:AAF3kLm9Qp2rX7vT5zB8nW1cY4dH6jG0sEx",
            "discord.com/api/webhooks/123456789012345678/abcdefghijklmnopqrstuvwxyz0123456789ABCDEF",
            "outlook.office.com/webhook/a1b2c3d4-e5f6-7a8b-9c0d-e1f2a3b4c5d6@a1b2c3d4/IncomingWebhook/0123456789abcdef",
            "hooks.zapier.com/hooks/catch/1234/abcde",
            "maker.ifttt.com/trigger/ev/with/key/abcdefghij0123456789",
            "api.telegram.org/bot123456:AAH8fj3kLm9Qr4StUv7WxYz1Ab3Cd5Ef6Gh",
            "chat.googleapis.com/v1/spaces/AAAA/messages?key=abcdefghij0123456789&token=abcdefghij0123456789",
        ];
        assert_eq!(samples.len(), FORMATS.len());
        // The shortest sample is as short as a match gets.
        assert_eq!(samples.iter().map(|s| s.len()).min(), Some(SHORTEST_MATCH));
        for (format, sample) in FORMATS.iter().zip(samples) {
            assert_eq!(
                format.pattern.find_at(sample, 0),
                Some(0..sample.len()),
                "{}",
                format.pattern.source()
            );
            assert!(
                format.needles.iter().any(|n| sample.contains(n)),
                "{:?} are not in {sample}",
                format.needles
            );
            assert_eq!(find_iter(sample).collect::<Vec<_>>(), [sample]);
        }
    }

    #[test]
    fn overlaps_and_ties_resolve_as_the_alternation() {
        for text in [
            "",
            "ls -la",
            // `sk-` inside a longer `sk-ant-` token and the JWT inside a webhook path.
            "sk-ant-api03-abcdefghij0123456789 sk-abcdefghij0123456789xyz",
            "AKIAZ7Q2J4K6L8M0N2P4AKIAZ7Q2J4K6L8M0N2P4 AKIAZ7Q2J4K6L8M0N2P4",
            "x=ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5;y=glpat-abcdefghij0123456789",
            "https://hooks.slack.com/services/T0123456/B0123456/sk-abcdefghij0123456789xyz",
            "-----BEGIN RSA PRIVATE KEY----- -----BEGIN PGP PRIVATE KEY BLOCK-----",
            // Not ASCII: the formats' Unicode forms.
            "sk-ant-api٠٣-abcdefghij0123456789",
            "é=ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5 ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xYé",
        ] {
            same_as_alternation(text);
        }
    }

    proptest! {
        // Texts built from pieces of the formats (prefixes, separators, token bodies) so that
        // matches overlap, touch and tie often.
        #[test]
        fn split_formats_find_what_the_alternation_finds(
            pieces in proptest::collection::vec(prop_oneof![
                Just("AKIA"), Just("ghp_"), Just("github_pat_"), Just("glpat-"), Just("xoxb-"),
                Just("sk_live_"), Just("sk-"), Just("proj-"), Just("ant-api03-"), Just("AIza"),
                Just("npm_"), Just("hf_"), Just("dop_v1_"), Just("pypi-AgEIcHlwaS5vcmc"),
                Just("dapi"), Just("shpat_"), Just("SG."), Just("-----BEGIN "), Just("PRIVATE KEY-----"),
                Just("eyJ"), Just(".eyJ"), Just("."), Just("hooks.slack.com/services/T0123456/"),
                Just("discord.com/api/webhooks/123456789012345678/"), Just(" "), Just("="), Just("-"),
                Just("_"), Just("é"), Just("0123456789abcdef"), Just("ABCDEFGHIJKLMNOP"),
                Just("abcdefghijklmnopqrstuvwxyz"),
            ], 0..24)
        ) {
            same_as_alternation(&pieces.concat());
        }
    }
}

//! "Did you mean ...?": the one place that picks the nearest valid name for a typo, so spec
//! keys, tool names and tool input keys are suggested the same way everywhere.

/// The candidate closest to `word` (Jaro-Winkler ≥ 0.7 or edit distance ≤ 2), if any.
pub fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (*c, strsim::jaro_winkler(word, c), strsim::levenshtein(word, c)))
        .filter(|(_, jw, lev)| *jw >= 0.7 || *lev <= 2)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, _, _)| c)
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn typos_find_their_key_and_strangers_find_none() {
        assert_eq!(nearest("promt", &["prompt", "policy", "limits"]), Some("prompt"));
        assert_eq!(nearest("writ_file", &["read_file", "write_file"]), Some("write_file"));
        assert_eq!(nearest("zzzzzz", &["prompt", "policy"]), None);
    }
}

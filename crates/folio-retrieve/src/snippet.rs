//! A short excerpt of a chunk around the first query word it contains.

pub fn snippet(text: &str, query: &str, max_chars: usize) -> String {
    let lower = text.to_lowercase();
    let hit = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
        .filter_map(|w| lower.find(&w.to_lowercase()))
        .min();
    let flat: Vec<char> = text.chars().collect();
    // `find` gives a byte offset in the lower-cased text; counting chars up to
    // it is close enough to centre the window.
    let at = hit
        .map(|b| lower[..b.min(lower.len())].chars().count())
        .unwrap_or(0);
    let start = at.saturating_sub(max_chars / 3).min(flat.len());
    let end = (start + max_chars).min(flat.len());
    let body: String = flat[start..end].iter().collect();
    let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
    format!(
        "{}{}{}",
        if start > 0 { "…" } else { "" },
        body,
        if end < flat.len() { "…" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_contains_the_matched_word() {
        let text = format!(
            "{} reference counting here {}",
            "x ".repeat(300),
            "y ".repeat(300)
        );
        let s = snippet(&text, "Reference counting", 80);
        assert!(s.contains("reference counting"), "{s}");
        assert!(s.starts_with('…') && s.ends_with('…'));
    }
}

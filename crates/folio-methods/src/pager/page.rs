//! The page PAGER builds: a title and sections, each an empty slot until
//! evidence fills it. The page is ours, not the model's: a fill can only
//! ever change its own slot, so the rest of the page cannot drift.

use serde::{Deserialize, Serialize};

/// What an empty slot looks like wherever the page is shown to the model.
pub const PLACEHOLDER: &str = "<TO BE FILLED>";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct Page {
    pub title: String,
    pub sections: Vec<Section>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct Section {
    pub heading: String,
    /// `None` while the slot waits for evidence.
    pub body: Option<String>,
}

impl Page {
    pub fn new(title: impl Into<String>, headings: Vec<String>) -> Page {
        Page {
            title: title.into(),
            sections: headings
                .into_iter()
                .map(|heading| Section {
                    heading,
                    body: None,
                })
                .collect(),
        }
    }

    /// The page as markdown, empty slots shown as [`PLACEHOLDER`].
    pub fn markdown(&self) -> String {
        let mut out = format!("# {}\n", self.title);
        for section in &self.sections {
            out.push_str(&format!(
                "\n## {}\n{}\n",
                section.heading,
                section.body.as_deref().unwrap_or(PLACEHOLDER)
            ));
        }
        out
    }

    pub fn first_empty(&self) -> Option<usize> {
        self.sections.iter().position(|s| s.body.is_none())
    }
}

/// Lines of a reply with code fences removed: small models like to wrap
/// markdown in them.
pub fn unfenced(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.trim_start().starts_with("```"))
}

/// A markdown ATX heading as (level, text), or `None` for any other line.
/// Small models also write numbered headings without the space (`#1: Title`).
pub fn heading(line: &str) -> Option<(usize, String)> {
    let trimmed = line.trim_start();
    let level = trimmed.chars().take_while(|&c| c == '#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &trimmed[level..];
    if !rest.starts_with(' ') && without_numbering(rest) == rest {
        return None;
    }
    let text = clean_heading(rest);
    (!text.is_empty()).then_some((level, text))
}

/// Heading text without decoration models add: numbering, closing hashes,
/// bold markers, a `[Section Title]`-style bracket pair, a stray placeholder.
pub fn clean_heading(text: &str) -> String {
    let text = without_placeholders(&text.replace("**", ""));
    let mut text = without_numbering(text.trim())
        .trim_end_matches('#')
        .trim()
        .to_string();
    if text.starts_with('[') && text.ends_with(']') && text.len() >= 2 {
        text = text[1..text.len() - 1].trim().to_string();
    }
    text
}

/// `text` with no placeholder left, not even one that removing another
/// closes up (`<TO BE <TO BE FILLED>FILLED>`): a placeholder in parsed text
/// would make a filled slot look empty to the model.
pub fn without_placeholders(text: &str) -> String {
    let mut text = text.to_string();
    while text.contains(PLACEHOLDER) {
        text = text.replace(PLACEHOLDER, "");
    }
    text
}

/// `text` without a leading `1.`, `2:` or `3)`.
fn without_numbering(text: &str) -> &str {
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    match text[digits..].strip_prefix(['.', ':', ')']) {
        Some(rest) if digits > 0 => rest.trim_start(),
        _ => text,
    }
}

/// Headings compare by their letters and digits only, so `Early life:` and
/// `early life` are the same section.
pub fn same_heading(a: &str, b: &str) -> bool {
    let key = |s: &str| {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    key(a) == key(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_shows_empty_slots_as_placeholders() {
        let mut page = Page::new("Title", vec!["One".into(), "Two".into()]);
        page.sections[0].body = Some("Filled [1].".into());
        assert_eq!(
            page.markdown(),
            "# Title\n\n## One\nFilled [1].\n\n## Two\n<TO BE FILLED>\n"
        );
        assert_eq!(page.first_empty(), Some(1));
    }

    #[test]
    fn headings_are_cleaned_and_compared_loosely() {
        assert_eq!(
            heading("## **[Early life]** ##"),
            Some((2, "Early life".into()))
        );
        assert_eq!(heading("#hashtag"), None);
        assert_eq!(heading("##   "), None);
        assert_eq!(
            heading("## Career <TO BE FILLED>"),
            Some((2, "Career".into()))
        );
        assert_eq!(heading("#1: Early life"), Some((1, "Early life".into())));
        assert_eq!(
            heading("## Career <TO BE <TO BE **FILLED>FILLED>"),
            Some((2, "Career".into()))
        );
        assert_eq!(heading("## 2. Career"), Some((2, "Career".into())));
        assert_eq!(heading("## 1984 in film"), Some((2, "1984 in film".into())));
        assert!(same_heading("Early life:", "early LIFE"));
        assert!(!same_heading("Early life", "Later life"));
    }
}

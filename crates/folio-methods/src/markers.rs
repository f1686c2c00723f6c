//! The markers Folio's prompts wrap documents in (`<document …>`,
//! `<passage …>`, `<baseline>` and their closing tags) never belong in an
//! answer. Small models echo them: they close the last document they were
//! shown (`</document>` at an answer's end) or start writing a new one
//! after answering. So the steps that write an answer stop at them, and
//! what a reply still holds of them is taken out before it is kept.

use std::sync::LazyLock;

use regex::Regex;

/// Where a reply that writes the answer stops. The closing tag ends it
/// wherever it comes; the opening tag only at the start of a line after
/// some answer: a reply that opens by echoing a source is left to go on
/// past it (the tag is taken out afterwards), since stopping there would
/// leave no answer at all. Only `<document>` is shown to the steps that
/// write answers (`<passage>` and `<baseline>` are the graph build's), and
/// OpenAI's API takes at most four stop sequences, so these are two.
pub const MARKER_STOPS: [&str; 2] = ["</document>", "\n<document"];

/// Any of the prompts' marker tags, opening (with attributes) or closing.
static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"</?(?:document|passage|baseline)\b[^>\n]{0,400}>").expect("a valid pattern")
});

/// `text` without the prompts' marker tags, trimmed.
pub fn without_markers(text: &str) -> String {
    MARKER.replace_all(text, "").trim().to_string()
}

/// `stop` with the marker stops added, each once.
pub fn with_marker_stops(mut stop: Vec<String>) -> Vec<String> {
    for marker in MARKER_STOPS {
        if !stop.iter().any(|s| s == marker) {
            stop.push(marker.to_string());
        }
    }
    stop
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoed_markers_are_taken_out_of_an_answer() {
        assert_eq!(
            without_markers("Use `let mut x = 5;` [1].\n</document>"),
            "Use `let mut x = 5;` [1]."
        );
        assert_eq!(
            without_markers(
                "<document number=\"2\" source=\"ch03.md\">\nShadowing re-binds a name [2]."
            ),
            "Shadowing re-binds a name [2]."
        );
        assert_eq!(
            without_markers("<baseline>A</baseline> and <passage n=\"1\">B"),
            "A and B"
        );
    }

    #[test]
    fn text_that_only_looks_like_markup_is_kept() {
        let answer = "Write `Vec<String>` or <documentation> as you like; a < b > c.";
        assert_eq!(without_markers(answer), answer);
    }

    #[test]
    fn marker_stops_are_added_once() {
        let stops = with_marker_stops(vec!["</document>".into(), "END".into()]);
        assert_eq!(stops.len(), MARKER_STOPS.len() + 1);
        assert_eq!(stops.iter().filter(|s| *s == "</document>").count(), 1);
    }
}

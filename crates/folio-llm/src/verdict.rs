//! Yes/no replies a program reads: a model asked for a verdict (is this
//! knowledge enough, does this answer mean that one) is held to a reply that
//! starts with one where the backend takes a grammar or a JSON schema, and
//! read leniently where it takes neither.

use serde_json::json;

use super::response_format::{object_schema, one_line, text_schema};
use super::ReplySchema;

/// The grammar for a verdict reply: "Yes" or "No", then a short reason.
pub const VERDICT_GRAMMAR: &str = "root ::= (\"Yes\" | \"No\") [^\\n]{0,120}\n";

/// [`VERDICT_GRAMMAR`]'s shape for a server: the word, then a short reason.
pub fn verdict_schema() -> ReplySchema {
    ReplySchema {
        schema: object_schema(&[
            ("verdict", json!({ "enum": ["Yes", "No"] })),
            ("reason", text_schema(0, 120)),
        ]),
        to_text: |v| {
            let verdict = v["verdict"].as_str()?;
            let reason = one_line(v["reason"].as_str().unwrap_or_default());
            Some(format!("{verdict} {reason}").trim_end().to_string())
        },
    }
}

/// The verdict in a reply: its first word, yes or no; `None` when the reply
/// starts with anything else.
pub fn verdict(reply: &str) -> Option<bool> {
    let word: String = reply
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase();
    match word.as_str() {
        "yes" => Some(true),
        "no" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_verdict_reads_as_the_grammars_line() {
        let schema = verdict_schema();
        let text = (schema.to_text)(&json!({"verdict": "No", "reason": "it says\nnothing"}));
        assert_eq!(text.as_deref(), Some("No it says nothing"));
        assert_eq!(verdict(&text.unwrap()), Some(false));
        assert_eq!((schema.to_text)(&json!({"reason": "x"})), None);
    }

    #[test]
    fn verdicts_are_the_first_word() {
        assert_eq!(verdict("Yes, the knowledge names her."), Some(true));
        assert_eq!(verdict("**No** — it does not say."), Some(false));
        assert_eq!(verdict("NO."), Some(false));
        assert_eq!(verdict("Maybe"), None);
        assert_eq!(verdict("Nothing says so"), None);
    }
}

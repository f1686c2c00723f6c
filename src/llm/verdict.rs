//! Yes/no replies a program reads: a model asked for a verdict (is this
//! knowledge enough, does this answer mean that one) is held to a reply that
//! starts with one where the backend takes a grammar, and read leniently
//! where it does not.

/// The grammar for a verdict reply: "Yes" or "No", then a short reason.
pub const VERDICT_GRAMMAR: &str = "root ::= (\"Yes\" | \"No\") [^\\n]{0,120}\n";

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
    fn verdicts_are_the_first_word() {
        assert_eq!(verdict("Yes, the knowledge names her."), Some(true));
        assert_eq!(verdict("**No** — it does not say."), Some(false));
        assert_eq!(verdict("NO."), Some(false));
        assert_eq!(verdict("Maybe"), None);
        assert_eq!(verdict("Nothing says so"), None);
    }
}

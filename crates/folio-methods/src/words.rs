//! Words as the text checks of methods compare them: lower-cased runs of
//! letters and digits, and the commonest English words that carry no topic.
//! Attribution matches sentences to passages by them; the follow-up rewrite
//! checks by them that a rewrite kept what the follow-up asks.

/// The text's words, lower-cased, in order.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `word` (lower-cased) says something about a topic: not one of
/// the commonest words, and not a single letter. Numbers count: they are
/// often the answer.
pub fn is_content(word: &str) -> bool {
    let single_letter = word.chars().count() == 1 && !word.chars().all(|c| c.is_ascii_digit());
    !single_letter && !COMMON.contains(&word)
}

const COMMON: &[&str] = &[
    "a", "about", "again", "also", "an", "and", "are", "as", "at", "be", "been", "but", "by",
    "can", "do", "does", "else", "for", "from", "had", "has", "have", "he", "her", "his", "how",
    "if", "in", "instead", "into", "is", "it", "its", "just", "may", "not", "of", "on", "or",
    "she", "so", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "to", "too", "was", "we", "were", "what", "when", "where", "which", "who",
    "why", "will", "with", "would", "you", "your",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lower_cased_runs_and_content_skips_common_words() {
        assert_eq!(words("Box<T>, it's 3!"), ["box", "t", "it", "s", "3"]);
        let content: Vec<String> = words("The answer is 3, a Box<T> of it")
            .into_iter()
            .filter(|w| is_content(w))
            .collect();
        assert_eq!(content, ["answer", "3", "box"]);
    }
}

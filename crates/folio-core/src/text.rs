//! Text normalisation shared by the methods (CRP-RAG compares steps and
//! answers with it) and the evaluation's answer metrics (SQuAD-style EM
//! and F1 are computed on it).

/// Lower case, punctuation deleted (not replaced by a space, so "U.S." is
/// "us"), the articles a/an/the dropped as whole words, whitespace collapsed.
/// Punctuation is any character that is neither a letter, a digit nor
/// whitespace, in any script, so "São Paulo" keeps its "ã" while curly
/// quotes and dashes go the way ASCII punctuation does in SQuAD. Combining
/// accents are kept so a decomposed "Å" is not silently folded to "a".
pub fn normalize(text: &str) -> String {
    let kept: String = text
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace() || is_combining_mark(*c))
        .collect();
    kept.split_whitespace()
        .filter(|w| !matches!(*w, "a" | "an" | "the"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The main blocks of combining diacritics (general category Mn); enough
/// for the Latin, Greek and Cyrillic text of the datasets at hand.
fn is_combining_mark(c: char) -> bool {
    matches!(c,
        '\u{0300}'..='\u{036F}'
        | '\u{1AB0}'..='\u{1AFF}'
        | '\u{1DC0}'..='\u{1DFF}'
        | '\u{20D0}'..='\u{20FF}'
        | '\u{FE20}'..='\u{FE2F}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_follows_squad() {
        assert_eq!(normalize("The Eiffel Tower"), "eiffel tower");
        assert_eq!(normalize("  An   apple,\ta PEAR\n"), "apple pear");
        assert_eq!(normalize("U.S.A.!"), "usa");
        assert_eq!(normalize("don't"), "dont");
        // Articles go only as whole words.
        assert_eq!(normalize("Theodore and Anne"), "theodore and anne");
        assert_eq!(normalize("the a an"), "");
        // A word that becomes an article once punctuation goes is dropped too,
        // as in SQuAD, where punctuation is removed first.
        assert_eq!(normalize("“The” end"), "end");
        assert_eq!(normalize(""), "");
        assert_eq!(normalize("..."), "");
    }

    #[test]
    fn letters_of_any_script_survive() {
        assert_eq!(normalize("Ångström"), "ångström");
        assert_eq!(normalize("São Paulo!"), "são paulo");
        assert_eq!(normalize("Ελλάδα — Αθήνα"), "ελλάδα αθήνα");
        // A decomposed Å (A + combining ring) keeps its ring.
        assert_eq!(
            normalize("A\u{30A}ngstro\u{308}m"),
            "a\u{30A}ngstro\u{308}m"
        );
    }
}

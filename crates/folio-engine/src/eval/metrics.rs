//! Answer metrics as the QA literature computes them (the SQuAD evaluation
//! script, which HotpotQA reuses), so Folio's numbers can be set beside
//! published ones: answers are normalised, then compared by exact match,
//! token F1 and Cover-EM, each taking the best over the gold answers.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use folio_core::text::normalize;

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct Scores {
    pub em: bool,
    pub f1: f64,
    pub cover_em: bool,
}

/// Each metric against the gold answer that suits it best (they need not be
/// the same answer: one may match exactly, another overlap more).
pub fn score(prediction: &str, golds: &[String]) -> Scores {
    golds.iter().fold(Scores::default(), |best, gold| Scores {
        em: best.em || exact_match(prediction, gold),
        f1: best.f1.max(f1(prediction, gold)),
        cover_em: best.cover_em || cover_em(prediction, gold),
    })
}

pub fn exact_match(prediction: &str, gold: &str) -> bool {
    normalize(prediction) == normalize(gold)
}

/// Token F1 over normalised words, counting repeated words as often as they
/// occur in both. When either side normalises to nothing the score is 1 if
/// both do and 0 otherwise (SQuAD 2.0's rule), so EM = 1 always implies F1 = 1.
pub fn f1(prediction: &str, gold: &str) -> f64 {
    let prediction = normalize(prediction);
    let gold = normalize(gold);
    let predicted: Vec<&str> = prediction.split_whitespace().collect();
    let wanted: Vec<&str> = gold.split_whitespace().collect();
    if predicted.is_empty() || wanted.is_empty() {
        return f64::from(u8::from(predicted.is_empty() && wanted.is_empty()));
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for word in &wanted {
        *counts.entry(word).or_default() += 1;
    }
    let mut common = 0usize;
    for word in &predicted {
        if let Some(n) = counts.get_mut(word).filter(|n| **n > 0) {
            *n -= 1;
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let precision = common as f64 / predicted.len() as f64;
    let recall = common as f64 / wanted.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

/// The normalised gold answer occurs in the normalised prediction as whole
/// words: "4" is covered by "it is 4 bytes" but not by "1984", which a plain
/// substring test would accept. A gold answer that normalises to nothing
/// (only articles or punctuation) covers nothing, or it would cover
/// everything.
pub fn cover_em(prediction: &str, gold: &str) -> bool {
    let gold = normalize(gold);
    if gold.is_empty() {
        return false;
    }
    format!(" {} ", normalize(prediction)).contains(&format!(" {gold} "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn golds(answers: &[&str]) -> Vec<String> {
        answers.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn exact_match_ignores_case_punctuation_articles_and_spacing() {
        assert!(exact_match("the  Ångström.", "ångström"));
        assert!(
            !exact_match("São Paulo", "sao paulo"),
            "accents are not folded"
        );
        assert!(!exact_match("Paris, France", "Paris"));
        assert!(!exact_match("", "Paris"));
    }

    #[test]
    fn f1_counts_shared_words() {
        // prediction {barack, obama, was, president}, gold {barack, obama}:
        // precision 2/4, recall 2/2, F1 = 2·0.5·1/1.5 = 2/3.
        assert!((f1("Barack Obama was president", "Barack Obama") - 2.0 / 3.0).abs() < 1e-12);
        // Repeats count only as often as the gold has them: {new, new, york}
        // against {new, york}: common 2, precision 2/3, recall 1, F1 = 0.8.
        assert!((f1("new new york", "New York") - 0.8).abs() < 1e-12);
        assert_eq!(f1("the Eiffel tower!", "Eiffel Tower"), 1.0);
        assert_eq!(f1("London", "Paris"), 0.0);
        assert_eq!(f1("", "Paris"), 0.0);
        assert_eq!(f1("the", "a"), 1.0, "both normalise to nothing");
    }

    #[test]
    fn cover_em_wants_whole_words() {
        assert!(cover_em("It is 4 bytes.", "4"));
        assert!(!cover_em("born in 1984", "4"));
        assert!(cover_em("I think it was São Paulo, Brazil", "são paulo"));
        assert!(!cover_em("Paulo", "São Paulo"));
        assert!(!cover_em("anything at all", "the"));
        assert!(!cover_em("", "Paris"));
    }

    #[test]
    fn the_best_gold_answer_counts_for_each_metric() {
        let s = score("four bytes", &golds(&["4", "four"]));
        assert!(!s.em);
        assert!(s.cover_em);
        // Against "four": precision 1/2, recall 1, F1 = 2/3.
        assert!((s.f1 - 2.0 / 3.0).abs() < 1e-12);
        let s = score("The answer is 4", &golds(&["four", "4"]));
        assert!(s.cover_em && !s.em);
        assert!(score("4", &golds(&["four", "4"])).em);
        assert_eq!(score("", &golds(&["x", "y"])), Scores::default());
    }
}

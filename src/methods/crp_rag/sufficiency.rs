//! Whether a step's knowledge is enough to carry it out (the paper's
//! eqs. 9–10): the perplexity of the model's answer to the step, or, where
//! the backend gives no log-probabilities, the model's own verdict.

use crate::llm::TokenLogprob;

/// `exp` of the mean negative log-probability per generated token: 1 when
/// the model was certain of every token, higher the less sure it was.
/// `None` for an answer with no tokens, which shows nothing either way.
pub fn perplexity(tokens: &[TokenLogprob]) -> Option<f64> {
    if tokens.is_empty() {
        return None;
    }
    let mean = tokens.iter().map(|t| -f64::from(t.logprob)).sum::<f64>() / tokens.len() as f64;
    Some(mean.exp())
}

/// The grammar for a self-assessment reply.
pub const VERDICT_GRAMMAR: &str = "root ::= (\"Yes\" | \"No\") [^\\n]{0,120}\n";

/// The verdict in a self-assessment reply: its first word, yes or no.
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

    fn tokens(logprobs: &[f32]) -> Vec<TokenLogprob> {
        logprobs
            .iter()
            .map(|&logprob| TokenLogprob {
                token: "t".into(),
                logprob,
            })
            .collect()
    }

    #[test]
    fn perplexity_is_the_exponent_of_the_mean_surprise() {
        assert_eq!(perplexity(&tokens(&[0.0, 0.0])), Some(1.0));
        // Two tokens each at probability 1/4: perplexity 4.
        let quarter = (0.25f32).ln();
        let p = perplexity(&tokens(&[quarter, quarter])).unwrap();
        assert!((p - 4.0).abs() < 1e-5, "{p}");
        // Probabilities 1/2 and 1/8: mean surprise is ln 4, so 4 again.
        let p = perplexity(&tokens(&[(0.5f32).ln(), (0.125f32).ln()])).unwrap();
        assert!((p - 4.0).abs() < 1e-5, "{p}");
        assert_eq!(perplexity(&[]), None);
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

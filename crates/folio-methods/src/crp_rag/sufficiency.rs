//! Whether a step's knowledge is enough to carry it out (the paper's
//! eqs. 9–10): the perplexity of the model's answer to the step, or, where
//! the backend gives no log-probabilities, the model's own verdict
//! ([`folio_llm::verdict`]).

use folio_llm::{GenerateOptions, TokenLogprob};

/// The check's answer is a sentence or two; its perplexity needs no more.
const CHECK_TOKENS: u32 = 96;

/// How the check's answer is asked for, from the run's `base` settings:
/// greedy, so the perplexity measures the model's confidence and not the
/// luck of a draw, with log-probabilities. A calibration asks the same way.
pub fn check_options(base: &GenerateOptions) -> GenerateOptions {
    GenerateOptions {
        max_tokens: base.max_tokens.min(CHECK_TOKENS),
        temperature: 0.0,
        logprobs: true,
        ..base.clone()
    }
}

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
}

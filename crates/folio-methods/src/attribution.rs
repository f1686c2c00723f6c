//! Sources for sentences the model left unmarked. Small models often write
//! no `[n]` at all (the 1.5B kit default answers most questions in one bare
//! sentence), so an answer would name no source though it was built from
//! passages. Each sentence without a marker is matched to the passage it
//! reads most like: the embedding model's cosine similarity and the share
//! of the sentence's content words the passage holds, averaged. A match at
//! or above [`THRESHOLD`] makes the passage an *attributed* source, shown
//! apart from the sources the model cited itself.
//!
//! The matching is pure (vectors in, matches out); [`match_sentences`]
//! adds the embedding, so the runner and the evaluation's threshold sweep
//! (`folio eval attribution`) score sentences the same way.

use std::collections::HashSet;

use super::citations::{cited_numbers, Citation, CitedBy};
use super::trace::Passage;
use super::words;

/// The score a sentence must reach to be attributed to a passage. Tuned on
/// both dev sets with `folio eval attribution` (docs/evaluation.md,
/// "Attributed sources").
pub const THRESHOLD: f32 = 0.5;

/// The cosine similarity's share of a score; word overlap has the rest.
const COSINE_WEIGHT: f32 = 0.5;

/// A sentence with fewer content words than this ("Paris.", "It is 3.")
/// says too little to match on alone; it is matched as the answer to the
/// question, with the question's words beside its own.
const FEW_WORDS: usize = 4;

/// A sentence of the answer without a citation marker, and the passage it
/// reads most like.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    /// The sentence as the answer has it.
    pub sentence: String,
    /// The passage's number, as the prompt showed it.
    pub passage: usize,
    pub score: f32,
}

/// What of an answer is matched: each unmarked sentence as shown, and the
/// text its score is computed on.
#[derive(Debug, Clone, PartialEq)]
struct Claim {
    sentence: String,
    probe: String,
}

/// The sentences of `answer` that carry no citation marker and say
/// something, each with the text to match it by.
fn unmarked_claims(question: &str, answer: &str) -> Vec<Claim> {
    sentences(answer)
        .into_iter()
        .filter(|s| cited_numbers(s).is_empty())
        .filter_map(|sentence| {
            let words = content_words(sentence).len();
            if words == 0 {
                return None;
            }
            let probe = if words < FEW_WORDS {
                format!("{question} {sentence}")
            } else {
                sentence.to_string()
            };
            Some(Claim {
                sentence: sentence.to_string(),
                probe,
            })
        })
        .collect()
}

/// Each claim's best passage by score. `claim_vectors` and
/// `passage_vectors` are unit vectors in the order of their inputs.
fn best_matches(
    claims: &[Claim],
    claim_vectors: &[Vec<f32>],
    passages: &[Passage],
    passage_vectors: &[Vec<f32>],
) -> Vec<Match> {
    let passage_words: Vec<HashSet<String>> =
        passages.iter().map(|p| content_words(&p.text)).collect();
    claims
        .iter()
        .zip(claim_vectors)
        .filter_map(|(claim, claim_vector)| {
            let words = content_words(&claim.probe);
            passages
                .iter()
                .zip(passage_vectors)
                .zip(&passage_words)
                .map(|((passage, vector), held)| {
                    let overlap =
                        words.intersection(held).count() as f32 / words.len().max(1) as f32;
                    let score =
                        COSINE_WEIGHT * dot(claim_vector, vector) + (1.0 - COSINE_WEIGHT) * overlap;
                    (passage.number, score)
                })
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(passage, score)| Match {
                    sentence: claim.sentence.clone(),
                    passage,
                    score,
                })
        })
        .collect()
}

/// The attributed sources: every passage some match reaches `threshold`
/// on, once, in the answer's order, unless the model cited it already.
pub fn attributed(
    matches: &[Match],
    passages: &[Passage],
    cited: &[Citation],
    threshold: f32,
) -> Vec<Citation> {
    let mut sources: Vec<Citation> = Vec::new();
    for m in matches.iter().filter(|m| m.score >= threshold) {
        if cited.iter().any(|c| c.number == m.passage) {
            continue;
        }
        match sources.iter_mut().find(|c| c.number == m.passage) {
            Some(source) => source.supports.push(m.sentence.clone()),
            None => {
                let Some(passage) = passages.iter().find(|p| p.number == m.passage) else {
                    continue;
                };
                let mut source = Citation::of(passage);
                source.by = CitedBy::Attribution;
                source.supports.push(m.sentence.clone());
                sources.push(source);
            }
        }
    }
    sources
}

/// The best match of each unmarked sentence of `answer` (to `question`)
/// among `passages`. `embed` turns texts into unit vectors: the run's
/// timed retrieval in the runner, the index's model in an evaluation.
pub async fn match_sentences<E, F, Fut>(
    embed: F,
    question: &str,
    answer: &str,
    passages: &[Passage],
) -> Result<Vec<Match>, E>
where
    F: FnOnce(Vec<String>) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<Vec<f32>>, E>>,
{
    let claims = unmarked_claims(question, answer);
    if claims.is_empty() || passages.is_empty() {
        return Ok(Vec::new());
    }
    let texts = claims
        .iter()
        .map(|c| c.probe.clone())
        .chain(passages.iter().map(|p| p.text.clone()))
        .collect();
    let vectors = embed(texts).await?;
    let (claim_vectors, passage_vectors) = vectors.split_at(claims.len().min(vectors.len()));
    Ok(best_matches(
        &claims,
        claim_vectors,
        passages,
        passage_vectors,
    ))
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The answer's sentences: text ending in `.`, `!` or `?` before a space,
/// or a line of its own (list items, headings). Fenced code is not prose
/// and is left out.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, b) in bytes.iter().enumerate() {
            let ends = matches!(b, b'.' | b'!' | b'?')
                && bytes.get(i + 1).is_some_and(u8::is_ascii_whitespace);
            if ends {
                push_trimmed(&mut out, &line[start..=i]);
                start = i + 1;
            }
        }
        push_trimmed(&mut out, &line[start..]);
    }
    out
}

fn push_trimmed<'a>(out: &mut Vec<&'a str>, sentence: &'a str) {
    let sentence = sentence.trim().trim_start_matches(['-', '*', '#', ' ']);
    if !sentence.is_empty() {
        out.push(sentence);
    }
}

/// The words of `text` that carry meaning ([`words::is_content`]).
fn content_words(text: &str) -> HashSet<String> {
    words::words(text)
        .into_iter()
        .filter(|w| words::is_content(w))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passage(number: usize, text: &str) -> Passage {
        Passage::for_test(number, number as i64, &format!("/d/{number}.md"), text)
    }

    #[test]
    fn sentences_split_on_stops_and_lines_and_skip_code() {
        assert_eq!(
            sentences(
                "Use mut. It works! Why? v1.2 stays\n- a list item\n```\nlet x = 1;\n```\nEnd."
            ),
            [
                "Use mut.",
                "It works!",
                "Why?",
                "v1.2 stays",
                "a list item",
                "End."
            ]
        );
    }

    #[test]
    fn marked_and_empty_sentences_are_not_claims_and_short_ones_lean_on_the_question() {
        let claims = unmarked_claims(
            "Who wrote Dracula?",
            "Bram Stoker. He was Irish [2]. The novel appeared in 1897 in London. ...",
        );
        assert_eq!(
            claims,
            [
                Claim {
                    sentence: "Bram Stoker.".into(),
                    probe: "Who wrote Dracula? Bram Stoker.".into()
                },
                Claim {
                    sentence: "The novel appeared in 1897 in London.".into(),
                    probe: "The novel appeared in 1897 in London.".into()
                },
            ]
        );
    }

    #[test]
    fn the_best_passage_over_the_threshold_is_attributed_once_unless_cited() {
        let passages = [
            passage(1, "Cargo builds into target/debug by default."),
            passage(2, "Variables are immutable unless declared with mut."),
        ];
        let claims = unmarked_claims(
            "How do I make a variable mutable?",
            "Declare variables with mut to make them mutable. Mut variables can change. Cargo is unrelated here.",
        );
        // Vectors that agree with the words: claims 1 and 2 point at
        // passage 2, claim 3 at nothing in particular.
        let claim_vectors = [vec![0.0, 1.0], vec![0.0, 1.0], vec![0.7, 0.7]];
        let passage_vectors = [vec![1.0, 0.0], vec![0.0, 1.0]];
        let matches = best_matches(&claims, &claim_vectors, &passages, &passage_vectors);
        assert_eq!(
            matches.iter().map(|m| m.passage).collect::<Vec<_>>(),
            [2, 2, 1]
        );
        assert!(matches[0].score > matches[2].score);

        let sources = attributed(&matches, &passages, &[], THRESHOLD);
        assert_eq!(sources.len(), 1, "{matches:?}");
        assert_eq!(sources[0].number, 2);
        assert_eq!(sources[0].by, CitedBy::Attribution);
        assert_eq!(
            sources[0].supports,
            [
                "Declare variables with mut to make them mutable.",
                "Mut variables can change."
            ]
        );

        let cited = [Citation::of(&passages[1])];
        assert!(
            attributed(&matches, &passages, &cited, THRESHOLD).is_empty(),
            "a passage the model cited is not attributed as well"
        );
        assert!(attributed(&matches, &passages, &[], 1.1).is_empty());
    }
}

//! Evaluation questions from a JSONL file, one object a line, in the format
//! of `../shared/eval/*/dev.jsonl`: `id`, `question`, `answers` and the
//! evidence as `supporting_titles` (passages of a JSONL corpus) or
//! `supporting_files` (files of a folder). Other keys (HotpotQA's `type`)
//! are allowed and ignored, so datasets can carry their own annotations.
//!
//! A line may instead hold a conversation: `turns`, a list of `{question,
//! answers}` (each turn may name its own evidence; otherwise the line's
//! counts). Its turns become questions `ID/1`, `ID/2`, … that are asked in
//! order in one thread, each a follow-up on the turns before it.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::corpus::PassageTitles;
use super::error::{EvalError, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub id: String,
    pub question: String,
    /// Never empty: a question without a gold answer cannot be scored.
    pub answers: Vec<String>,
    pub supporting: Supporting,
    /// Where the question stands in its conversation; `None` for a
    /// question asked on its own.
    pub turn: Option<TurnOf>,
}

/// A turn's place in its conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOf {
    /// The conversation's id (the dataset line's).
    pub conversation: String,
    /// From 1.
    pub number: usize,
    /// Turns in the conversation.
    pub of: usize,
}

impl TurnOf {
    pub fn is_last(&self) -> bool {
        self.number == self.of
    }
}

impl Question {
    /// A conversation's last turn, which the evaluation reports apart: it
    /// leans on every turn before it.
    pub fn is_last_turn(&self) -> bool {
        self.turn.as_ref().is_some_and(TurnOf::is_last)
    }
}

/// Where a question's evidence lies, for retrieval recall.
#[derive(Debug, Clone, PartialEq)]
pub enum Supporting {
    Unknown,
    Titles(Vec<String>),
    Files(Vec<String>),
}

impl Supporting {
    /// Recall of the evidence among `sources` (the files a run showed the
    /// model, as rows list them): the share of supporting titles whose
    /// passage file is among them, or of supporting files that a source
    /// path ends with. `None` when there is no evidence to find or the run
    /// showed no passages (a method that does not retrieve).
    pub fn recall(&self, sources: &[String], titles: &PassageTitles) -> Option<f64> {
        if sources.is_empty() {
            return None;
        }
        self.share_found(sources, titles)
    }

    /// The share of the evidence among `sources`, 0 when they are empty;
    /// `None` when there is no evidence to find.
    pub fn share_found(&self, sources: &[String], titles: &PassageTitles) -> Option<f64> {
        let wanted = self.wanted()?;
        let hits = wanted
            .iter()
            .filter(|w| sources.iter().any(|s| self.is(s, w, titles)))
            .count();
        Some(hits as f64 / wanted.len() as f64)
    }

    /// The share of `sources` that are evidence (citation precision);
    /// `None` when there are no sources or no evidence to check them by.
    pub fn share_holding(&self, sources: &[String], titles: &PassageTitles) -> Option<f64> {
        let wanted = self.wanted()?;
        if sources.is_empty() {
            return None;
        }
        let hits = sources
            .iter()
            .filter(|s| wanted.iter().any(|w| self.is(s, w, titles)))
            .count();
        Some(hits as f64 / sources.len() as f64)
    }

    fn wanted(&self) -> Option<&[String]> {
        match self {
            Supporting::Titles(w) | Supporting::Files(w) if !w.is_empty() => Some(w),
            _ => None,
        }
    }

    /// Whether `source` (a file as runs list it) is the evidence `wanted`
    /// names: the passage with that title, or a path ending in that file.
    fn is(&self, source: &str, wanted: &str, titles: &PassageTitles) -> bool {
        match self {
            Supporting::Titles(_) => titles.of(source) == Some(wanted),
            Supporting::Files(_) => Path::new(source).ends_with(Path::new(wanted)),
            Supporting::Unknown => false,
        }
    }
}

#[derive(Deserialize)]
struct Line {
    id: String,
    question: Option<String>,
    answers: Option<Vec<String>>,
    turns: Option<Vec<TurnLine>>,
    #[serde(flatten)]
    evidence: Evidence,
}

#[derive(Deserialize)]
struct TurnLine {
    question: String,
    answers: Vec<String>,
    #[serde(flatten)]
    evidence: Evidence,
}

#[derive(Deserialize)]
struct Evidence {
    supporting_titles: Option<Vec<String>>,
    supporting_files: Option<Vec<String>>,
}

impl Evidence {
    /// `None` when neither is given.
    fn supporting(self) -> std::result::Result<Option<Supporting>, String> {
        match (self.supporting_titles, self.supporting_files) {
            (Some(_), Some(_)) => {
                Err("has both `supporting_titles` and `supporting_files`; give one".into())
            }
            (Some(titles), None) => Ok(Some(Supporting::Titles(titles))),
            (None, Some(files)) => Ok(Some(Supporting::Files(files))),
            (None, None) => Ok(None),
        }
    }
}

/// A question or a turn checked: a question to ask and a gold answer.
fn checked(question: &str, answers: &[String]) -> std::result::Result<(), String> {
    if question.trim().is_empty() {
        return Err("`question` is empty".into());
    }
    if answers.is_empty() {
        return Err("`answers` is empty; a question needs a gold answer".into());
    }
    Ok(())
}

/// The questions of one line: itself, or its conversation's turns.
fn questions_of(line: Line) -> std::result::Result<Vec<Question>, String> {
    let supporting = line.evidence.supporting()?;
    match (line.question, line.answers, line.turns) {
        (Some(question), Some(answers), None) => {
            checked(&question, &answers)?;
            Ok(vec![Question {
                id: line.id,
                question,
                answers,
                supporting: supporting.unwrap_or(Supporting::Unknown),
                turn: None,
            }])
        }
        (None, None, Some(turns)) => {
            if turns.is_empty() {
                return Err("`turns` is empty; a conversation needs a turn".into());
            }
            let of = turns.len();
            turns
                .into_iter()
                .enumerate()
                .map(|(i, t)| {
                    checked(&t.question, &t.answers).map_err(|e| format!("turn {}: {e}", i + 1))?;
                    let own = t
                        .evidence
                        .supporting()
                        .map_err(|e| format!("turn {}: {e}", i + 1))?;
                    Ok(Question {
                        id: format!("{}/{}", line.id, i + 1),
                        question: t.question,
                        answers: t.answers,
                        supporting: own
                            .or_else(|| supporting.clone())
                            .unwrap_or(Supporting::Unknown),
                        turn: Some(TurnOf {
                            conversation: line.id.clone(),
                            number: i + 1,
                            of,
                        }),
                    })
                })
                .collect()
        }
        (_, _, Some(_)) => {
            Err("has both `turns` and a `question` or `answers`; a line is one or the other".into())
        }
        (None, _, None) => Err("missing field `question` (or `turns`)".into()),
        (Some(_), None, None) => Err("missing field `answers`".into()),
    }
}

/// The questions of the first `limit` lines of the file (all without a
/// limit; a conversation counts as one line, its turns all kept); lines
/// past them are not read, so a quick run over a big file starts at once.
pub fn read(path: &Path, limit: Option<usize>) -> Result<Vec<Question>> {
    let text = std::fs::read_to_string(path).map_err(|source| EvalError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path, limit)
}

/// `path` is only for naming the file in errors.
pub fn parse(text: &str, path: &Path, limit: Option<usize>) -> Result<Vec<Question>> {
    let limit = limit.unwrap_or(usize::MAX);
    let mut questions = Vec::new();
    let mut lines_read = 0;
    let mut first_line_of: HashMap<String, usize> = HashMap::new();
    for (index, raw) in text.lines().enumerate() {
        if lines_read >= limit {
            break;
        }
        if raw.trim().is_empty() {
            continue;
        }
        lines_read += 1;
        let line = index + 1;
        let bad = |message: String| EvalError::BadLine {
            path: path.to_path_buf(),
            line,
            message,
        };
        let parsed: Line = serde_json::from_str(raw).map_err(|e| bad(e.to_string()))?;
        for question in questions_of(parsed).map_err(bad)? {
            if let Some(earlier) = first_line_of.insert(question.id.clone(), line) {
                return Err(bad(format!(
                    "id `{}` was already used on line {earlier}",
                    question.id
                )));
            }
            questions.push(question);
        }
    }
    if questions.is_empty() {
        return Err(EvalError::NoQuestions(path.to_path_buf()));
    }
    Ok(questions)
}

/// Question texts and gold answers by id, from the dataset an evaluation
/// read; empty when that file is gone or moved, since what was answered is
/// still worth showing.
pub fn texts_by_id(dataset: &Path) -> HashMap<String, (String, Vec<String>)> {
    read(dataset, None)
        .map(|qs| {
            qs.into_iter()
                .map(|q| (q.id, (q.question, q.answers)))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str, limit: Option<usize>) -> Result<Vec<Question>> {
        parse(text, Path::new("dev.jsonl"), limit)
    }

    #[test]
    fn a_good_line_becomes_a_question() {
        let text = r#"{"id": "q1", "question": "Who?", "answers": ["Ann", "Anne"], "supporting_titles": ["Ann"], "type": "bridge"}

{"id": "q2", "question": "How big?", "answers": ["4"], "supporting_files": ["ch03.md"]}
{"id": "q3", "question": "Why?", "answers": ["because"]}
"#;
        let questions = parse_text(text, None).unwrap();
        assert_eq!(
            questions[0],
            Question {
                id: "q1".into(),
                question: "Who?".into(),
                answers: vec!["Ann".into(), "Anne".into()],
                supporting: Supporting::Titles(vec!["Ann".into()]),
                turn: None,
            }
        );
        assert_eq!(
            questions[1].supporting,
            Supporting::Files(vec!["ch03.md".into()])
        );
        assert_eq!(questions[2].supporting, Supporting::Unknown);
        let first_two = parse_text(text, Some(2)).unwrap();
        assert_eq!(first_two.len(), 2);
    }

    #[test]
    fn a_conversation_becomes_its_turns_in_order() {
        let text = r#"{"id": "c1", "turns": [{"question": "What is Cargo?", "answers": ["build system"]}, {"question": "And for the dev profile?", "answers": ["opt-level"], "supporting_files": ["ch14-01.md"]}], "supporting_files": ["ch01-03.md"]}
{"id": "q2", "question": "How big?", "answers": ["4"]}
"#;
        let questions = parse_text(text, None).unwrap();
        let ids: Vec<&str> = questions.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["c1/1", "c1/2", "q2"]);
        assert_eq!(
            questions[0].turn,
            Some(TurnOf {
                conversation: "c1".into(),
                number: 1,
                of: 2
            })
        );
        assert!(!questions[0].is_last_turn() && questions[1].is_last_turn());
        assert!(!questions[2].is_last_turn());
        assert_eq!(
            questions[0].supporting,
            Supporting::Files(vec!["ch01-03.md".into()]),
            "a turn without evidence of its own has the conversation's"
        );
        assert_eq!(
            questions[1].supporting,
            Supporting::Files(vec!["ch14-01.md".into()])
        );
        // A limit counts lines: a conversation is kept whole.
        assert_eq!(parse_text(text, Some(1)).unwrap().len(), 2);

        for (line, message) in [
            (r#"{"id": "c", "turns": []}"#, "`turns` is empty"),
            (
                r#"{"id": "c", "turns": [{"question": "Q?", "answers": []}]}"#,
                "turn 1: `answers` is empty",
            ),
            (
                r#"{"id": "c", "question": "Q?", "answers": ["a"], "turns": [{"question": "Q?", "answers": ["a"]}]}"#,
                "has both `turns` and a `question`",
            ),
            (r#"{"id": "c"}"#, "missing field `question` (or `turns`)"),
            (
                r#"{"id": "c/1", "question": "Q?", "answers": ["a"]}
{"id": "c", "turns": [{"question": "Q?", "answers": ["a"]}]}"#,
                "id `c/1` was already used on line 1",
            ),
        ] {
            let err = parse_text(line, None).unwrap_err().to_string();
            assert!(err.contains(message), "{line}: {err}");
        }
    }

    #[test]
    fn a_missing_field_names_file_line_and_field() {
        let text = "{\"id\": \"q1\", \"question\": \"Who?\", \"answers\": [\"Ann\"]}\n{\"id\": \"q2\", \"question\": \"Who?\"}\n";
        let err = parse_text(text, None).unwrap_err().to_string();
        assert!(err.starts_with("dev.jsonl:2: "), "{err}");
        assert!(err.contains("answers"), "{err}");
    }

    #[test]
    fn bad_json_names_the_line_number() {
        let text = "{\"id\": \"q1\", \"question\": \"Who?\", \"answers\": [\"Ann\"]}\n\n{\"id\": \"q2\", \"question\": \n";
        let err = parse_text(text, None).unwrap_err();
        assert!(
            matches!(&err, EvalError::BadLine { line: 3, .. }),
            "blank lines still count: {err}"
        );
        // Lines past the limit are never read.
        assert_eq!(parse_text(text, Some(1)).unwrap().len(), 1);
    }

    #[test]
    fn questions_must_be_scorable_and_unique() {
        let no_answers = r#"{"id": "q1", "question": "Who?", "answers": []}"#;
        assert!(parse_text(no_answers, None)
            .unwrap_err()
            .to_string()
            .contains("`answers` is empty"));
        let twice = "{\"id\": \"q1\", \"question\": \"A?\", \"answers\": [\"a\"]}\n{\"id\": \"q1\", \"question\": \"B?\", \"answers\": [\"b\"]}";
        assert!(parse_text(twice, None)
            .unwrap_err()
            .to_string()
            .contains("dev.jsonl:2: id `q1` was already used on line 1"));
        assert!(matches!(
            parse_text("\n\n", None),
            Err(EvalError::NoQuestions(_))
        ));
    }

    #[test]
    fn recall_counts_supporting_titles_and_files_among_the_sources() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus.jsonl");
        std::fs::write(
            &corpus,
            "{\"id\": \"a\", \"title\": \"Ada Lovelace\", \"text\": \"x\"}\n\
             {\"id\": \"b\", \"title\": \"Charles Babbage\", \"text\": \"y\"}\n",
        )
        .unwrap();
        let titles = crate::eval::corpus::write_passages(&corpus, &dir.path().join("out"), None)
            .unwrap()
            .titles;
        let gold = Supporting::Titles(vec!["Ada Lovelace".into(), "Charles Babbage".into()]);
        let shown = |names: &[&str]| -> Vec<String> {
            names.iter().map(|n| format!("/eval/corpus/{n}")).collect()
        };
        assert_eq!(gold.recall(&shown(&["a.md", "c.md"]), &titles), Some(0.5));
        assert_eq!(gold.recall(&shown(&["b.md", "a.md"]), &titles), Some(1.0));
        assert_eq!(gold.recall(&[], &titles), None, "nothing was retrieved");

        let files = Supporting::Files(vec!["ch03-01.md".into(), "src/ch04.md".into()]);
        let sources = [
            "/book/src/ch04.md".to_string(),
            "/book/xch03-01.md".to_string(),
        ];
        assert_eq!(
            files.recall(&sources, &titles),
            Some(0.5),
            "whole path parts only"
        );
        assert_eq!(Supporting::Unknown.recall(&sources, &titles), None);

        // Citation precision and recall: a source that is not evidence
        // lowers precision; naming nothing is no recall, and no precision.
        assert_eq!(
            gold.share_holding(&shown(&["a.md", "c.md"]), &titles),
            Some(0.5)
        );
        assert_eq!(gold.share_holding(&[], &titles), None);
        assert_eq!(gold.share_found(&[], &titles), Some(0.0));
        assert_eq!(files.share_holding(&sources[..1], &titles), Some(1.0));
        assert_eq!(Supporting::Unknown.share_holding(&sources, &titles), None);
    }
}

//! Evaluation questions from a JSONL file, one object a line, in the format
//! of `../shared/eval/*/dev.jsonl`: `id`, `question`, `answers` and the
//! evidence as `supporting_titles` (passages of a JSONL corpus) or
//! `supporting_files` (files of a folder). Other keys (HotpotQA's `type`)
//! are allowed and ignored, so datasets can carry their own annotations.

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
        let found = |wanted: &[String], hit: &dyn Fn(&str, &str) -> bool| {
            let hits = wanted
                .iter()
                .filter(|w| sources.iter().any(|s| hit(s, w)))
                .count();
            hits as f64 / wanted.len() as f64
        };
        match self {
            _ if sources.is_empty() => None,
            Supporting::Titles(t) if !t.is_empty() => {
                Some(found(t, &|source, title| titles.of(source) == Some(title)))
            }
            Supporting::Files(f) if !f.is_empty() => Some(found(f, &|source, file| {
                Path::new(source).ends_with(Path::new(file))
            })),
            _ => None,
        }
    }
}

#[derive(Deserialize)]
struct Line {
    id: String,
    question: String,
    answers: Vec<String>,
    supporting_titles: Option<Vec<String>>,
    supporting_files: Option<Vec<String>>,
}

/// The first `limit` questions of the file (all without a limit); lines past
/// them are not read, so a quick run over a big file starts at once.
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
    let mut first_line_of: HashMap<String, usize> = HashMap::new();
    for (index, raw) in text.lines().enumerate() {
        if questions.len() >= limit {
            break;
        }
        if raw.trim().is_empty() {
            continue;
        }
        let line = index + 1;
        let bad = |message: String| EvalError::BadLine {
            path: path.to_path_buf(),
            line,
            message,
        };
        let parsed: Line = serde_json::from_str(raw).map_err(|e| bad(e.to_string()))?;
        let supporting = match (parsed.supporting_titles, parsed.supporting_files) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "has both `supporting_titles` and `supporting_files`; give one".into(),
                ))
            }
            (Some(titles), None) => Supporting::Titles(titles),
            (None, Some(files)) => Supporting::Files(files),
            (None, None) => Supporting::Unknown,
        };
        if parsed.question.trim().is_empty() {
            return Err(bad("`question` is empty".into()));
        }
        if parsed.answers.is_empty() {
            return Err(bad(
                "`answers` is empty; a question needs a gold answer".into()
            ));
        }
        if let Some(earlier) = first_line_of.insert(parsed.id.clone(), line) {
            return Err(bad(format!(
                "id `{}` was already used on line {earlier}",
                parsed.id
            )));
        }
        questions.push(Question {
            id: parsed.id,
            question: parsed.question,
            answers: parsed.answers,
            supporting,
        });
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
    }
}

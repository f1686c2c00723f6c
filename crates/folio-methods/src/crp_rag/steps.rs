//! The reply to "what are the next reasoning steps": one step per line,
//! `Next:` for a step that needs more reasoning after it, `Final:` for the
//! step whose answer answers the question. The embedded model is held to
//! that shape by a grammar, a server that takes one by a JSON schema; a
//! reply held by neither is read leniently and checked.

use serde_json::json;

use folio_core::text::normalize;
use folio_llm::response_format::{object_schema, one_line, text_schema};
use folio_llm::ReplySchema;

const NEXT: &str = "next:";
const FINAL: &str = "final:";
/// Longest step the grammar lets the model write, in characters.
const STEP_CHARS: usize = 200;

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub text: String,
    pub is_final: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Steps {
    pub steps: Vec<Step>,
    /// What was left out and why, for the trace.
    pub notes: Vec<String>,
}

/// [`grammar`]'s lines as a JSON schema for a server: one to `branching`
/// steps, each labelled.
pub fn schema(branching: usize) -> ReplySchema {
    let step = object_schema(&[
        ("label", json!({ "enum": ["Next", "Final"] })),
        ("step", text_schema(4, STEP_CHARS)),
    ]);
    ReplySchema {
        schema: object_schema(&[(
            "steps",
            json!({ "type": "array", "items": step, "minItems": 1, "maxItems": branching }),
        )]),
        to_text: |reply| {
            let lines: Vec<String> = reply["steps"]
                .as_array()?
                .iter()
                .map(|s| {
                    Some(format!(
                        "{}: {}\n",
                        s["label"].as_str()?,
                        one_line(s["step"].as_str()?)
                    ))
                })
                .collect::<Option<_>>()?;
            Some(lines.concat())
        },
    }
}

/// A llama.cpp grammar for one to `branching` labelled lines.
pub fn grammar(branching: usize) -> String {
    format!(
        "root ::= step{{1,{branching}}}\nstep ::= (\"Next: \" | \"Final: \") [^\\n]{{4,{STEP_CHARS}}} \"\\n\"\n"
    )
}

/// The steps in `reply`, at most `branching`, without repeats and without
/// steps that restate `known` (the question and the steps before). `None`
/// when no line carries a label. A last line cut off by `max_tokens` is
/// dropped, since half a question cannot be retrieved for.
pub fn parse(reply: &str, cut_off: bool, branching: usize, known: &[&str]) -> Option<Steps> {
    let mut lines: Vec<&str> = reply.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut notes = Vec::new();
    if cut_off && lines.pop().is_some() {
        notes.push("the last step was cut off at max_tokens and left out".to_string());
    }
    let labelled: Vec<Step> = lines.iter().filter_map(|l| labelled(l)).collect();
    if labelled.is_empty() {
        return None;
    }
    let mut seen: Vec<String> = known.iter().map(|k| normalize(k)).collect();
    let mut steps = Vec::new();
    for step in labelled {
        let key = normalize(&step.text);
        if key.is_empty() || seen.contains(&key) {
            notes.push(format!(
                "left out a step that repeats one before it: {}",
                step.text
            ));
            continue;
        }
        if steps.len() == branching {
            notes.push(format!(
                "left out a step beyond the {branching} asked for: {}",
                step.text
            ));
            continue;
        }
        seen.push(key);
        steps.push(step);
    }
    Some(Steps { steps, notes })
}

/// A line as `Next: …` or `Final: …`, after any list marker or emphasis
/// the model put in front.
fn labelled(line: &str) -> Option<Step> {
    let bare = line
        .trim()
        .trim_start_matches(|c: char| c.is_ascii_digit() || "-*#.) ".contains(c));
    let lower = bare.to_lowercase();
    let (label, is_final) = if lower.starts_with(NEXT) {
        (NEXT, false)
    } else if lower.starts_with(FINAL) {
        (FINAL, true)
    } else {
        return None;
    };
    let text = bare[label.len()..].trim().trim_matches('*').trim();
    (!text.is_empty()).then(|| Step {
        text: text.to_string(),
        is_final,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_steps_read_as_the_grammars_lines() {
        let held = schema(2);
        assert_eq!(held.schema["properties"]["steps"]["maxItems"], 2);
        let text = (held.to_text)(&json!({"steps": [
            {"label": "Next", "step": "Who wrote\nit?"},
            {"label": "Final", "step": "Where was she born?"}
        ]}))
        .unwrap();
        assert_eq!(text, "Next: Who wrote it?\nFinal: Where was she born?\n");
        let steps = parse(&text, false, 2, &[]).unwrap();
        assert_eq!(
            texts(&steps),
            [("Who wrote it?", false), ("Where was she born?", true)]
        );
        assert_eq!((held.to_text)(&json!({"steps": [{"step": "x"}]})), None);
    }

    fn texts(steps: &Steps) -> Vec<(&str, bool)> {
        steps
            .steps
            .iter()
            .map(|s| (s.text.as_str(), s.is_final))
            .collect()
    }

    #[test]
    fn labelled_lines_become_steps_and_the_rest_is_ignored() {
        let reply = "Sure, here are the steps.\n1. Next: Who wrote the algorithm?\n- **Final:** Where was she born?\n";
        let steps = parse(reply, false, 3, &["The question?"]).unwrap();
        assert_eq!(
            texts(&steps),
            [
                ("Who wrote the algorithm?", false),
                ("Where was she born?", true)
            ]
        );
        assert!(steps.notes.is_empty());
    }

    #[test]
    fn repeats_extras_and_a_cut_off_line_are_left_out_with_notes() {
        let reply = "Next: Who wrote it?\nNEXT: who wrote it\nNext: The question.\nFinal: Where?\nNext: One more\nFinal: Where was sh";
        let steps = parse(reply, true, 2, &["the question"]).unwrap();
        assert_eq!(texts(&steps), [("Who wrote it?", false), ("Where?", true)]);
        assert_eq!(steps.notes.len(), 4, "{:?}", steps.notes);
        assert!(steps.notes[0].contains("cut off"));
    }

    #[test]
    fn a_reply_without_labels_is_unusable() {
        assert_eq!(parse("I think the answer is London.", false, 2, &[]), None);
        assert_eq!(parse("", false, 2, &[]), None);
        assert_eq!(parse("Next:   \nFinal: **", false, 2, &[]), None);
    }

    #[test]
    fn the_grammar_bounds_the_number_of_steps() {
        let g = grammar(3);
        assert!(g.starts_with("root ::= step{1,3}\n"), "{g}");
        assert!(g.contains("\"Next: \" | \"Final: \""));
    }
}

//! A trace in a few lines: what a reader comparing two answers needs to see
//! why they differ (the passages read, the outline, the route, the reasoning
//! steps), without the whole trace. `folio eval diff` prints these.

use super::trace::Passage;
use super::{RetrievalPart, Trace};

/// Longest a step, outline heading or agent note is shown before it is cut.
const SHOWN_CHARS: usize = 160;

impl Trace {
    pub fn key_parts(&self) -> Vec<String> {
        let mut parts: Vec<String> = self.retrieval().iter().map(retrieved_by).collect();
        match self {
            Trace::LlmOnly => parts.push("answered from the model's own knowledge".into()),
            Trace::VanillaRag(_) | Trace::Ig2rag(_) => {}
            Trace::Pager(t) => {
                let headings: Vec<String> =
                    t.outline.sections.iter().map(|s| cut(&s.heading)).collect();
                parts.push(format!("outline: {}", headings.join(" / ")));
            }
            Trace::ActiveRag(t) => {
                parts.push(format!("self-inquiry: {}", cut(&t.self_inquiry)));
                parts.push(format!("assimilation: {}", cut(&t.assimilation)));
            }
            Trace::Rdr2(t) => {
                let routes: Vec<String> = t
                    .routing
                    .routes
                    .iter()
                    .map(|r| {
                        format!(
                            "{} ({:?}, {} selected)",
                            r.title,
                            r.outcome,
                            r.selected.len()
                        )
                    })
                    .collect();
                parts.push(format!("routes: {}", routes.join("; ")));
            }
            Trace::CrpRag(t) => {
                for node in t.nodes.iter().skip(1) {
                    let check = match &node.check {
                        Some(c) if c.sufficient => "sufficient",
                        Some(_) => "insufficient",
                        None => "not checked",
                    };
                    parts.push(format!("step {}: {} ({check})", node.id, cut(&node.text)));
                }
                parts.push(format!("paths: {}", t.paths.len()));
            }
            Trace::WholeDocument(t) => parts.push(format!(
                "read all of {} ({} sections, headings down to level {})",
                t.title,
                t.sections.len(),
                t.shown_depth
            )),
        }
        if let Some(passages) = self.passages() {
            parts.push(format!("passages: {}", passage_list(passages)));
        }
        if self.refused() {
            parts.push("refused to answer".into());
        }
        parts
    }

    /// The passages the method showed the model, numbered as the prompt
    /// numbered them; `None` for a method that retrieves nothing.
    pub fn passages(&self) -> Option<&[Passage]> {
        match self {
            Trace::LlmOnly => None,
            Trace::VanillaRag(t) => Some(&t.passages),
            Trace::Pager(t) => Some(&t.passages),
            Trace::ActiveRag(t) => Some(&t.passages),
            Trace::Rdr2(t) => Some(&t.passages),
            Trace::Ig2rag(t) => Some(&t.passages),
            Trace::CrpRag(t) => Some(&t.passages),
            Trace::WholeDocument(t) => Some(&t.passages),
        }
    }

    fn refused(&self) -> bool {
        match self {
            Trace::Rdr2(t) => t.refused,
            Trace::CrpRag(t) => t.refused,
            _ => false,
        }
    }
}

/// Each passage's headings (its file name where it has none), once, in
/// order: a corpus of generated file names is told apart by its titles.
fn passage_list(passages: &[Passage]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for p in passages {
        let name = match p.heading_path.trim() {
            "" => p.path.rsplit('/').next().unwrap_or(&p.path),
            headings => headings,
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

fn cut(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// One line on how a retriever that is more than a search found a query's
/// passages.
fn retrieved_by(part: &RetrievalPart) -> String {
    match part {
        RetrievalPart::Ig2rag(walk) => format!(
            "gain walk for {}: {} seeds, {} nodes",
            cut(&walk.query),
            walk.seeds.len(),
            walk.nodes.len()
        ),
        RetrievalPart::Rdr2(routing) => {
            let selected: usize = routing.routes.iter().map(|r| r.selected.len()).sum();
            format!(
                "RDR² routing for {}: {} documents, {selected} passages selected",
                cut(&routing.query),
                routing.routes.len()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_on_a_character_boundary_and_spaces_folded() {
        assert_eq!(cut("a  b\nc"), "a b c");
        let long = "é".repeat(SHOWN_CHARS + 5);
        let shown = cut(&long);
        assert_eq!(shown.chars().count(), SHOWN_CHARS + 1);
        assert!(shown.ends_with('…'));
    }

    #[test]
    fn passages_are_named_by_heading_or_file_once() {
        let passage = |path: &str, heading: &str| Passage {
            number: 1,
            chunk_id: 1,
            path: path.into(),
            heading_path: heading.into(),
            span_start: 0,
            span_end: 1,
            page: None,
            ocr: None,
            score: 0.0,
            text: String::new(),
            suspected_instructions: None,
        };
        let list = passage_list(&[
            passage("/c/a.md", ""),
            passage("/c/b.md", "Rc"),
            passage("/c/a.md", ""),
        ]);
        assert_eq!(list, "a.md, Rc");
        assert_eq!(passage_list(&[]), "none");
        assert_eq!(
            Trace::LlmOnly.key_parts(),
            ["answered from the model's own knowledge"]
        );
    }
}

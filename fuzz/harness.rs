//! What each fuzz target checks: input bytes in, one parser called, and the
//! invariants its documentation promises asserted, beyond "does not panic".
//! The fuzz targets call these functions, and the main crate's
//! `tests/fuzz_corpus.rs` replays the committed corpora through them, so a
//! finding stays fixed on stable Rust without a fuzzer.
//!
//! Targets that need a setting besides the text (a size, a count, a flag)
//! read it from the first byte of the input; the rest is the text.

use std::fmt::Debug;

use folio_engine::choice::Choice;
use folio_engine::documents::chunker::{chunk, ChunkSizes};
use folio_engine::documents::loaders::{decode_text, load, Format, LoadOptions};
use folio_engine::documents::structure_tree::{NodeKind, Span, StructureTree, ROOT};
use folio_engine::eval::metrics::{cover_em, exact_match, f1, score};
use folio_engine::graph::{parse_grades, GainClass, Grade, Rubric};
use folio_engine::llm::sse::SseDecoder;
use folio_engine::llm::verdict::verdict;
use folio_engine::methods::activerag::final_answer;
use folio_engine::methods::cited_numbers;
use folio_engine::methods::crp_rag::steps;
use folio_engine::methods::pager::parse::{self as pager, ReplyError};
use folio_engine::methods::pager::Page;
use folio_engine::methods::rdr2::parse as rdr2;
use folio_engine::methods::rdr2::ActionKind;
use folio_engine::text::normalize;

/// Every target by name, as `fuzz/fuzz_targets/<name>.rs` and the corpus
/// folders `fuzz/corpus/<name>/` and `fuzz/regressions/<name>/` call it.
pub const TARGETS: &[(&str, fn(&[u8]))] = &[
    ("markdown_tree", markdown_tree),
    ("html_tree", html_tree),
    ("text_tree", text_tree),
    ("chunker", chunker),
    ("pager_replies", pager_replies),
    ("rdr2_actions", rdr2_actions),
    ("gain_grades", gain_grades),
    ("crp_steps", crp_steps),
    ("citations", citations),
    ("judge_verdict", judge_verdict),
    ("activerag_answer", activerag_answer),
    ("sse_stream", sse_stream),
    ("answer_metrics", answer_metrics),
];

const FALLBACK_TITLE: &str = "fuzzed file";
const QUESTION: &str = "Where was the author of the first algorithm born?";
/// The empty-slot marker PAGER's prompts show; a parsed reply must never
/// carry one into the page, or the slot would look unfilled to the model.
const PLACEHOLDER: &str = "<TO BE FILLED>";
/// Longest query `pager::sub_query` returns, in characters.
const MAX_QUERY_CHARS: usize = 300;
/// Longest quote of ignored text in an RDR² reply: 120 characters and "…".
const MAX_QUOTE_CHARS: usize = 121;

// Structure trees -----------------------------------------------------------

pub fn markdown_tree(data: &[u8]) {
    document_tree(Format::Markdown, data);
}

pub fn html_tree(data: &[u8]) {
    document_tree(Format::Html, data);
}

/// Plain text keeps every paragraph verbatim, so its spans must point at
/// exactly the node's text.
pub fn text_tree(data: &[u8]) {
    if let Some((tree, text)) = document_tree(Format::Text, data) {
        for node in &tree.nodes()[1..] {
            assert_eq!(node.text, text[node.span.start..node.span.end]);
        }
    }
}

/// Loads `data` and checks the tree against the decoded text its spans point
/// into; returns both for checks particular to one format.
fn document_tree(format: Format, data: &[u8]) -> Option<(StructureTree, String)> {
    let loaded = deterministic(|| {
        load(format, data, FALLBACK_TITLE, &LoadOptions::budget(u64::MAX))
            .map(|doc| (doc.tree, doc.note))
            .map_err(|e| e.to_string())
    });
    let decoded = decode_text(data);
    let (tree, _) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            assert!(decoded.is_none(), "only binary input is refused, not: {e}");
            return None;
        }
    };
    let text = decoded.expect("a loaded text file decodes").text;
    check_tree(&tree, &text);
    Some((tree, text))
}

fn check_tree(tree: &StructureTree, text: &str) {
    assert!(!tree.is_empty());
    let nodes = tree.nodes();
    let root = &nodes[ROOT];
    assert_eq!(
        (root.parent, root.kind, root.depth),
        (None, NodeKind::Structure, 0)
    );
    assert!(!root.text.trim().is_empty(), "the document has no title");
    check_span(root.span, text);
    let mut previous_start = 0;
    for (id, node) in nodes.iter().enumerate().skip(1) {
        let parent = node.parent.expect("only the root has no parent");
        assert!(parent < id, "node {id} comes before its parent {parent}");
        assert_eq!(
            nodes[parent].kind,
            NodeKind::Structure,
            "node {id} is under content node {parent}"
        );
        assert_eq!(node.depth, nodes[parent].depth + 1);
        assert!(!node.text.trim().is_empty(), "node {id} has no text");
        check_span(node.span, text);
        assert!(
            node.span.start >= previous_start,
            "node {id} starts before the node ahead of it"
        );
        previous_start = node.span.start;
        tree.heading_label(id);
    }
    tree.render(40);
}

fn check_span(span: Span, text: &str) {
    assert!(
        span.start <= span.end && span.end <= text.len(),
        "{span:?} is not within the {} bytes of text",
        text.len()
    );
    assert!(
        text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
        "{span:?} splits a character"
    );
    assert_eq!(span.page, None, "text formats have no pages");
}

// Chunker ---------------------------------------------------------------------

/// Markdown chunked with small sizes (the first byte picks them), so that
/// merging and splitting happen on small inputs.
pub fn chunker(data: &[u8]) {
    let Some((&knob, markdown)) = data.split_first() else {
        return;
    };
    let target = 1 + usize::from(knob % 64);
    let sizes = ChunkSizes {
        target,
        max: target + usize::from(knob / 64) * target / 2,
    };
    let Ok(doc) = load(
        Format::Markdown,
        markdown,
        FALLBACK_TITLE,
        &LoadOptions::budget(u64::MAX),
    ) else {
        return;
    };
    let tree = doc.tree;
    let nodes = tree.nodes();
    let chunks = deterministic(|| chunk(&tree, sizes));

    let mut covered = Vec::new();
    for c in &chunks {
        assert!(!c.text.is_empty(), "an empty chunk");
        assert_eq!(c.text.trim(), c.text, "a chunk with surrounding space");
        let chars = c.text.chars().count();
        assert!(chars <= sizes.max, "{chars} characters over {sizes:?}");
        assert_eq!(
            tree.text_of(&c.ranges).as_deref(),
            Some(c.text.as_str()),
            "ranges that do not give the chunk's text"
        );
        let ordinals = c.node_ordinals();
        let (first, last) = match ordinals[..] {
            [] => panic!("a chunk of no nodes"),
            [only] => (only, only),
            [first, .., last] => (first, last),
        };
        assert!(
            ordinals.windows(2).all(|w| w[0] < w[1]),
            "nodes out of order: {ordinals:?}"
        );
        for &id in &ordinals {
            let node = &nodes[id];
            assert_eq!(node.kind, NodeKind::Content);
            assert_eq!(node.parent, nodes[first].parent, "a chunk spans sections");
            assert_eq!(node.span.page, nodes[first].span.page);
        }
        if first == last && nodes[first].text.trim().chars().count() > sizes.max {
            assert!(chars <= sizes.target, "a piece of {chars} over {sizes:?}");
        }
        let heading_path = nodes[first]
            .parent
            .map(|parent| tree.heading_label(parent))
            .unwrap_or_default();
        assert_eq!(c.heading_path, heading_path);
        assert_eq!(
            (c.span.start, c.span.end),
            (nodes[first].span.start, nodes[last].span.end)
        );
        covered.extend_from_slice(&ordinals);
    }
    covered.dedup();
    let with_text: Vec<usize> = (0..nodes.len())
        .filter(|&id| nodes[id].kind == NodeKind::Content && !nodes[id].text.trim().is_empty())
        .collect();
    assert_eq!(covered, with_text, "every content node, once, in order");

    // Chunking only moves whitespace: no text is lost or repeated, but for
    // a long table's header, which every piece after the first repeats.
    let mut headed = std::collections::HashSet::new();
    let chunked: String = chunks
        .iter()
        .map(|c| {
            let ranges = match &c.ranges[..] {
                [header, rows]
                    if header.node == rows.node
                        && header.start == 0
                        && nodes[header.node].table.is_some()
                        && !headed.insert(header.node) =>
                {
                    &c.ranges[1..]
                }
                all => all,
            };
            without_spaces(&tree.text_of(ranges).unwrap_or_default())
        })
        .collect();
    let source: String = with_text
        .iter()
        .map(|&id| without_spaces(&nodes[id].text))
        .collect();
    assert_eq!(chunked, source);
}

fn without_spaces(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

// PAGER ---------------------------------------------------------------------

/// One reply read by every PAGER parser; the first byte sets the outline's
/// section limit and heading bound, the slot filled and the number of
/// sub-queries.
pub fn pager_replies(data: &[u8]) {
    let Some((knob, reply)) = knob_and_text(data) else {
        return;
    };
    let max_sections = 1 + usize::from(knob % 12);
    // 16 to 72 characters: the outline grammar's shortest heading to past
    // its 64 at 256 tokens, so cut headings are joined often.
    let heading_chars = 16 + 8 * usize::from(knob % 8);
    let outline = deterministic(|| pager::outline(&reply, QUESTION, max_sections, heading_chars));
    let page = match outline {
        Ok(parsed) => {
            let (reasoning, page) = parsed.value;
            assert_eq!(reasoning.trim(), reasoning);
            check_outline(&page, max_sections);
            page
        }
        Err(e) => {
            assert_eq!(e, ReplyError::NoSections);
            Page::new(
                "Ada Lovelace",
                vec!["Early life".into(), "Career".into(), "Legacy".into()],
            )
        }
    };
    let slot = usize::from(knob / 12) % page.sections.len();
    check_fill(&reply, &page, slot);
    check_sub_queries(&reply, 1 + usize::from(knob % 5));
    check_summary(&reply);
}

fn check_outline(page: &Page, max_sections: usize) {
    assert!(!page.title.is_empty() && page.title.trim() == page.title);
    assert!((1..=max_sections).contains(&page.sections.len()));
    for (i, section) in page.sections.iter().enumerate() {
        let heading = &section.heading;
        assert!(!heading.is_empty() && heading.trim() == heading);
        assert!(!heading.contains(PLACEHOLDER), "{heading:?}");
        assert!(section.body.is_none());
        assert!(
            page.sections[..i].iter().all(|s| &s.heading != heading),
            "{heading:?} twice"
        );
    }
}

fn check_fill(reply: &str, page: &Page, slot: usize) {
    match deterministic(|| pager::fill(reply, page, slot)) {
        Ok(fill) => {
            let text = &fill.value;
            assert!(!text.is_empty() && text.trim() == text);
            assert!(!text.contains(PLACEHOLDER), "{text:?}");
        }
        Err(ReplyError::WrongSection(heading)) => {
            assert_eq!(heading, page.sections[slot].heading);
        }
        Err(e) => assert_eq!(e, ReplyError::EmptyFill),
    }
}

fn check_sub_queries(reply: &str, slots: usize) {
    // A fallback holds a line break, which no parsed query can.
    let fallbacks: Vec<String> = (0..slots).map(|i| format!("fallback\n{i}")).collect();
    let single = deterministic(|| pager::sub_query(reply, &fallbacks[0]));
    let several = deterministic(|| pager::sub_queries(reply, &fallbacks));
    assert_eq!(several.value.len(), slots);
    assert_eq!(several.value[0], single.value);
    assert_eq!(single.repairs.is_empty(), single.value != fallbacks[0]);
    for (query, fallback) in several.value.iter().zip(&fallbacks) {
        if query == fallback {
            continue;
        }
        assert!(!query.is_empty() && query.trim() == query);
        assert!(query.chars().count() <= MAX_QUERY_CHARS);
        assert!(!query.contains('\n') && !query.ends_with(':'), "{query:?}");
        assert!(!query.contains(PLACEHOLDER), "{query:?}");
    }
}

fn check_summary(reply: &str) {
    let parsed = deterministic(|| pager::summary(reply));
    // The last verdict line decides, and verdict lines are not summary text.
    for (line, sufficient) in [("SUFFICIENT: yes", true), ("**Sufficient: No**", false)] {
        let with_verdict = pager::summary(&format!("{reply}\n{line}"));
        match &parsed {
            Ok(parsed) => {
                let (text, _) = &parsed.value;
                assert!(!text.is_empty() && text.trim() == text);
                let with_verdict = with_verdict.expect("the same text, with a verdict");
                assert_eq!(with_verdict.value, (text.clone(), sufficient));
                assert!(with_verdict.repairs.is_empty());
            }
            Err(e) => {
                assert_eq!(*e, ReplyError::EmptyFill);
                assert_eq!(with_verdict, Err(ReplyError::EmptyFill));
            }
        }
    }
}

// RDR² ------------------------------------------------------------------------

pub fn rdr2_actions(data: &[u8]) {
    let reply = String::from_utf8_lossy(data);
    let parsed = deterministic(|| rdr2::parse(&reply));
    for ignored in &parsed.ignored {
        assert!(!ignored.text.is_empty() && !ignored.reason.is_empty());
        assert!(ignored.text.chars().count() <= MAX_QUOTE_CHARS);
    }
    for (_, id) in &parsed.actions {
        assert!(
            reply.contains(&id.to_string()),
            "node {id} is not in the reply"
        );
    }
    if !reply.contains('[') {
        assert!(parsed.actions.is_empty());
    }
    // Lines are read alone: an action line added at the end adds its action
    // and changes nothing else.
    let mut more = rdr2::parse(&format!("{reply}\n[EXPAND] 7"));
    assert_eq!(more.actions.pop(), Some((ActionKind::Expand, 7)));
    assert_eq!(more, parsed);
    let refused = rdr2::parse(&format!("{reply}\nCannot answer"));
    assert!(refused.refused);
    assert_eq!(
        (refused.actions, refused.ignored),
        (parsed.actions, parsed.ignored)
    );
}

// iG²RAG --------------------------------------------------------------------

/// The first byte picks the rubric and how many passages are graded.
pub fn gain_grades(data: &[u8]) {
    let Some((knob, reply)) = knob_and_text(data) else {
        return;
    };
    let rubric = Rubric::ALL[usize::from(knob % 3)];
    let labels: Vec<String> = (1..=1 + usize::from(knob / 3 % 8))
        .map(|i| format!("P{i}"))
        .collect();
    match deterministic(|| parse_grades(&reply, &labels, rubric)) {
        Ok(grades) => {
            assert_eq!(grades.len(), labels.len());
            for grade in &grades {
                check_grade(*grade, rubric);
            }
            // Grades are read by label, so fewer labels grade a prefix.
            assert_eq!(
                parse_grades(&reply, &labels[..1], rubric),
                Ok(grades[..1].to_vec())
            );
        }
        Err(reason) => assert!(!reason.is_empty()),
    }
}

fn check_grade(grade: Grade, rubric: Rubric) {
    match rubric {
        Rubric::Coarse => assert_eq!(grade.weight, grade.class.weight()),
        Rubric::Fine => {
            assert!((0.0..=1.0).contains(&grade.weight), "{grade:?}");
            assert_eq!(grade.class, GainClass::of_score(grade.weight));
        }
        Rubric::Binary => assert!(
            matches!(
                (grade.class, grade.weight),
                (GainClass::Redundant, 0.0) | (GainClass::Novel, 1.0)
            ),
            "{grade:?}"
        ),
    }
}

// CRP-RAG -------------------------------------------------------------------

/// The first byte sets the branching and whether the reply was cut off.
pub fn crp_steps(data: &[u8]) {
    let Some((knob, reply)) = knob_and_text(data) else {
        return;
    };
    let branching = 1 + usize::from(knob % 4);
    let cut_off = knob & 0x10 != 0;
    let known = [QUESTION];
    let parsed = deterministic(|| steps::parse(&reply, cut_off, branching, &known));
    if cut_off {
        // A cut-off reply reads as the reply without its last line.
        let mut lines: Vec<&str> = reply.lines().filter(|l| !l.trim().is_empty()).collect();
        lines.pop();
        let uncut = steps::parse(&lines.join("\n"), false, branching, &known);
        assert_eq!(
            parsed.as_ref().map(|s| &s.steps),
            uncut.as_ref().map(|s| &s.steps)
        );
    }
    let Some(parsed) = parsed else {
        return;
    };
    assert!(parsed.steps.len() <= branching);
    let mut keys = vec![normalize(QUESTION)];
    for step in &parsed.steps {
        assert!(!step.text.is_empty() && step.text.trim() == step.text);
        assert!(!step.text.contains('\n'));
        let key = normalize(&step.text);
        assert!(!key.is_empty(), "{:?} says nothing", step.text);
        assert!(!keys.contains(&key), "{:?} repeats a step", step.text);
        keys.push(key);
    }
}

// Citations, verdicts and answer lines ---------------------------------------

pub fn citations(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let cited = deterministic(|| cited_numbers(&text));
    for (i, n) in cited.iter().enumerate() {
        assert!(!cited[..i].contains(n), "[{n}] listed twice");
    }
    // A marker added at the end is found after all the others.
    let fresh = cited.iter().max().map_or(Some(1), |n| n.checked_add(1));
    if let Some(fresh) = fresh {
        let mut more = cited_numbers(&format!("{text} [{fresh}]"));
        assert_eq!(more.pop(), Some(fresh));
        assert_eq!(more, cited);
    }
}

pub fn judge_verdict(data: &[u8]) {
    let reply = String::from_utf8_lossy(data);
    let found = deterministic(|| verdict(&reply));
    let lower = reply.to_lowercase();
    match found {
        Some(true) => assert!(lower.contains("yes")),
        Some(false) => assert!(lower.contains("no")),
        None => {}
    }
    assert_eq!(verdict(&format!("**{reply}")), found, "emphasis changed it");
    // Only the first word counts.
    if reply.chars().any(char::is_alphanumeric) {
        assert_eq!(verdict(&format!("{reply} yes")), found);
    }
}

pub fn activerag_answer(data: &[u8]) {
    let reply = String::from_utf8_lossy(data);
    let answer = deterministic(|| final_answer(&reply));
    if let Some(answer) = &answer {
        assert!(!answer.is_empty() && answer.trim() == answer);
        assert!(!answer.contains('\n') && reply.contains(answer.as_str()));
        // Only the last answer line counts.
        assert_eq!(
            final_answer(&format!("Answer: an earlier draft\n{reply}")).as_ref(),
            Some(answer)
        );
    }
    assert_eq!(
        final_answer(&format!("{reply}\n**Answer:** London [1]")).as_deref(),
        Some("London [1]")
    );
}

// Server-sent events --------------------------------------------------------

/// The first byte sets how the stream is cut into network reads; the events
/// must not depend on it.
pub fn sse_stream(data: &[u8]) {
    let Some((&knob, stream)) = data.split_first() else {
        return;
    };
    let whole = decode_in_reads(stream, stream.len().max(1));
    assert_eq!(decode_in_reads(stream, 1 + usize::from(knob % 16)), whole);
    for event in &whole {
        assert!(!event.contains('\r'), "{event:?} kept a line ending");
    }
}

fn decode_in_reads(stream: &[u8], read_len: usize) -> Vec<String> {
    let mut decoder = SseDecoder::new();
    let mut events: Vec<String> = stream
        .chunks(read_len)
        .flat_map(|read| decoder.push(read))
        .collect();
    events.extend(decoder.finish());
    events
}

// Answer metrics --------------------------------------------------------------

/// A prediction and a gold answer, on the first line and the rest.
pub fn answer_metrics(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (prediction, gold) = text.split_once('\n').unwrap_or((text.as_ref(), ""));
    let normalized = deterministic(|| normalize(prediction));
    assert_eq!(normalize(&normalized), normalized, "normalising twice");
    assert!(!normalized.starts_with(' ') && !normalized.ends_with(' '));
    assert!(!normalized.contains("  "));

    let overlap = f1(prediction, gold);
    assert!((0.0..=1.0).contains(&overlap), "F1 {overlap}");
    assert_eq!(overlap, f1(gold, prediction), "F1 is symmetric");
    let exact = exact_match(prediction, gold);
    if exact {
        assert_eq!(overlap, 1.0, "an exact match overlaps fully");
        assert!(cover_em(prediction, gold) || normalize(gold).is_empty());
    }
    assert!(exact_match(prediction, prediction));
    assert_eq!(cover_em(prediction, prediction), !normalized.is_empty());
    let scores = score(prediction, &[gold.to_string()]);
    assert_eq!(
        (scores.em, scores.f1, scores.cover_em),
        (exact, overlap, cover_em(prediction, gold))
    );
}

// Helpers -------------------------------------------------------------------

/// Calls `parse` twice: parsers keep no state, so both results must agree.
fn deterministic<T: PartialEq + Debug>(parse: impl Fn() -> T) -> T {
    let first = parse();
    assert_eq!(parse(), first, "a second call gave another result");
    first
}

/// The first byte as a setting and the rest as text. Invalid UTF-8 becomes
/// U+FFFD, so every input reaches the parser.
fn knob_and_text(data: &[u8]) -> Option<(u8, String)> {
    let (&knob, text) = data.split_first()?;
    Some((knob, String::from_utf8_lossy(text).into_owned()))
}

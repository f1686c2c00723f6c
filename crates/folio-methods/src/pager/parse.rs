//! Reading PAGER's model replies. Small models wrap outlines in prose,
//! rewrite whole pages when asked for one section and forget markers, so
//! every parser repairs what it safely can and reports each repair; what it
//! cannot repair is an error the caller retries or records.

use serde_json::{json, Value};

use super::page::{
    clean_heading, heading, same_heading, unfenced, without_placeholders, Page, PLACEHOLDER,
};
use folio_llm::response_format::{object_schema, one_line, text_schema};
use folio_llm::ReplySchema;

const OUTLINE_MARKER: &str = "<OUTLINE>";
/// Longer sub-queries are cut: a retrieval query is a line, not an essay.
/// The 1.5B Qwen filled 300 with the answer it expected, talk about the
/// page ("This query will find the facts for the section …") or a run of
/// "0." (rust-book dev, 2026-12-07): 58 tokens a query on average to
/// write, each searched with the guess in it. The names a query needs come
/// first and fit in far less.
const MAX_QUERY_CHARS: usize = 120;
/// The quotes a query may be wrapped in; the parser trims them from its ends.
const QUOTES: [char; 5] = ['"', '\'', '`', '“', '”'];
/// The spaces a query's grammar keeps after a colon and off its end, as a
/// llama.cpp character class: SmolLM2 put a tab or a no-break space after
/// a label's colon once a plain space was barred.
const SPACES: &str = " \\t\\r\\u00A0";
/// How much of an unusable reply a repair note quotes.
const EXCERPT_CHARS: usize = 80;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplyError {
    #[error("the outline has no sections")]
    NoSections,
    #[error("the reply is empty once headings and placeholders are removed")]
    EmptyFill,
    #[error("the reply fills another section, not \"{0}\"")]
    WrongSection(String),
}

/// A parsed reply and the repairs it needed, in words for the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Repaired<T> {
    pub value: T,
    pub repairs: Vec<String>,
}

/// The outline reply: reasoning, then `<OUTLINE>`, then `# Title` and one
/// `## Section` per slot.
pub fn outline(
    reply: &str,
    question: &str,
    max_sections: usize,
    heading_chars: usize,
) -> Result<Repaired<(String, Page)>, ReplyError> {
    let mut repairs = Vec::new();
    let (reasoning, body) = match find_ignore_case(reply, OUTLINE_MARKER) {
        Some(at) => (&reply[..at], &reply[at + OUTLINE_MARKER.len()..]),
        None => {
            let first_heading = reply
                .lines()
                .position(|l| heading(l).is_some())
                .unwrap_or(0);
            // Measured with the line endings `lines()` drops: "\r\n" is
            // two bytes, and a wrong count can cut inside a character.
            let split = reply
                .split_inclusive('\n')
                .take(first_heading)
                .map(str::len)
                .sum::<usize>();
            // An outline that starts at once needs no marker.
            if !reply[..split].trim().is_empty() {
                repairs
                    .push("no <OUTLINE> marker; the outline was read from the whole reply".into());
            }
            (&reply[..split], &reply[split..])
        }
    };
    let (lines, joined) = rejoin_cut_headings(unfenced(body), heading_chars);
    if joined > 0 {
        repairs.push(format!(
            "joined {joined} heading line(s) that went on from one the length bound had cut"
        ));
    }
    let headings: Vec<(usize, String)> = lines.iter().filter_map(|l| heading(l)).collect();
    // The first heading is the title when it is a `#` or sits above all the others.
    let title = match headings.split_first() {
        Some(((level, text), rest))
            if *level == 1 || (!rest.is_empty() && rest.iter().all(|(l, _)| l > level)) =>
        {
            Some(text.clone())
        }
        _ => None,
    };
    let below_title = if title.is_some() {
        &headings[1..]
    } else {
        &headings[..]
    };
    let section_level = below_title.iter().map(|(level, _)| *level).min();
    let mut sections: Vec<String> = below_title
        .iter()
        .filter(|(level, _)| Some(*level) == section_level)
        .map(|(_, text)| text.clone())
        .collect();
    if sections.is_empty() {
        sections = list_items(body);
        if !sections.is_empty() {
            repairs.push("no section headings; list items became the sections".into());
        }
    }
    let before = sections.len();
    let mut unique: Vec<String> = Vec::new();
    for s in sections {
        if !unique.iter().any(|u| same_heading(u, &s)) {
            unique.push(s);
        }
    }
    if unique.len() < before {
        repairs.push(format!(
            "dropped {} repeated section heading(s)",
            before - unique.len()
        ));
    }
    if unique.is_empty() {
        return Err(ReplyError::NoSections);
    }
    if unique.len() > max_sections {
        // The paper finds the later slots matter most to the answer.
        repairs.push(format!(
            "kept the last {max_sections} of {} sections",
            unique.len()
        ));
        unique.drain(..unique.len() - max_sections);
    }
    let title = title.unwrap_or_else(|| {
        repairs.push("no title; the question became the title".into());
        question.trim().to_string()
    });
    Ok(Repaired {
        value: (reasoning.trim().to_string(), Page::new(title, unique)),
        repairs,
    })
}

/// The text for section `slot` of `page`. The prompt asks for the section's
/// text alone; a reply that rewrites the page is cut down to that section.
pub fn fill(reply: &str, page: &Page, slot: usize) -> Result<Repaired<String>, ReplyError> {
    let target = &page.sections[slot].heading;
    let mut repairs = Vec::new();
    let lines: Vec<&str> = unfenced(reply).collect();
    let headed: Vec<(usize, String)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| heading(l).map(|(_, text)| (i, text)))
        .collect();
    let body_lines: Vec<&str> = if headed.is_empty() {
        lines
    } else if let Some(pos) = headed.iter().position(|(_, t)| same_heading(t, target)) {
        let start = headed[pos].0 + 1;
        let end = headed.get(pos + 1).map_or(lines.len(), |(i, _)| *i);
        if headed.len() > 1 {
            repairs.push(format!(
                "the reply rewrote other parts of the page; only \"{target}\" was kept"
            ));
        }
        lines[start..end].to_vec()
    } else {
        let lead = &lines[..headed[0].0];
        if lead.iter().all(|l| l.trim().is_empty()) {
            return Err(ReplyError::WrongSection(target.clone()));
        }
        repairs.push("dropped headings the reply added after the section text".into());
        lead.to_vec()
    };
    let mut text = body_lines.join("\n");
    if text.contains(PLACEHOLDER) {
        repairs.push("removed a leftover <TO BE FILLED> marker".into());
        text = without_placeholders(&text);
    }
    let text = text.trim().to_string();
    if text.is_empty() {
        return Err(ReplyError::EmptyFill);
    }
    Ok(Repaired {
        value: text,
        repairs,
    })
}

/// `lines` with each heading line that continues a cut one joined to it,
/// and how many were joined. A heading within [`CUT_SLACK`] characters of
/// `heading_chars` was cut by the outline's length bound, and a next
/// heading at the same level that starts in lower case goes on with its
/// sentence: the 1.5B wrote
/// "## Description: This flag enables verbose mode in cargo test, which"
/// then "## prints detailed information about each test, including passing"
/// and "## tests and their outputs.", three slots (three sub-queries and
/// fills) for one.
fn rejoin_cut_headings<'a>(
    lines: impl Iterator<Item = &'a str>,
    heading_chars: usize,
) -> (Vec<String>, usize) {
    let mut kept: Vec<String> = Vec::new();
    let mut joined = 0;
    // The level of the last kept line when it is a heading the bound cut.
    let mut cut_at_level = None;
    for line in lines {
        let trimmed = line.trim_start();
        let level = trimmed.chars().take_while(|&c| c == '#').count();
        let text = trimmed[level..].strip_prefix(' ').filter(|_| level > 0);
        let was_cut = |t: &str| t.chars().count() + CUT_SLACK >= heading_chars;
        match (text, kept.last_mut()) {
            (Some(t), Some(last))
                if cut_at_level == Some(level) && t.starts_with(char::is_lowercase) =>
            {
                last.truncate(last.trim_end().len());
                last.push(' ');
                last.push_str(t.trim_start());
                joined += 1;
                cut_at_level = was_cut(t).then_some(level);
            }
            _ => {
                cut_at_level = text.filter(|t| was_cut(t)).map(|_| level);
                kept.push(line.to_string());
            }
        }
    }
    (kept, joined)
}

/// How far short of the bound a cut heading may end: the grammar admits
/// only a token that fits, so the model may end the line rather than write
/// a word that would not ("… including passing" ended at 62 of 64).
const CUT_SLACK: usize = 8;
/// Longest heading the outline grammar lets the model write, in characters.
const HEADING_CHARS: usize = 120;
/// Shortest heading the outline grammar sizes, however tight the room: one
/// that holds a span of years with a character on either side.
const SHORTEST_HEADING_CHARS: usize = 2 * NUMBER_DIGITS + NUMBER_GAP + 3;
/// Most sections the outline grammar lets the model write: the model
/// chooses how many, and `slots-max` then keeps the last of them.
pub const OUTLINE_CEILING: usize = 12;
/// The reasoning before the outline, in characters: a few sentences.
const REASONING_CHARS: usize = 600;
/// Characters a token holds in prose, for sizing an outline to
/// `max_tokens` (as ActiveRAG's answer line is). Digits run at about one a
/// token, which is why [`outline_grammar`] bounds the numbers in a line.
const CHARS_PER_TOKEN: usize = 2;
/// Most digits in one number of a heading: a year.
const NUMBER_DIGITS: usize = 4;
/// Most characters between a heading's two numbers: "–", " to ", " and ".
const NUMBER_GAP: usize = 5;

/// How long an outline may be within `max_tokens`: a fourth of the room
/// for the reasoning, headings up to [`HEADING_CHARS`] (shorter when room
/// is tight), and as many sections as the rest holds, up to
/// [`OUTLINE_CEILING`]. Without this SmolLM2 wrote reasoning and twelve
/// long sections and was cut off in half the rust-book questions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutlineSize {
    pub reasoning: usize,
    pub heading: usize,
    pub sections: usize,
}

impl OutlineSize {
    pub fn within(max_tokens: u32) -> OutlineSize {
        let room = max_tokens as usize * CHARS_PER_TOKEN;
        let reasoning = (room / 4).clamp(20, REASONING_CHARS);
        let heading = (room / 8).clamp(SHORTEST_HEADING_CHARS, HEADING_CHARS);
        // The marker and the title line, then "## " and a newline a section.
        let left = room.saturating_sub(reasoning + OUTLINE_MARKER.len() + heading + 4);
        let sections = (left / (heading + 4)).clamp(1, OUTLINE_CEILING);
        OutlineSize {
            reasoning,
            heading,
            sections,
        }
    }
}

/// A llama.cpp grammar for the outline the prompt asks for: a few
/// sentences of reasoning, the `<OUTLINE>` marker, a `# ` title line, then
/// as many `## ` section lines as the model chooses, within `size`. No
/// heading mark or marker inside the reasoning, so the parser's split
/// cannot go wrong.
///
/// A heading's first character is no digit (no numbered list), and the
/// heading holds at most two numbers of up to [`NUMBER_DIGITS`] digits,
/// close together ("Early life (1950–1970)"), with text on either side; a
/// line with numbers stays within the heading length. SmolLM2 once wrote a title and headings that were runs of years
/// ("2020 #2021 2022 2023 …"): they tokenize at about a digit a token, so
/// the outline reached `max_tokens` before the grammar ended it (HotpotQA
/// dev-100: 1 of 100 outlines). The text on either side shares what the
/// numbers leave, split at a fourth, a half or three fourths, so that a
/// long heading can have its numbers near the start ("The 2017 season of
/// …") or near the end; a grammar can bound each part, not their sum.
pub fn outline_grammar(size: OutlineSize) -> String {
    let OutlineSize {
        reasoning,
        heading,
        sections,
    } = size;
    let (reasoning_rest, heading_rest) = (reasoning - 1, heading - 1);
    // What the first character, both numbers and their gap leave for text.
    let text = heading.saturating_sub(1 + 2 * NUMBER_DIGITS + NUMBER_GAP);
    let numbered = (1..=3)
        .map(|fourths| {
            let before = text * fourths / 4;
            let after = text - before;
            format!("[^\\n0-9]{{0,{before}}} numbers [^\\n0-9]{{0,{after}}}")
        })
        .collect::<Vec<_>>()
        .join(" | ");
    format!(
        "root ::= reasoning \"{OUTLINE_MARKER}\\n# \" line (\"## \" line){{1,{sections}}}\n\
         reasoning ::= [^\\n<#] [^<#]{{19,{reasoning_rest}}} \"\\n\"\n\
         line ::= [^\\n#0-9] ([^\\n0-9]{{2,{heading_rest}}} | numbered) \"\\n\"\n\
         numbered ::= {numbered}\n\
         numbers ::= [0-9]{{1,{NUMBER_DIGITS}}} ([^\\n0-9]{{1,{NUMBER_GAP}}} [0-9]{{1,{NUMBER_DIGITS}}})?\n"
    )
}

/// [`outline_grammar`]'s reply as a JSON schema for a server.
pub fn outline_schema(size: OutlineSize) -> ReplySchema {
    let heading = text_schema(3, size.heading);
    ReplySchema {
        schema: object_schema(&[
            ("reasoning", text_schema(20, size.reasoning)),
            ("title", heading.clone()),
            (
                "sections",
                json!({ "type": "array", "items": heading, "minItems": 1, "maxItems": size.sections }),
            ),
        ]),
        to_text: outline_text,
    }
}

/// A schema outline as the text [`outline`] reads.
fn outline_text(reply: &Value) -> Option<String> {
    let mut text = format!(
        "{}\n{OUTLINE_MARKER}\n# {}\n",
        one_line(reply["reasoning"].as_str()?),
        one_line(reply["title"].as_str()?)
    );
    for section in reply["sections"].as_array()? {
        text.push_str(&format!("## {}\n", one_line(section.as_str()?)));
    }
    Some(text)
}

/// [`sub_queries_grammar`]'s `lines` queries as a JSON schema for a server.
pub fn sub_queries_schema(lines: usize) -> ReplySchema {
    ReplySchema {
        schema: object_schema(&[(
            "queries",
            json!({
                "type": "array",
                "items": text_schema(3, MAX_QUERY_CHARS),
                "minItems": lines,
                "maxItems": lines,
            }),
        )]),
        to_text: |reply| {
            let queries: Vec<String> = reply["queries"]
                .as_array()?
                .iter()
                .map(|q| q.as_str().map(|q| one_line(q) + "\n"))
                .collect::<Option<_>>()?;
            Some(queries.concat())
        },
    }
}

/// A llama.cpp grammar for `lines` retrieval queries, one per line: the
/// shape [`sub_queries`] reads, so none goes missing and none is extra. A
/// query starts with a letter (no numbering, quotes or heading marks) and
/// does not end in a colon. No colon is followed by one of the [`SPACES`],
/// so no label ("Sub-query: …") can come first: SmolLM2 sometimes wrote one
/// with nothing usable after it, and the line held no query once the label
/// was read. Paths such as `std::mem` still fit. No `<` either: SmolLM2
/// copied the page's `<TO BE FILLED>` placeholder, after a lead-in such as
/// "The answer to this question is:", and nothing was left once it was read
/// (HotpotQA dev-100: 5 of 404 replies). Search loses little by it: BM25
/// reads `Box<T>` as the words `box` and `t`. The last character is none of
/// the [`SPACES`] and none of the [`QUOTES`] the parser trims: SmolLM2
/// ended queries in a colon and a code fence ("… marked with:" and three
/// backticks), and once the fence was trimmed the line read as a label with
/// nothing after it (HotpotQA's dense and BM25 grid cells: 4 of 266 replies
/// held no query; the two that failed again when asked anew ended so).
pub fn sub_queries_grammar(lines: usize) -> String {
    let middle = MAX_QUERY_CHARS - 2;
    let quotes: String = QUOTES.iter().collect();
    format!(
        "root ::= query{{{lines}}}\nquery ::= [A-Za-z] part{{1,{middle}}} [^\\n:<{SPACES}{quotes}] \"\\n\"\npart ::= [^\\n:<] | \":\" [^\\n<{SPACES}]\n"
    )
}

/// A retrieval query: the first line with text, without labels or quotes.
/// An unusable reply falls back to `fallback`.
pub fn sub_query(reply: &str, fallback: &str) -> Repaired<String> {
    match query_lines(reply).into_iter().next() {
        Some(query) => Repaired {
            value: query,
            repairs: Vec::new(),
        },
        None => Repaired {
            value: fallback.to_string(),
            repairs: vec![format!(
                "the sub-query reply held no query ({:?}); searched with the section heading and the question",
                excerpt(reply)
            )],
        },
    }
}

/// The start of a reply on one line, for a note that says what was read.
fn excerpt(reply: &str) -> String {
    let line = one_line(reply);
    match line.char_indices().nth(EXCERPT_CHARS) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line,
    }
}

/// One query per slot from a single reply (one line each, in slot order);
/// missing lines fall back to `fallbacks[i]`.
pub fn sub_queries(reply: &str, fallbacks: &[String]) -> Repaired<Vec<String>> {
    let found = query_lines(reply);
    let mut repairs = Vec::new();
    if found.len() < fallbacks.len() {
        repairs.push(format!(
            "{} of {} sub-queries were missing; those slots searched with their heading and the question",
            fallbacks.len() - found.len(),
            fallbacks.len()
        ));
    } else if found.len() > fallbacks.len() {
        repairs.push(format!(
            "ignored {} extra sub-query line(s)",
            found.len() - fallbacks.len()
        ));
    }
    let value = fallbacks
        .iter()
        .enumerate()
        .map(|(i, fallback)| found.get(i).cloned().unwrap_or_else(|| fallback.clone()))
        .collect();
    Repaired { value, repairs }
}

/// A summary followed by `SUFFICIENT: yes` or `SUFFICIENT: no`. A missing
/// verdict reads as "not yet", so the loop goes on until its budget.
pub fn summary(reply: &str) -> Result<Repaired<(String, bool)>, ReplyError> {
    let mut verdict = None;
    let mut kept = Vec::new();
    for line in unfenced(reply) {
        let bare = line.trim().trim_matches('*').trim();
        match bare
            .get(..11)
            .filter(|p| p.eq_ignore_ascii_case("sufficient:"))
        {
            Some(_) => {
                verdict = Some(bare[11..].trim().to_lowercase().starts_with("yes"));
            }
            None => kept.push(line),
        }
    }
    let text = kept.join("\n").trim().to_string();
    if text.is_empty() {
        return Err(ReplyError::EmptyFill);
    }
    let repairs = if verdict.is_none() {
        vec!["no SUFFICIENT line; read as not sufficient yet".into()]
    } else {
        Vec::new()
    };
    Ok(Repaired {
        value: (text, verdict.unwrap_or(false)),
        repairs,
    })
}

/// The reply's lines that can be queries. A lead-in such as "The answer to
/// this question is:" and a copied placeholder never are, even alone.
fn query_lines(reply: &str) -> Vec<String> {
    unfenced(reply)
        .map(|l| clean_query(&without_placeholders(l)))
        .filter(|q| !q.is_empty() && !q.ends_with(':'))
        .collect()
}

fn clean_query(line: &str) -> String {
    let mut q = line.trim();
    q = q.trim_start_matches(|c: char| {
        c.is_ascii_digit() || matches!(c, '.' | ')' | '-' | '*' | ' ')
    });
    for label in [
        "sub-query:",
        "subquery:",
        "retrieval question:",
        "query:",
        "question:",
    ] {
        if q.get(..label.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(label))
        {
            q = q[label.len()..].trim();
        }
    }
    let q = q.trim_matches(QUOTES);
    q.chars()
        .take(MAX_QUERY_CHARS)
        .collect::<String>()
        .trim()
        .to_string()
}

fn list_items(text: &str) -> Vec<String> {
    unfenced(text)
        .filter_map(|l| {
            let t = l.trim_start();
            let rest = t
                .strip_prefix("- ")
                .or_else(|| t.strip_prefix("* "))
                .or_else(|| {
                    let digits = t.chars().take_while(char::is_ascii_digit).count();
                    (digits > 0)
                        .then(|| {
                            t[digits..]
                                .strip_prefix(". ")
                                .or(t[digits..].strip_prefix(") "))
                        })
                        .flatten()
                })?;
            let item = clean_heading(rest);
            (!item.is_empty()).then_some(item)
        })
        .collect()
}

fn find_ignore_case(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .to_ascii_lowercase()
        .find(&needle.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headings(page: &Page) -> Vec<&str> {
        page.sections.iter().map(|s| s.heading.as_str()).collect()
    }

    #[test]
    fn the_outline_grammar_asks_for_reasoning_then_a_title_and_sections() {
        let roomy = OutlineSize::within(4096);
        assert_eq!(
            outline_grammar(roomy),
            "root ::= reasoning \"<OUTLINE>\\n# \" line (\"## \" line){1,12}\n\
             reasoning ::= [^\\n<#] [^<#]{19,599} \"\\n\"\n\
             line ::= [^\\n#0-9] ([^\\n0-9]{2,119} | numbered) \"\\n\"\n\
             numbered ::= [^\\n0-9]{0,26} numbers [^\\n0-9]{0,80} | \
             [^\\n0-9]{0,53} numbers [^\\n0-9]{0,53} | \
             [^\\n0-9]{0,79} numbers [^\\n0-9]{0,27}\n\
             numbers ::= [0-9]{1,4} ([^\\n0-9]{1,5} [0-9]{1,4})?\n"
        );
        // 256 tokens hold at least 512 characters: 128 of reasoning, and
        // 64-character headings, four of them after the title.
        let tight = OutlineSize::within(256);
        assert_eq!(
            tight,
            OutlineSize {
                reasoning: 128,
                heading: 64,
                sections: 4
            }
        );
        let longest = tight.reasoning + 10 + (tight.sections + 1) * (tight.heading + 4);
        assert!(longest <= 512, "{longest}");
        assert!(outline_grammar(tight).contains("{1,4}"));
        // A line with numbers fits the heading length too, and holds at
        // most eight digits of it.
        for size in [tight, roomy, OutlineSize::within(16)] {
            let grammar = outline_grammar(size);
            let numbered = grammar.lines().nth(3).unwrap();
            let bounds: Vec<usize> = numbered
                .split("{0,")
                .skip(1)
                .map(|rest| rest.split('}').next().unwrap().parse().unwrap())
                .collect();
            assert_eq!(bounds.len(), 6, "{numbered}");
            for pair in bounds.chunks(2) {
                assert!(
                    1 + pair[0] + 4 + 5 + 4 + pair[1] <= size.heading,
                    "{size:?}"
                );
            }
        }
        let shaped = "It needs the type's size, then its encoding.\n<OUTLINE>\n# Rust's char\n## Size\n## Encoding\n";
        let (reasoning, page) = outline(shaped, "Q?", 5, 64)
            .map(|r| {
                assert!(r.repairs.is_empty(), "{:?}", r.repairs);
                r.value
            })
            .unwrap();
        assert_eq!(reasoning, "It needs the type's size, then its encoding.");
        assert_eq!(page.sections.len(), 2);
    }

    #[test]
    fn schema_outlines_and_queries_read_as_the_grammars_text() {
        let to_text = outline_schema(OutlineSize::within(512)).to_text;
        let text = to_text(&json!({
            "reasoning": "It needs the size,\nthen the encoding.",
            "title": "Rust's char",
            "sections": ["Size", "Encoding"]
        }))
        .unwrap();
        let parsed = outline(&text, "Q?", 5, 64).unwrap();
        assert!(parsed.repairs.is_empty(), "{:?}", parsed.repairs);
        let (reasoning, page) = parsed.value;
        assert_eq!(reasoning, "It needs the size, then the encoding.");
        assert_eq!(headings(&page), ["Size", "Encoding"]);
        assert_eq!(to_text(&json!({"title": "T", "sections": []})), None);

        let held = sub_queries_schema(2);
        assert_eq!(held.schema["properties"]["queries"]["minItems"], 2);
        let text = (held.to_text)(&json!({"queries": ["Ada Lovelace", "her birthplace"]})).unwrap();
        let fallbacks = ["a".to_string(), "b".to_string()];
        assert_eq!(
            sub_queries(&text, &fallbacks).value,
            ["Ada Lovelace", "her birthplace"]
        );
    }

    #[test]
    fn the_sub_query_grammar_asks_for_one_line_per_section() {
        assert_eq!(
            sub_queries_grammar(3),
            "root ::= query{3}\nquery ::= [A-Za-z] part{1,118} [^\\n:< \\t\\r\\u00A0\"'`“”] \"\\n\"\npart ::= [^\\n:<] | \":\" [^\\n< \\t\\r\\u00A0]\n"
        );
    }

    #[test]
    fn a_well_formed_outline_parses_without_repairs() {
        let reply = "The question needs A and B.\n<OUTLINE>\n# Main\n## A\n<TO BE FILLED>\n## B\n<TO BE FILLED>\n";
        let parsed = outline(reply, "q?", 5, 64).unwrap();
        let (reasoning, page) = parsed.value;
        assert_eq!(reasoning, "The question needs A and B.");
        assert_eq!(page.title, "Main");
        assert_eq!(headings(&page), ["A", "B"]);
        assert!(page.sections.iter().all(|s| s.body.is_none()));
        assert!(parsed.repairs.is_empty(), "{:?}", parsed.repairs);
    }

    #[test]
    fn outlines_are_repaired_and_say_so() {
        let reply = "```markdown\n## A\n## a\n## B\n## C\n```";
        let parsed = outline(reply, "Who?", 2, 64).unwrap();
        assert_eq!(parsed.value.1.title, "Who?");
        assert_eq!(headings(&parsed.value.1), ["B", "C"]);
        let repairs = parsed.repairs.join(" | ");
        for expected in ["no <OUTLINE> marker", "repeated", "last 2 of 3", "no title"] {
            assert!(repairs.contains(expected), "{repairs}");
        }
    }

    #[test]
    fn headings_the_length_bound_cut_are_joined_with_what_goes_on_from_them() {
        // The bound is 30 characters here: the first heading reaches it,
        // the second ends a word short of it (the next word did not fit),
        // and the line after each goes on in lower case.
        let reply = "It needs the flag.\n<OUTLINE>\n# Test output\n## Flag: the one that makes tests\n## print what passed\n## Where the output of passing\n## tests goes\n## Why\n## apart from the rest\n";
        let parsed = outline(reply, "q", 5, 30).unwrap();
        assert_eq!(
            headings(&parsed.value.1),
            [
                "Flag: the one that makes tests print what passed",
                "Where the output of passing tests goes",
                "Why",
                "apart from the rest",
            ],
            "a lower-case heading after a short one is a section of its own"
        );
        assert_eq!(
            parsed.repairs,
            ["joined 2 heading line(s) that went on from one the length bound had cut"]
        );
    }

    #[test]
    fn reasoning_before_headings_is_cut_after_its_crlf_lines() {
        let parsed = outline("a\r\nb\r\né\n## H\n", "q", 5, 64).unwrap();
        assert_eq!(parsed.value.0, "a\r\nb\r\né");
        assert_eq!(headings(&parsed.value.1), ["H"]);
    }

    #[test]
    fn list_items_stand_in_for_missing_headings() {
        let parsed = outline("<OUTLINE>\n1. Birth place\n2) Career\n- Family", "q", 5, 64).unwrap();
        assert_eq!(
            headings(&parsed.value.1),
            ["Birth place", "Career", "Family"]
        );
    }

    #[test]
    fn an_outline_without_sections_is_rejected() {
        assert_eq!(
            outline("I think so.", "q", 5, 64),
            Err(ReplyError::NoSections)
        );
        assert_eq!(
            outline("<OUTLINE>\n# Only a title", "q", 5, 64),
            Err(ReplyError::NoSections)
        );
        assert_eq!(outline("", "q", 5, 64), Err(ReplyError::NoSections));
    }

    fn page() -> Page {
        let mut page = Page::new("T", vec!["A".into(), "B".into(), "C".into()]);
        page.sections[0].body = Some("first".into());
        page
    }

    #[test]
    fn a_plain_fill_is_taken_as_it_is() {
        let parsed = fill("B is true [2].\n", &page(), 1).unwrap();
        assert_eq!(parsed.value, "B is true [2].");
        assert!(parsed.repairs.is_empty());
    }

    #[test]
    fn a_rewritten_page_is_cut_to_the_target_section() {
        let reply = "# T\n## A\nchanged!\n## B\nB text [1]\n## C\n<TO BE FILLED>";
        let parsed = fill(reply, &page(), 1).unwrap();
        assert_eq!(parsed.value, "B text [1]");
        assert!(parsed.repairs[0].contains("only \"B\" was kept"));
    }

    #[test]
    fn bad_fills_are_errors() {
        assert_eq!(
            fill("  \n<TO BE FILLED>\n", &page(), 1),
            Err(ReplyError::EmptyFill)
        );
        assert_eq!(
            fill("## C\nsomething", &page(), 1),
            Err(ReplyError::WrongSection("B".into()))
        );
        assert_eq!(
            fill("## B\n<TO BE FILLED>\n## C", &page(), 1),
            Err(ReplyError::EmptyFill)
        );
        assert_eq!(
            fill("B text <TO BE <TO BE FILLED>FILLED>", &page(), 1)
                .unwrap()
                .value,
            "B text"
        );
        let lead = fill("B text.\n## C\nmore", &page(), 1).unwrap();
        assert_eq!(lead.value, "B text.");
        assert_eq!(lead.repairs.len(), 1);
    }

    #[test]
    fn sub_queries_lose_labels_and_fall_back() {
        assert_eq!(
            sub_query("Query: \"where was X born?\"\nmore", "f").value,
            "where was X born?"
        );
        let empty = sub_query("```\n```", "A q");
        assert_eq!(empty.value, "A q");
        assert_eq!(empty.repairs.len(), 1);
        let many = sub_queries("1. one\n2. two", &["a".into(), "b".into(), "c".into()]);
        assert_eq!(many.value, ["one", "two", "c"]);
        assert_eq!(many.repairs.len(), 1);
        assert_eq!(
            sub_query(&"x".repeat(1000), "f").value.len(),
            MAX_QUERY_CHARS
        );
        let lead_in = sub_query(
            "The answer to this question is:\n<TO BE FILLED>\nmutable variables let mut",
            "f",
        );
        assert_eq!(lead_in.value, "mutable variables let mut");
        assert_eq!(sub_query("questio€ more", "f").value, "questio€ more");
        assert_eq!(
            sub_query("<TO BE <TO BE FILLED>FILLED> query", "f").value,
            "query"
        );
        let alone = sub_query("The answer to this question is:<TO BE FILLED>", "f");
        assert_eq!(alone.value, "f");
        assert_eq!(
            alone.repairs,
            ["the sub-query reply held no query (\"The answer to this question is:<TO BE FILLED>\"); \
              searched with the section heading and the question"]
        );
        assert_eq!(
            excerpt(&"é ".repeat(100)).chars().count(),
            EXCERPT_CHARS + 1
        );
    }

    #[test]
    fn summaries_carry_a_verdict() {
        let parsed = summary("X was born in Y [1].\n**SUFFICIENT: Yes**").unwrap();
        assert_eq!(parsed.value, ("X was born in Y [1].".into(), true));
        let parsed = summary("Nothing decisive.").unwrap();
        assert!(!parsed.value.1);
        assert_eq!(parsed.repairs.len(), 1);
        assert_eq!(summary("SUFFICIENT: no"), Err(ReplyError::EmptyFill));
    }
}

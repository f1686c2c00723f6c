//! Reading the router's reply. The format is `[ANSWER] id` and
//! `[EXPAND] id` (several ids may follow one tag, and a `: text` after an id
//! is the paper's grounding prefix), or "Cannot answer". Everything else is
//! free text: it is ignored and reported, never guessed at.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::trace::{ActionKind, IgnoredAction};
use folio_llm::response_format::object_schema;
use folio_llm::ReplySchema;

#[derive(Debug, Default, PartialEq)]
pub struct Reply {
    pub actions: Vec<(ActionKind, usize)>,
    pub refused: bool,
    pub ignored: Vec<IgnoredAction>,
}

const REFUSAL: &str = "cannot answer";
/// Reported free text is cut to this many characters.
const QUOTE_CHARS: usize = 120;

enum Tag {
    Action(ActionKind),
    Refuse,
}

fn tag(name: &str) -> Option<Tag> {
    match name.trim().to_ascii_uppercase().as_str() {
        "ANSWER" | "ANS" => Some(Tag::Action(ActionKind::Answer)),
        "EXPAND" | "EXP" => Some(Tag::Action(ActionKind::Expand)),
        "REFUSE" | "REF" => Some(Tag::Refuse),
        _ => None,
    }
}

/// Most ids one action line may name: the paper's router names one or two
/// passages a turn, and a bound keeps a small model from listing the view.
const MAX_IDS_PER_ACTION: usize = 4;

/// A llama.cpp grammar for a reply to `view`: "Cannot answer" (when
/// refusing is allowed, or when nothing can be named), or an `[ANSWER]`
/// line naming passages in view and an `[EXPAND]` line naming collapsed
/// headings (when expanding is offered). Ids outside the view cannot be
/// written, so nothing is ignored for them.
pub fn grammar(
    shown: &BTreeSet<usize>,
    collapsed: &BTreeSet<usize>,
    expand: bool,
    refuse: bool,
) -> String {
    let mut rules = Vec::new();
    let mut lines = Vec::new();
    if let Some(line) = action_rule("answer", "[ANSWER]", shown) {
        rules.push(line);
        lines.push("answer");
    }
    if expand {
        if let Some(line) = action_rule("expand", "[EXPAND]", collapsed) {
            rules.push(line);
            lines.push("expand");
        }
    }
    let mut choices = Vec::new();
    if refuse || lines.is_empty() {
        choices.push("\"Cannot answer\"".to_string());
    }
    choices.extend(lines.iter().map(|l| l.to_string()));
    if lines.len() == 2 {
        choices.push("answer expand".into());
    }
    rules.insert(0, format!("root ::= {}", choices.join(" | ")));
    rules.join("\n") + "\n"
}

/// [`grammar`]'s choices as a JSON schema for a server: `cannot_answer`
/// (where refusing is allowed or nothing can be named), and the ids to
/// answer from and to expand, each only among those the view offers.
pub fn schema(
    shown: &BTreeSet<usize>,
    collapsed: &BTreeSet<usize>,
    expand: bool,
    refuse: bool,
) -> ReplySchema {
    let ids = |set: &BTreeSet<usize>| {
        json!({
            "type": "array",
            "items": { "enum": set.iter().collect::<Vec<_>>() },
            "maxItems": MAX_IDS_PER_ACTION,
        })
    };
    let mut properties = Vec::new();
    if !shown.is_empty() {
        properties.push(("answer", ids(shown)));
    }
    if expand && !collapsed.is_empty() {
        properties.push(("expand", ids(collapsed)));
    }
    if refuse || properties.is_empty() {
        properties.push(("cannot_answer", json!({ "type": "boolean" })));
    }
    ReplySchema {
        schema: object_schema(&properties),
        to_text: route_text,
    }
}

/// A schema reply as the lines [`parse`] reads.
fn route_text(reply: &Value) -> Option<String> {
    if !reply.is_object() {
        return None;
    }
    if reply["cannot_answer"].as_bool() == Some(true) {
        return Some("Cannot answer".into());
    }
    let line = |key: &str, tag: &str| {
        let ids: Vec<String> = reply[key]
            .as_array()?
            .iter()
            .map(|id| id.to_string())
            .collect();
        (!ids.is_empty()).then(|| format!("{tag} {}\n", ids.join(", ")))
    };
    Some(
        [line("answer", "[ANSWER]"), line("expand", "[EXPAND]")]
            .into_iter()
            .flatten()
            .collect(),
    )
}

/// `name ::= "TAG " id (", " id){0,n} "\n"` over `ids`; `None` when there
/// is no id to name.
fn action_rule(name: &str, tag: &str, ids: &BTreeSet<usize>) -> Option<String> {
    if ids.is_empty() {
        return None;
    }
    let id: Vec<String> = ids.iter().map(|i| format!("\"{i}\"")).collect();
    let id = format!("({})", id.join(" | "));
    let more = MAX_IDS_PER_ACTION.min(ids.len()) - 1;
    Some(format!(
        "{name} ::= \"{tag} \" {id} (\", \" {id}){{0,{more}}} \"\\n\""
    ))
}

pub fn parse(reply: &str) -> Reply {
    let mut out = Reply::default();
    for line in reply.lines() {
        parse_line(line, &mut out);
    }
    out
}

fn parse_line(line: &str, out: &mut Reply) {
    let mut free = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else {
            break;
        };
        let Some(tag) = tag(&rest[open + 1..close]) else {
            free.push_str(&rest[..=close]);
            rest = &rest[close + 1..];
            continue;
        };
        free.push_str(&rest[..open]);
        let body_end = rest[close + 1..]
            .find('[')
            .map_or(rest.len(), |i| close + 1 + i);
        let body = &rest[close + 1..body_end];
        match tag {
            Tag::Refuse => {
                out.refused = true;
                free.push_str(body);
            }
            Tag::Action(kind) => read_ids(kind, body, out),
        }
        rest = &rest[body_end..];
    }
    free.push_str(rest);
    let free = free.trim();
    if free.to_ascii_lowercase().contains(REFUSAL) {
        out.refused = true;
    } else if free.chars().any(char::is_alphanumeric) {
        out.ignored.push(IgnoredAction {
            text: quote(free),
            reason: "not an action".into(),
        });
    }
}

/// The ids after a tag: numbers separated by commas, semicolons, "and" or
/// any whitespace (a reply may end in the `\r` of a cut CRLF), up to
/// the first `:` (the grounding prefix) or anything that is not a number.
fn read_ids(kind: ActionKind, body: &str, out: &mut Reply) {
    let ids = body.split(':').next().unwrap_or_default();
    let mut found = false;
    for word in ids
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';'))
        .filter(|w| !w.is_empty())
    {
        if word.eq_ignore_ascii_case("and") {
            continue;
        }
        match word.trim_end_matches('.').parse::<usize>() {
            Ok(id) => {
                out.actions.push((kind, id));
                found = true;
            }
            Err(_) => break,
        }
    }
    if !found {
        let name = match kind {
            ActionKind::Answer => "[ANSWER]",
            ActionKind::Expand => "[EXPAND]",
        };
        out.ignored.push(IgnoredAction {
            text: quote(&format!("{name}{body}")),
            reason: "no node id after the tag".into(),
        });
    }
}

fn quote(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= QUOTE_CHARS {
        return text.to_string();
    }
    let kept: String = text.chars().take(QUOTE_CHARS).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ActionKind::{Answer, Expand};

    #[test]
    fn a_schema_route_reads_as_the_grammars_lines() {
        let (shown, collapsed) = (BTreeSet::from([3, 5]), BTreeSet::from([7]));
        let held = schema(&shown, &collapsed, true, true);
        assert_eq!(
            held.schema["properties"]["answer"]["items"]["enum"],
            json!([3, 5])
        );
        let to_text = held.to_text;
        let both = to_text(&json!({"answer": [5], "expand": [7], "cannot_answer": false})).unwrap();
        assert_eq!(both, "[ANSWER] 5\n[EXPAND] 7\n");
        assert_eq!(actions(&both), [(Answer, 5), (Expand, 7)]);
        let refused = to_text(&json!({"answer": [], "expand": [], "cannot_answer": true})).unwrap();
        assert!(parse(&refused).refused);
        let no_refusal = schema(&shown, &collapsed, false, false);
        assert!(no_refusal.schema["properties"]
            .get("cannot_answer")
            .is_none());
        assert!(no_refusal.schema["properties"].get("expand").is_none());
        let nothing = schema(&BTreeSet::new(), &BTreeSet::new(), true, false);
        assert_eq!(nothing.schema["required"], json!(["cannot_answer"]));
    }

    fn actions(reply: &str) -> Vec<(ActionKind, usize)> {
        parse(reply).actions
    }

    #[test]
    fn the_grammar_names_only_ids_in_view() {
        let (shown, collapsed) = (BTreeSet::from([3, 12]), BTreeSet::from([4]));
        assert_eq!(
            grammar(&shown, &collapsed, true, true),
            "root ::= \"Cannot answer\" | answer | expand | answer expand\n\
             answer ::= \"[ANSWER] \" (\"3\" | \"12\") (\", \" (\"3\" | \"12\")){0,1} \"\\n\"\n\
             expand ::= \"[EXPAND] \" (\"4\") (\", \" (\"4\")){0,0} \"\\n\"\n"
        );
        assert_eq!(
            grammar(&shown, &collapsed, false, true),
            "root ::= \"Cannot answer\" | answer\n\
             answer ::= \"[ANSWER] \" (\"3\" | \"12\") (\", \" (\"3\" | \"12\")){0,1} \"\\n\"\n"
        );
        assert!(grammar(&shown, &collapsed, true, false)
            .starts_with("root ::= answer | expand | answer expand\n"));
        assert_eq!(
            grammar(&BTreeSet::new(), &BTreeSet::new(), true, false),
            "root ::= \"Cannot answer\"\n",
            "with nothing to name, refusing is the only reply"
        );
    }

    #[test]
    fn what_the_grammar_admits_parses_to_its_actions() {
        let reply = parse("[ANSWER] 3, 12\n[EXPAND] 4\n");
        assert_eq!(reply.actions, [(Answer, 3), (Answer, 12), (Expand, 4)]);
        assert!(reply.ignored.is_empty() && !reply.refused);
        assert!(parse("Cannot answer").refused);
    }

    #[test]
    fn the_papers_formats_parse() {
        assert_eq!(
            actions("[ANSWER] 19 [EXPAND] 40"),
            [(Answer, 19), (Expand, 40)]
        );
        assert_eq!(actions("[ANSWER] 41, 44"), [(Answer, 41), (Answer, 44)]);
        assert_eq!(
            actions("[ANSWER] 8: In 2001 the park\n[EXPAND] 11: Records"),
            [(Answer, 8), (Expand, 11)]
        );
        assert_eq!(
            actions("[answer] 3 and 4\n[Exp] 2."),
            [(Answer, 3), (Answer, 4), (Expand, 2)]
        );
        assert_eq!(
            parse("- [ANSWER] 5").ignored,
            [],
            "list bullets are not free text"
        );
        let r = parse("[ANSWER] 8");
        assert!(!r.refused && r.ignored.is_empty());
    }

    #[test]
    fn refusals_are_recognised_in_either_form() {
        for reply in [
            "Cannot answer",
            "cannot answer.",
            "[REFUSE]",
            "\"Cannot answer\"",
        ] {
            let r = parse(reply);
            assert!(
                r.refused && r.actions.is_empty() && r.ignored.is_empty(),
                "{reply}: {r:?}"
            );
        }
    }

    #[test]
    fn free_text_and_broken_tags_are_ignored_and_reported() {
        let r =
            parse("Sure! Here is my answer.\n[ANSWER] the second paragraph\n[MAYBE] 4\n[EXPAND]");
        assert!(r.actions.is_empty() && !r.refused);
        let reasons: Vec<&str> = r.ignored.iter().map(|i| i.reason.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "not an action",
                "no node id after the tag",
                "not an action",
                "no node id after the tag"
            ]
        );
        assert_eq!(r.ignored[0].text, "Sure! Here is my answer.");
        assert_eq!(r.ignored[2].text, "[MAYBE] 4");
    }

    #[test]
    fn text_around_valid_actions_is_reported_but_does_not_spoil_them() {
        let r = parse("I think [ANSWER] 12 is right");
        assert_eq!(r.actions, [(Answer, 12)]);
        assert_eq!(
            r.ignored[0].text, "I think",
            "words after the ids are the prefix"
        );
        let r = parse("The answer is in node 12.\n[ANSWER] 12");
        assert_eq!(r.actions, [(Answer, 12)]);
        assert_eq!(r.ignored[0].text, "The answer is in node 12.");
    }

    #[test]
    fn ids_end_at_any_whitespace() {
        assert_eq!(actions("[ANSWER] 5\r"), [(Answer, 5)]);
        assert_eq!(actions("[ANSWER]\t1\t2"), [(Answer, 1), (Answer, 2)]);
    }

    #[test]
    fn nonsense_never_panics() {
        for reply in [
            "",
            "[",
            "]]][[",
            "[ANSWER]]]",
            "[ANSWER] 99999999999999999999999",
            "[ANSWER] -3",
            "ünïcödé [ÉXPAND] 1",
        ] {
            let _ = parse(reply);
        }
        assert!(parse("[ANSWER] 99999999999999999999999").actions.is_empty());
    }
}

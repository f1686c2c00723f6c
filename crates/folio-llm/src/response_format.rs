//! Holding a server's replies to a shape with `response_format`. Servers
//! take a JSON schema in one of two forms: `{"type": "json_schema", ...}`
//! (OpenAI, vLLM, Ollama, llama.cpp's server) or `{"type": "json_object",
//! "schema": ...}` (llama-cpp-python 0.3, which ignores the first). Which
//! one a server honours is found once, by asking for a reply only a server
//! holding it to the schema would give; a server that honours neither gets
//! no schema and its replies are read leniently, as they always were.

use serde::Serialize;
use serde_json::{json, Value};

use super::{ChatMessage, Completion, ReplySchema, Shaping};

/// How a server takes a JSON schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SchemaForm {
    JsonSchema,
    JsonObject,
}

impl SchemaForm {
    /// In the order they are tried: the standard form first.
    pub const ALL: [SchemaForm; 2] = [SchemaForm::JsonSchema, SchemaForm::JsonObject];

    /// The request's `response_format` for `schema`.
    pub fn response_format(self, schema: &Value) -> Value {
        match self {
            SchemaForm::JsonSchema => json!({
                "type": "json_schema",
                "json_schema": { "name": "reply", "strict": true, "schema": schema },
            }),
            SchemaForm::JsonObject => json!({ "type": "json_object", "schema": schema }),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SchemaForm::JsonSchema => "json_schema",
            SchemaForm::JsonObject => "json_object",
        }
    }
}

/// An object with exactly `properties`, every one required: the strict
/// form OpenAI asks for, which every other server takes as well.
pub fn object_schema(properties: &[(&str, Value)]) -> Value {
    let names: Vec<&str> = properties.iter().map(|(name, _)| *name).collect();
    let properties: serde_json::Map<String, Value> = properties
        .iter()
        .map(|(name, schema)| (name.to_string(), schema.clone()))
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": names,
        "additionalProperties": false,
    })
}

/// A string of `min..=max` characters.
pub fn text_schema(min: usize, max: usize) -> Value {
    json!({ "type": "string", "minLength": min, "maxLength": max })
}

/// `text` on one line: a schema cannot keep newlines out of a string, and a
/// line-based parser would split one.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A reply no model writes unasked: a made-up key and made-up words.
fn probe_schema() -> Value {
    object_schema(&[(
        "folio_probe",
        json!({ "type": "string", "enum": ["affirmative", "negative"] }),
    )])
}

/// The probe's question, which does not mention JSON, so only a server that
/// holds the reply to the schema answers in it.
pub fn probe() -> (Vec<ChatMessage>, ReplySchema) {
    let schema = ReplySchema {
        schema: probe_schema(),
        to_text: |v| v["folio_probe"].as_str().map(str::to_string),
    };
    (vec![ChatMessage::user("Is water wet?")], schema)
}

/// Whether a probe's reply followed the probe's schema.
pub fn follows_probe(completion: &Completion) -> bool {
    completion.shaping == Some(Shaping::Schema)
}

/// The completion as the method reads it. A reply that follows `schema` is
/// turned back into the text the method's grammar describes; one that does
/// not (a server that ignored the schema, a reply cut off mid-object) is
/// left as it came and marked unconstrained, so the method's lenient
/// parsing and its notes take over.
pub fn shaped(
    mut completion: Completion,
    schema: Option<&ReplySchema>,
    form: Option<SchemaForm>,
) -> Completion {
    let Some(schema) = schema else {
        return completion;
    };
    let text = form
        .and_then(|_| serde_json::from_str::<Value>(completion.text.trim()).ok())
        .and_then(|value| (schema.to_text)(&value));
    completion.shaping = Some(match text {
        Some(text) => {
            completion.text = text;
            Shaping::Schema
        }
        None => Shaping::Unconstrained,
    });
    completion
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FinishReason, Usage};

    fn completion(text: &str) -> Completion {
        Completion {
            text: text.into(),
            finish: FinishReason::Stop,
            usage: Usage::default(),
            logprobs: None,
            shaping: None,
        }
    }

    #[test]
    fn a_reply_that_follows_the_schema_becomes_the_grammars_text() {
        let (_, schema) = probe();
        let held = shaped(
            completion(r#" {"folio_probe": "negative"} "#),
            Some(&schema),
            Some(SchemaForm::JsonObject),
        );
        assert_eq!(
            (held.text.as_str(), held.shaping),
            ("negative", Some(Shaping::Schema))
        );
        assert!(follows_probe(&held));
    }

    #[test]
    fn a_reply_that_ignored_the_schema_is_kept_and_marked_unconstrained() {
        let (_, schema) = probe();
        for (text, form) in [
            ("Yes, water is wet.", Some(SchemaForm::JsonSchema)),
            (r#"{"folio_probe": "affir"#, Some(SchemaForm::JsonSchema)),
            (r#"{"folio_probe": "negative"}"#, None),
        ] {
            let read = shaped(completion(text), Some(&schema), form);
            assert_eq!(read.text, text);
            assert_eq!(read.shaping, Some(Shaping::Unconstrained));
            assert!(!follows_probe(&read));
        }
        let unshaped = shaped(completion("free text"), None, Some(SchemaForm::JsonSchema));
        assert_eq!(unshaped.shaping, None);
    }

    #[test]
    fn the_two_forms_carry_the_schema_where_their_servers_read_it() {
        let schema = json!({"type": "object"});
        assert_eq!(
            SchemaForm::JsonSchema.response_format(&schema)["json_schema"]["schema"],
            schema
        );
        assert_eq!(
            SchemaForm::JsonObject.response_format(&schema)["schema"],
            schema
        );
    }
}

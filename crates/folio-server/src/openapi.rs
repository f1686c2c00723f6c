//! `GET /openapi.json`: the OpenAPI 3.1 document of every route, its
//! schemas generated (schemars) from the very Rust types the routes read
//! and write, so the document cannot drift from what the server speaks.
//! Requests are described as the server reads them (a field with a
//! default may be left out) and responses as it writes them; where one
//! type reads differently from how it is written, its request form is
//! named `<Type>Input`.

use std::sync::LazyLock;

use axum::http::header;
use axum::response::IntoResponse;
use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Map, Value};

use folio_engine::library::{DocumentTree, LibraryOverview};
use folio_engine::methods::runner::AskRequest;
use folio_engine::methods::MethodInfo;
use folio_engine::retrieve::SearchHit;
use folio_engine::store::{
    Collection, DocumentPage, Job, NoteLinks, RunRecord, StoredChunk, TagCount, Thread,
    ThreadSummary,
};

use folio_engine::eval::diff::Diff;
use folio_engine::graph::{GraphBuildOptions, GraphStatus};
use folio_engine::llm::calibration::Calibration;
use folio_engine::models::{ModelsNow, UseReport};
use folio_engine::pipeline::PassSummary;

use crate::api::evaluations::{DiffQuery, EvaluationView, StartEvaluation};
use crate::api::models::UseModel;
use crate::api::{
    AskEvent, CollectionMembers, CompareRequest, Compared, Deleted, DocumentsQuery, JobsNow,
    ListQuery, Queued, RetryFiles, SearchRequest,
};
use crate::error::ErrorBody;
use crate::openai::{ChatChunk, ChatCompletion, ChatRequest, ModelList};

type Describe = fn(&mut SchemaGenerator) -> Schema;

fn of<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// One operation of the API.
struct Operation {
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    /// Its query parameters, as the fields of one type.
    query: Option<Describe>,
    body: Option<Describe>,
    reply: Describe,
    /// What it sends instead as server-sent events, when asked.
    events: Option<Describe>,
    /// The media type of its reply.
    content_type: &'static str,
}

const fn op(
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    reply: Describe,
) -> Operation {
    Operation {
        method,
        path,
        summary,
        query: None,
        body: None,
        reply,
        events: None,
        content_type: "application/json",
    }
}

impl Operation {
    const fn query(mut self, query: Describe) -> Operation {
        self.query = Some(query);
        self
    }
    const fn body(mut self, body: Describe) -> Operation {
        self.body = Some(body);
        self
    }
    const fn events(mut self, events: Describe) -> Operation {
        self.events = Some(events);
        self
    }
    /// Replies with markdown text rather than JSON.
    const fn markdown(mut self) -> Operation {
        self.content_type = "text/markdown";
        self
    }
}

/// Every route the server answers (besides this document itself).
fn operations() -> Vec<Operation> {
    vec![
        op(
            "get",
            "/api/status",
            "The library: folders, counts, recent errors and jobs",
            of::<LibraryOverview>,
        ),
        op(
            "get",
            "/api/methods",
            "The answering methods and their options",
            of::<Vec<MethodInfo>>,
        ),
        op(
            "post",
            "/api/search",
            "Chunks that match a query within a scope",
            of::<Vec<SearchHit>>,
        )
        .body(of::<SearchRequest>),
        op(
            "post",
            "/api/ask",
            "Answer a question with a method; `Accept: text/event-stream` streams its progress",
            of::<RunRecord>,
        )
        .body(of::<AskRequest>)
        .events(of::<AskEvent>),
        op(
            "get",
            "/api/runs",
            "Answered questions, newest first",
            of::<Vec<RunRecord>>,
        )
        .query(of::<ListQuery>),
        op(
            "get",
            "/api/runs/{id}",
            "One run, with its trace and citations",
            of::<RunRecord>,
        ),
        op(
            "get",
            "/api/runs/{id}/markdown",
            "One run as markdown, as `folio export` writes it",
            of::<String>,
        )
        .markdown(),
        op(
            "post",
            "/api/compare",
            "Answer one question with several methods in turn, each a run of its own",
            of::<Vec<Compared>>,
        )
        .body(of::<CompareRequest>),
        op(
            "get",
            "/api/threads",
            "Conversations, newest first",
            of::<Vec<ThreadSummary>>,
        )
        .query(of::<ListQuery>),
        op(
            "get",
            "/api/threads/{id}",
            "A thread with every turn",
            of::<Thread>,
        ),
        op(
            "get",
            "/api/threads/{id}/markdown",
            "A thread as markdown, every turn with its sources",
            of::<String>,
        )
        .markdown(),
        op(
            "delete",
            "/api/threads/{id}",
            "Delete a thread and its runs",
            of::<Deleted>,
        ),
        op(
            "get",
            "/api/collections",
            "Named sets of folders and tags to scope questions to",
            of::<Vec<Collection>>,
        ),
        op(
            "put",
            "/api/collections/{name}",
            "Save a collection",
            of::<Collection>,
        )
        .body(of::<CollectionMembers>),
        op(
            "delete",
            "/api/collections/{name}",
            "Delete a collection (its folders stay indexed)",
            of::<Deleted>,
        ),
        op(
            "get",
            "/api/documents",
            "A page of a watched folder's documents",
            of::<DocumentPage>,
        )
        .query(of::<DocumentsQuery>),
        op(
            "get",
            "/api/documents/{id}",
            "An indexed document and its structure tree",
            of::<DocumentTree>,
        ),
        op(
            "get",
            "/api/documents/{id}/links",
            "A note's links (resolved now), backlinks, aliases and tags",
            of::<NoteLinks>,
        ),
        op(
            "get",
            "/api/tags",
            "The tags of the library's notes, with how many carry each",
            of::<Vec<TagCount>>,
        ),
        op(
            "get",
            "/api/passages/{id}",
            "One passage (a chunk) with its text, as citations name it",
            of::<StoredChunk>,
        ),
        op(
            "get",
            "/api/jobs",
            "Background jobs and whether they are paused",
            of::<JobsNow>,
        ),
        op(
            "post",
            "/api/jobs/pause",
            "Pause background work for the library",
            of::<JobsNow>,
        ),
        op(
            "post",
            "/api/jobs/resume",
            "Resume background work",
            of::<JobsNow>,
        ),
        op("post", "/api/jobs/{id}/cancel", "Cancel a job", of::<Job>),
        op(
            "post",
            "/api/retry",
            "Read files of watched folders again, each alone (set-aside or failed ones)",
            of::<PassSummary>,
        )
        .body(of::<RetryFiles>),
        op(
            "get",
            "/api/graph",
            "How far each rubric's information-gain graph covers the library",
            of::<GraphStatus>,
        ),
        op(
            "post",
            "/api/graph",
            "Queue a graph job; the background work runs it",
            of::<Queued>,
        )
        .body(of::<GraphBuildOptions>),
        op(
            "get",
            "/api/models",
            "The model that answers, its calibration, and the models found on this machine",
            of::<ModelsNow>,
        ),
        op(
            "post",
            "/api/models/use",
            "Make a model the one that answers (folio.toml; from the next start)",
            of::<UseReport>,
        )
        .body(of::<UseModel>),
        op(
            "post",
            "/api/models/calibrate",
            "Measure the model's threshold for CRP-RAG's sufficiency check, and keep it",
            of::<Calibration>,
        ),
        op(
            "get",
            "/api/evaluations",
            "The evaluations kept here, each with its job",
            of::<Vec<EvaluationView>>,
        ),
        op(
            "post",
            "/api/evaluations",
            "Start an evaluation of methods on a dataset and corpus sent in the body",
            of::<EvaluationView>,
        )
        .body(of::<StartEvaluation>),
        op(
            "get",
            "/api/evaluations/{name}",
            "An evaluation, its job and its report",
            of::<EvaluationView>,
        ),
        op(
            "get",
            "/api/evaluations/{name}/diff",
            "Where two of an evaluation's methods part ways",
            of::<Diff>,
        )
        .query(of::<DiffQuery>),
        op(
            "get",
            "/v1/models",
            "OpenAI-compatible: the methods as models",
            of::<ModelList>,
        ),
        op(
            "post",
            "/v1/chat/completions",
            "OpenAI-compatible: answer the chat's last message with the model's method",
            of::<ChatCompletion>,
        )
        .body(of::<ChatRequest>)
        .events(of::<ChatChunk>),
    ]
}

fn generator(contract: Contract) -> SchemaGenerator {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas".into();
    settings.meta_schema = None;
    settings.contract = contract;
    settings.into_generator()
}

static DOCUMENT: LazyLock<Value> = LazyLock::new(build);

pub async fn document() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_string(&*DOCUMENT).unwrap_or_default(),
    )
}

fn build() -> Value {
    let mut writes = generator(Contract::Serialize);
    let mut reads = generator(Contract::Deserialize);
    let error = writes.subschema_for::<ErrorBody>().to_value();
    let mut paths = Map::new();
    for o in operations() {
        let mut operation = Map::new();
        operation.insert("summary".into(), json!(o.summary));
        operation.insert("operationId".into(), json!(operation_id(o.method, o.path)));
        let mut parameters: Vec<Value> = path_parameters(o.path);
        if let Some(query) = o.query {
            parameters.extend(query_parameters(&mut reads, query));
        }
        if !parameters.is_empty() {
            operation.insert("parameters".into(), Value::Array(parameters));
        }
        if let Some(body) = o.body {
            operation.insert(
                "requestBody".into(),
                json!({"required": true, "content": {"application/json": {"schema": body(&mut reads).to_value()}}}),
            );
        }
        let mut content = json!({o.content_type: {"schema": (o.reply)(&mut writes).to_value()}});
        if let Some(events) = o.events {
            content["text/event-stream"] = json!({"schema": events(&mut writes).to_value()});
        }
        operation.insert(
            "responses".into(),
            json!({
                "200": {"description": "OK", "content": content},
                "default": {"description": "A refusal or failure", "content": {"application/json": {"schema": error}}},
            }),
        );
        operation.insert("security".into(), json!([{"bearer": []}]));
        let entry = paths.entry(o.path).or_insert_with(|| json!({}));
        entry[o.method] = Value::Object(operation);
    }
    let mut schemas = writes.take_definitions(true);
    let read_defs = reads.take_definitions(true);
    let renamed = merge_inputs(&mut schemas, read_defs);
    let mut document = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Folio",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "A local library of documents: search it, ask it with a method, read what it cites. Every route needs `Authorization: Bearer <token>` (`folio serve --show-token`).",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    });
    for (from, to) in &renamed {
        for path in document["paths"]
            .as_object_mut()
            .into_iter()
            .flat_map(|p| p.values_mut())
        {
            for operation in path
                .as_object_mut()
                .into_iter()
                .flat_map(|m| m.values_mut())
            {
                for part in ["requestBody", "parameters"] {
                    if let Some(v) = operation.get_mut(part) {
                        rename_refs(v, from, to);
                    }
                }
            }
        }
    }
    document
}

/// Adds the request-side schemas to `schemas`; one that differs from the
/// response-side schema of the same name is added as `<Name>Input`, and
/// the refs to it (within request-side schemas) are renamed. Returns the
/// renamed refs.
fn merge_inputs(
    schemas: &mut Map<String, Value>,
    reads: Map<String, Value>,
) -> Vec<(String, String)> {
    let renamed: Vec<(String, String)> = reads
        .iter()
        .filter(|(name, schema)| schemas.get(*name).is_some_and(|s| s != *schema))
        .map(|(name, _)| (ref_to(name), ref_to(&format!("{name}Input"))))
        .collect();
    for (name, mut schema) in reads {
        for (from, to) in &renamed {
            rename_refs(&mut schema, from, to);
        }
        let name = if renamed.iter().any(|(from, _)| *from == ref_to(&name)) {
            format!("{name}Input")
        } else {
            name
        };
        schemas.entry(name).or_insert(schema);
    }
    renamed
}

fn ref_to(name: &str) -> String {
    format!("#/components/schemas/{name}")
}

fn rename_refs(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "$ref" && v.as_str() == Some(from) {
                    *v = json!(to);
                } else {
                    rename_refs(v, from, to);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rename_refs(v, from, to)),
        _ => {}
    }
}

/// `getApiThreadsById`, say: a name client generators can use.
fn operation_id(method: &str, path: &str) -> String {
    let mut id = method.to_string();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        let (prefix, word) = match part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            Some(param) => ("By", param),
            None => ("", part),
        };
        id.push_str(prefix);
        for piece in word.split(['-', '.', '_']) {
            let mut chars = piece.chars();
            if let Some(first) = chars.next() {
                id.extend(first.to_uppercase());
                id.push_str(chars.as_str());
            }
        }
    }
    id
}

/// `{id}` is an integer; `{name}` (a collection's) a string.
fn path_parameters(path: &str) -> Vec<Value> {
    path.split('/')
        .filter_map(|p| p.strip_prefix('{').and_then(|p| p.strip_suffix('}')))
        .map(|name| {
            let kind = if name == "id" { "integer" } else { "string" };
            json!({"name": name, "in": "path", "required": true, "schema": {"type": kind}})
        })
        .collect()
}

/// The fields of a query type, each a parameter.
fn query_parameters(g: &mut SchemaGenerator, query: Describe) -> Vec<Value> {
    let reference = query(g).to_value();
    let name = reference["$ref"]
        .as_str()
        .and_then(|r| r.rsplit('/').next())
        .unwrap_or_default()
        .to_string();
    let schema = g.definitions().get(&name).cloned().unwrap_or(reference);
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema["properties"]
        .as_object()
        .map(|properties| {
            properties
                .iter()
                .map(|(field, s)| {
                    json!({
                        "name": field,
                        "in": "query",
                        "required": required.contains(&field.as_str()),
                        "schema": s,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_is_described_with_resolvable_schemas() {
        let document = build();
        let text = serde_json::to_string(&document).unwrap();
        let schemas = document["components"]["schemas"].as_object().unwrap();
        let mut refs = Vec::new();
        collect_refs(&document, &mut refs);
        for r in refs {
            let name = r
                .strip_prefix("#/components/schemas/")
                .expect("a component");
            assert!(schemas.contains_key(name), "{r} is not defined");
        }
        assert_eq!(
            document["paths"]
                .as_object()
                .unwrap()
                .values()
                .map(|p| p.as_object().unwrap().len())
                .sum::<usize>(),
            operations().len()
        );
        assert!(text.contains("\"AskRequest\""));
        assert_eq!(
            operation_id("get", "/api/threads/{id}"),
            "getApiThreadsById"
        );
        assert_eq!(
            operation_id("post", "/v1/chat/completions"),
            "postV1ChatCompletions"
        );
    }

    fn collect_refs(value: &Value, refs: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    match v.as_str() {
                        Some(s) if key == "$ref" => refs.push(s.to_string()),
                        _ => collect_refs(v, refs),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| collect_refs(v, refs)),
            _ => {}
        }
    }
}

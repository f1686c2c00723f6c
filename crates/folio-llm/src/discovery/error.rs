//! Why a GGUF header could not be read, why a server's answer was not
//! understood, and why `folio models use` could not pick a model. A file or
//! a server that fails is reported beside the models that were found; only
//! [`ChoiceError`] stops a command.

/// A GGUF file whose header was refused: the header alone is read, within
/// the bounds in `gguf.rs`, so a hostile or broken file ends here instead of
/// in an allocation or a loop.
#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    #[error("not a GGUF file (it starts with \"{found}\", not \"GGUF\")")]
    NotGguf { found: String },
    #[error("a big-endian GGUF file; only little-endian ones are read")]
    BigEndian,
    #[error("GGUF version {0}; versions 2 and 3 are read")]
    Version(u32),
    #[error("the header ends early, at byte {at}")]
    Truncated { at: u64 },
    #[error(
        "the header declares {count} keys; a model has a few dozen, so it is not read past {limit}"
    )]
    TooManyKeys { count: u64, limit: u64 },
    #[error(
        "the header runs past {limit} bytes (at key {key:?}); a model's metadata is a few MiB"
    )]
    TooLarge { limit: u64, key: String },
    #[error("a key of {length} bytes at byte {at}; GGUF keys are at most {limit}")]
    KeyTooLong { length: u64, at: u64, limit: u64 },
    #[error("key {key:?} has value type {kind}, which GGUF does not define")]
    UnknownType { key: String, kind: u32 },
    #[error("key {key:?} nests arrays more than {limit} deep")]
    TooDeep { key: String, limit: u32 },
}

/// Why a loopback server's answer was not a model list. Kept as text in the
/// server's entry: something answered on the port, and the person should
/// see what went wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("accepted the connection but sent no whole answer within {0:?}")]
    NoAnswer(std::time::Duration),
    #[error("did not answer as an HTTP server: {0}")]
    NotHttp(String),
    #[error("answered GET /v1/models with HTTP {status}{}", hint(*status))]
    Status { status: u16 },
    #[error("sent more than {0} bytes for GET /v1/models")]
    TooLong(usize),
    #[error(
        "answered GET /v1/models with something other than a model list ({reason}): {excerpt}"
    )]
    NotAModelList { reason: String, excerpt: String },
}

fn hint(status: u16) -> &'static str {
    match status {
        401 | 403 => " (it wants an API key; set api_key in folio.toml)",
        404 => " (not an OpenAI-compatible server?)",
        _ => "",
    }
}

/// A name `folio models use` cannot turn into a model, with what it could.
#[derive(Debug, thiserror::Error)]
pub enum ChoiceError {
    #[error("no model is called {name:?}. Models you can use:\n{}", choices.join("\n"))]
    Unknown { name: String, choices: Vec<String> },
    #[error("{name:?} names {} files; use one's path:\n{}", paths.len(), paths.join("\n"))]
    Ambiguous { name: String, paths: Vec<String> },
    #[error("{path} is not a usable GGUF file: {source}")]
    BadFile { path: String, source: GgufError },
    #[error("{path} is not a language model but a {architecture} file (a vision projector?)")]
    NotLanguageModel { path: String, architecture: String },
    #[error(
        "no server answered at {base_url}. Servers answering on 127.0.0.1:\n{}",
        or_none(servers)
    )]
    NoServer {
        base_url: String,
        servers: Vec<String>,
    },
    #[error(
        "the server at {base_url} does not serve {model:?}; it serves: {}",
        or_none(served)
    )]
    NotServed {
        base_url: String,
        model: String,
        served: Vec<String>,
    },
    #[error(
        "a server's address needs the model to use as well: folio models use {base_url} MODEL"
    )]
    NoModelGiven { base_url: String },
}

fn or_none(list: &[String]) -> String {
    if list.is_empty() {
        "(none)".into()
    } else {
        list.join("\n")
    }
}

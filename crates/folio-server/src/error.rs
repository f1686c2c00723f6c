//! Every refusal the server gives is one JSON shape, `{"error": {"code",
//! "message"}}`, with the HTTP status that says whose fault it is: the
//! shape OpenAI-compatible clients already read, so a chat app shows the
//! message itself rather than a bare status.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use folio_engine::eval::EvalError;
use serde::Serialize;

/// A refused or failed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct ErrorDetail {
    /// A stable word for programs: `unauthorized`, `host_refused`,
    /// `not_found`, `bad_request`, `too_large`, `busy`, `internal`...
    pub code: String,
    /// What happened and what to do, for people.
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// More clients are waiting for `what` than the server queues.
    pub fn busy(what: &str) -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            format!("the server is busy with other {what} requests; try again shortly"),
        )
    }

    /// The JSON body it is sent as.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code.to_string(),
                message: self.message.clone(),
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body())).into_response();
        let headers = response.headers_mut();
        match self.status {
            StatusCode::UNAUTHORIZED => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            StatusCode::SERVICE_UNAVAILABLE => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
            }
            _ => {}
        }
        response
    }
}

/// The engine's errors: what the client asked for wrongly is its fault
/// (not found, or a bad request), anything else is the server's.
impl From<folio_engine::Error> for ApiError {
    fn from(e: folio_engine::Error) -> ApiError {
        use folio_engine::Error as E;
        let message = e.to_string();
        match e {
            E::RunNotFound(_)
            | E::DocumentNotFound(_)
            | E::PassageNotFound(_)
            | E::JobNotFound(_)
            | E::NotIndexed(_)
            | E::NotWatched(_)
            | E::Method(folio_engine::methods::MethodError::UnknownThread(_)) => {
                ApiError::not_found(message)
            }
            e if e.is_user_error() => ApiError::bad_request(message),
            _ => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message),
        }
    }
}

/// An evaluation's refusals: what the client sent (its lines, its specs,
/// its settings, an evaluation not finished yet) is the client's to fix;
/// the engine's own failures keep their kind.
impl From<EvalError> for ApiError {
    fn from(e: EvalError) -> ApiError {
        let message = e.to_string();
        match e {
            EvalError::Engine(e) => e.into(),
            EvalError::NoSummary(_) => ApiError::new(StatusCode::CONFLICT, "not_finished", message),
            EvalError::Read { .. } | EvalError::Write { .. } | EvalError::Interrupted(_) => {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
            }
            _ => ApiError::bad_request(message),
        }
    }
}

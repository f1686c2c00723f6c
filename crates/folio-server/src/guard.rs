//! What every request passes before any route sees it: a Host header that
//! names this server (a web page that rebinds its own domain to 127.0.0.1
//! still sends its own name, so DNS rebinding is refused here), then the
//! bearer token. No CORS headers are ever sent, so a browser's cross-site
//! script cannot read a reply even where it could send a request.

use std::net::SocketAddr;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::ServerState;

/// The Host values this server answers to: the loopback names with its
/// port, the address it is bound to, and any names the person allowed.
pub fn allowed_hosts(bound: SocketAddr, extra: &[String]) -> Vec<String> {
    let port = bound.port();
    let mut hosts = vec![
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ];
    if !bound.ip().is_unspecified() {
        hosts.push(bound.to_string());
    }
    for name in extra {
        hosts.push(if name.contains(':') && !name.starts_with('[') {
            name.to_ascii_lowercase()
        } else {
            format!("{}:{port}", name.to_ascii_lowercase())
        });
    }
    hosts.sort();
    hosts.dedup();
    hosts
}

pub async fn guard(State(state): State<ServerState>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_ascii_lowercase);
    if !host.is_some_and(|h| state.hosts.contains(&h)) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "host_refused",
            "this server answers only requests addressed to it by its own address (Host header)",
        )
        .into_response();
    }
    let offered = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "));
    if !offered.is_some_and(|t| state.token.matches(t.trim())) {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a bearer token is required: send `Authorization: Bearer <token>`; `folio serve --show-token` prints it",
        )
        .into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_the_bound_address_and_allowed_names_pass() {
        let hosts = allowed_hosts("127.0.0.1:7733".parse().unwrap(), &[]);
        assert_eq!(hosts, ["127.0.0.1:7733", "[::1]:7733", "localhost:7733"]);
        let hosts = allowed_hosts("0.0.0.0:80".parse().unwrap(), &["Box.lan".into()]);
        assert!(hosts.contains(&"box.lan:80".to_string()));
        assert!(!hosts.iter().any(|h| h.starts_with("0.0.0.0")));
    }
}

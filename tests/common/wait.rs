//! Waiting in tests for what background work does in its own time.
#![allow(dead_code)]

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls until `check` holds, failing after a generous deadline (the
/// deadline guards against hangs; speed is measured by `folio bench`).
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

//! A bounded queue in front of work the machine has little of (the model
//! answers one question at a time; searches share the cores with the
//! watcher): up to `running` at once, up to `waiting` more wait their turn,
//! and any further client is told at once that the server is busy. A flood
//! of requests therefore queues or is refused; it never piles up without
//! bound nor takes every core from indexing.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::ApiError;

#[derive(Clone)]
pub struct Gate {
    what: &'static str,
    /// Held while the work runs.
    slots: Arc<Semaphore>,
    /// Held from arrival to the end: running plus waiting.
    places: Arc<Semaphore>,
}

/// A request's turn; the work it guards runs while this lives.
pub struct Turn {
    _slot: OwnedSemaphorePermit,
    _place: OwnedSemaphorePermit,
}

impl Gate {
    pub fn new(what: &'static str, running: usize, waiting: usize) -> Gate {
        Gate {
            what,
            slots: Arc::new(Semaphore::new(running)),
            places: Arc::new(Semaphore::new(running + waiting)),
        }
    }

    /// Waits for a turn, or refuses at once when the queue is full.
    pub async fn enter(&self) -> Result<Turn, ApiError> {
        let place = self
            .places
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::busy(self.what))?;
        let slot = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| ApiError::busy(self.what))?;
        Ok(Turn {
            _slot: slot,
            _place: place,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_queue_refuses_and_a_finished_turn_lets_the_next_in() {
        let gate = Gate::new("ask", 1, 1);
        let first = gate.enter().await.unwrap();
        let waiting = tokio::spawn({
            let gate = gate.clone();
            async move { gate.enter().await.map(|_| ()) }
        });
        tokio::task::yield_now().await;
        let refused = gate.enter().await.err().expect("the queue is full");
        assert_eq!(refused.code, "busy");
        assert!(!waiting.is_finished(), "the second waits for the first");
        drop(first);
        waiting.await.unwrap().unwrap();
        gate.enter().await.expect("free again");
    }
}

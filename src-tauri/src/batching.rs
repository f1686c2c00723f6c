//! Forwards a stream of events in batches. Ingesting thousands of files or
//! streaming tokens produces events far faster than a webview should repaint;
//! one message per period keeps the UI responsive without losing any.

use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::MissedTickBehavior;

/// Delivers everything `rx` yields, in order, at most once per `period`,
/// and whatever is left when the sender goes away.
pub async fn forward_batched<T>(
    mut rx: UnboundedReceiver<T>,
    period: Duration,
    mut deliver: impl FnMut(Vec<T>),
) {
    let mut batch = Vec::new();
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            item = rx.recv() => match item {
                Some(item) => batch.push(item),
                None => break,
            },
            _ = tick.tick() => if !batch.is_empty() {
                deliver(std::mem::take(&mut batch));
            },
        }
    }
    if !batch.is_empty() {
        deliver(batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_arrives_whole_in_few_batches_and_in_order() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let mut batches = Vec::new();
        let feeder = async move {
            for i in 0..1000 {
                tx.send(i).unwrap();
                if i % 250 == 0 {
                    tokio::time::sleep(Duration::from_millis(60)).await;
                }
            }
        };
        let forward = forward_batched(rx, Duration::from_millis(100), |b| batches.push(b));
        tokio::join!(feeder, forward);
        let all: Vec<i32> = batches.iter().flatten().copied().collect();
        assert_eq!(all, (0..1000).collect::<Vec<_>>());
        assert!(batches.len() <= 5, "{} batches", batches.len());
    }
}

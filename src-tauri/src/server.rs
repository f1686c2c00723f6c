//! The app's server: the library served as `folio serve` serves it, while
//! the library remembers that it should be (Settings' switch, which
//! `commands/server.rs` turns). It starts with the engine and stops with it.

use std::net::SocketAddr;
use std::sync::Arc;

use folio_engine::Library;
use folio_server::{token, RunningServer, ServeOptions};
use tokio::sync::Mutex;

#[derive(Clone, Default)]
pub struct AppServer(Arc<Mutex<Slot>>);

#[derive(Default)]
struct Slot {
    /// The address it was asked to serve on (port 0 binds a free port, so
    /// the running address may differ) and the server there.
    running: Option<(SocketAddr, RunningServer)>,
    /// Why the last start failed.
    error: Option<String>,
}

impl AppServer {
    /// Brings the server in line with what the library remembers: started
    /// at its address, moved to a new one, or stopped.
    pub async fn follow(&self, library: &Arc<Library>) {
        let mut slot = self.0.lock().await;
        let wanted = match library.serve_address().await {
            Ok(address) => address.and_then(|a| a.parse::<SocketAddr>().ok()),
            Err(e) => {
                slot.error = Some(e.to_string());
                return;
            }
        };
        if wanted.is_some() && slot.running.as_ref().map(|(asked, _)| *asked) == wanted {
            return;
        }
        if let Some((_, running)) = slot.running.take() {
            running.stop().await;
        }
        slot.error = None;
        let Some(addr) = wanted else { return };
        let started = match token::load_or_create(&library.config().data_dir) {
            Ok(kept) => {
                let options = ServeOptions {
                    addr,
                    allow_remote: false,
                    allow_hosts: Vec::new(),
                };
                folio_server::start(library.clone(), &options, kept.token)
                    .await
                    .map_err(|e| e.to_string())
            }
            Err(e) => Err(e.to_string()),
        };
        match started {
            Ok(running) => slot.running = Some((addr, running)),
            Err(e) => slot.error = Some(e),
        }
    }

    /// Where it serves now, or why it does not though it should.
    pub async fn now(&self) -> Result<Option<SocketAddr>, String> {
        let slot = self.0.lock().await;
        match &slot.error {
            Some(e) => Err(e.clone()),
            None => Ok(slot.running.as_ref().map(|(_, r)| r.addr)),
        }
    }

    pub async fn stop(&self) {
        if let Some((_, running)) = self.0.lock().await.running.take() {
            running.stop().await;
        }
    }
}

//! Where the API key of an OpenAI-compatible server is kept: the OS keyring
//! when one answers, else a file only the user can read, which the settings
//! view flags with a warning (`folio_server::secret`, where the server's
//! token is kept the same way). The key never goes into `folio.toml`, the
//! database, logs or exports.

use std::path::PathBuf;

use folio_engine::llm::ApiKey;
use folio_server::secret::{SecretHome, SecretSlot};
use serde::Serialize;

use crate::ipc_error::IpcError;

const ACCOUNT: &str = "llm-api-key";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[ts(export)]
pub enum ApiKeyStorage {
    Keyring,
    /// No keyring service is running; the key lives in this 0600 file.
    File {
        path: String,
    },
}

pub struct Secrets {
    slot: SecretSlot,
    storage: ApiKeyStorage,
}

impl Secrets {
    /// Asks the keyring once whether it works; `fallback_file` is used when
    /// it does not.
    pub fn detect(fallback_file: PathBuf) -> Secrets {
        let slot = SecretSlot::open(ACCOUNT, fallback_file);
        let storage = match slot.home() {
            SecretHome::Keyring => ApiKeyStorage::Keyring,
            SecretHome::File(path) => ApiKeyStorage::File {
                path: path.display().to_string(),
            },
        };
        Secrets { slot, storage }
    }

    pub fn storage(&self) -> &ApiKeyStorage {
        &self.storage
    }

    pub fn load(&self) -> Option<ApiKey> {
        self.slot.load().map(ApiKey::new)
    }

    /// Saves `key`, or deletes the stored key when it is empty.
    pub fn store(&self, key: &ApiKey) -> Result<(), IpcError> {
        self.slot
            .store(key.expose())
            .map_err(|e| IpcError::new("secret_storage", format!("cannot store the API key: {e}")))
    }
}

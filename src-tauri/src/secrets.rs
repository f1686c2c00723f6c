//! Where the API key of an OpenAI-compatible server is kept: the OS keyring
//! when one answers, else a file only the user can read, which the settings
//! view flags with a warning. The key never goes into `folio.toml`, the
//! database, logs or exports.

use std::path::{Path, PathBuf};

use folio_engine::llm::ApiKey;
use serde::Serialize;

use crate::ipc_error::IpcError;

const SERVICE: &str = "folio";
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
    storage: ApiKeyStorage,
}

fn storage_error(e: impl std::fmt::Display) -> IpcError {
    IpcError::new("secret_storage", format!("cannot store the API key: {e}"))
}

impl Secrets {
    /// Asks the keyring once whether it works; `fallback_file` is used when
    /// it does not.
    pub fn detect(fallback_file: PathBuf) -> Secrets {
        let works = keyring::Entry::new(SERVICE, ACCOUNT)
            .and_then(|entry| entry.get_password())
            .map_or_else(|e| matches!(e, keyring::Error::NoEntry), |_| true);
        let storage = if works {
            ApiKeyStorage::Keyring
        } else {
            ApiKeyStorage::File {
                path: fallback_file.display().to_string(),
            }
        };
        Secrets { storage }
    }

    pub fn storage(&self) -> &ApiKeyStorage {
        &self.storage
    }

    pub fn load(&self) -> Option<ApiKey> {
        let key = match &self.storage {
            ApiKeyStorage::Keyring => keyring::Entry::new(SERVICE, ACCOUNT)
                .and_then(|e| e.get_password())
                .ok(),
            ApiKeyStorage::File { path } => std::fs::read_to_string(path).ok(),
        };
        key.map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .map(ApiKey::new)
    }

    /// Saves `key`, or deletes the stored key when it is empty.
    pub fn store(&self, key: &ApiKey) -> Result<(), IpcError> {
        let key = key.expose().trim();
        match &self.storage {
            ApiKeyStorage::Keyring => {
                let entry = keyring::Entry::new(SERVICE, ACCOUNT).map_err(storage_error)?;
                match (key.is_empty(), entry.delete_credential()) {
                    (true, Ok(()) | Err(keyring::Error::NoEntry)) => Ok(()),
                    (true, Err(e)) => Err(storage_error(e)),
                    (false, _) => entry.set_password(key).map_err(storage_error),
                }
            }
            ApiKeyStorage::File { path } if key.is_empty() => match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(storage_error(e)),
                _ => Ok(()),
            },
            ApiKeyStorage::File { path } => {
                let path = Path::new(path);
                path.parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .map_err(storage_error)?;
                folio_engine::atomic_file::replace(path, key.as_bytes(), 0o600)
                    .map_err(storage_error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_fallback_file_is_private_and_an_empty_key_deletes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("folio/api-key");
        let secrets = Secrets {
            storage: ApiKeyStorage::File {
                path: path.display().to_string(),
            },
        };
        secrets.store(&ApiKey::new(" sk-test \n")).unwrap();
        assert_eq!(secrets.load(), Some(ApiKey::new("sk-test")));
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        secrets.store(&ApiKey::new("")).unwrap();
        assert!(!path.exists());
        assert_eq!(secrets.load(), None);
    }
}

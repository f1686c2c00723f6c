//! Where a secret is kept: the OS keyring when one answers, else a file
//! only the user can read. The keyring is asked once, when the slot is
//! opened; the caller shows which it was, so a person knows when a secret
//! sits in a file.

use std::path::PathBuf;

const SERVICE: &str = "folio";

/// Where a slot keeps its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretHome {
    Keyring,
    /// No keyring service answered; the secret lives in this 0600 file.
    File(PathBuf),
}

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("cannot store the secret in the keyring: {0}")]
    Keyring(#[from] keyring::Error),
    #[error("cannot store the secret in {path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// One named secret.
pub struct SecretSlot {
    account: String,
    home: SecretHome,
}

impl SecretSlot {
    /// The slot `account`, in the keyring if one works, else in
    /// `fallback_file`.
    pub fn open(account: impl Into<String>, fallback_file: PathBuf) -> SecretSlot {
        let account = account.into();
        let works = keyring::Entry::new(SERVICE, &account)
            .and_then(|entry| entry.get_password())
            .map_or_else(|e| matches!(e, keyring::Error::NoEntry), |_| true);
        let home = if works {
            SecretHome::Keyring
        } else {
            SecretHome::File(fallback_file)
        };
        SecretSlot { account, home }
    }

    pub fn home(&self) -> &SecretHome {
        &self.home
    }

    /// The secret, trimmed; `None` when none is kept (or it is empty).
    pub fn load(&self) -> Option<String> {
        let secret = match &self.home {
            SecretHome::Keyring => keyring::Entry::new(SERVICE, &self.account)
                .and_then(|e| e.get_password())
                .ok(),
            SecretHome::File(path) => std::fs::read_to_string(path).ok(),
        };
        secret
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    }

    /// Keeps `secret`, or forgets the kept one when it is empty.
    pub fn store(&self, secret: &str) -> Result<(), SecretError> {
        let secret = secret.trim();
        match &self.home {
            SecretHome::Keyring => {
                let entry = keyring::Entry::new(SERVICE, &self.account)?;
                match (secret.is_empty(), entry.delete_credential()) {
                    (true, Ok(()) | Err(keyring::Error::NoEntry)) => Ok(()),
                    (true, Err(e)) => Err(e.into()),
                    (false, _) => Ok(entry.set_password(secret)?),
                }
            }
            SecretHome::File(path) if secret.is_empty() => match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(SecretError::File {
                    path: path.clone(),
                    source: e,
                }),
                _ => Ok(()),
            },
            SecretHome::File(path) => path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| folio_engine::atomic_file::replace(path, secret.as_bytes(), 0o600))
                .map_err(|source| SecretError::File {
                    path: path.clone(),
                    source,
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_fallback_file_is_private_and_an_empty_secret_deletes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("folio/api-key");
        let slot = SecretSlot {
            account: "test".into(),
            home: SecretHome::File(path.clone()),
        };
        slot.store(" sk-test \n").unwrap();
        assert_eq!(slot.load().as_deref(), Some("sk-test"));
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        slot.store("").unwrap();
        assert!(!path.exists());
        assert_eq!(slot.load(), None);
    }
}

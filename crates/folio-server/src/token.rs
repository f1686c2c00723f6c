//! The bearer token every HTTP route asks for: 32 random bytes in hex, made
//! at the first start and kept (per library) in the OS keyring when one
//! answers, else in `<data dir>/server-token`, readable by the user alone.
//! The CLI and the app open the same slot, so both serve with one token.

use std::fmt;
use std::path::Path;

use crate::secret::{SecretError, SecretHome, SecretSlot};

/// A secret; its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(…)")
    }
}

impl Token {
    /// A new random token.
    pub fn generate() -> Token {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the OS random source works");
        Token(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `offered` is this token, in time that does not depend on
    /// where the two first differ.
    pub fn matches(&self, offered: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), offered.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
    }
}

/// The library's token and where it is kept.
pub struct KeptToken {
    pub token: Token,
    pub home: SecretHome,
}

/// The token of the library in `data_dir`, made and kept on first use.
pub fn load_or_create(data_dir: &Path) -> Result<KeptToken, SecretError> {
    let slot = SecretSlot::open(
        format!("server-token:{}", data_dir.display()),
        data_dir.join("server-token"),
    );
    let token = match slot.load() {
        Some(kept) => Token(kept),
        None => {
            let token = Token::generate();
            slot.store(token.expose())?;
            token
        }
    };
    Ok(KeptToken {
        token,
        home: slot.home().clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_hex_and_compared_whole() {
        let (a, b) = (Token::generate(), Token::generate());
        assert_ne!(a, b);
        assert_eq!(a.expose().len(), 64);
        assert!(a.expose().bytes().all(|c| c.is_ascii_hexdigit()));
        assert!(a.matches(a.expose()));
        assert!(!a.matches(b.expose()));
        assert!(!a.matches(&a.expose()[..63]));
        assert!(!a.matches(""));
        assert_eq!(format!("{a:?}"), "Token(…)");
    }
}

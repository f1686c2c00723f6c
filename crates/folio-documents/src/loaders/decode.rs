//! Turns the bytes of a text-like file into a `String`: UTF-8 as it is, UTF-16
//! by its byte-order mark, anything else through a detected legacy encoding
//! with a note saying so. Bytes that look binary are refused.

use chardetng::EncodingDetector;
use encoding_rs::{Encoding, UTF_8};

/// How far to look for a NUL byte; text files have none, and the start of a
/// file is enough to tell (the same heuristic as git and ripgrep).
const BINARY_SNIFF_LEN: usize = 8 * 1024;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub text: String,
    /// Set when the text is not exactly what the file said: a guessed
    /// encoding, or bytes replaced because they could not be decoded.
    pub note: Option<String>,
}

/// Decodes `bytes` as text, or returns `None` when they look binary (a NUL
/// byte in the first 8 KiB).
pub fn decode_text(bytes: &[u8]) -> Option<Decoded> {
    // UTF-16 text is full of NUL bytes, so its BOM must be read before the
    // binary sniff.
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        if encoding != UTF_8 {
            let (text, had_errors) = encoding.decode_without_bom_handling(&bytes[bom_len..]);
            let note = had_errors.then(|| {
                format!(
                    "invalid {} sequences were replaced with U+FFFD",
                    encoding.name()
                )
            });
            return Some(Decoded {
                text: text.into_owned(),
                note,
            });
        }
    }

    let body = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    if body[..body.len().min(BINARY_SNIFF_LEN)].contains(&0) {
        return None;
    }
    if let Ok(text) = std::str::from_utf8(body) {
        return Some(Decoded {
            text: text.to_owned(),
            note: None,
        });
    }

    let mut detector = EncodingDetector::new();
    detector.feed(body, true);
    // The bytes already failed UTF-8 validation, so UTF-8 is no candidate.
    let encoding = detector.guess(None, false);
    let (text, had_errors) = encoding.decode_without_bom_handling(body);
    let mut note = format!("not valid UTF-8; decoded as {}", encoding.name());
    if had_errors {
        note.push_str(" (some bytes could not be decoded and were replaced with U+FFFD)");
    }
    Some(Decoded {
        text: text.into_owned(),
        note: Some(note),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_passes_through_without_note() {
        let d = decode_text("héllo wörld".as_bytes()).unwrap();
        assert_eq!(d.text, "héllo wörld");
        assert_eq!(d.note, None);
    }

    #[test]
    fn utf8_bom_is_stripped() {
        let d = decode_text(b"\xEF\xBB\xBF# Title").unwrap();
        assert_eq!(d.text, "# Title");
        assert_eq!(d.note, None);
    }

    #[test]
    fn latin1_is_decoded_with_a_note() {
        // "Café crème à la française" in ISO-8859-1 / windows-1252.
        let bytes = b"Caf\xE9 cr\xE8me \xE0 la fran\xE7aise, d\xE9j\xE0 servie avec des cr\xEApes.";
        let d = decode_text(bytes).unwrap();
        assert!(
            d.text.starts_with("Café crème à la française"),
            "{}",
            d.text
        );
        let note = d.note.unwrap();
        assert!(note.starts_with("not valid UTF-8; decoded as "), "{note}");
        assert!(
            note.contains("windows-1252") || note.contains("ISO-8859"),
            "{note}"
        );
    }

    #[test]
    fn nul_bytes_mean_binary() {
        assert_eq!(decode_text(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), None);
        assert_eq!(decode_text(b"text\0more"), None);
    }

    #[test]
    fn nul_after_the_sniff_window_is_not_binary() {
        let mut bytes = vec![b'a'; BINARY_SNIFF_LEN];
        bytes.push(0);
        assert!(decode_text(&bytes).is_some());
    }

    #[test]
    fn utf16_with_bom_is_decoded() {
        let mut le = vec![0xFF, 0xFE];
        le.extend("Grüße\nline".encode_utf16().flat_map(u16::to_le_bytes));
        let d = decode_text(&le).unwrap();
        assert_eq!(d.text, "Grüße\nline");
        assert_eq!(d.note, None);

        let mut be = vec![0xFE, 0xFF];
        be.extend("Grüße".encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(decode_text(&be).unwrap().text, "Grüße");
    }

    #[test]
    fn truncated_utf16_is_noted() {
        let d = decode_text(&[0xFF, 0xFE, b'a', 0, b'b']).unwrap();
        assert!(d.text.starts_with('a'));
        assert!(d.note.is_some());
    }

    #[test]
    fn empty_input_is_empty_text() {
        assert_eq!(decode_text(b"").unwrap().text, "");
        assert_eq!(decode_text(UTF8_BOM).unwrap().text, "");
    }
}

//! A file's path as text, without loss: how the library keys documents and
//! folders, and how paths cross IPC, JSON and SQL.
//!
//! A Unix file name is bytes; most are UTF-8, but a name copied from an old
//! disk or an archive may not be. [`to_text`] leaves a UTF-8 path as it is
//! and writes each byte that is not part of valid UTF-8 as one character
//! of a private-use block (U+F780 to U+F7FF, for bytes 0x80 to 0xFF);
//! [`to_path`] reads those back as the bytes they stand for, so the file
//! is opened by its real name. A real character of that block in a name
//! is written as its three bytes, each escaped, so no text is ambiguous.
//! [`shown`] is for people: each run of escaped bytes becomes U+FFFD, as
//! `Path::display` shows them.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The character that stands for byte 0x80; byte `b` is `ESCAPE + b - 0x80`.
const ESCAPE: u32 = 0xF780;

fn escaped(c: char) -> Option<u8> {
    let code = c as u32;
    (ESCAPE..ESCAPE + 0x80)
        .contains(&code)
        .then(|| (code - ESCAPE + 0x80) as u8)
}

fn escape(byte: u8, into: &mut String) {
    debug_assert!(byte >= 0x80, "ASCII is always valid UTF-8");
    into.push(char::from_u32(ESCAPE + u32::from(byte) - 0x80).expect("in the private-use block"));
}

/// `path` as text that [`to_path`] turns back into the same bytes.
pub fn to_text(path: &Path) -> String {
    let bytes = path.as_os_str().as_bytes();
    if let Ok(text) = std::str::from_utf8(bytes) {
        if !text.chars().any(|c| escaped(c).is_some()) {
            return text.to_owned();
        }
    }
    let mut text = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match escaped(c) {
                Some(_) => {
                    let mut utf8 = [0; 4];
                    for &b in c.encode_utf8(&mut utf8).as_bytes() {
                        escape(b, &mut text);
                    }
                }
                None => text.push(c),
            }
        }
        for &b in chunk.invalid() {
            escape(b, &mut text);
        }
    }
    text
}

/// The path `text` (made by [`to_text`]) names.
pub fn to_path(text: &str) -> PathBuf {
    if !text.chars().any(|c| escaped(c).is_some()) {
        return PathBuf::from(text);
    }
    let mut bytes = Vec::with_capacity(text.len());
    for c in text.chars() {
        match escaped(c) {
            Some(b) => bytes.push(b),
            None => bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    PathBuf::from(OsString::from_vec(bytes))
}

/// The path `text` names, as a person reads it: what the name's bytes say
/// in UTF-8, with U+FFFD where they say nothing.
pub fn shown(text: &str) -> String {
    if !text.chars().any(|c| escaped(c).is_some()) {
        return text.to_owned();
    }
    to_path(text).to_string_lossy().into_owned()
}

/// The file name of the path `text` names, as a person reads it; the
/// whole path when it has no file name (a root).
pub fn shown_name(text: &str) -> String {
    let shown = shown(text);
    match Path::new(&shown).file_name() {
        Some(name) => name.to_string_lossy().into_owned(),
        None => shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(bytes: &[u8]) -> PathBuf {
        PathBuf::from(OsString::from_vec(bytes.to_vec()))
    }

    #[test]
    fn a_utf8_path_is_its_own_text() {
        for p in ["/notes/café.md", "/a b/日本語.txt", "/"] {
            assert_eq!(to_text(Path::new(p)), p);
            assert_eq!(to_path(p), Path::new(p));
            assert_eq!(shown(p), p);
        }
    }

    #[test]
    fn a_latin1_name_keeps_its_bytes_and_shows_a_replacement() {
        let latin1 = path(b"/notes/caf\xe9.md");
        let text = to_text(&latin1);
        assert_eq!(text, "/notes/caf\u{f7e9}.md");
        assert_eq!(to_path(&text), latin1);
        assert_eq!(shown(&text), "/notes/caf\u{fffd}.md");
        assert_eq!(shown_name(&text), "caf\u{fffd}.md");
        assert_eq!(shown_name("/"), "/");
        // Another undecodable name is another key, though it shows alike.
        let other = to_text(&path(b"/notes/caf\xe8.md"));
        assert_ne!(other, text);
        assert_eq!(shown(&other), shown(&text));
    }

    #[test]
    fn a_name_holding_the_escape_block_itself_is_not_mistaken() {
        let real = Path::new("/notes/\u{f7e9}.md");
        let text = to_text(real);
        assert_ne!(text, real.to_str().unwrap());
        assert_eq!(to_path(&text), real);
        assert_eq!(shown(&text), real.to_str().unwrap());
    }

    #[test]
    fn any_bytes_come_back_as_they_were() {
        // A fixed generator: the same names on every run.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let len = (state % 12) as usize + 1;
            let mut bytes = vec![b'/'];
            for _ in 0..len {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // Bytes around the escape block's UTF-8 form, and any byte.
                let b = match state % 4 {
                    0 => [0xef, 0x9e, 0x9f, 0xa9][(state >> 8) as usize % 4],
                    _ => (state >> 16) as u8,
                };
                if b != 0 && b != b'/' {
                    bytes.push(b);
                }
            }
            let p = path(&bytes);
            assert_eq!(to_path(&to_text(&p)), p, "{bytes:x?}");
        }
    }
}

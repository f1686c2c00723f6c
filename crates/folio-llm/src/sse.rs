//! Incremental decoder for server-sent events (the WHATWG `text/event-stream`
//! format): bytes go in as the network delivers them, and the `data` payload of
//! every complete event comes out, in order. Only `data` matters to the
//! OpenAI protocol, so other fields (`event`, `id`, `retry`) and comments
//! (keep-alive pings) are dropped here.

/// Keeps the bytes of a line that has not ended yet, because the network may
/// split a line (or a multi-byte character) anywhere.
#[derive(Debug, Default)]
pub struct SseDecoder {
    pending: Vec<u8>,
    /// The `data` lines of the event being read, joined by newlines as the
    /// format prescribes; `None` until the event has a `data` line, so that
    /// events made only of other fields dispatch nothing.
    data: Option<String>,
}

impl SseDecoder {
    pub fn new() -> SseDecoder {
        SseDecoder::default()
    }

    /// Feeds the next bytes of the stream and returns the payloads of the
    /// events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.pending[start..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        {
            let end = start + offset;
            let terminator_len = match (self.pending[end], self.pending.get(end + 1)) {
                (b'\r', Some(b'\n')) => 2,
                // A CR at the very end may be the first half of a CRLF whose LF
                // has not arrived yet; decide once more bytes (or the end) come.
                (b'\r', None) => break,
                _ => 1,
            };
            let line = String::from_utf8_lossy(&self.pending[start..end]).into_owned();
            start = end + terminator_len;
            if let Some(event) = self.line(&line) {
                events.push(event);
            }
        }
        self.pending.drain(..start);
        events
    }

    /// Ends the stream. A last event the server did not close with a blank
    /// line is still returned: dropping it would lose a `[DONE]` or a final
    /// usage report from servers that end the body right after it.
    pub fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.pending);
        let line = String::from_utf8_lossy(&rest);
        let line = line.strip_suffix('\r').unwrap_or(&line).to_string();
        if let Some(event) = self.line(&line) {
            return Some(event);
        }
        self.data.take()
    }

    fn line(&mut self, line: &str) -> Option<String> {
        if line.is_empty() {
            return self.data.take();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field == "data" {
            match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(input: &[u8], piece: usize) -> Vec<String> {
        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        for chunk in input.chunks(piece) {
            events.extend(decoder.push(chunk));
        }
        events.extend(decoder.finish());
        events
    }

    #[test]
    fn events_survive_any_split_of_the_stream() {
        let input = "data: {\"a\":\"é→\"}\n\ndata: {\"b\":2}\r\n\r\ndata: [DONE]\n\n".as_bytes();
        let expected = vec![
            "{\"a\":\"é→\"}".to_string(),
            "{\"b\":2}".to_string(),
            "[DONE]".to_string(),
        ];
        for piece in 1..=input.len() {
            assert_eq!(
                decode_in_pieces(input, piece),
                expected,
                "split every {piece} bytes"
            );
        }
    }

    #[test]
    fn crlf_and_lone_cr_end_lines() {
        assert_eq!(
            decode_in_pieces(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n", 1),
            vec!["a", "b", "c"]
        );
    }

    #[test]
    fn cr_at_the_end_of_a_chunk_waits_for_a_possible_lf() {
        let mut decoder = SseDecoder::new();
        assert!(decoder.push(b"data: x\r").is_empty());
        assert!(decoder.push(b"\n").is_empty());
        assert_eq!(decoder.push(b"\r\n"), vec!["x"]);
    }

    #[test]
    fn comments_and_other_fields_are_ignored() {
        let input = b": ping - 2026-11-21 11:57:05\n\nevent: message\nid: 7\nretry: 100\ndata: {}\n\n:keep-alive\n\n";
        assert_eq!(decode_in_pieces(input, 5), vec!["{}"]);
    }

    #[test]
    fn data_lines_of_one_event_join_with_newlines() {
        assert_eq!(
            decode_in_pieces(b"data: one\ndata:two\ndata\n\n", 3),
            vec!["one\ntwo\n"]
        );
    }

    #[test]
    fn done_marker_is_passed_through() {
        assert_eq!(decode_in_pieces(b"data: [DONE]\n\n", 4), vec!["[DONE]"]);
    }

    #[test]
    fn an_unterminated_last_event_is_kept_at_the_end() {
        assert_eq!(
            decode_in_pieces(b"data: {\"x\":1}\n\ndata: [DONE]", 2),
            vec!["{\"x\":1}", "[DONE]"]
        );
        assert_eq!(decode_in_pieces(b"data: [DONE]\n", 2), vec!["[DONE]"]);
        assert_eq!(decode_in_pieces(b"data: [DONE]\r", 2), vec!["[DONE]"]);
    }

    #[test]
    fn empty_stream_yields_nothing() {
        assert!(decode_in_pieces(b"", 1).is_empty());
        assert!(decode_in_pieces(b"\n\n: only a comment\n\n", 1).is_empty());
    }
}

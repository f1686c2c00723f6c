//! What a PDF's streams decompress to, counted against the file's budget
//! before lopdf or pdf-extract inflate any of them: those inflate a stream
//! whole, with no bound, so a few MB of Flate can become gigabytes.
//!
//! Counting streams each stream's decoded bytes through a sink, so it
//! takes no more memory than a buffer. Object streams are counted as lopdf
//! loads them (through its load filter, before it unpacks them) and every
//! other stream once the document is loaded and decrypted. An image is
//! counted on its own against the whole budget rather than from what is
//! left: pdf-extract inflates each image it meets (it reads every XObject
//! as a form) and drops it after, so a scanned book's images are held one at
//! a time, but one image may not decode past the budget. A filter that shrinks its input
//! (ASCIIHex, ASCII85) is counted at its input's size, an upper bound; a
//! filter lopdf cannot decode stops the count, since nothing will decode it
//! either. What is left unbounded: the cross-reference streams lopdf
//! inflates while finding the objects, and object streams of encrypted
//! files, which it unpacks while decrypting (one each per revision of the
//! file, and text extraction never reads them again).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::io::{Read, Write};

use lopdf::{Dictionary, Document, LoadOptions, Object, ObjectId, Stream};

use super::LoadError;

/// The budget being spent by the load on this thread; lopdf's load filter
/// is a plain function, so this is how it reaches the count.
#[derive(Default)]
struct Count {
    budget: u64,
    left: u64,
    over: bool,
    counted: HashSet<ObjectId>,
}

thread_local! {
    static COUNT: RefCell<Option<Count>> = const { RefCell::new(None) };
}

/// Loads `bytes` as a PDF (decrypting it with the empty password when it
/// is encrypted), refusing it when its streams decompress past `budget`.
pub(super) fn load(
    bytes: &[u8],
    budget: u64,
    corrupt: impl Fn(String) -> LoadError,
) -> Result<Document, LoadError> {
    COUNT.with(|c| {
        *c.borrow_mut() = Some(Count {
            budget,
            left: budget,
            ..Count::default()
        })
    });
    let options = LoadOptions {
        filter: Some(count_while_loading),
        ..LoadOptions::default()
    };
    let loaded = Document::load_mem_with_options(bytes, options);
    let mut count = COUNT.with(|c| c.borrow_mut().take()).unwrap_or_default();
    let over = || LoadError::OverBudget {
        format: "pdf",
        budget_mib: budget >> 20,
    };
    if count.over {
        return Err(over());
    }
    let mut doc = loaded.map_err(|e| corrupt(e.to_string()))?;
    if doc.is_encrypted() {
        if doc.decrypt("").is_err() {
            return Err(corrupt(
                "the PDF is encrypted and needs a password".to_owned(),
            ));
        }
        // What was counted while loading was ciphertext.
        count.left = budget;
        count.counted.clear();
    }
    for (id, object) in &doc.objects {
        if let Object::Stream(stream) = object {
            if !count.counted.contains(id) && !spend(&mut count.left, budget, stream) {
                return Err(over());
            }
        }
    }
    Ok(doc)
}

/// lopdf's load filter: counts each stream as it is read, and empties one
/// that would go past the budget so that lopdf does not unpack it.
fn count_while_loading(id: ObjectId, object: &mut Object) -> Option<(ObjectId, Object)> {
    let Object::Stream(stream) = object else {
        // lopdf keeps what is returned for the objects it unpacks from
        // object streams, so those must come back whole.
        return Some((id, object.clone()));
    };
    COUNT.with(|c| {
        if let Some(count) = c.borrow_mut().as_mut() {
            count.counted.insert(id);
            if count.over || !spend(&mut count.left, count.budget, stream) {
                count.over = true;
                stream.set_plain_content(Vec::new());
            }
        }
    });
    // A stream is never inside an object stream: lopdf keeps the object it
    // passed in, and what is returned only says to keep it.
    Some((id, Object::Null))
}

/// Takes what `stream` decompresses to from `left`; false when it does not
/// fit. An image only has to fit `budget` on its own.
fn spend(left: &mut u64, budget: u64, stream: &Stream) -> bool {
    if is_image(&stream.dict) {
        return decoded_size(stream, budget).is_some_and(|size| size <= budget);
    }
    match decoded_size(stream, *left) {
        Some(size) if size <= *left => {
            *left -= size;
            true
        }
        _ => false,
    }
}

fn is_image(dict: &Dictionary) -> bool {
    dict.get(b"Subtype")
        .and_then(Object::as_name)
        .is_ok_and(|name| name == b"Image")
}

/// The size of `stream` decoded, counting at most `limit + 1` bytes;
/// `None` when a stage in the middle of its filters already exceeds it.
fn decoded_size(stream: &Stream, limit: u64) -> Option<u64> {
    let Ok(filters) = stream.filters() else {
        return Some(stream.content.len() as u64);
    };
    let early_change = stream
        .dict
        .get(b"DecodeParms")
        .and_then(Object::as_dict)
        .ok()
        .and_then(|p| p.get(b"EarlyChange").and_then(Object::as_i64).ok())
        .is_none_or(|v| v != 0);
    let mut data = Cow::Borrowed(stream.content.as_slice());
    for (i, filter) in filters.iter().enumerate() {
        let decode = |data: &[u8], sink: &mut dyn Write| match *filter {
            b"FlateDecode" | b"Fl" => inflate(data, limit, sink),
            b"LZWDecode" | b"LZW" => copy(Lzw::new(data, early_change), limit, sink),
            // Shrinking or undecodable: the input's size bounds the output.
            _ => data.len() as u64,
        };
        if i + 1 == filters.len() || !is_expanding(filter) {
            return Some(decode(&data, &mut std::io::sink()));
        }
        let mut next = Vec::new();
        if decode(&data, &mut next) > limit {
            return None;
        }
        data = Cow::Owned(next);
    }
    Some(data.len() as u64)
}

fn is_expanding(filter: &[u8]) -> bool {
    matches!(filter, b"FlateDecode" | b"Fl" | b"LZWDecode" | b"LZW")
}

/// Inflates `data` into `sink` as lopdf does: zlib, or raw deflate after
/// the two header bytes when zlib yields nothing.
fn inflate(data: &[u8], limit: u64, sink: &mut dyn Write) -> u64 {
    let zlib = copy(flate2::read::ZlibDecoder::new(data), limit, sink);
    if zlib > 0 || data.len() <= 2 {
        return zlib;
    }
    copy(flate2::read::DeflateDecoder::new(&data[2..]), limit, sink)
}

/// Copies at most `limit + 1` bytes of `reader` into `sink`, stopping at a
/// decoding error as lopdf does; returns how many it copied.
fn copy(reader: impl Read, limit: u64, sink: &mut dyn Write) -> u64 {
    let mut reader = reader.take(limit + 1);
    let mut buffer = [0u8; 64 * 1024];
    let mut copied = 0;
    loop {
        match reader.read(&mut buffer) {
            Ok(0) | Err(_) => return copied,
            Ok(n) => {
                if sink.write_all(&buffer[..n]).is_err() {
                    return copied;
                }
                copied += n as u64;
            }
        }
    }
}

/// LZW decoding as a reader, so it can be counted a buffer at a time.
struct Lzw<'d> {
    decoder: weezl::decode::Decoder,
    input: &'d [u8],
    done: bool,
}

impl<'d> Lzw<'d> {
    fn new(input: &'d [u8], early_change: bool) -> Self {
        let decoder = if early_change {
            weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
        } else {
            weezl::decode::Decoder::new(weezl::BitOrder::Msb, 8)
        };
        Lzw {
            decoder,
            input,
            done: false,
        }
    }
}

impl Read for Lzw<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while !self.done {
            let result = self.decoder.decode_bytes(self.input, out);
            self.input = &self.input[result.consumed_in..];
            match result.status {
                Ok(weezl::LzwStatus::Ok) if result.consumed_out > 0 => {
                    return Ok(result.consumed_out)
                }
                Ok(weezl::LzwStatus::Ok) if result.consumed_in > 0 => {}
                _ => {
                    self.done = true;
                    return Ok(result.consumed_out);
                }
            }
        }
        Ok(0)
    }
}

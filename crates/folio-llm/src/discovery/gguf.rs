//! A GGUF file's header, read within bounds: the magic, the version (2 or
//! 3), then the metadata keys, keeping the few `folio models` shows (name,
//! architecture, context length, quantization, chat template, split parts)
//! and stepping over the rest. The tensors are never read. Every count and
//! length the file declares is checked against what is left of a fixed
//! budget before anything is read or allocated, so a hostile file costs at
//! most [`MAX_HEADER_BYTES`] of reading and one allocation of that size.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use serde::Serialize;

use super::chat_template::ChatTemplate;
use super::error::GgufError;

/// How far into a file its metadata may run. The tokenizer's vocabulary
/// and merges are stored there: Qwen2.5's end at 5.7 MiB, and models with
/// larger vocabularies (Llama 3, Gemma) run to about 8 MiB, so "a few MiB"
/// would refuse real models; twice the largest seen is the bound.
pub const MAX_HEADER_BYTES: u64 = 16 << 20;
/// Keys a header may declare. Real models have 25 to 50.
pub const MAX_KEYS: u64 = 4096;
/// GGUF's own limit on a key's length.
const MAX_KEY_BYTES: u64 = 65_535;
/// Arrays inside arrays: GGUF allows them, no model writes them, and each
/// level is a frame of recursion.
const MAX_NESTING: u32 = 2;
/// How much of a name or an architecture is kept for showing.
const NAME_CHARS: usize = 120;
/// Context lengths kept while the architecture may still be unknown.
const MAX_CONTEXT_KEYS: usize = 16;

/// What a GGUF header says about its model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
pub struct GgufHeader {
    pub version: u32,
    /// `general.name`, as its maker wrote it.
    pub name: Option<String>,
    /// `general.architecture`: `llama`, `qwen2`, `gemma3`, … (`clip` for a
    /// vision projector, which is no language model).
    pub architecture: Option<String>,
    /// `<architecture>.context_length`: the context it was trained for.
    pub context_length: Option<u64>,
    /// `general.file_type`, llama.cpp's number for how it is quantized.
    pub file_type: Option<u32>,
    /// That number as llama.cpp's tools name it (`Q4_K_M`, `Q8_0`, `F16`);
    /// `None` for a number this build does not know.
    pub quantization: Option<String>,
    /// `tokenizer.chat_template`, described; `None` when it has none, and
    /// then the model has no chat format of its own.
    pub chat_template: Option<ChatTemplate>,
    /// Which part of a model split across files this is (`split.no`,
    /// `split.count`); `None` for a whole model in one file.
    pub split: Option<Split>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS, schemars::JsonSchema)]
pub struct Split {
    /// From 0; llama.cpp loads a split model from part 0.
    pub index: u32,
    pub count: u32,
}

impl GgufHeader {
    /// A vision projector (`mmproj-*.gguf`) travels beside its model and
    /// cannot answer on its own.
    pub fn is_projector(&self) -> bool {
        self.architecture.as_deref() == Some("clip")
    }
}

/// Reads the header of the file at `path`.
pub fn read_header(path: &Path) -> Result<GgufHeader, GgufError> {
    parse(BufReader::with_capacity(64 << 10, File::open(path)?))
}

/// Reads a header from the start of `reader`.
pub fn parse(reader: impl Read) -> Result<GgufHeader, GgufError> {
    let mut r = Bounded {
        inner: reader,
        at: 0,
        key: String::new(),
    };
    let magic: [u8; 4] = r.array()?;
    if &magic != b"GGUF" {
        return Err(GgufError::NotGguf {
            found: magic.escape_ascii().to_string(),
        });
    }
    let version = u32::from_le_bytes(r.array()?);
    match version {
        2 | 3 => {}
        v if matches!(v.swap_bytes(), 2 | 3) => return Err(GgufError::BigEndian),
        v => return Err(GgufError::Version(v)),
    }
    let _tensors = u64::from_le_bytes(r.array()?);
    let keys = u64::from_le_bytes(r.array()?);
    if keys > MAX_KEYS {
        return Err(GgufError::TooManyKeys {
            count: keys,
            limit: MAX_KEYS,
        });
    }
    let mut kept = Kept::default();
    for _ in 0..keys {
        r.read_key()?;
        let kind = u32::from_le_bytes(r.array()?);
        let wanted = Wanted::of(&r.key);
        let value = r.value(kind, wanted.is_some_and(Wanted::is_text), 0)?;
        if let Some(wanted) = wanted {
            kept.keep(wanted, &r.key, value);
        }
    }
    Ok(kept.into_header(version))
}

/// llama.cpp's name for a `general.file_type` (its `llama_ftype`), as
/// `llama-quantize` takes it; `None` for numbers llama.cpp retired or does
/// not define.
pub fn quantization_name(file_type: u32) -> Option<&'static str> {
    Some(match file_type {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        19 => "IQ2_XXS",
        20 => "IQ2_XS",
        21 => "Q2_K_S",
        22 => "IQ3_XS",
        23 => "IQ3_XXS",
        24 => "IQ1_S",
        25 => "IQ4_NL",
        26 => "IQ3_S",
        27 => "IQ3_M",
        28 => "IQ2_S",
        29 => "IQ2_M",
        30 => "IQ4_XS",
        31 => "IQ1_M",
        32 => "BF16",
        36 => "TQ1_0",
        37 => "TQ2_0",
        38 => "MXFP4_MOE",
        39 => "NVFP4",
        40 => "Q1_0",
        41 => "Q2_0",
        _ => return None,
    })
}

/// The keys kept, by what they hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wanted {
    Name,
    Architecture,
    FileType,
    ContextLength,
    ChatTemplate,
    SplitIndex,
    SplitCount,
}

impl Wanted {
    fn of(key: &str) -> Option<Wanted> {
        Some(match key {
            "general.name" => Wanted::Name,
            "general.architecture" => Wanted::Architecture,
            "general.file_type" => Wanted::FileType,
            "tokenizer.chat_template" => Wanted::ChatTemplate,
            "split.no" => Wanted::SplitIndex,
            "split.count" => Wanted::SplitCount,
            k if k.ends_with(".context_length") => Wanted::ContextLength,
            _ => return None,
        })
    }

    fn is_text(self) -> bool {
        matches!(
            self,
            Wanted::Name | Wanted::Architecture | Wanted::ChatTemplate
        )
    }
}

/// A value, as far as the header's reader needs it.
enum Value {
    /// Any integer type holding a value of 0 or more.
    Count(u64),
    Text(String),
    /// Anything else, stepped over.
    Other,
}

#[derive(Default)]
struct Kept {
    name: Option<String>,
    architecture: Option<String>,
    file_type: Option<u32>,
    /// Every `<prefix>.context_length` met, since the architecture that
    /// says which one counts may come after them.
    context_lengths: Vec<(String, u64)>,
    chat_template: Option<ChatTemplate>,
    split_index: Option<u32>,
    split_count: Option<u32>,
}

impl Kept {
    fn keep(&mut self, wanted: Wanted, key: &str, value: Value) {
        let small = |n: u64| u32::try_from(n).ok();
        match (wanted, value) {
            (Wanted::Name, Value::Text(t)) => self.name = Some(super::printable(&t, NAME_CHARS)),
            (Wanted::Architecture, Value::Text(t)) => {
                self.architecture = Some(super::printable(&t, NAME_CHARS))
            }
            (Wanted::ChatTemplate, Value::Text(t)) => {
                self.chat_template = Some(ChatTemplate::describe(&t))
            }
            (Wanted::FileType, Value::Count(n)) => self.file_type = small(n),
            (Wanted::SplitIndex, Value::Count(n)) => self.split_index = small(n),
            (Wanted::SplitCount, Value::Count(n)) => self.split_count = small(n),
            (Wanted::ContextLength, Value::Count(n))
                if self.context_lengths.len() < MAX_CONTEXT_KEYS =>
            {
                let prefix = key.trim_end_matches(".context_length").to_string();
                self.context_lengths.push((prefix, n));
            }
            // A kept key with a value of another type is as good as absent.
            _ => {}
        }
    }

    fn into_header(self, version: u32) -> GgufHeader {
        let context_length = self.architecture.as_ref().and_then(|arch| {
            self.context_lengths
                .iter()
                .find(|(prefix, _)| prefix == arch)
                .map(|(_, n)| *n)
        });
        GgufHeader {
            version,
            name: self.name,
            architecture: self.architecture,
            context_length,
            file_type: self.file_type,
            quantization: self
                .file_type
                .and_then(quantization_name)
                .map(str::to_string),
            chat_template: self.chat_template,
            split: match self.split_count {
                Some(count) if count > 1 => Some(Split {
                    index: self.split_index.unwrap_or(0),
                    count,
                }),
                _ => None,
            },
        }
    }
}

/// The reader with its budget: `at` counts every byte taken from the file.
struct Bounded<R> {
    inner: R,
    at: u64,
    /// The key being read, for errors.
    key: String,
}

impl<R: Read> Bounded<R> {
    /// Refuses to go `n` bytes further when that passes the budget.
    fn budget(&self, n: u64) -> Result<(), GgufError> {
        match self.at.checked_add(n) {
            Some(end) if end <= MAX_HEADER_BYTES => Ok(()),
            _ => Err(GgufError::TooLarge {
                limit: MAX_HEADER_BYTES,
                key: self.key.clone(),
            }),
        }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], GgufError> {
        let mut bytes = [0; N];
        self.fill(&mut bytes)?;
        Ok(bytes)
    }

    fn fill(&mut self, bytes: &mut [u8]) -> Result<(), GgufError> {
        self.budget(bytes.len() as u64)?;
        match self.inner.read_exact(bytes) {
            Ok(()) => {
                self.at += bytes.len() as u64;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                Err(GgufError::Truncated { at: self.at })
            }
            Err(e) => Err(GgufError::Io(e)),
        }
    }

    fn bytes(&mut self, n: u64) -> Result<Vec<u8>, GgufError> {
        self.budget(n)?;
        let mut bytes = vec![0; n as usize];
        self.fill(&mut bytes)?;
        Ok(bytes)
    }

    fn skip(&mut self, n: u64) -> Result<(), GgufError> {
        self.budget(n)?;
        let copied = io::copy(&mut (&mut self.inner).take(n), &mut io::sink())?;
        self.at += copied;
        if copied < n {
            return Err(GgufError::Truncated { at: self.at });
        }
        Ok(())
    }

    fn read_key(&mut self) -> Result<(), GgufError> {
        let at = self.at;
        let length = u64::from_le_bytes(self.array()?);
        if length > MAX_KEY_BYTES {
            return Err(GgufError::KeyTooLong {
                length,
                at,
                limit: MAX_KEY_BYTES,
            });
        }
        let bytes = self.bytes(length)?;
        self.key = String::from_utf8_lossy(&bytes).into_owned();
        Ok(())
    }

    /// A value of GGUF type `kind`; its text is read when `keep_text`,
    /// stepped over otherwise.
    fn value(&mut self, kind: u32, keep_text: bool, depth: u32) -> Result<Value, GgufError> {
        let count = |n: i128| u64::try_from(n).map_or(Value::Other, Value::Count);
        Ok(match kind {
            0 | 7 => count(u8::from_le_bytes(self.array()?).into()),
            1 => count(i8::from_le_bytes(self.array()?).into()),
            2 => count(u16::from_le_bytes(self.array()?).into()),
            3 => count(i16::from_le_bytes(self.array()?).into()),
            4 => count(u32::from_le_bytes(self.array()?).into()),
            5 => count(i32::from_le_bytes(self.array()?).into()),
            10 => count(u64::from_le_bytes(self.array()?).into()),
            11 => count(i64::from_le_bytes(self.array()?).into()),
            6 | 12 => {
                self.skip(fixed_size(kind).unwrap_or_default())?;
                Value::Other
            }
            8 => {
                let length = u64::from_le_bytes(self.array()?);
                if keep_text {
                    Value::Text(String::from_utf8_lossy(&self.bytes(length)?).into_owned())
                } else {
                    self.skip(length)?;
                    Value::Other
                }
            }
            9 => {
                self.step_over_array(depth)?;
                Value::Other
            }
            kind => {
                return Err(GgufError::UnknownType {
                    key: self.key.clone(),
                    kind,
                })
            }
        })
    }

    fn step_over_array(&mut self, depth: u32) -> Result<(), GgufError> {
        if depth >= MAX_NESTING {
            return Err(GgufError::TooDeep {
                key: self.key.clone(),
                limit: MAX_NESTING,
            });
        }
        let kind = u32::from_le_bytes(self.array()?);
        let length = u64::from_le_bytes(self.array()?);
        // The least each element can take: a string its length, an array
        // its type and length. A declared length the budget cannot hold is
        // refused here, before a single element is read.
        let least = match (fixed_size(kind), kind) {
            (Some(size), _) => size,
            (None, 8) => 8,
            (None, 9) => 12,
            (None, kind) => {
                return Err(GgufError::UnknownType {
                    key: self.key.clone(),
                    kind,
                })
            }
        };
        self.budget(length.saturating_mul(least))?;
        match fixed_size(kind) {
            Some(size) => self.skip(length * size),
            None => (0..length).try_for_each(|_| self.value(kind, false, depth + 1).map(drop)),
        }
    }
}

/// Bytes a value of a fixed-size GGUF type takes.
fn fixed_size(kind: u32) -> Option<u64> {
    match kind {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::chat_template::TemplateFamily;

    /// A GGUF header built by hand, as llama.cpp's writer lays it out.
    struct Header {
        bytes: Vec<u8>,
    }

    impl Header {
        fn new(version: u32, keys: u64) -> Header {
            let mut bytes = b"GGUF".to_vec();
            bytes.extend(version.to_le_bytes());
            bytes.extend(7u64.to_le_bytes());
            bytes.extend(keys.to_le_bytes());
            Header { bytes }
        }

        fn string(mut self, text: &str) -> Header {
            self.bytes.extend((text.len() as u64).to_le_bytes());
            self.bytes.extend(text.as_bytes());
            self
        }

        fn key(self, key: &str, kind: u32) -> Header {
            let mut h = self.string(key);
            h.bytes.extend(kind.to_le_bytes());
            h
        }

        fn raw(mut self, bytes: &[u8]) -> Header {
            self.bytes.extend(bytes);
            self
        }

        fn text(self, key: &str, value: &str) -> Header {
            self.key(key, 8).string(value)
        }

        fn u32(self, key: &str, value: u32) -> Header {
            self.key(key, 4).raw(&value.to_le_bytes())
        }

        /// An array of `length` elements of `kind`; the elements follow.
        fn array(self, key: &str, kind: u32, length: u64) -> Header {
            self.key(key, 9)
                .raw(&kind.to_le_bytes())
                .raw(&length.to_le_bytes())
        }
    }

    const CHATML: &str =
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";

    fn good() -> Vec<u8> {
        Header::new(3, 9)
            .text("general.architecture", "qwen2")
            .text("general.name", "Qwen2.5 0.5B Instruct")
            .key("general.alignment", 4)
            .raw(&32u32.to_le_bytes())
            .u32("qwen2.context_length", 32_768)
            .key("qwen2.rope.freq_base", 6)
            .raw(&1e6f32.to_le_bytes())
            .u32("general.file_type", 15)
            .array("tokenizer.ggml.tokens", 8, 3)
            .string("a")
            .string("b")
            .string("<|im_end|>")
            .array("tokenizer.ggml.token_type", 5, 3)
            .raw(&[1, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0])
            .text("tokenizer.chat_template", CHATML)
            .bytes
    }

    #[test]
    fn a_good_header_gives_its_model() {
        let header = parse(&good()[..]).unwrap();
        assert_eq!(header.version, 3);
        assert_eq!(header.name.as_deref(), Some("Qwen2.5 0.5B Instruct"));
        assert_eq!(header.architecture.as_deref(), Some("qwen2"));
        assert_eq!(header.context_length, Some(32_768));
        assert_eq!(header.file_type, Some(15));
        assert_eq!(header.quantization.as_deref(), Some("Q4_K_M"));
        let template = header.chat_template.clone().expect("a chat template");
        assert_eq!(template.family, Some(TemplateFamily::ChatMl));
        assert_eq!(template.bytes, CHATML.len() as u64);
        assert_eq!(header.split, None);
        assert!(!header.is_projector());
    }

    #[test]
    fn version_2_is_read_and_a_header_may_lack_every_kept_key() {
        let header = parse(&Header::new(2, 1).u32("llama.block_count", 30).bytes[..]).unwrap();
        assert_eq!(header.version, 2);
        assert_eq!(
            (header.name, header.quantization, header.chat_template),
            (None, None, None)
        );
    }

    #[test]
    fn the_context_length_is_the_architectures_whatever_the_order() {
        let header = parse(
            &Header::new(3, 3)
                .u32("clip.context_length", 77)
                .u32("llama.context_length", 8192)
                .text("general.architecture", "llama")
                .bytes[..],
        )
        .unwrap();
        assert_eq!(header.context_length, Some(8192));
    }

    #[test]
    fn a_split_part_says_which_one_it_is() {
        let header = parse(
            &Header::new(3, 2)
                .key("split.no", 2)
                .raw(&1u16.to_le_bytes())
                .key("split.count", 2)
                .raw(&3u16.to_le_bytes())
                .bytes[..],
        )
        .unwrap();
        assert_eq!(header.split, Some(Split { index: 1, count: 3 }));
    }

    #[test]
    fn every_truncation_of_a_good_header_is_refused_as_truncated() {
        let bytes = good();
        for end in 0..bytes.len() {
            match parse(&bytes[..end]) {
                Err(GgufError::Truncated { at }) => assert!(at <= end as u64),
                other => panic!("cut at {end}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_file_that_is_not_gguf_is_refused_by_its_magic() {
        let mut bytes = good();
        bytes[..4].copy_from_slice(b"GGML");
        assert!(matches!(
            parse(&bytes[..]),
            Err(GgufError::NotGguf { found }) if found == "GGML"
        ));
    }

    #[test]
    fn other_versions_and_big_endian_files_are_refused() {
        for (version, big_endian) in [(1, false), (4, false), (3u32.swap_bytes(), true)] {
            let error = parse(&Header::new(version, 0).bytes[..]).unwrap_err();
            match error {
                GgufError::BigEndian => assert!(big_endian),
                GgufError::Version(v) => assert!(!big_endian && v == version),
                other => panic!("version {version}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_huge_key_count_is_refused_before_any_key_is_read() {
        let error = parse(&Header::new(3, u64::MAX).bytes[..]).unwrap_err();
        assert!(
            matches!(
                error,
                GgufError::TooManyKeys {
                    count: u64::MAX,
                    ..
                }
            ),
            "{error:?}"
        );
    }

    #[test]
    fn huge_declared_lengths_are_refused_before_they_are_read() {
        let huge = [
            Header::new(3, 1)
                .key("general.name", 8)
                .raw(&u64::MAX.to_le_bytes()),
            Header::new(3, 1)
                .key("x", 8)
                .raw(&(MAX_HEADER_BYTES).to_le_bytes()),
            Header::new(3, 1).array("tokenizer.ggml.tokens", 8, 1 << 60),
            Header::new(3, 1).array("tokenizer.ggml.scores", 6, u64::MAX),
            Header::new(3, 1).array("nested", 9, MAX_HEADER_BYTES / 12),
        ];
        for header in huge {
            // An endless supply after the header: only the budget stops it.
            let reader = Counting::new(io::Cursor::new(header.bytes).chain(io::repeat(0)));
            let read = reader.read.clone();
            let error = parse(reader).unwrap_err();
            assert!(matches!(error, GgufError::TooLarge { .. }), "{error:?}");
            assert!(read.get() < 1 << 20, "read {} bytes first", read.get());
        }
    }

    #[test]
    fn an_endless_header_stops_at_the_budget() {
        // Every string element is declared empty, so each costs its length
        // field alone: the reading runs until the budget ends it.
        let header = Header::new(3, MAX_KEYS).array("a", 8, MAX_HEADER_BYTES / 8 - 8);
        let reader = Counting::new(io::Cursor::new(header.bytes).chain(io::repeat(0)));
        let read = reader.read.clone();
        let error = parse(reader).unwrap_err();
        assert!(matches!(error, GgufError::TooLarge { .. }), "{error:?}");
        assert!(read.get() <= MAX_HEADER_BYTES + 64 * 1024);
    }

    #[test]
    fn long_keys_unknown_types_and_deep_arrays_are_refused() {
        let long_key = Header::new(3, 1).raw(&(1u64 << 40).to_le_bytes());
        assert!(matches!(
            parse(&long_key.bytes[..]),
            Err(GgufError::KeyTooLong { .. })
        ));
        let unknown = Header::new(3, 1).key("odd", 13).raw(&[0; 8]);
        assert!(matches!(
            parse(&unknown.bytes[..]),
            Err(GgufError::UnknownType { kind: 13, .. })
        ));
        let deep = Header::new(3, 1)
            .array("deep", 9, 1)
            .raw(&9u32.to_le_bytes())
            .raw(&1u64.to_le_bytes())
            .raw(&[0; 64]);
        assert!(matches!(
            parse(&deep.bytes[..]),
            Err(GgufError::TooDeep { .. })
        ));
    }

    #[test]
    fn names_and_architectures_are_kept_printable() {
        let header = parse(
            &Header::new(3, 1)
                .text(
                    "general.name",
                    &format!("evil\u{1b}]0;title\u{7}{}", "x".repeat(500)),
                )
                .bytes[..],
        )
        .unwrap();
        let name = header.name.unwrap();
        assert!(!name.chars().any(char::is_control), "{name:?}");
        assert_eq!(name.chars().count(), NAME_CHARS);
    }

    #[test]
    fn quantizations_have_llama_cpps_names() {
        let cases = [
            (0, Some("F32")),
            (1, Some("F16")),
            (2, Some("Q4_0")),
            (3, Some("Q4_1")),
            (7, Some("Q8_0")),
            (15, Some("Q4_K_M")),
            (18, Some("Q6_K")),
            (30, Some("IQ4_XS")),
            (32, Some("BF16")),
            (4, None),
            (33, None),
            (1024, None),
        ];
        for (file_type, name) in cases {
            assert_eq!(quantization_name(file_type), name, "{file_type}");
        }
    }

    /// A reader that counts what is taken from it.
    struct Counting<R> {
        inner: R,
        read: std::rc::Rc<std::cell::Cell<u64>>,
    }

    impl<R> Counting<R> {
        fn new(inner: R) -> Counting<R> {
            Counting {
                inner,
                read: Default::default(),
            }
        }
    }

    impl<R: Read> Read for Counting<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.read.set(self.read.get() + n as u64);
            Ok(n)
        }
    }
}

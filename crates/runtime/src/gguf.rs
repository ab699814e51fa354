//! GGUF metadata read from a model file's header: the architecture, name, size label,
//! parameter count, trained context length, whether a chat template is present, and the
//! quantization.
//!
//! A GGUF file starts with `GGUF`, a version, the tensor and key-value counts, then the
//! key-value section and one info record per tensor; the tensor data follows, and is most of
//! the file. Only that header is read, front to back through a buffer: a 5 GB model costs a
//! few megabytes of reading (most of it the tokenizer's vocabulary, which is skipped value by
//! value without being kept). Versions 2 and 3 are read (little-endian, 64-bit lengths);
//! version 1 (32-bit lengths, from 2023) and big-endian files are refused with a sentence.
//!
//! The parameter count is summed from the tensor infos, since the key-value section has no
//! standard key for it (`general.size_label` is a rounded label such as `1.7B`).
//!
//! ```no_run
//! let info = tooltrail_runtime::gguf::read_gguf(std::path::Path::new("model.gguf"))?;
//! println!("{:?} with {:?} parameters", info.architecture, info.parameter_count);
//! # Ok::<(), tooltrail_runtime::gguf::GgufError>(())
//! ```

use std::collections::BTreeMap;
use std::io::{BufReader, Read};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The first four bytes of every GGUF file.
pub const GGUF_MAGIC: &[u8; 4] = b"GGUF";

/// The longest key accepted; real keys are a few dozen bytes.
const MAX_KEY_BYTES: u64 = 64 * 1024;
/// The longest string value kept in memory (a chat template is a few kilobytes); longer ones
/// are skipped, and for the chat template only its presence is kept.
const MAX_KEPT_STRING_BYTES: u64 = 1024 * 1024;
/// GGML tensors have at most four dimensions; a little room for future ones.
const MAX_TENSOR_DIMS: u32 = 8;
/// Arrays inside arrays are allowed by the format but never nested deeply.
const MAX_ARRAY_DEPTH: u32 = 4;

/// What a GGUF header says about the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GgufInfo {
    /// The GGUF format version (2 or 3).
    pub version: u32,
    /// `general.architecture`: `llama`, `qwen3`, `gemma3`, …
    pub architecture: Option<String>,
    /// `general.name`, the model's name as its converter wrote it.
    pub name: Option<String>,
    /// `general.size_label`, a rounded size such as `1.7B` or `270M`.
    pub size_label: Option<String>,
    /// The number of weights, summed over the tensor infos.
    pub parameter_count: Option<u64>,
    /// `<architecture>.context_length`: the context window the model was trained for, in tokens.
    pub context_length: Option<u64>,
    /// Whether `tokenizer.chat_template` is present. Without one, a server falls back to a
    /// default template, which may not render tools.
    pub has_chat_template: bool,
    /// Whether the chat template mentions `tools` at all: a template that does not cannot
    /// render a tool list, so such a model needs tools described in the prompt. A template
    /// that does mention them usually renders them (this is a reading of the text, not a run
    /// of the template).
    pub chat_template_mentions_tools: bool,
    /// `general.file_type`, llama.cpp's number for the file's main quantization.
    pub file_type: Option<u32>,
    /// The quantization named from `file_type` (`Q4_K_M`, `Q8_0`, `F16`, …).
    pub quantization: Option<String>,
    /// The number of tensors.
    pub tensor_count: u64,
}

/// Why a file's GGUF header could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    #[error("could not read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a GGUF model file (it does not start with the GGUF signature)")]
    NotGguf { path: String },
    #[error(
        "{path} is a GGUF file of version {version}, which Tooltrail cannot read (versions 2 and \
         3 are read); convert the model again with a recent llama.cpp"
    )]
    UnsupportedVersion { path: String, version: u32 },
    #[error(
        "{path} is a big-endian GGUF file, which Tooltrail cannot read; use the little-endian file of this model"
    )]
    BigEndian { path: String },
    #[error("{path} is not a valid GGUF file: {reason}")]
    Invalid { path: String, reason: String },
}

/// Reads the GGUF header of the file at `path`.
pub fn read_gguf(path: &Path) -> Result<GgufInfo, GgufError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| GgufError::Read {
        path: name.clone(),
        source,
    })?;
    read_gguf_from(file, &name)
}

/// Reads a GGUF header from `reader`, which is read only as far as the header goes. `name`
/// names the source in errors.
pub fn read_gguf_from(reader: impl Read, name: &str) -> Result<GgufInfo, GgufError> {
    let mut parser = Parser {
        reader: BufReader::with_capacity(256 * 1024, reader),
    };
    parser.header().map_err(|problem| problem.into_error(name))
}

/// A reason without the file's name, which [`read_gguf_from`] adds.
enum Problem {
    Io(std::io::Error),
    NotGguf,
    Version(u32),
    BigEndian,
    Invalid(String),
}

impl Problem {
    fn into_error(self, name: &str) -> GgufError {
        let path = name.to_string();
        match self {
            Problem::Io(source) if source.kind() == std::io::ErrorKind::UnexpectedEof => {
                GgufError::Invalid {
                    path,
                    reason: "the file ends inside its header".to_string(),
                }
            }
            Problem::Io(source) => GgufError::Read { path, source },
            Problem::NotGguf => GgufError::NotGguf { path },
            Problem::Version(version) => GgufError::UnsupportedVersion { path, version },
            Problem::BigEndian => GgufError::BigEndian { path },
            Problem::Invalid(reason) => GgufError::Invalid { path, reason },
        }
    }
}

impl From<std::io::Error> for Problem {
    fn from(error: std::io::Error) -> Self {
        Problem::Io(error)
    }
}

/// GGUF value types, as numbered by the format.
mod value_type {
    pub const UINT8: u32 = 0;
    pub const INT8: u32 = 1;
    pub const UINT16: u32 = 2;
    pub const INT16: u32 = 3;
    pub const UINT32: u32 = 4;
    pub const INT32: u32 = 5;
    pub const FLOAT32: u32 = 6;
    pub const BOOL: u32 = 7;
    pub const STRING: u32 = 8;
    pub const ARRAY: u32 = 9;
    pub const UINT64: u32 = 10;
    pub const INT64: u32 = 11;
    pub const FLOAT64: u32 = 12;
}

/// A value the reader kept.
enum Value {
    Unsigned(u64),
    Signed(i64),
    Text(String),
    /// A string too long to keep, of this many bytes.
    LongText,
    /// Anything else: floats, booleans, arrays.
    Other,
}

impl Value {
    fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Unsigned(n) => Some(*n),
            Value::Signed(n) => u64::try_from(*n).ok(),
            Value::Text(_) | Value::LongText | Value::Other => None,
        }
    }

    fn into_text(self) -> Option<String> {
        match self {
            Value::Text(text) => Some(text),
            Value::Unsigned(_) | Value::Signed(_) | Value::LongText | Value::Other => None,
        }
    }
}

struct Parser<R> {
    reader: BufReader<R>,
}

impl<R: Read> Parser<R> {
    fn header(&mut self) -> Result<GgufInfo, Problem> {
        let mut magic = [0u8; 4];
        self.reader.read_exact(&mut magic).map_err(|error| {
            if error.kind() == std::io::ErrorKind::UnexpectedEof {
                Problem::NotGguf
            } else {
                Problem::Io(error)
            }
        })?;
        if &magic != GGUF_MAGIC {
            return Err(Problem::NotGguf);
        }
        let version = self.u32()?;
        if version.swap_bytes() <= 3 && version > 3 {
            return Err(Problem::BigEndian);
        }
        if !(2..=3).contains(&version) {
            return Err(Problem::Version(version));
        }
        let tensor_count = self.u64()?;
        let kv_count = self.u64()?;

        let mut info = GgufInfo {
            version,
            tensor_count,
            ..GgufInfo::default()
        };
        // `<arch>.context_length` may come before `general.architecture` in principle.
        let mut context_lengths: BTreeMap<String, u64> = BTreeMap::new();
        for _ in 0..kv_count {
            let key = self.key()?;
            let kind = self.u32()?;
            let wanted = matches!(
                key.as_str(),
                "general.architecture"
                    | "general.name"
                    | "general.size_label"
                    | "general.file_type"
                    | "tokenizer.chat_template"
            ) || key.ends_with(".context_length");
            if !wanted {
                self.skip_value(kind, 0)?;
                continue;
            }
            let value = self.value(kind)?;
            match key.as_str() {
                "general.architecture" => info.architecture = value.into_text(),
                "general.name" => info.name = value.into_text(),
                "general.size_label" => info.size_label = value.into_text(),
                "general.file_type" => {
                    info.file_type = value.as_u64().and_then(|n| u32::try_from(n).ok());
                }
                "tokenizer.chat_template" => match value {
                    Value::Text(template) => {
                        info.has_chat_template = !template.trim().is_empty();
                        info.chat_template_mentions_tools = template.contains("tools");
                    }
                    Value::LongText => info.has_chat_template = true,
                    Value::Unsigned(_) | Value::Signed(_) | Value::Other => {}
                },
                _ => {
                    if let Some(tokens) = value.as_u64() {
                        context_lengths.insert(key, tokens);
                    }
                }
            }
        }
        info.context_length = info
            .architecture
            .as_ref()
            .and_then(|arch| context_lengths.get(&format!("{arch}.context_length")))
            .copied();
        info.quantization = info.file_type.and_then(file_type_name).map(str::to_string);
        info.parameter_count = self.parameter_count(tensor_count)?;
        Ok(info)
    }

    /// Sums the elements of every tensor from the tensor infos; `None` if the sum overflows.
    fn parameter_count(&mut self, tensor_count: u64) -> Result<Option<u64>, Problem> {
        let mut total: Option<u64> = Some(0);
        for _ in 0..tensor_count {
            let name_len = self.u64()?;
            self.skip(name_len)?;
            let dims = self.u32()?;
            if dims > MAX_TENSOR_DIMS {
                return Err(Problem::Invalid(format!(
                    "a tensor has {dims} dimensions (at most {MAX_TENSOR_DIMS} are possible)"
                )));
            }
            let mut elements: Option<u64> = Some(1);
            for _ in 0..dims {
                let size = self.u64()?;
                elements = elements.and_then(|n| n.checked_mul(size));
            }
            let _ggml_type = self.u32()?;
            let _offset = self.u64()?;
            total = match (total, elements) {
                (Some(total), Some(elements)) => total.checked_add(elements),
                _ => None,
            };
        }
        Ok(total)
    }

    fn key(&mut self) -> Result<String, Problem> {
        let len = self.u64()?;
        if len > MAX_KEY_BYTES {
            return Err(Problem::Invalid(format!(
                "a metadata key is {len} bytes long"
            )));
        }
        let bytes = self.bytes(len)?;
        String::from_utf8(bytes)
            .map_err(|_| Problem::Invalid("a metadata key is not UTF-8 text".to_string()))
    }

    /// Reads a value of a wanted key: numbers and short strings are kept.
    fn value(&mut self, kind: u32) -> Result<Value, Problem> {
        use value_type::*;
        Ok(match kind {
            UINT8 => Value::Unsigned(u64::from(self.array::<1>()?[0])),
            INT8 => Value::Signed(i64::from(i8::from_le_bytes(self.array::<1>()?))),
            UINT16 => Value::Unsigned(u64::from(u16::from_le_bytes(self.array()?))),
            INT16 => Value::Signed(i64::from(i16::from_le_bytes(self.array()?))),
            UINT32 => Value::Unsigned(u64::from(self.u32()?)),
            INT32 => Value::Signed(i64::from(i32::from_le_bytes(self.array()?))),
            UINT64 => Value::Unsigned(self.u64()?),
            INT64 => Value::Signed(i64::from_le_bytes(self.array()?)),
            STRING => {
                let len = self.u64()?;
                if len > MAX_KEPT_STRING_BYTES {
                    self.skip(len)?;
                    Value::LongText
                } else {
                    // Names and templates are UTF-8; a stray byte should not lose the rest.
                    Value::Text(String::from_utf8_lossy(&self.bytes(len)?).into_owned())
                }
            }
            FLOAT32 | BOOL | ARRAY | FLOAT64 => {
                self.skip_value(kind, 0)?;
                Value::Other
            }
            other => return Err(unknown_type(other)),
        })
    }

    /// Skips a value without keeping it: the vocabulary arrays are most of a header.
    fn skip_value(&mut self, kind: u32, depth: u32) -> Result<(), Problem> {
        use value_type::*;
        match kind {
            STRING => {
                let len = self.u64()?;
                self.skip(len)
            }
            ARRAY => {
                if depth >= MAX_ARRAY_DEPTH {
                    return Err(Problem::Invalid(
                        "its metadata nests arrays too deeply".to_string(),
                    ));
                }
                let item = self.u32()?;
                let count = self.u64()?;
                match fixed_size(item) {
                    Some(size) => {
                        let bytes = count.checked_mul(size).ok_or_else(|| {
                            Problem::Invalid(format!("an array claims {count} items"))
                        })?;
                        self.skip(bytes)
                    }
                    None => {
                        for _ in 0..count {
                            self.skip_value(item, depth + 1)?;
                        }
                        Ok(())
                    }
                }
            }
            other => match fixed_size(other) {
                Some(size) => self.skip(size),
                None => Err(unknown_type(other)),
            },
        }
    }

    fn u32(&mut self) -> Result<u32, Problem> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, Problem> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Problem> {
        let mut bytes = [0u8; N];
        self.reader.read_exact(&mut bytes)?;
        Ok(bytes)
    }

    fn bytes(&mut self, len: u64) -> Result<Vec<u8>, Problem> {
        let mut bytes = Vec::new();
        let read = (&mut self.reader).take(len).read_to_end(&mut bytes)?;
        if u64::try_from(read).ok() != Some(len) {
            return Err(Problem::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        Ok(bytes)
    }

    fn skip(&mut self, len: u64) -> Result<(), Problem> {
        let skipped = std::io::copy(&mut (&mut self.reader).take(len), &mut std::io::sink())?;
        if skipped != len {
            return Err(Problem::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        Ok(())
    }
}

/// The size of a value of a fixed-size type; `None` for strings, arrays and unknown types.
fn fixed_size(kind: u32) -> Option<u64> {
    use value_type::*;
    match kind {
        UINT8 | INT8 | BOOL => Some(1),
        UINT16 | INT16 => Some(2),
        UINT32 | INT32 | FLOAT32 => Some(4),
        UINT64 | INT64 | FLOAT64 => Some(8),
        _ => None,
    }
}

fn unknown_type(kind: u32) -> Problem {
    Problem::Invalid(format!("its metadata has a value of unknown type {kind}"))
}

/// llama.cpp's name for a `general.file_type` (its `llama_ftype`). Numbers that were removed
/// from llama.cpp (4–6, 33–35) or are newer than this table have no name.
pub fn file_type_name(file_type: u32) -> Option<&'static str> {
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
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tooltrail_test_support::gguf::GgufBuilder;

    fn small_model() -> GgufBuilder {
        GgufBuilder::new()
            .string("general.architecture", "qwen3")
            .string("general.name", "Qwen3 1.7B")
            .string("general.size_label", "1.7B")
            .u32("general.file_type", 15)
            .u32("qwen3.context_length", 40960)
            .u32("qwen3.embedding_length", 64)
            .f32("qwen3.rope.freq_base", 1_000_000.0)
            .bool("tokenizer.ggml.add_bos_token", false)
            .strings("tokenizer.ggml.tokens", &["<s>", "</s>", "hello", "world"])
            .f32s("tokenizer.ggml.scores", &[0.0, 0.0, -1.5, -2.5])
            .string(
                "tokenizer.chat_template",
                "{%- if tools %}{{ tools | tojson }}{% endif %}{{ messages }}",
            )
            .tensor("token_embd.weight", &[64, 4], 12)
            .tensor("blk.0.attn_q.weight", &[64, 64], 12)
            .tensor("output_norm.weight", &[64], 0)
    }

    #[test]
    fn reads_what_a_small_model_says_about_itself() {
        let bytes = small_model().build();
        let info = read_gguf_from(bytes.as_slice(), "m.gguf").unwrap();
        assert_eq!(
            info,
            GgufInfo {
                version: 3,
                architecture: Some("qwen3".into()),
                name: Some("Qwen3 1.7B".into()),
                size_label: Some("1.7B".into()),
                parameter_count: Some(64 * 4 + 64 * 64 + 64),
                context_length: Some(40960),
                has_chat_template: true,
                chat_template_mentions_tools: true,
                file_type: Some(15),
                quantization: Some("Q4_K_M".into()),
                tensor_count: 3,
            }
        );
    }

    #[test]
    fn reads_only_the_header_of_a_large_file() {
        // A reader that fails past the header proves the tensor data is never read.
        struct Guard<'a> {
            bytes: &'a [u8],
            limit: usize,
            at: usize,
        }
        impl Read for Guard<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let end = (self.at + buf.len()).min(self.bytes.len());
                if self.at >= self.limit {
                    return Err(std::io::Error::other("read past the header"));
                }
                let n = end - self.at;
                buf[..n].copy_from_slice(&self.bytes[self.at..end]);
                self.at = end;
                Ok(n)
            }
        }
        let builder = small_model().data_bytes(8 * 1024 * 1024);
        let header = builder.header_len();
        let bytes = builder.build();
        assert!(bytes.len() > 8 * 1024 * 1024);
        // The buffer may read ahead by its capacity, no further.
        let guard = Guard {
            bytes: &bytes,
            limit: header + 256 * 1024,
            at: 0,
        };
        let info = read_gguf_from(guard, "big.gguf").unwrap();
        assert_eq!(info.tensor_count, 3);
    }

    #[test]
    fn a_model_without_a_template_or_size_label_says_so() {
        let bytes = GgufBuilder::new()
            .version(2)
            .string("general.architecture", "gemma3")
            .u32("gemma3.context_length", 32768)
            .u32("general.file_type", 7)
            .build();
        let info = read_gguf_from(bytes.as_slice(), "g.gguf").unwrap();
        assert_eq!(
            (
                info.version,
                info.has_chat_template,
                info.chat_template_mentions_tools,
                info.size_label,
                info.context_length,
                info.quantization.as_deref(),
                info.parameter_count,
            ),
            (2, false, false, None, Some(32768), Some("Q8_0"), Some(0))
        );

        let bytes = GgufBuilder::new()
            .string("tokenizer.chat_template", "{{ messages }}")
            .build();
        let info = read_gguf_from(bytes.as_slice(), "t.gguf").unwrap();
        assert!(info.has_chat_template);
        assert!(!info.chat_template_mentions_tools);
    }

    #[test]
    fn files_that_are_not_gguf_are_refused_with_a_sentence() {
        let error = |bytes: &[u8]| read_gguf_from(bytes, "x.bin").unwrap_err().to_string();
        assert_eq!(
            error(b"PK\x03\x04 a zip file"),
            "x.bin is not a GGUF model file (it does not start with the GGUF signature)"
        );
        assert_eq!(
            error(b""),
            "x.bin is not a GGUF model file (it does not start with the GGUF signature)"
        );
        assert_eq!(
            error(b"GGUF\x01\x00\x00\x00"),
            "x.bin is a GGUF file of version 1, which Tooltrail cannot read (versions 2 and 3 \
             are read); convert the model again with a recent llama.cpp"
        );
        assert_eq!(
            error(b"GGUF\x00\x00\x00\x03"),
            "x.bin is a big-endian GGUF file, which Tooltrail cannot read; use the \
             little-endian file of this model"
        );
        let whole = small_model().build();
        assert_eq!(
            error(&whole[..200]),
            "x.bin is not a valid GGUF file: the file ends inside its header"
        );
        let mut bad_type = GgufBuilder::new().u32("general.file_type", 1).build();
        // The value type of the only key: after magic, version, two counts, key length and key.
        let at = 4 + 4 + 8 + 8 + 8 + "general.file_type".len();
        bad_type[at..at + 4].copy_from_slice(&99u32.to_le_bytes());
        assert_eq!(
            error(&bad_type),
            "x.bin is not a valid GGUF file: its metadata has a value of unknown type 99"
        );
    }

    #[test]
    fn quantization_names_follow_llama_cpp() {
        assert_eq!(file_type_name(15), Some("Q4_K_M"));
        assert_eq!(file_type_name(1), Some("F16"));
        assert_eq!(file_type_name(32), Some("BF16"));
        assert_eq!(file_type_name(5), None);
    }
}

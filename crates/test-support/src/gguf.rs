//! Small GGUF model files written by tests: a header with the keys and tensor infos a test
//! asks for, then filler data, so that reading metadata, downloading, verifying and importing
//! are exercised on real GGUF bytes without a real model.

/// GGUF value types, as numbered by the format.
const UINT32: u32 = 4;
const FLOAT32: u32 = 6;
const BOOL: u32 = 7;
const STRING: u32 = 8;
const ARRAY: u32 = 9;
const UINT64: u32 = 10;

/// The alignment of the tensor data when `general.alignment` is not set.
const ALIGNMENT: usize = 32;

/// Builds a GGUF file (version 3 unless told otherwise), little-endian as llama.cpp writes it.
///
/// ```
/// use tooltrail_test_support::gguf::GgufBuilder;
/// let bytes = GgufBuilder::new()
///     .string("general.architecture", "llama")
///     .u32("llama.context_length", 4096)
///     .tensor("output.weight", &[16, 4], 0)
///     .data_bytes(1024)
///     .build();
/// assert_eq!(&bytes[..4], b"GGUF");
/// ```
#[derive(Debug, Clone)]
pub struct GgufBuilder {
    version: u32,
    kvs: Vec<(String, u32, Vec<u8>)>,
    tensors: Vec<(String, Vec<u64>, u32)>,
    data_bytes: usize,
}

impl Default for GgufBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl GgufBuilder {
    pub fn new() -> Self {
        Self {
            version: 3,
            kvs: Vec::new(),
            tensors: Vec::new(),
            data_bytes: 0,
        }
    }

    /// The format version written in the header.
    pub fn version(mut self, version: u32) -> Self {
        self.version = version;
        self
    }

    pub fn string(self, key: &str, value: &str) -> Self {
        self.kv(key, STRING, string_bytes(value))
    }

    pub fn u32(self, key: &str, value: u32) -> Self {
        self.kv(key, UINT32, value.to_le_bytes().to_vec())
    }

    pub fn u64(self, key: &str, value: u64) -> Self {
        self.kv(key, UINT64, value.to_le_bytes().to_vec())
    }

    pub fn f32(self, key: &str, value: f32) -> Self {
        self.kv(key, FLOAT32, value.to_le_bytes().to_vec())
    }

    pub fn bool(self, key: &str, value: bool) -> Self {
        self.kv(key, BOOL, vec![u8::from(value)])
    }

    /// An array of strings, as a tokenizer's vocabulary is stored.
    pub fn strings(self, key: &str, values: &[&str]) -> Self {
        let mut bytes = array_head(STRING, values.len());
        for value in values {
            bytes.extend(string_bytes(value));
        }
        self.kv(key, ARRAY, bytes)
    }

    /// An array of 32-bit floats, as a tokenizer's scores are stored.
    pub fn f32s(self, key: &str, values: &[f32]) -> Self {
        let mut bytes = array_head(FLOAT32, values.len());
        for value in values {
            bytes.extend(value.to_le_bytes());
        }
        self.kv(key, ARRAY, bytes)
    }

    /// A tensor info: its name, dimensions and GGML type number (0 is F32, 12 is Q4_K).
    pub fn tensor(mut self, name: &str, dims: &[u64], ggml_type: u32) -> Self {
        self.tensors
            .push((name.to_string(), dims.to_vec(), ggml_type));
        self
    }

    /// How many bytes of tensor data follow the header (a fixed pattern, not real weights).
    pub fn data_bytes(mut self, bytes: usize) -> Self {
        self.data_bytes = bytes;
        self
    }

    /// The header's length: magic, counts, key-values, tensor infos and the alignment padding.
    pub fn header_len(&self) -> usize {
        self.header().len()
    }

    /// The whole file.
    pub fn build(&self) -> Vec<u8> {
        let mut bytes = self.header();
        bytes.reserve(self.data_bytes);
        // A pattern that differs along the file, so that a chunk out of place changes the hash.
        let mut state: u32 = 0x9e37_79b9;
        for _ in 0..self.data_bytes {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            bytes.push(state.to_le_bytes()[0]);
        }
        bytes
    }

    fn kv(mut self, key: &str, kind: u32, value: Vec<u8>) -> Self {
        self.kvs.push((key.to_string(), kind, value));
        self
    }

    fn header(&self) -> Vec<u8> {
        let mut bytes = b"GGUF".to_vec();
        bytes.extend(self.version.to_le_bytes());
        bytes.extend(len_u64(self.tensors.len()).to_le_bytes());
        bytes.extend(len_u64(self.kvs.len()).to_le_bytes());
        for (key, kind, value) in &self.kvs {
            bytes.extend(string_bytes(key));
            bytes.extend(kind.to_le_bytes());
            bytes.extend(value);
        }
        let mut offset = 0u64;
        for (name, dims, ggml_type) in &self.tensors {
            bytes.extend(string_bytes(name));
            bytes.extend(u32::try_from(dims.len()).unwrap_or(u32::MAX).to_le_bytes());
            for dim in dims {
                bytes.extend(dim.to_le_bytes());
            }
            bytes.extend(ggml_type.to_le_bytes());
            bytes.extend(offset.to_le_bytes());
            offset += 32;
        }
        while !bytes.len().is_multiple_of(ALIGNMENT) {
            bytes.push(0);
        }
        bytes
    }
}

fn len_u64(len: usize) -> u64 {
    u64::try_from(len).unwrap_or(u64::MAX)
}

fn string_bytes(text: &str) -> Vec<u8> {
    let mut bytes = len_u64(text.len()).to_le_bytes().to_vec();
    bytes.extend(text.as_bytes());
    bytes
}

fn array_head(item: u32, count: usize) -> Vec<u8> {
    let mut bytes = item.to_le_bytes().to_vec();
    bytes.extend(len_u64(count).to_le_bytes());
    bytes
}

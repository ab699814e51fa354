//! Model names: what a model is called in the models folder, in `config.toml`'s
//! `[local] model` and on the command line. A name is also the stem of the model's files, so
//! it is kept to characters every file system takes.

use crate::models::ModelError;

/// The longest name accepted.
pub const MAX_NAME_LEN: usize = 80;

/// Refuses a name that cannot name a model's files, in a sentence.
pub fn check(name: &str) -> Result<(), ModelError> {
    let bad = |reason: &str| {
        Err(ModelError::BadName {
            name: name.to_string(),
            reason: reason.to_string(),
        })
    };
    if name.is_empty() {
        return bad("a name cannot be empty");
    }
    if name.len() > MAX_NAME_LEN {
        return bad("a name is at most 80 characters long");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '-' | '_'))
    {
        return bad("a name holds only lower-case letters, digits, dots, dashes and underscores");
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return bad("a name starts with a letter or a digit");
    }
    if name.ends_with(".gguf") || name.ends_with(".json") || name.ends_with(".part") {
        return bad("a name does not end in a file extension");
    }
    Ok(())
}

/// A name as the user typed it: trimmed and lower-cased, then checked.
pub fn normalize(name: &str) -> Result<String, ModelError> {
    let name = name.trim().to_ascii_lowercase();
    check(&name)?;
    Ok(name)
}

/// A name made from a file's name: `Qwen3-1.7B-Q4_K_M.gguf` becomes `qwen3-1.7b-q4_k_m`.
pub fn from_file_name(file: &str) -> Result<String, ModelError> {
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let stem = base
        .strip_suffix(".gguf")
        .or_else(|| base.strip_suffix(".GGUF"))
        .unwrap_or(base);
    let mut name = String::new();
    for c in stem.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_') {
            name.push(c.to_ascii_lowercase());
        } else if !name.ends_with('-') {
            name.push('-');
        }
    }
    let name: String = name
        .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .trim_end_matches('-')
        .chars()
        .take(MAX_NAME_LEN)
        .collect();
    check(&name).map_err(|_| ModelError::BadName {
        name: file.to_string(),
        reason: "no name can be made from this file's name; give one with --name".to_string(),
    })?;
    Ok(name)
}

/// Whether `text` is a SHA-256 in lower-case hex.
pub fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_are_made_from_file_names() {
        assert_eq!(
            from_file_name("Qwen3-1.7B-Q4_K_M.gguf").unwrap(),
            "qwen3-1.7b-q4_k_m"
        );
        assert_eq!(
            from_file_name("/home/me/models/My Model (v2).gguf").unwrap(),
            "my-model-v2"
        );
        assert_eq!(
            from_file_name("sub/dir/gemma-3-270m.GGUF").unwrap(),
            "gemma-3-270m"
        );
        assert!(from_file_name("+++.gguf").is_err());
    }

    #[test]
    fn names_that_cannot_name_files_are_refused() {
        assert!(check("qwen3-1.7b").is_ok());
        assert_eq!(normalize(" Qwen3-4B ").unwrap(), "qwen3-4b");
        let error = check("../etc").unwrap_err().to_string();
        assert_eq!(
            error,
            "\"../etc\" cannot name a model: a name holds only lower-case letters, digits, dots, dashes and underscores"
        );
        assert!(check(".hidden").is_err());
        assert!(check("model.gguf").is_err());
        assert!(check("").is_err());
        assert!(check(&"a".repeat(81)).is_err());
    }
}

//! The bearer token every request must carry.
//!
//! It comes from `--token` or `TOOLTRAIL_SERVE_TOKEN` when given; otherwise one is generated
//! on the first start and kept in `serve-token` in the config folder, readable by its owner
//! only (0600), so that scripts on this machine can read it and a restart keeps it. Tokens are
//! compared in constant time, so response times say nothing about how much of a guess was
//! right.

use std::io::Write;
use std::path::{Path, PathBuf};

use rand::RngCore;
use subtle::ConstantTimeEq;

use crate::error::ServerError;

/// The file name of the generated token in the config folder.
pub const TOKEN_FILE: &str = "serve-token";

/// Where the token came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenOrigin {
    /// `--token` or `TOOLTRAIL_SERVE_TOKEN`.
    Given,
    /// Generated now or on an earlier start, kept in this file.
    File(PathBuf),
}

/// The server's bearer token.
#[derive(Clone)]
pub struct Token {
    secret: String,
    origin: TokenOrigin,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret itself: this ends up in logs.
        f.debug_struct("Token")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl Token {
    /// The token given on the command line or in the environment.
    pub fn given(secret: impl Into<String>) -> Self {
        Self {
            secret: secret.into(),
            origin: TokenOrigin::Given,
        }
    }

    /// `given` when set and not empty, else the one kept in `config_dir` (made when missing).
    pub fn resolve(given: Option<String>, config_dir: &Path) -> Result<Self, ServerError> {
        match given.filter(|secret| !secret.trim().is_empty()) {
            Some(secret) => Ok(Self::given(secret.trim())),
            None => Self::kept_in(&config_dir.join(TOKEN_FILE)),
        }
    }

    /// The token in `path`, generated and written (owner-only) when the file does not exist.
    pub fn kept_in(path: &Path) -> Result<Self, ServerError> {
        let failed = |action: &'static str| {
            move |source| ServerError::Token {
                path: path.to_path_buf(),
                action,
                source,
            }
        };
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let secret = text.trim().to_string();
                if secret.is_empty() {
                    return Err(ServerError::EmptyToken {
                        path: path.to_path_buf(),
                    });
                }
                return Ok(Self {
                    secret,
                    origin: TokenOrigin::File(path.to_path_buf()),
                });
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(failed("read")(error)),
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(failed("written"))?;
        }
        let secret = generate();
        let mut file = owner_only(path).map_err(failed("written"))?;
        file.write_all(format!("{secret}\n").as_bytes())
            .map_err(failed("written"))?;
        Ok(Self {
            secret,
            origin: TokenOrigin::File(path.to_path_buf()),
        })
    }

    pub fn origin(&self) -> &TokenOrigin {
        &self.origin
    }

    /// Whether an `Authorization` header value carries this token (`Bearer <token>`).
    pub fn admits(&self, authorization: Option<&[u8]>) -> bool {
        let Some(value) = authorization else {
            return false;
        };
        let Some(presented) = strip_bearer(value) else {
            return false;
        };
        // ct_eq compares lengths first (which only says how long the token is), then every
        // byte whatever the first difference.
        presented.ct_eq(self.secret.as_bytes()).into()
    }
}

fn strip_bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| rest.trim_ascii())
}

/// 32 random bytes as hex, prefixed so that a leaked token is recognisable.
fn generate() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("tt_{hex}")
}

/// Creates `path` for writing, readable by its owner only, failing if it exists (another
/// process racing us keeps its token, and we read it on the next start). On Windows the file
/// takes the ACL of the config folder, `%APPDATA%` in the user's own profile, which keeps other
/// users out; a `TOOLTRAIL_CONFIG_DIR` elsewhere keeps that folder's.
fn owner_only(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_generated_token_is_kept_owner_only_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let first = Token::resolve(None, dir.path()).unwrap();
        let path = dir.path().join(TOKEN_FILE);
        assert_eq!(first.origin(), &TokenOrigin::File(path.clone()));
        assert!(first.secret.starts_with("tt_") && first.secret.len() == 67);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let again = Token::resolve(Some("  ".into()), dir.path()).unwrap();
        assert_eq!(again.secret, first.secret);
    }

    #[test]
    fn only_the_exact_bearer_token_is_admitted() {
        let token = Token::given("s3cret");
        assert!(token.admits(Some(b"Bearer s3cret")));
        assert!(token.admits(Some(b"bearer s3cret ")));
        for wrong in [
            &b"Bearer s3cre"[..],
            b"Bearer s3cret2",
            b"Basic s3cret",
            b"s3cret",
            b"",
        ] {
            assert!(!token.admits(Some(wrong)), "{wrong:?}");
        }
        assert!(!token.admits(None));
        assert_eq!(format!("{token:?}"), "Token { origin: Given, .. }");
    }
}

//! The model hub: where a pull's file is, and what the hub says about it before the download.
//!
//! The hub follows Hugging Face's conventions: its base URL is `HF_ENDPOINT` (default
//! `https://huggingface.co`, or a mirror), a file is at `{endpoint}/{repo}/resolve/{revision}/
//! {file}`, and a token in `HF_TOKEN` is sent to the hub (never to the CDN it redirects to). For
//! a file in large-file storage, which every GGUF is, the hub answers a `HEAD` of that URL with a
//! redirect to its CDN and, on that redirect, the file's SHA-256 (`X-Linked-Etag`) and size
//! (`X-Linked-Size`); following the redirect would lose them, so the `HEAD` does not follow it.

use std::time::Duration;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::{HeaderMap, LOCATION};
use reqwest::{StatusCode, Url};

use crate::models::{Catalogue, CatalogueEntry, ModelError, hub_path, names};

/// Names the hub's base URL, as every Hugging Face client reads it.
pub const HF_ENDPOINT_ENV: &str = "HF_ENDPOINT";
/// Holds a hub token, for gated and private repositories.
pub const HF_TOKEN_ENV: &str = "HF_TOKEN";
/// The hub when `HF_ENDPOINT` is not set.
pub const DEFAULT_HUB: &str = "https://huggingface.co";

/// A file on the hub: a repository, a revision (a branch, tag or commit) and a path in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubFileRef {
    /// `owner/name`.
    pub repo: String,
    pub revision: String,
    pub file: String,
}

impl HubFileRef {
    /// `hf.co/owner/name/file`, with `@revision` when it is not `main`: how the file is named to
    /// a user.
    pub fn display(&self) -> String {
        if self.revision == "main" {
            format!("hf.co/{}/{}", self.repo, self.file)
        } else {
            format!("hf.co/{}/{}@{}", self.repo, self.file, self.revision)
        }
    }
}

/// What to pull: a catalogue entry, or any GGUF file on the hub.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelRef {
    Catalogue(CatalogueEntry),
    Hub(HubFileRef),
}

impl ModelRef {
    /// Reads what a user typed: a catalogue name (`qwen3-1.7b`), `hf.co/OWNER/REPO/FILE.gguf`
    /// (`huggingface.co/…` too, and `@REVISION` after the file for a revision other than
    /// `main`), or a file's URL on the hub (`https://huggingface.co/OWNER/REPO/resolve/main/
    /// FILE.gguf`, or the `/blob/` URL of its page). A URL's file is fetched from the hub
    /// `HF_ENDPOINT` names, so that a mirror serves `huggingface.co` links too; a link to any
    /// other host than Hugging Face's or that hub is refused (see [`ModelRef::parse_for`]).
    pub fn parse(text: &str, catalogue: &Catalogue) -> Result<Self, ModelError> {
        let endpoint =
            tooltrail_settings::env(HF_ENDPOINT_ENV).unwrap_or_else(|| DEFAULT_HUB.to_string());
        Self::parse_for(text, catalogue, &endpoint)
    }

    /// [`ModelRef::parse`] for the hub at `endpoint`. A link is taken only when it is Hugging
    /// Face's (`https://huggingface.co`, `https://hf.co`) or has the hub's own origin: a link
    /// to another host names a file somewhere else, and quietly fetching a file of the same
    /// name from the hub instead would not be what the user asked for. The revision and the
    /// file's path must stay inside the repository (see `hub_path.rs`).
    pub fn parse_for(
        text: &str,
        catalogue: &Catalogue,
        endpoint: &str,
    ) -> Result<Self, ModelError> {
        let reference = text.trim();
        let bad = |reason: &str| ModelError::BadReference {
            reference: reference.to_string(),
            reason: reason.to_string(),
        };
        if let Some(entry) = catalogue.get(reference) {
            return Ok(ModelRef::Catalogue(entry.clone()));
        }
        let scheme = ["https", "http"].into_iter().find(|scheme| {
            reference
                .get(..scheme.len() + 3)
                .is_some_and(|start| start.eq_ignore_ascii_case(&format!("{scheme}://")))
        });
        let rest = scheme.map_or(reference, |scheme| &reference[scheme.len() + 3..]);
        let rest = rest.split(['?', '#']).next().unwrap_or(rest);
        let Some((host, path)) = rest.split_once('/') else {
            return Err(bad(
                "it is neither a model of the catalogue nor a file on the hub",
            ));
        };
        let short_form = matches!(
            host.to_ascii_lowercase().as_str(),
            "hf.co" | "huggingface.co" | "www.huggingface.co"
        );
        match scheme {
            None if !short_form => {
                return Err(bad(
                    "it is neither a model of the catalogue nor a file on the hub",
                ));
            }
            None => {}
            Some(scheme) => check_link(scheme, host, endpoint).map_err(|reason| bad(&reason))?,
        }
        let parts: Vec<&str> = path.split('/').collect();
        let (owner, name, revision, file) = match parts.as_slice() {
            [owner, name, "resolve" | "blob", revision, file @ ..] if !file.is_empty() => {
                (*owner, *name, revision.to_string(), file.join("/"))
            }
            [owner, name, file @ ..] if short_form && !file.is_empty() => {
                let file = file.join("/");
                match file.rsplit_once('@') {
                    Some((file, revision)) => {
                        (*owner, *name, revision.to_string(), file.to_string())
                    }
                    None => (*owner, *name, "main".to_string(), file),
                }
            }
            _ => {
                return Err(bad("a file on the hub is named hf.co/OWNER/REPO/FILE.gguf"));
            }
        };
        let valid_part = |part: &str| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        };
        if !valid_part(owner) || !valid_part(name) {
            return Err(bad("a repository is named OWNER/REPO"));
        }
        let file = hub_path::check_file(&file).map_err(|reason| bad(&reason))?;
        let revision = hub_path::check_revision(&revision).map_err(|reason| bad(&reason))?;
        if !file.to_ascii_lowercase().ends_with(".gguf") {
            return Err(bad(
                "Tooltrail runs GGUF files; name a file ending in .gguf (a repository's Files page lists them)",
            ));
        }
        Ok(ModelRef::Hub(HubFileRef {
            repo: format!("{owner}/{name}"),
            revision,
            file,
        }))
    }

    /// The file on the hub.
    pub fn file(&self) -> HubFileRef {
        match self {
            ModelRef::Catalogue(entry) => HubFileRef {
                repo: entry.repo.clone(),
                revision: entry.revision.clone(),
                file: entry.file.clone(),
            },
            ModelRef::Hub(file) => file.clone(),
        }
    }

    /// The name the model gets once installed: the catalogue's, else one made from the file's
    /// name.
    pub fn default_name(&self) -> Result<String, ModelError> {
        match self {
            ModelRef::Catalogue(entry) => Ok(entry.name.clone()),
            ModelRef::Hub(file) => names::from_file_name(&file.file),
        }
    }
}

/// A link is taken when it is Hugging Face's own (https, the usual port, no user name) or has
/// the origin of the hub at `endpoint`; otherwise why not, as the end of a sentence.
fn check_link(scheme: &str, host: &str, endpoint: &str) -> Result<(), String> {
    let link = Url::parse(&format!("{scheme}://{host}/"))
        .map_err(|_| format!("{host} is not a host name a link can have"))?;
    let named = link.host_str().unwrap_or(host).to_string();
    if !link.username().is_empty() || link.password().is_some() {
        return Err(format!(
            "the link carries a user name before its host {named}; Tooltrail takes links to the hub only, written plainly"
        ));
    }
    let huggingface = link.scheme() == "https"
        && link.port().is_none()
        && matches!(
            named.as_str(),
            "hf.co" | "huggingface.co" | "www.huggingface.co"
        );
    let the_hub = Url::parse(endpoint).is_ok_and(|hub| hub_path::same_origin(&link, &hub));
    if huggingface || the_hub {
        return Ok(());
    }
    Err(format!(
        "it is a link to {}, which is not the hub models are pulled from ({endpoint}, set by HF_ENDPOINT); nothing was fetched from it or in its place",
        link.origin().ascii_serialization()
    ))
}

/// What the hub says about a file before it is downloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMetadata {
    /// Where the bytes are: the CDN URL the hub redirects to, or the file's own URL.
    pub download_url: String,
    /// The file's SHA-256 in lower-case hex, when the hub gave it.
    pub sha256: Option<String>,
    pub size: Option<u64>,
}

/// A model hub to pull from.
#[derive(Debug, Clone)]
pub struct Hub {
    endpoint: String,
    /// The endpoint parsed: the origin the token may go to, and no other.
    origin: Url,
    token: Option<String>,
    /// For the `HEAD` that asks where a file is: a minute at most, and no redirect followed,
    /// so that the hub's own headers are seen.
    metadata_client: reqwest::Client,
    /// For the download: no overall time limit, only one between reads. It follows no
    /// redirect by itself either: `get` follows them hop by hop (CDNs redirect further),
    /// deciding at each whether the token goes along.
    download_client: reqwest::Client,
}

impl Hub {
    /// The hub at `endpoint` (its base URL), with a token for gated and private repositories.
    pub fn new(endpoint: &str, token: Option<String>) -> Result<Self, ModelError> {
        let endpoint = endpoint.trim().trim_end_matches('/').to_string();
        let origin = match Url::parse(&endpoint) {
            Ok(url)
                if matches!(url.scheme(), "http" | "https")
                    && url.username().is_empty()
                    && url.password().is_none() =>
            {
                url
            }
            _ => {
                return Err(ModelError::HubUnreachable {
                    endpoint,
                    reason: "it is not an http:// or https:// URL without a user name".to_string(),
                });
            }
        };
        let client_error = |error: reqwest::Error| ModelError::HubUnreachable {
            endpoint: endpoint.clone(),
            reason: error.to_string(),
        };
        let metadata_client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(15))
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(client_error)?;
        // No overall timeout for a download of gigabytes; a stalled connection is caught by
        // the read timeout and resumed. Redirects are followed by `get` itself, which decides
        // at each hop whether the token goes along.
        let download_client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(15))
            .read_timeout(Duration::from_secs(60))
            .build()
            .map_err(client_error)?;
        Ok(Self {
            endpoint,
            origin,
            token: token.filter(|token| !token.trim().is_empty()),
            metadata_client,
            download_client,
        })
    }

    /// The hub `HF_ENDPOINT` names (default [`DEFAULT_HUB`]), with `HF_TOKEN` when set.
    pub fn from_env() -> Result<Self, ModelError> {
        let endpoint =
            tooltrail_settings::env(HF_ENDPOINT_ENV).unwrap_or_else(|| DEFAULT_HUB.to_string());
        Self::new(&endpoint, tooltrail_settings::env(HF_TOKEN_ENV))
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// `{endpoint}/{repo}/resolve/{revision}/{file}`.
    pub fn file_url(&self, file: &HubFileRef) -> String {
        format!(
            "{}/{}/resolve/{}/{}",
            self.endpoint,
            file.repo,
            encode_path(&file.revision),
            encode_path(&file.file)
        )
    }

    /// Asks the hub where the file's bytes are, and its SHA-256 and size.
    pub(crate) async fn metadata(&self, file: &HubFileRef) -> Result<FileMetadata, ModelError> {
        let mut url = self.file_url(file);
        // The hub redirects within itself for a renamed repository (relative redirects); those
        // are followed, and the first answer that carries the file's headers is used.
        for _ in 0..5 {
            let mut request = self.metadata_client.head(&url);
            if let Some(token) = self.token_for(&url) {
                request = request.bearer_auth(token);
            }
            let response = request
                .send()
                .await
                .map_err(|error| self.unreachable(&error))?;
            let status = response.status();
            let headers = response.headers();
            if status.is_success() {
                return Ok(FileMetadata {
                    download_url: url,
                    sha256: sha256_header(headers),
                    size: size_header(headers, true),
                });
            }
            if status.is_redirection() {
                let Some(location) = headers.get(LOCATION).and_then(|v| v.to_str().ok()) else {
                    return Err(ModelError::HubStatus {
                        status: status.as_u16(),
                        url,
                    });
                };
                let next = Url::parse(&url)
                    .and_then(|base| base.join(location))
                    .map(without_credentials)
                    .map_err(|_| ModelError::HubStatus {
                        status: status.as_u16(),
                        url: url.clone(),
                    })?;
                let sha256 = sha256_header(headers);
                // Within the hub only by origin: `//other.host/…` starts with a slash too.
                let same_hub = hub_path::same_origin(&next, &self.origin);
                if same_hub && sha256.is_none() {
                    url = next.to_string();
                    continue;
                }
                return Ok(FileMetadata {
                    download_url: next.to_string(),
                    sha256,
                    size: size_header(headers, false),
                });
            }
            let error_code = headers
                .get("x-error-code")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            return Err(match (status, error_code.as_str()) {
                (_, "RepoNotFound") => ModelError::NoSuchRepo {
                    repo: file.repo.clone(),
                },
                (_, "GatedRepo") => ModelError::Gated {
                    repo: file.repo.clone(),
                },
                (_, "EntryNotFound" | "RevisionNotFound") | (StatusCode::NOT_FOUND, _) => {
                    ModelError::NoSuchFile {
                        repo: file.repo.clone(),
                        revision: file.revision.clone(),
                        file: file.file.clone(),
                    }
                }
                (StatusCode::UNAUTHORIZED, _) => ModelError::NoSuchRepo {
                    repo: file.repo.clone(),
                },
                (StatusCode::FORBIDDEN, _) => ModelError::Gated {
                    repo: file.repo.clone(),
                },
                _ => ModelError::HubStatus {
                    status: status.as_u16(),
                    url,
                },
            });
        }
        Err(ModelError::HubUnreachable {
            endpoint: self.endpoint.clone(),
            reason: format!("it redirected {url} too many times"),
        })
    }

    /// Starts the download of `url` from byte `from`, following redirects (CDNs redirect
    /// further). The token goes along only to the hub's own origin, decided at each hop, so a
    /// redirect to another origin never carries it. Fails with a reason in a few words.
    pub(crate) async fn get(&self, url: &str, from: u64) -> Result<reqwest::Response, String> {
        let mut url = url.to_string();
        for _ in 0..10 {
            let mut request = self.download_client.get(&url);
            if from > 0 {
                request = request.header(reqwest::header::RANGE, format!("bytes={from}-"));
            }
            if let Some(token) = self.token_for(&url) {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.map_err(|error| error_reason(&error))?;
            if !response.status().is_redirection() {
                return Ok(response);
            }
            let Some(location) = response
                .headers()
                .get(LOCATION)
                .and_then(|value| value.to_str().ok())
            else {
                return Ok(response);
            };
            url = Url::parse(&url)
                .and_then(|base| base.join(location))
                .map(without_credentials)
                .map_err(|_| "the hub redirected to an address that is not a URL".to_string())?
                .to_string();
        }
        Err("the download was redirected too many times".to_string())
    }

    /// The token, when `url` has the hub's origin.
    fn token_for(&self, url: &str) -> Option<&str> {
        let token = self.token.as_deref()?;
        let url = Url::parse(url).ok()?;
        hub_path::same_origin(&url, &self.origin).then_some(token)
    }

    fn unreachable(&self, error: &reqwest::Error) -> ModelError {
        ModelError::HubUnreachable {
            endpoint: self.endpoint.clone(),
            reason: error_reason(error),
        }
    }
}

/// A redirect's target without a user name or password in it: those would go out as
/// credentials of their own (HTTP basic authentication) to wherever the redirect points.
fn without_credentials(mut url: Url) -> Url {
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url
}

/// A transport error in a few words, without the URL (the sentence around it names the hub).
pub(crate) fn error_reason(error: &reqwest::Error) -> String {
    use std::error::Error as _;
    let reason = if error.is_timeout() {
        "it did not answer in time"
    } else if error.is_connect() {
        "the connection was refused or failed"
    } else if error.is_body() || error.is_decode() {
        "the connection broke during the transfer"
    } else {
        "the transfer failed"
    };
    // The innermost cause says what happened on the wire ("connection reset by peer").
    let mut deepest = None;
    let mut source = error.source();
    while let Some(cause) = source {
        deepest = Some(cause.to_string());
        source = cause.source();
    }
    match deepest {
        Some(cause) if !cause.is_empty() => format!("{reason}: {cause}"),
        _ => reason.to_string(),
    }
}

/// The SHA-256 in `X-Linked-Etag`, else in `ETag` when it is one (a small file kept in git has
/// a git hash there instead, which is not a SHA-256 of the file).
fn sha256_header(headers: &HeaderMap) -> Option<String> {
    ["x-linked-etag", "etag"].iter().find_map(|name| {
        let value = headers.get(*name)?.to_str().ok()?;
        let value = value
            .trim()
            .trim_start_matches("W/")
            .trim_matches('"')
            .to_ascii_lowercase();
        names::is_sha256(&value).then_some(value)
    })
}

/// The size in `X-Linked-Size`, else in `Content-Length` when the answer is the file itself.
fn size_header(headers: &HeaderMap, is_file: bool) -> Option<u64> {
    let read = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<u64>().ok();
    read("x-linked-size").or_else(|| {
        if is_file {
            read("content-length")
        } else {
            None
        }
    })
}

/// What a path in a hub URL has percent-encoded: all but RFC 3986's unreserved characters and
/// the `/` between its parts.
const ENCODED_IN_PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encodes a path for a URL, keeping `/` between its parts.
fn encode_path(path: &str) -> String {
    utf8_percent_encode(path, ENCODED_IN_PATH).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn hub(repo: &str, revision: &str, file: &str) -> ModelRef {
        ModelRef::Hub(HubFileRef {
            repo: repo.into(),
            revision: revision.into(),
            file: file.into(),
        })
    }

    #[test]
    fn hub_paths_keep_their_slashes_and_unreserved_characters() {
        assert_eq!(
            encode_path("refs/pr/1/aZ09-_.~ +:?#%ü.gguf"),
            "refs/pr/1/aZ09-_.~%20%2B%3A%3F%23%25%C3%BC.gguf"
        );
    }

    #[test]
    fn references_name_a_catalogue_model_or_a_file_on_the_hub() {
        let catalogue = Catalogue::builtin().unwrap();
        let parse = |text: &str| ModelRef::parse(text, &catalogue).unwrap();
        assert!(
            matches!(parse("qwen3-1.7b"), ModelRef::Catalogue(entry) if entry.name == "qwen3-1.7b")
        );
        assert_eq!(
            parse("hf.co/bartowski/Qwen_Qwen3-1.7B-GGUF/Qwen_Qwen3-1.7B-Q4_K_M.gguf"),
            hub(
                "bartowski/Qwen_Qwen3-1.7B-GGUF",
                "main",
                "Qwen_Qwen3-1.7B-Q4_K_M.gguf"
            )
        );
        assert_eq!(
            parse(
                "https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf?download=true"
            ),
            hub(
                "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
                "main",
                "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
            )
        );
        assert_eq!(
            parse(
                "https://huggingface.co/unsloth/Qwen3-4B-GGUF/blob/22c9fc8/sub/Qwen3-4B-Q4_K_M.gguf"
            ),
            hub(
                "unsloth/Qwen3-4B-GGUF",
                "22c9fc8",
                "sub/Qwen3-4B-Q4_K_M.gguf"
            )
        );
        assert_eq!(
            parse("huggingface.co/a/b/m.gguf@v1.0"),
            hub("a/b", "v1.0", "m.gguf")
        );
    }

    #[test]
    fn references_that_name_nothing_pullable_are_refused_with_a_sentence() {
        let catalogue = Catalogue::builtin().unwrap();
        let error = |text: &str| ModelRef::parse(text, &catalogue).unwrap_err().to_string();
        assert_eq!(
            error("qwen9"),
            "\"qwen9\" is not a model to pull: it is neither a model of the catalogue nor a file \
             on the hub. Give a name from `tooltrail models list`, or a file on the hub as \
             hf.co/OWNER/REPO/FILE.gguf"
        );
        assert!(error("hf.co/a/b/model.safetensors").contains("Tooltrail runs GGUF files"));
        assert!(error("hf.co/a/b").contains("hf.co/OWNER/REPO/FILE.gguf"));
        assert!(error("hf.co/a/b/../x.gguf").contains("cannot go up a folder"));
        assert!(error("example.com/a/b/x.gguf").contains("neither a model of the catalogue"));
    }

    #[test]
    fn attack_hub_references_whose_revision_or_path_climb_out_of_the_repository_are_refused() {
        let catalogue = Catalogue::builtin().unwrap();
        let error = |text: &str| {
            ModelRef::parse_for(text, &catalogue, DEFAULT_HUB)
                .map(|parsed| format!("{parsed:?}"))
                .unwrap_err()
                .to_string()
        };
        for text in [
            "hf.co/a/b/x.gguf@../../other/repo",
            "hf.co/a/b/x.gguf@%2e%2e",
            "hf.co/a/b/x.gguf@main%2f..%2f..",
            "hf.co/a/b/%2e%2e/%2E%2e/x.gguf",
            "hf.co/a/b/..%2fx.gguf",
            "hf.co/a/b/..\\x.gguf",
            "hf.co/a/b//x.gguf",
            "hf.co/a/b/sub//x.gguf",
            "https://huggingface.co/a/b/resolve/../../x.gguf",
            "https://huggingface.co/a/b/resolve/%2e%2e/x.gguf",
            "https://huggingface.co/a/b/resolve/main/%2e%2e/%2e%2e/c/d/resolve/main/x.gguf",
            "https://huggingface.co/a/b/resolve/main//etc/x.gguf",
            "hf.co/%2e%2e/b/x.gguf",
        ] {
            let said = error(text);
            assert!(
                said.starts_with(&format!("{text:?} is not a model to pull: ")),
                "{text}: {said}"
            );
        }
        assert_eq!(
            error("hf.co/a/b/x.gguf@%2E%2e"),
            "\"hf.co/a/b/x.gguf@%2E%2e\" is not a model to pull: a revision cannot go up a folder. \
             Give a name from `tooltrail models list`, or a file on the hub as hf.co/OWNER/REPO/FILE.gguf"
        );
    }

    #[test]
    fn attack_hub_links_to_another_host_are_refused_not_fetched_from_the_hub() {
        let catalogue = Catalogue::builtin().unwrap();
        let parse = |text: &str| ModelRef::parse_for(text, &catalogue, "https://hub.example.com");
        for link in [
            "https://evil.example/a/b/resolve/main/x.gguf",
            "https://huggingface.co.evil.net/a/b/resolve/main/x.gguf",
            "https://huggingface.co@evil.net/a/b/resolve/main/x.gguf",
            "https://hub.example.com.evil.net/a/b/resolve/main/x.gguf",
            "https://hub.example.com@evil.net/a/b/resolve/main/x.gguf",
            "http://huggingface.co/a/b/resolve/main/x.gguf",
            "https://huggingface.co:8443/a/b/resolve/main/x.gguf",
            "http://hub.example.com/a/b/resolve/main/x.gguf",
        ] {
            assert!(parse(link).is_err(), "{link} was taken");
        }
        assert_eq!(
            parse("https://evil.example/a/b/resolve/main/x.gguf")
                .unwrap_err()
                .to_string(),
            "\"https://evil.example/a/b/resolve/main/x.gguf\" is not a model to pull: it is a link \
             to https://evil.example, which is not the hub models are pulled from \
             (https://hub.example.com, set by HF_ENDPOINT); nothing was fetched from it or in its \
             place. Give a name from `tooltrail models list`, or a file on the hub as \
             hf.co/OWNER/REPO/FILE.gguf"
        );
        // Hugging Face's own links, and the hub's (a mirror's), are taken.
        assert_eq!(
            parse("https://hub.example.com/a/b/resolve/v2/x.gguf").unwrap(),
            hub("a/b", "v2", "x.gguf")
        );
        assert_eq!(
            parse("HTTPS://HuggingFace.co/a/b/blob/main/x.gguf").unwrap(),
            hub("a/b", "main", "x.gguf")
        );
    }

    #[test]
    fn file_urls_follow_the_hub_layout() {
        let hub = Hub::new("http://127.0.0.1:9/", None).unwrap();
        let file = HubFileRef {
            repo: "a/b".into(),
            revision: "main".into(),
            file: "dir/My Model+1.gguf".into(),
        };
        assert_eq!(
            hub.file_url(&file),
            "http://127.0.0.1:9/a/b/resolve/main/dir/My%20Model%2B1.gguf"
        );
        assert_eq!(file.display(), "hf.co/a/b/dir/My Model+1.gguf");
    }
}

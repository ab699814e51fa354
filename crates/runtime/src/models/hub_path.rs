//! The parts of a hub reference that become a URL path, checked so that they stay inside the
//! repository, and the origin test that decides where the hub's token may go.
//!
//! A file is fetched from `{endpoint}/{repo}/resolve/{revision}/{file}`. A revision or a file
//! path holding `..` (typed as such, or percent-encoded as `%2e%2e`, or with `%2f` for the
//! slash, or a backslash that some servers read as a slash) would climb out of the repository
//! once the URL is normalised, to wherever on the hub the reference's author chose, with the
//! user's token. So each part is decoded once and must then be a plain name: not empty, not
//! `.` or `..`, no slash, backslash or `%` (a second encoding), no control character.

use reqwest::Url;

/// Why a path part is refused, as the end of a sentence.
pub(crate) fn check_file(file: &str) -> Result<String, String> {
    let decoded = decode_parts(file, "a file's path")?;
    Ok(decoded.join("/"))
}

/// A revision: a branch, a tag or a commit, whose parts are also kept to what git names use.
pub(crate) fn check_revision(revision: &str) -> Result<String, String> {
    let decoded = decode_parts(revision, "a revision")?;
    if decoded.iter().any(|part| {
        !part
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    }) {
        return Err(
            "a revision is a branch, a tag or a commit, of letters, digits, '.', '-' and '_'"
                .to_string(),
        );
    }
    Ok(decoded.join("/"))
}

/// Splits `text` at `/`, decodes each part once, and checks it (see the module's docs).
fn decode_parts(text: &str, what: &str) -> Result<Vec<String>, String> {
    if text.starts_with('/') {
        return Err(format!("{what} cannot start at the hub's root"));
    }
    text.split('/')
        .map(|raw| {
            let part = percent_decode(raw).ok_or_else(|| {
                format!("{what} has a part that is not valid percent-encoded UTF-8")
            })?;
            if part.is_empty() {
                return Err(format!("{what} cannot have an empty part"));
            }
            if part == "." || part == ".." {
                return Err(format!("{what} cannot go up a folder"));
            }
            if part.contains(['/', '\\']) {
                return Err(format!(
                    "{what} cannot hold an encoded slash or a backslash"
                ));
            }
            if part.contains('%') {
                return Err(format!("{what} cannot hold an encoded '%'"));
            }
            if part.chars().any(char::is_control) {
                return Err(format!("{what} cannot hold control characters"));
            }
            Ok(part)
        })
        .collect()
}

/// Decodes `%XX` escapes; `None` for a `%` not followed by two hex digits or bytes that are
/// not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let digits = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(digits, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Whether `url` has the origin of `endpoint` (scheme, host and port, as the URL standard
/// defines it): what decides whether the hub's token may go to it. Not a string prefix:
/// `https://hub.example.com.evil.net` and `https://hub.example.com@evil.net` start with
/// `https://hub.example.com` and are other hosts.
pub(crate) fn same_origin(url: &Url, endpoint: &Url) -> bool {
    url.username().is_empty()
        && url.password().is_none()
        && url.origin().is_tuple()
        && url.origin() == endpoint.origin()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn plain_paths_and_revisions_pass_decoded() {
        assert_eq!(
            check_file("sub/My%20Model+1.gguf"),
            Ok("sub/My Model+1.gguf".into())
        );
        assert_eq!(check_revision("v1.0"), Ok("v1.0".into()));
        assert_eq!(check_revision("refs/pr/1"), Ok("refs/pr/1".into()));
    }

    #[test]
    fn attack_hub_parts_that_climb_out_of_the_repository_are_refused() {
        for file in [
            "../x.gguf",
            "a/../../x.gguf",
            "%2e%2e/x.gguf",
            "%2E%2e/x.gguf",
            "..%2fx.gguf",
            "..%2Fx.gguf",
            "..\\x.gguf",
            "%5c..%5cx.gguf",
            "/etc/x.gguf",
            "a//x.gguf",
            "./x.gguf",
            "%252e%252e/x.gguf",
            "a/%00.gguf",
            "a/%zz.gguf",
        ] {
            assert!(check_file(file).is_err(), "{file} passed");
        }
        for revision in [
            "..", "../../x", "%2e%2e", "main/..", "a\\b", "/main", "", "a b", "..%2f..",
        ] {
            assert!(check_revision(revision).is_err(), "{revision} passed");
        }
        assert_eq!(
            check_file("%2e%2E/x.gguf"),
            Err("a file's path cannot go up a folder".to_string())
        );
        assert_eq!(
            check_revision("main%2f..%2f..%2fother"),
            Err("a revision cannot hold an encoded slash or a backslash".to_string())
        );
    }

    #[test]
    fn attack_hub_origins_are_compared_whole_not_as_prefixes() {
        let hub = Url::parse("https://hub.example.com").unwrap();
        let same = |url: &str| same_origin(&Url::parse(url).unwrap(), &hub);
        assert!(same("https://hub.example.com/a/b/resolve/main/x.gguf"));
        assert!(same("https://hub.example.com:443/x"));
        assert!(!same("https://hub.example.com.evil.net/x"));
        assert!(!same("https://hub.example.com@evil.net/x"));
        assert!(!same("https://user:pass@hub.example.com/x"));
        assert!(!same("http://hub.example.com/x"));
        assert!(!same("https://hub.example.com:8443/x"));
        assert!(!same("https://cdn.example.com/x"));
    }
}

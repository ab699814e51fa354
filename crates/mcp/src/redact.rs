//! Keeping the secrets of `mcp.json` out of everything a person or a file can see.
//!
//! `env` and `headers` values often carry bearer tokens and API keys, written as `${NAME}` so
//! that the key itself stays in the environment. The expanded value goes only where it is
//! meant to go: the server's process environment and the HTTP request. Everywhere else (the
//! listings in text and JSON, `Debug`, errors, the server's stderr as it is kept, and from
//! there the record, exports and spans) a value is shown as it was written, with `${NAME}`
//! unexpanded; a value written without any variable is masked whole, since it may be a token
//! pasted straight into the file.
//!
//! [`ConfigValue`] holds one value both ways and only ever shows the safe one; [`Redactor`]
//! scrubs a server's secret values out of free text it sends back (its stderr, an error that
//! echoes a header, a tool's result), so there is one place that decides what is hidden. Every
//! message a server sends is scrubbed as it comes off the wire ([`Redactor::redact_message`],
//! called by the transport every connection reads through), before the SDK hands any of it on:
//! prompts and their arguments, tools' names, titles, descriptions and schemas, resources and
//! templates, completions, results, errors, notifications, the handshake's instructions, and
//! whatever a later revision of the protocol adds. What
//! counts as secret there is what came from a variable (other than the few every server gets
//! anyway, such as `HOME`), and a value written straight into the file under a name that says
//! it is a credential (`Authorization`, `X-Api-Key`, `GITHUB_TOKEN`); any other value written
//! straight into the file cannot be told from ordinary words (`"production"`), so it is masked
//! in listings but not searched for in text.
//!
//! ```
//! use tooltrail_mcp::ConfigValue;
//!
//! let value = ConfigValue::expand("Bearer ${TOKEN}", &|_| Some("tok-123456".into())).unwrap();
//! assert_eq!(value.expose(), "Bearer tok-123456");
//! assert_eq!(value.shown(), "Bearer ${TOKEN}");
//! assert_eq!(format!("{value:?}"), "\"Bearer ${TOKEN}\"");
//! ```

use std::borrow::Cow;

use rmcp::RoleClient;
use rmcp::service::RxJsonRpcMessage;
use serde::{Serialize, Serializer};
use serde_json::Value;
use tooltrail_protocol::{ToolError, ToolOutput};

/// What a value written without a variable is shown as.
pub const MASK: &str = "********";

/// Secret values shorter than this are not scrubbed from free text: a `"1"` or a `"true"`
/// would blot out ordinary words, and no credential is that short.
const MIN_SCRUBBED: usize = 8;

/// One `env` or `headers` value of `mcp.json`: as written, and as expanded for the server.
#[derive(Clone, PartialEq, Eq)]
pub struct ConfigValue {
    written: String,
    value: String,
    /// The variables the value used: their names and what they expanded to.
    vars: Vec<(String, String)>,
}

impl ConfigValue {
    /// A value written as it is, with no variable in it (masked wherever it is shown).
    pub fn plain(text: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            written: text.clone(),
            value: text,
            vars: Vec::new(),
        }
    }

    /// `written` with each `${NAME}` (or `${env:NAME}`) replaced by `lookup(NAME)`; `Err(NAME)`
    /// for the first variable that is not set. A `$` not followed by `{` is kept as it is.
    pub fn expand(written: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<Self, String> {
        let mut value = String::with_capacity(written.len());
        let mut vars = Vec::new();
        let mut rest = written;
        while let Some(start) = rest.find("${") {
            value.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                value.push_str(&rest[start..]);
                rest = "";
                break;
            };
            let name = &after[..end];
            let name = name.strip_prefix("env:").unwrap_or(name);
            let Some(found) = lookup(name) else {
                return Err(name.to_string());
            };
            value.push_str(&found);
            vars.push((name.to_string(), found));
            rest = &after[end + 1..];
        }
        value.push_str(rest);
        Ok(Self {
            written: written.to_string(),
            value,
            vars,
        })
    }

    /// The value itself. Only for the server: its process environment or its HTTP request.
    pub fn expose(&self) -> &str {
        &self.value
    }

    /// The value as listings, logs and errors may show it: as written when it takes its
    /// secret from a variable, else [`MASK`].
    pub fn shown(&self) -> &str {
        if self.vars.is_empty() && !self.written.is_empty() {
            MASK
        } else {
            &self.written
        }
    }

    /// The token a value written straight into the file holds when its name says it is a
    /// credential (see [`names_a_credential`]): the whole value and, for `Bearer …` or
    /// `Basic …`, its last word, each masked whole. Empty for a value that uses a variable
    /// (its variables are scrubbed instead) or whose name says nothing of a secret.
    pub(crate) fn literal_secrets(&self, name: &str) -> Vec<String> {
        if !self.vars.is_empty() || !names_a_credential(name) {
            return Vec::new();
        }
        let mut found = vec![self.written.clone()];
        if let Some(last) = self.written.split_whitespace().last()
            && last != self.written
        {
            found.push(last.to_string());
        }
        found
    }

    /// The texts to scrub from free text, each with what replaces it: the values of the
    /// variables it used, each by its `${NAME}`. Putting a value in a variable is what marks
    /// it secret; a value written straight into the file cannot be told from ordinary words
    /// (`"production"`), and variables every server gets anyway (`HOME`, `PATH`) are none.
    fn secrets(&self) -> Vec<(String, String)> {
        self.vars
            .iter()
            .filter(|(name, _)| !crate::passed_through::is_shared_with_servers(name))
            .map(|(name, value)| (value.clone(), format!("${{{name}}}")))
            .collect()
    }
}

/// Whether an `env` or `headers` name says its value is a credential (`Authorization`,
/// `X-Api-Key`, `GITHUB_TOKEN`, `DB_PASSWORD`, `Cookie`, …): a value written under such a name
/// without a variable is scrubbed from what the server sends back, as a variable's would be.
pub(crate) fn names_a_credential(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "auth",
        "token",
        "key",
        "secret",
        "password",
        "passwd",
        "cookie",
        "credential",
        "session",
    ]
    .iter()
    .any(|word| name.contains(word))
}

impl From<&str> for ConfigValue {
    fn from(text: &str) -> Self {
        Self::plain(text)
    }
}

impl From<String> for ConfigValue {
    fn from(text: String) -> Self {
        Self::plain(text)
    }
}

impl std::fmt::Debug for ConfigValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.shown(), f)
    }
}

impl Serialize for ConfigValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.shown())
    }
}

/// Scrubs one server's secret values out of text it did not write itself. Cloning shares
/// nothing mutable; an empty one leaves text as it is.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    /// Secret and replacement, longest secret first, so that a token inside a longer value is
    /// not cut out of it before the longer value is.
    secrets: Vec<(String, String)>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.secrets.len())
            .finish()
    }
}

impl Redactor {
    /// A redactor for the secrets `values` took from variables, and for `extra` secrets to
    /// mask whole (an OAuth client secret).
    pub fn new<'a>(
        values: impl IntoIterator<Item = &'a ConfigValue>,
        extra: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let mut secrets: Vec<(String, String)> = values
            .into_iter()
            .flat_map(ConfigValue::secrets)
            .chain(
                extra
                    .into_iter()
                    .map(|secret| (secret.to_string(), MASK.to_string())),
            )
            .filter(|(secret, replacement)| {
                secret.chars().count() >= MIN_SCRUBBED && secret != replacement
            })
            .collect();
        secrets.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        secrets.dedup_by(|a, b| a.0 == b.0);
        Self { secrets }
    }

    /// `text` with every secret replaced by its variable (`${NAME}`) or by [`MASK`].
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for (secret, replacement) in &self.secrets {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), replacement));
            }
        }
        out
    }

    /// A message as the server sent it, with every string in it (keys too) redacted; `None`
    /// when a message that held a secret could not be read back once redacted (a field whose
    /// value the protocol fixes), which is then dropped rather than handed on whole.
    pub fn redact_message(
        &self,
        message: RxJsonRpcMessage<RoleClient>,
    ) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.secrets.is_empty() {
            return Some(message);
        }
        // Most messages hold no secret: look first, in the JSON the message is written as (a
        // secret with a quote or a backslash in it is written escaped there).
        let Ok(text) = serde_json::to_string(&message) else {
            return None;
        };
        let holds = self.secrets.iter().any(|(secret, _)| {
            text.contains(secret.as_str())
                || serde_json::to_string(secret)
                    .is_ok_and(|written| text.contains(written.trim_matches('"')))
        });
        if !holds {
            return Some(message);
        }
        let mut value: Value = serde_json::from_str(&text).ok()?;
        self.redact_value(&mut value);
        serde_json::from_value(value).ok()
    }

    /// Each of `lines`, redacted.
    pub fn redact_all(&self, lines: Vec<String>) -> Vec<String> {
        lines
            .into_iter()
            .map(|line| self.redact(&line).into_owned())
            .collect()
    }

    /// Every string in `value` (keys too), redacted in place.
    pub fn redact_value(&self, value: &mut Value) {
        if self.secrets.is_empty() {
            return;
        }
        match value {
            Value::String(text) => {
                if let Cow::Owned(clean) = self.redact(text) {
                    *text = clean;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.redact_value(item)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut item) in entries {
                    self.redact_value(&mut item);
                    map.insert(self.redact(&key).into_owned(), item);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// A call's result as the model and the record get it: text, data and error message
    /// redacted (a server that answers with its own token keeps it to itself).
    pub fn redact_result(
        &self,
        result: Result<ToolOutput, ToolError>,
    ) -> Result<ToolOutput, ToolError> {
        if self.secrets.is_empty() {
            return result;
        }
        match result {
            Ok(mut output) => {
                if let Cow::Owned(clean) = self.redact(&output.text) {
                    output.text = clean;
                }
                self.redact_value(&mut output.data);
                Ok(output)
            }
            Err(mut error) => {
                if let Cow::Owned(clean) = self.redact(&error.message) {
                    error.message = clean;
                }
                Err(error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const CANARY: &str = "canary-5f1e9c2b7d";

    fn lookup(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some(CANARY.to_string()),
            "SHORT" => Some("1".to_string()),
            _ => None,
        }
    }

    #[test]
    fn attack_secrets_a_variable_is_shown_unexpanded_and_a_literal_masked() {
        let header = ConfigValue::expand("Bearer ${TOKEN}", &lookup).unwrap();
        assert_eq!(header.expose(), format!("Bearer {CANARY}"));
        assert_eq!(header.shown(), "Bearer ${TOKEN}");
        let braced = ConfigValue::expand("${env:TOKEN}", &lookup).unwrap();
        assert_eq!(braced.expose(), CANARY);
        assert_eq!(braced.shown(), "${env:TOKEN}");
        let literal = ConfigValue::expand(CANARY, &lookup).unwrap();
        assert_eq!(literal.expose(), CANARY);
        assert_eq!(literal.shown(), MASK);
        assert_eq!(ConfigValue::plain("").shown(), "");
        for value in [&header, &braced, &literal] {
            let debug = format!("{value:?} {:#?}", vec![value]);
            let json = serde_json::to_string(value).unwrap();
            assert!(!debug.contains(CANARY), "{debug}");
            assert!(!json.contains(CANARY), "{json}");
        }
    }

    #[test]
    fn variables_expand_only_when_braced_and_unset_ones_are_named() {
        let value = ConfigValue::expand("x${SHORT}y${env:SHORT}", &lookup).unwrap();
        assert_eq!(value.expose(), "x1y1");
        assert_eq!(
            ConfigValue::expand("$A ${", &lookup).unwrap().expose(),
            "$A ${"
        );
        assert_eq!(ConfigValue::expand("${NOPE}", &lookup), Err("NOPE".into()));
    }

    #[test]
    fn attack_secrets_a_token_written_into_mcp_json_under_a_credential_name_is_scrubbed_too() {
        let bearer = ConfigValue::plain(format!("Bearer {CANARY}"));
        let api_key = ConfigValue::plain("literal-api-key-0042");
        let region = ConfigValue::plain("production-eu-west");
        let mut literal = bearer.literal_secrets("Authorization");
        literal.extend(api_key.literal_secrets("X-Api-Key"));
        literal.extend(region.literal_secrets("X-Region"));
        let redactor = Redactor::new(
            [&bearer, &api_key, &region],
            literal.iter().map(String::as_str),
        );
        assert_eq!(
            redactor.redact(&format!(
                "401 for Authorization: Bearer {CANARY} (token {CANARY}, key \
                 literal-api-key-0042) in production-eu-west"
            )),
            "401 for Authorization: ******** (token ********, key ********) in \
             production-eu-west"
        );
        // A value that uses a variable is scrubbed by its variable, not as a literal.
        let from_var = ConfigValue::expand("Bearer ${TOKEN}", &lookup).unwrap();
        assert!(from_var.literal_secrets("Authorization").is_empty());
    }

    #[test]
    fn attack_secrets_free_text_loses_every_secret_value() {
        let header = ConfigValue::expand("Bearer ${TOKEN}", &lookup).unwrap();
        let literal = ConfigValue::plain("production");
        let short = ConfigValue::expand("${SHORT}", &lookup).unwrap();
        // PATH is given to every server anyway (HOME too, where the OS has one).
        let home =
            ConfigValue::expand("${PATH}:/opt/notes", &|_| Some("/home/alice".into())).unwrap();
        let redactor = Redactor::new([&header, &literal, &short, &home], ["client-secret-xyz"]);
        assert_eq!(
            redactor.redact(&format!(
                "401: bad header Authorization: Bearer {CANARY}; token {CANARY}; \
                 client-secret-xyz; 1 of 1 in production at /home/alice/notes"
            )),
            "401: bad header Authorization: Bearer ${TOKEN}; token ${TOKEN}; ********; \
             1 of 1 in production at /home/alice/notes"
        );
        assert_eq!(
            redactor.redact_all(vec![format!("env TOKEN={CANARY}")]),
            vec!["env TOKEN=${TOKEN}".to_string()]
        );
        assert!(matches!(redactor.redact("nothing here"), Cow::Borrowed(_)));
        let answered = Ok(ToolOutput::new(
            format!("your token is {CANARY}"),
            serde_json::json!({"env": {CANARY: [format!("Bearer {CANARY}"), 3]}}),
        ));
        assert_eq!(
            redactor.redact_result(answered),
            Ok(ToolOutput::new(
                "your token is ${TOKEN}",
                serde_json::json!({"env": {"${TOKEN}": ["Bearer ${TOKEN}", 3]}}),
            ))
        );
        let refused = Err(ToolError::new(
            tooltrail_protocol::ToolErrorCode::Failed,
            format!("bad key {CANARY}"),
        ));
        assert_eq!(
            redactor.redact_result(refused).unwrap_err().message,
            "bad key ${TOKEN}"
        );
        assert_eq!(format!("{redactor:?}"), "Redactor { secrets: 2 }");
    }

    #[test]
    fn attack_secrets_every_message_a_server_sends_is_masked_before_it_is_read() {
        let header = ConfigValue::expand("Bearer ${TOKEN}", &lookup).unwrap();
        let redactor = Redactor::new([&header], []);
        let messages = [
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {
            "description": format!("uses {CANARY}"),
            "messages": [
                {"role": "user", "content": {"type": "text", "text": format!("key {CANARY}")}},
                {"role": "assistant", "content": {"type": "resource", "resource": {
                    "uri": "echo://k", "mimeType": "text/plain", "text": CANARY}}}
            ]}}),
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [{
                "name": "echo", "title": format!("Echo {CANARY}"),
                "description": format!("key {CANARY}"),
                "inputSchema": {"type": "object", "properties": {
                    "text": {"type": "string", "description": CANARY}}}}]}}),
            serde_json::json!({"jsonrpc": "2.0", "id": 3, "result": {"prompts": [{
                "name": "leak", "description": CANARY,
                "arguments": [{"name": "topic", "description": CANARY}]}]}}),
            serde_json::json!({"jsonrpc": "2.0", "id": 4, "result": {"completion": {
                "values": [CANARY, "x"], "total": 2, "hasMore": false}}}),
            serde_json::json!({"jsonrpc": "2.0", "id": 5, "error": {
                "code": -32600, "message": format!("refused {CANARY}")}}),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                "level": "info", "data": {"said": CANARY}}}),
        ];
        for message in messages {
            let read: RxJsonRpcMessage<RoleClient> =
                serde_json::from_value(message.clone()).unwrap();
            let masked = redactor.redact_message(read).unwrap();
            let text = serde_json::to_string(&masked).unwrap();
            assert!(!text.contains(CANARY), "{text}");
            assert!(text.contains("${TOKEN}"), "{text}");
        }
        // A message without a secret is handed on as it came.
        let plain: RxJsonRpcMessage<RoleClient> = serde_json::from_value(
            serde_json::json!({"jsonrpc": "2.0", "id": 6, "result": {"tools": []}}),
        )
        .unwrap();
        let kept = redactor.redact_message(plain.clone()).unwrap();
        assert_eq!(
            serde_json::to_value(kept).unwrap(),
            serde_json::to_value(plain).unwrap()
        );
    }
}

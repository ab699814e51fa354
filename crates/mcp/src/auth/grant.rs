//! How a server's `oauth` in `mcp.json` asks for a sign-in without a person: the grant, and
//! where each of its secrets is read from. The sign-in itself is `machine.rs`.
//!
//! ```json
//! "oauth": {"grant": "client_credentials", "client_id": "reports-bot",
//!           "client_secret": "${REPORTS_SECRET}"}
//! "oauth": {"grant": "client_credentials", "client_id": "reports-bot",
//!           "private_key": {"file": "/etc/tooltrail/reports-bot.pem"}, "signing_algorithm": "ES256"}
//! "oauth": {"grant": "enterprise", "client_id": "mcp-client", "client_secret": {"keychain": "mcp-client"},
//!           "identity_provider": {"issuer": "https://idp.example.com",
//!                                 "token_endpoint": "https://idp.example.com/oauth2/token",
//!                                 "client_id": "tooltrail"},
//!           "id_token": "${IDP_ID_TOKEN}"}
//! "oauth": {"grant": "jwt_bearer", "client_id": "workload",
//!           "assertion": {"file": "/var/run/secrets/tokens/mcp"}}
//! ```
//!
//! A secret (`client_secret`, `private_key`, `id_token`, `assertion`, the identity provider's
//! `client_secret`) is one of: a string, as written or with `${NAME}` read from the environment
//! when `mcp.json` is read; `{"keychain": "NAME"}`, the OS keychain's entry `mcp-secret:NAME`
//! (service `tooltrail`), read at each sign-in; `{"file": "PATH"}`, read at each sign-in (a
//! workload's token file that its platform renews). Nothing here is ever serialized or shown:
//! listings say which grant, never a value.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::redact::ConfigValue;

/// The keychain account of a `{"keychain": NAME}` secret.
pub fn keychain_account(name: &str) -> String {
    format!("mcp-secret:{name}")
}

/// Where one secret of a grant is read from.
#[derive(Clone, PartialEq, Eq)]
pub enum Secret {
    /// Written in `mcp.json`, or read from the environment when it was read.
    Value(String),
    /// The OS keychain's entry `mcp-secret:NAME`.
    Keychain(String),
    /// A file, read at each sign-in.
    File(PathBuf),
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Value(_) => f.write_str("Value(********)"),
            Self::Keychain(name) => write!(f, "Keychain({name:?})"),
            Self::File(path) => write!(f, "File({path:?})"),
        }
    }
}

impl Secret {
    /// The value written in `mcp.json`, if that is where it is (for scrubbing it).
    pub fn written(&self) -> Option<&str> {
        match self {
            Self::Value(value) => Some(value),
            Self::Keychain(_) | Self::File(_) => None,
        }
    }
}

/// How the client proves who it is at a token endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientAuth {
    /// A client secret, as HTTP Basic or in the body (`None`: as the server's metadata
    /// prefers, Basic when it names both or neither).
    Secret {
        secret: Secret,
        method: Option<SecretMethod>,
    },
    /// A JWT signed with the client's private key (`private_key_jwt`, RFC 7523).
    PrivateKeyJwt { key: Secret, algorithm: Algorithm },
    /// None: a public client (a workload whose assertion is its proof).
    None,
}

/// `client_secret_basic` or `client_secret_post`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretMethod {
    Basic,
    Post,
}

/// The algorithms a private key may sign the client's assertion with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    ES256,
    ES384,
    RS256,
    RS384,
    RS512,
    PS256,
    EdDSA,
}

impl Algorithm {
    fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "ES256" => Self::ES256,
            "ES384" => Self::ES384,
            "RS256" => Self::RS256,
            "RS384" => Self::RS384,
            "RS512" => Self::RS512,
            "PS256" => Self::PS256,
            "EdDSA" => Self::EdDSA,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::ES256 => "ES256",
            Self::ES384 => "ES384",
            Self::RS256 => "RS256",
            Self::RS384 => "RS384",
            Self::RS512 => "RS512",
            Self::PS256 => "PS256",
            Self::EdDSA => "EdDSA",
        }
    }
}

/// The enterprise identity provider of an enterprise-managed sign-in: where the user's
/// identity token is exchanged for an identity assertion grant (ID-JAG).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdentityProvider {
    pub issuer: String,
    pub token_endpoint: String,
    pub client_id: String,
    #[serde(skip)]
    pub client_secret: Option<Secret>,
}

/// A sign-in without a person, as `mcp.json`'s `"grant"` names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "grant", rename_all = "snake_case")]
pub enum MachineGrant {
    /// The client-credentials extension: the client's own secret or key, nobody else's.
    ClientCredentials {
        #[serde(skip)]
        client: ClientAuth,
    },
    /// Enterprise-managed authorization: an identity token from the enterprise's identity
    /// provider, exchanged there for an ID-JAG, which the MCP server's authorization server
    /// takes as a JWT bearer grant (with the client's own authentication).
    Enterprise {
        identity_provider: IdentityProvider,
        #[serde(skip)]
        id_token: Secret,
        #[serde(skip)]
        client: ClientAuth,
    },
    /// A JWT bearer grant with a workload's own token (workload identity federation).
    JwtBearer {
        #[serde(skip)]
        assertion: Secret,
        #[serde(skip)]
        client: ClientAuth,
    },
}

impl MachineGrant {
    /// How the grant reads in a listing.
    pub fn label(&self) -> &'static str {
        match self {
            Self::ClientCredentials { .. } => "client credentials",
            Self::Enterprise { .. } => "enterprise-managed",
            Self::JwtBearer { .. } => "workload token",
        }
    }

    /// The values written in `mcp.json` (or read from the environment), to scrub them out of
    /// anything a server sends back.
    pub fn written_secrets(&self) -> Vec<&str> {
        fn client(auth: &ClientAuth) -> Option<&Secret> {
            match auth {
                ClientAuth::Secret { secret, .. } => Some(secret),
                ClientAuth::PrivateKeyJwt { key, .. } => Some(key),
                ClientAuth::None => None,
            }
        }
        let secrets: Vec<Option<&Secret>> = match self {
            Self::ClientCredentials { client: auth } => vec![client(auth)],
            Self::Enterprise {
                identity_provider,
                id_token,
                client: auth,
            } => vec![
                client(auth),
                Some(id_token),
                identity_provider.client_secret.as_ref(),
            ],
            Self::JwtBearer {
                assertion,
                client: auth,
            } => vec![client(auth), Some(assertion)],
        };
        secrets
            .into_iter()
            .flatten()
            .filter_map(Secret::written)
            .collect()
    }
}

/// The machine grant of an `oauth` object, `None` when it has no `"grant"` (the browser
/// sign-in). `client_id` is the object's own (required by every grant).
pub fn parse(
    fields: &Map<String, Value>,
    client_id: Option<&str>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<MachineGrant>, String> {
    let grant = match fields.get("grant") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(grant)) => grant.as_str(),
        Some(_) => return Err(GRANTS.into()),
    };
    if client_id.is_none() {
        return Err(format!(
            "has \"grant\": \"{grant}\" without the \"client_id\" the authorization server knows \
             this client by"
        ));
    }
    let client = client_auth(fields, lookup)?;
    Ok(Some(match grant {
        "client_credentials" => {
            if client == ClientAuth::None {
                return Err("has \"grant\": \"client_credentials\" with neither a \
                            \"client_secret\" nor a \"private_key\""
                    .into());
            }
            MachineGrant::ClientCredentials { client }
        }
        "enterprise" => MachineGrant::Enterprise {
            identity_provider: identity_provider(fields, lookup)?,
            id_token: required_secret(fields, "id_token", lookup)?,
            client,
        },
        "jwt_bearer" => MachineGrant::JwtBearer {
            assertion: required_secret(fields, "assertion", lookup)?,
            client,
        },
        _ => return Err(GRANTS.into()),
    }))
}

const GRANTS: &str =
    "field \"grant\" must be \"client_credentials\", \"enterprise\" or \"jwt_bearer\"";

fn client_auth(
    fields: &Map<String, Value>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<ClientAuth, String> {
    let method = match fields.get("token_endpoint_auth_method") {
        None | Some(Value::Null) => None,
        Some(Value::String(method)) => Some(method.as_str()),
        Some(_) => return Err(AUTH_METHODS.into()),
    };
    let client_secret = secret(fields, "client_secret", lookup)?;
    let key = secret(fields, "private_key", lookup)?;
    let algorithm = match fields.get("signing_algorithm") {
        None | Some(Value::Null) => None,
        Some(value) => Some(value.as_str().and_then(Algorithm::parse).ok_or(
            "field \"signing_algorithm\" must be one of ES256, ES384, RS256, RS384, RS512, \
             PS256, EdDSA",
        )?),
    };
    match (client_secret, key, method) {
        (Some(_), Some(_), _) => Err(
            "has both a \"client_secret\" and a \"private_key\": keep the one the \
                 authorization server has registered"
                .into(),
        ),
        (Some(secret), None, None) => Ok(ClientAuth::Secret {
            secret,
            method: None,
        }),
        (Some(secret), None, Some("client_secret_basic")) => Ok(ClientAuth::Secret {
            secret,
            method: Some(SecretMethod::Basic),
        }),
        (Some(secret), None, Some("client_secret_post")) => Ok(ClientAuth::Secret {
            secret,
            method: Some(SecretMethod::Post),
        }),
        (None, Some(key), None | Some("private_key_jwt")) => Ok(ClientAuth::PrivateKeyJwt {
            key,
            algorithm: algorithm.unwrap_or(Algorithm::ES256),
        }),
        (None, None, None | Some("none")) => Ok(ClientAuth::None),
        _ => Err(AUTH_METHODS.into()),
    }
}

const AUTH_METHODS: &str = "field \"token_endpoint_auth_method\" must be \
     \"client_secret_basic\" or \"client_secret_post\" (with a \"client_secret\"), \
     \"private_key_jwt\" (with a \"private_key\") or \"none\"";

fn identity_provider(
    fields: &Map<String, Value>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<IdentityProvider, String> {
    let Some(Value::Object(idp)) = fields.get("identity_provider") else {
        return Err(
            "has \"grant\": \"enterprise\" without an \"identity_provider\" object \
                    (its \"issuer\", \"token_endpoint\" and \"client_id\")"
                .into(),
        );
    };
    let text =
        |field: &str| -> Result<String, String> {
            match idp.get(field) {
                Some(Value::String(value)) if !value.trim().is_empty() => ConfigValue::expand(
                    value, lookup,
                )
                .map(|value| value.expose().to_string())
                .map_err(|var| {
                    format!("field \"identity_provider.{field}\" uses ${{{var}}}, which is not set")
                }),
                _ => Err(format!(
                    "field \"identity_provider.{field}\" must be a string"
                )),
            }
        };
    Ok(IdentityProvider {
        issuer: text("issuer")?,
        token_endpoint: text("token_endpoint")?,
        client_id: text("client_id")?,
        client_secret: secret(idp, "client_secret", lookup)
            .map_err(|what| what.replace("field \"", "field \"identity_provider."))?,
    })
}

fn required_secret(
    fields: &Map<String, Value>,
    field: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Secret, String> {
    secret(fields, field, lookup)?.ok_or_else(|| {
        format!(
            "has no {field:?}: give it as a string (\"${{NAME}}\" reads the environment), \
             {{\"keychain\": \"NAME\"}} or {{\"file\": \"PATH\"}}"
        )
    })
}

/// One secret field: a string (`${NAME}` expanded), `{"keychain": NAME}` or `{"file": PATH}`.
pub fn secret(
    fields: &Map<String, Value>,
    field: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Secret>, String> {
    let shape = || {
        format!(
            "field {field:?} must be a string, {{\"keychain\": \"NAME\"}} or {{\"file\": \"PATH\"}}"
        )
    };
    match fields.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(value)) => ConfigValue::expand(value, lookup)
            .map(|value| Some(Secret::Value(value.expose().to_string())))
            .map_err(|var| format!("field {field:?} uses ${{{var}}}, which is not set")),
        Some(Value::Object(source)) if source.len() == 1 => match source.iter().next() {
            Some((kind, Value::String(name))) if kind == "keychain" && !name.is_empty() => {
                Ok(Some(Secret::Keychain(name.clone())))
            }
            Some((kind, Value::String(path))) if kind == "file" && !path.is_empty() => {
                Ok(Some(Secret::File(PathBuf::from(path))))
            }
            _ => Err(shape()),
        },
        Some(_) => Err(shape()),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn parse_json(value: Value) -> Result<Option<MachineGrant>, String> {
        let Value::Object(fields) = value else {
            unreachable!()
        };
        let lookup = |name: &str| (name == "SECRET").then(|| "from-env".to_string());
        let client_id = fields.get("client_id").and_then(Value::as_str);
        parse(&fields, client_id, &lookup)
    }

    #[test]
    fn each_grant_reads_its_secrets_from_where_mcp_json_says() {
        assert_eq!(parse_json(json!({"client_id": "c"})), Ok(None));
        assert_eq!(
            parse_json(json!({"grant": "client_credentials", "client_id": "c",
                              "client_secret": "${SECRET}"})),
            Ok(Some(MachineGrant::ClientCredentials {
                client: ClientAuth::Secret {
                    secret: Secret::Value("from-env".into()),
                    method: None
                }
            }))
        );
        assert_eq!(
            parse_json(json!({"grant": "client_credentials", "client_id": "c",
                              "private_key": {"file": "/k.pem"}, "signing_algorithm": "RS256"})),
            Ok(Some(MachineGrant::ClientCredentials {
                client: ClientAuth::PrivateKeyJwt {
                    key: Secret::File("/k.pem".into()),
                    algorithm: Algorithm::RS256
                }
            }))
        );
        let enterprise = parse_json(json!({"grant": "enterprise", "client_id": "c",
            "client_secret": {"keychain": "mcp"}, "id_token": "${SECRET}",
            "identity_provider": {"issuer": "https://idp", "token_endpoint": "https://idp/t",
                                  "client_id": "tt"}}))
        .unwrap()
        .unwrap();
        assert_eq!(enterprise.label(), "enterprise-managed");
        assert_eq!(enterprise.written_secrets(), vec!["from-env"]);
        // Nothing secret is listed, nor shown by Debug.
        let shown = format!(
            "{enterprise:?} {}",
            serde_json::to_string(&enterprise).unwrap()
        );
        assert!(!shown.contains("from-env"), "{shown}");
    }

    #[test]
    fn a_grant_that_cannot_work_is_refused_with_a_sentence() {
        for (value, message) in [
            (
                json!({"grant": "client_credentials"}),
                "has \"grant\": \"client_credentials\" without the \"client_id\" the \
                 authorization server knows this client by",
            ),
            (
                json!({"grant": "client_credentials", "client_id": "c"}),
                "has \"grant\": \"client_credentials\" with neither a \"client_secret\" nor a \
                 \"private_key\"",
            ),
            (json!({"grant": "password", "client_id": "c"}), GRANTS),
            (
                json!({"grant": "jwt_bearer", "client_id": "c", "assertion": {"env": "X"}}),
                "field \"assertion\" must be a string, {\"keychain\": \"NAME\"} or \
                 {\"file\": \"PATH\"}",
            ),
            (
                json!({"grant": "jwt_bearer", "client_id": "c", "assertion": "${UNSET}"}),
                "field \"assertion\" uses ${UNSET}, which is not set",
            ),
            (
                json!({"grant": "enterprise", "client_id": "c", "id_token": "t"}),
                "has \"grant\": \"enterprise\" without an \"identity_provider\" object (its \
                 \"issuer\", \"token_endpoint\" and \"client_id\")",
            ),
        ] {
            assert_eq!(parse_json(value), Err(message.to_string()));
        }
    }
}

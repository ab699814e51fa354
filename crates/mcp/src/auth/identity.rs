//! Who signed in, for the "signed in as …" of listings and the app: read from the ID token's
//! claims when the authorization server sent one, else from the token response's own fields.
//! Read for display only: nothing is trusted or decided on it, so the token's signature is not
//! checked.

use base64::Engine;
use rmcp::transport::auth::OAuthTokenResponse;

/// The ID token's claims that name a person, best first.
const ID_TOKEN_CLAIMS: [&str; 4] = ["email", "preferred_username", "name", "sub"];
/// The token response's fields some authorization servers name the person by.
const RESPONSE_FIELDS: [&str; 3] = ["username", "user", "email"];

/// Who signed in, when the tokens say.
pub(super) fn identity_of(tokens: &OAuthTokenResponse) -> Option<String> {
    let extra = &tokens.extra_fields().0;
    if let Some(id_token) = extra.get("id_token").and_then(|v| v.as_str()) {
        let claims = id_token_claims(id_token)?;
        if let Some(value) = first_text(&claims, &ID_TOKEN_CLAIMS) {
            return Some(value);
        }
    }
    RESPONSE_FIELDS
        .iter()
        .find_map(|field| extra.get(*field).and_then(|v| v.as_str()))
        .map(str::to_string)
}

/// The claims of a JWT: its middle part, base64url-decoded JSON. `None` when it is not one.
fn id_token_claims(id_token: &str) -> Option<serde_json::Value> {
    let payload = id_token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The first of `names` that `claims` holds as text.
fn first_text(claims: &serde_json::Value, names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|name| claims.get(*name).and_then(|v| v.as_str()))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_identity_comes_from_the_id_token() {
        let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(br#"{"sub":"123","email":"ada@example.com"}"#);
        let tokens: OAuthTokenResponse = serde_json::from_value(serde_json::json!({
            "access_token": "a", "token_type": "Bearer", "id_token": format!("h.{claims}.s")
        }))
        .unwrap();
        assert_eq!(identity_of(&tokens), Some("ada@example.com".into()));
    }
}

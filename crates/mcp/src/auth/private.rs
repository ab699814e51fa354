//! Telling the user why a sign-in stopped at a host on a private network.
//!
//! The SDK refuses hosts on private networks (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16,
//! 100.64.0.0/10, fc00::/7) that a server's sign-in metadata names, unless the server itself is
//! at such an address: otherwise any server on the internet could have Tooltrail send requests
//! into the user's LAN. It refuses quietly (discovery skips the host and goes on), so once a
//! sign-in has failed we look at what the error and the server's challenge named, and when one
//! of them is a private host, the error says so and names the `mcp.json` opt-in. Nothing here
//! contacts those hosts: literal addresses are classified as written, names by a DNS lookup.

use std::net::IpAddr;
use std::time::Duration;

use reqwest::Url;
use rmcp::transport::auth::AuthError;

/// The sentence for a refused private host.
pub(super) fn refusal(host: &str) -> String {
    format!(
        "the server's sign-in information points to {host}, an address on a private network, \
         which Tooltrail does not contact for this server; if it is on your own network, allow \
         it in mcp.json with \"oauth\": {{\"allow_private_addresses\": true}} in the server's entry"
    )
}

/// A host on a private network that `err` (or the server's `challenge`) names, if any.
pub(super) async fn named_private_host(err: &AuthError, challenge: Option<&str>) -> Option<String> {
    for candidate in candidates(err, challenge) {
        if let Some(host) = private_host(&candidate).await {
            return Some(host);
        }
    }
    None
}

/// What the error and the challenge name: the authorization servers the metadata listed, the
/// URL a discovery request failed on, the hosts quoted in the error's causes (the SDK's
/// "address not allowed" refusals), and the challenge's `resource_metadata`.
fn candidates(err: &AuthError, challenge: Option<&str>) -> Vec<String> {
    let mut found = Vec::new();
    match err {
        AuthError::AuthorizationServersUnavailable {
            authorization_servers,
            ..
        } => found.extend(authorization_servers.iter().cloned()),
        AuthError::DiscoveryRequestFailed { url, .. } => found.push(url.to_string()),
        _ => {}
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(error) = cause {
        found.extend(quoted(&error.to_string()));
        cause = error.source();
    }
    if let Some(challenge) = challenge {
        found.extend(resource_metadata(challenge));
    }
    found
}

/// The backtick-quoted parts of `text`.
fn quoted(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The `resource_metadata` parameter of a `WWW-Authenticate` challenge.
fn resource_metadata(challenge: &str) -> Option<String> {
    let lower = challenge.to_ascii_lowercase();
    let at = lower.find("resource_metadata=")? + "resource_metadata=".len();
    let rest = challenge[at..].trim_start();
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split([',', ' ']).next()?,
    };
    Some(value.to_string())
}

/// `candidate` (a URL or a bare host) when its host is on a private network.
async fn private_host(candidate: &str) -> Option<String> {
    let url = Url::parse(candidate)
        .ok()
        .filter(|url| url.host().is_some())
        .or_else(|| Url::parse(&format!("http://{candidate}")).ok())?;
    let host = url.host_str()?.to_string();
    let private = match host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    {
        Ok(ip) => is_private(ip),
        Err(_) => {
            let port = url.port_or_known_default().unwrap_or(80);
            let lookup = tokio::net::lookup_host((host.as_str(), port));
            match tokio::time::timeout(Duration::from_secs(5), lookup).await {
                Ok(Ok(addresses)) => addresses
                    .into_iter()
                    .any(|address| is_private(address.ip())),
                _ => false,
            }
        }
    };
    private.then_some(host)
}

/// Whether `ip` is on a private network, as the SDK counts them (and the opt-in allows).
fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_private() || (a == 100 && (64..=127).contains(&b))
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_private(IpAddr::V4(v4)),
            None => (v6.segments()[0] & 0xfe00) == 0xfc00,
        },
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[tokio::test]
    async fn attack_signin_private_authorization_servers_are_named_in_the_refusal() {
        let err = AuthError::AuthorizationServersUnavailable {
            resource_metadata_url: Url::parse(
                "https://mcp.example.com/.well-known/oauth-protected-resource",
            )
            .unwrap(),
            authorization_servers: vec![
                "https://login.example.com".into(),
                "http://10.0.0.9:8080/".into(),
            ],
        };
        assert_eq!(
            named_private_host(&err, None).await.as_deref(),
            Some("10.0.0.9")
        );
        assert!(
            refusal("10.0.0.9").contains("\"oauth\": {\"allow_private_addresses\": true}"),
            "{}",
            refusal("10.0.0.9")
        );
        // The SDK's own refusal of an address, quoted in its cause.
        let refused = AuthError::TokenExchangeFailed(
            "OAuth request to `http://192.168.1.20/token` rejected: address not allowed for this resource"
                .into(),
        );
        assert_eq!(
            named_private_host(&refused, None).await.as_deref(),
            Some("192.168.1.20")
        );
        // A challenge pointing at a private metadata document.
        let challenge = r#"Bearer resource_metadata="http://[fd00::5]/prm", scope="a""#;
        assert_eq!(
            named_private_host(&AuthError::NoAuthorizationSupport, Some(challenge))
                .await
                .as_deref(),
            Some("[fd00::5]")
        );
    }

    #[tokio::test]
    async fn public_loopback_and_link_local_hosts_are_not_called_private() {
        for host in [
            "https://login.example.com",
            "http://127.0.0.1:9",
            "http://169.254.169.254/latest",
            "http://[::1]/",
            "http://8.8.8.8/",
        ] {
            assert_eq!(private_host(host).await, None, "{host}");
        }
        assert_eq!(
            private_host("172.16.3.4").await.as_deref(),
            Some("172.16.3.4")
        );
        assert_eq!(
            private_host("http://100.64.1.1").await.as_deref(),
            Some("100.64.1.1")
        );
    }
}

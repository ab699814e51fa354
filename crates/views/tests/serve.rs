//! A view's server over real HTTP on loopback: what it answers, with which headers, and to
//! whom.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use tooltrail_views::{Feature, OpenView, ViewCsp, ViewError, ViewPage, ViewServer};

const PAGE: &str = "<!doctype html><p>hello from the server</p>";

fn server() -> ViewServer {
    ViewServer::new(vec!["tauri://localhost".to_string()])
}

async fn open(csp: Option<ViewCsp>, granted: Vec<Feature>) -> OpenView {
    server()
        .open(ViewPage {
            html: PAGE.to_string(),
            csp,
            granted,
        })
        .await
        .unwrap()
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

#[tokio::test]
async fn the_page_comes_with_its_policies_as_headers() {
    let view = open(None, vec![Feature::Geolocation]).await;
    assert!(view.url.starts_with(&format!("{}/", view.origin)));
    assert!(view.origin.starts_with("http://127.0.0.1:"));

    let response = client()
        .get(&view.url)
        .header("sec-fetch-dest", "iframe")
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), StatusCode::OK);
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_string())
    };
    assert_eq!(
        header("content-type").as_deref(),
        Some("text/html; charset=utf-8")
    );
    let csp = header("content-security-policy").unwrap();
    assert!(csp.starts_with("default-src 'none'; "), "{csp}");
    assert!(csp.contains("connect-src 'none'"), "{csp}");
    assert!(csp.ends_with("frame-ancestors tauri://localhost"), "{csp}");
    let permissions = header("permissions-policy").unwrap();
    assert!(permissions.contains("geolocation=(self)"), "{permissions}");
    assert!(permissions.contains("camera=()"), "{permissions}");
    assert_eq!(header("x-content-type-options").as_deref(), Some("nosniff"));
    assert_eq!(header("cache-control").as_deref(), Some("no-store"));
    assert_eq!(response.text().await.unwrap(), PAGE);
}

#[tokio::test]
async fn attack_views_page_needs_its_token_and_is_served_once() {
    let view = open(None, Vec::new()).await;
    let client = client();
    let wrong = format!("{}/not-the-token/", view.origin);
    assert_eq!(
        client.get(&wrong).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        client
            .get(format!("{}?x=1", view.url))
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        client.post(&view.url).send().await.unwrap().status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
    assert_eq!(
        client
            .get(&view.url)
            .header("sec-fetch-dest", "document")
            .send()
            .await
            .unwrap()
            .status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        client.get(&view.url).send().await.unwrap().status(),
        StatusCode::OK
    );
    // Once served, the page is gone: a second load (another page that learnt the address)
    // gets nothing.
    assert_eq!(
        client.get(&view.url).send().await.unwrap().status(),
        StatusCode::GONE
    );
}

#[tokio::test]
async fn attack_views_wrong_host_header_is_refused() {
    let view = open(None, Vec::new()).await;
    let port = view.origin.rsplit(':').next().unwrap();
    for host in [
        format!("localhost:{port}"),
        format!("evil.example.com:{port}"),
        "127.0.0.1".to_string(),
    ] {
        let response = client()
            .get(&view.url)
            .header("host", &host)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::MISDIRECTED_REQUEST, "{host}");
    }
    // The page is still there for the frame that asks rightly.
    assert_eq!(
        client().get(&view.url).send().await.unwrap().status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn attack_views_a_closed_view_no_longer_answers() {
    let view = open(None, Vec::new()).await;
    let url = view.url.clone();
    view.close();
    let mut refused = false;
    // The server stops as soon as its task next runs.
    for _ in 0..50 {
        if client().get(&url).send().await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(refused, "{url} still answers after the view was closed");
}

#[tokio::test]
async fn attack_views_every_view_gets_a_port_of_its_own() {
    let first = open(None, Vec::new()).await;
    let second = open(None, Vec::new()).await;
    assert_ne!(first.origin, second.origin);
    assert_ne!(first.url, second.url);
    // One view's token is nothing at the other's origin.
    let crossed = format!(
        "{}{}",
        second.origin,
        first.url.trim_start_matches(&first.origin)
    );
    assert_eq!(
        client().get(&crossed).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn declared_domains_reach_the_header_and_refused_ones_are_reported() {
    let csp = ViewCsp {
        connect_domains: vec![
            "https://api.example.com".to_string(),
            "http://127.0.0.1:8080".to_string(),
        ],
        ..ViewCsp::default()
    };
    let view = open(Some(csp), Vec::new()).await;
    assert_eq!(
        view.refused_domains,
        vec!["http://127.0.0.1:8080".to_string()]
    );
    let response = client().get(&view.url).send().await.unwrap();
    let header = response
        .headers()
        .get("content-security-policy")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        header.contains("connect-src 'self' https://api.example.com;"),
        "{header}"
    );
    assert!(!header.contains("8080"), "{header}");
}

#[tokio::test]
async fn attack_views_an_oversized_page_is_refused() {
    let error = server()
        .open(ViewPage {
            html: "x".repeat(tooltrail_views::MAX_PAGE_BYTES + 1),
            csp: None,
            granted: Vec::new(),
        })
        .await
        .unwrap_err();
    assert!(matches!(error, ViewError::TooLarge { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("the view's page is 5242881 bytes"),
        "{error}"
    );
}

/// The OS hands a closed view's port to a later view: the later page comes with
/// `Clear-Site-Data`, so the engine clears what the earlier view kept at that origin (its
/// storage, cookies and cache) before the later page runs.
#[tokio::test]
async fn attack_views_a_later_view_on_a_used_port_starts_with_nothing_of_the_earlier() {
    let view = open(None, Vec::new()).await;
    let response = client()
        .get(&view.url)
        .header("sec-fetch-dest", "iframe")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let clear = response
        .headers()
        .get("clear-site-data")
        .map(|value| value.to_str().unwrap().to_string());
    assert_eq!(
        clear.as_deref(),
        Some("\"cache\", \"cookies\", \"storage\"")
    );
    assert_eq!(tooltrail_views::CLEAR_SITE_DATA, clear.unwrap());
}

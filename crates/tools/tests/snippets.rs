//! The snippet tools against a fake [`SnippetBook`]: saving, replacing, loading, listing,
//! the size cap, the gate, and a context without a book.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use serde_json::json;
use tooltrail_tools::{
    Gate, SnippetBook, SnippetDraft, SnippetEntry, SnippetListing, ToolContext, ToolError,
    ToolErrorCode, ToolOutput, ToolRegistry,
};

/// Snippets in memory; `list` with a query keeps those whose name or content holds it.
#[derive(Default)]
struct FakeBook {
    snippets: Mutex<BTreeMap<String, SnippetDraft>>,
}

impl SnippetBook for FakeBook {
    fn save(&self, draft: &SnippetDraft) -> Result<bool, ToolError> {
        let mut snippets = self.snippets.lock().unwrap();
        Ok(snippets.insert(draft.name.clone(), draft.clone()).is_some())
    }

    fn load(&self, name: &str) -> Result<Option<SnippetEntry>, ToolError> {
        let snippets = self.snippets.lock().unwrap();
        Ok(snippets.get(name).map(|draft| SnippetEntry {
            name: draft.name.clone(),
            language: draft.language.clone(),
            description: draft.description.clone(),
            content: draft.content.clone(),
            updated_ms: 7,
        }))
    }

    fn list(&self, query: Option<&str>, limit: usize) -> Result<Vec<SnippetListing>, ToolError> {
        let snippets = self.snippets.lock().unwrap();
        Ok(snippets
            .values()
            .filter(|draft| {
                query
                    .is_none_or(|query| draft.name.contains(query) || draft.content.contains(query))
            })
            .take(limit)
            .map(|draft| SnippetListing {
                name: draft.name.clone(),
                language: draft.language.clone(),
                description: draft.description.clone(),
                bytes: draft.content.len() as u64,
            })
            .collect())
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
    registry: ToolRegistry,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::open(dir.path())
        .unwrap()
        .with_snippets(Arc::new(FakeBook::default()));
    Fixture {
        _dir: dir,
        ctx,
        registry: ToolRegistry::with_builtins(),
    }
}

impl Fixture {
    async fn call(&self, tool: &str, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
        self.registry.call(tool, &args.to_string(), &self.ctx).await
    }
}

#[tokio::test]
async fn a_saved_snippet_is_listed_loaded_and_replaced_by_name() {
    let fx = fixture();
    let saved = fx
        .call(
            "snippets",
            json!({"action": "save", "name": "retry", "content": "loop { backoff() }", "language": "rust",
                   "description": "retry with backoff"}),
        )
        .await
        .unwrap();
    assert_eq!(
        saved,
        ToolOutput::new(
            "Saved snippet `retry` (18 bytes).",
            json!({"name": "retry", "bytes": 18, "replaced": false})
        )
    );
    fx.call(
        "snippets",
        json!({"action": "save", "name": "build", "content": "make", "language": " "}),
    )
    .await
    .unwrap();

    let listed = fx
        .call("snippets", json!({"action": "list"}))
        .await
        .unwrap();
    assert_eq!(
        listed,
        ToolOutput::new(
            "build\nretry [rust]: retry with backoff",
            json!({"snippets": [
                {"name": "build", "language": null, "description": null, "bytes": 4},
                {"name": "retry", "language": "rust", "description": "retry with backoff", "bytes": 18}
            ], "truncated": false})
        )
    );
    let searched = fx
        .call("snippets", json!({"action": "list", "query": "backoff"}))
        .await
        .unwrap();
    assert_eq!(searched.text, "retry [rust]: retry with backoff");

    let loaded = fx
        .call("snippets", json!({"action": "load", "name": "retry"}))
        .await
        .unwrap();
    assert_eq!(
        loaded,
        ToolOutput::new(
            "snippet `retry` (rust): retry with backoff\nloop { backoff() }",
            json!({"name": "retry", "language": "rust", "description": "retry with backoff",
                   "content": "loop { backoff() }", "updated_ms": 7})
        )
    );

    let replaced = fx
        .call(
            "snippets",
            json!({"action": "save", "name": "retry", "content": "again"}),
        )
        .await
        .unwrap();
    assert_eq!(
        replaced,
        ToolOutput::new(
            "Replaced snippet `retry` (5 bytes); its earlier content is gone.",
            json!({"name": "retry", "bytes": 5, "replaced": true})
        )
    );
    let loaded = fx
        .call("snippets", json!({"action": "load", "name": "retry"}))
        .await
        .unwrap();
    assert_eq!(loaded.text, "snippet `retry`\nagain");
}

#[tokio::test]
async fn missing_snippets_and_empty_lists_are_told_in_words() {
    let fx = fixture();
    assert_eq!(
        fx.call("snippets", json!({"action": "load", "name": "nope"}))
            .await,
        Err(ToolError::new(
            ToolErrorCode::NotFound,
            "no snippet named `nope` is saved for this folder; the action `list` shows those that are"
        ))
    );
    assert_eq!(
        fx.call("snippets", json!({"action": "list"}))
            .await
            .unwrap()
            .text,
        "no snippets are saved for this folder"
    );
    assert_eq!(
        fx.call("snippets", json!({"action": "list", "query": "x"}))
            .await
            .unwrap()
            .text,
        "no snippet of this folder matches `x`"
    );
}

#[tokio::test]
async fn content_over_64_kib_and_blank_names_are_refused() {
    let fx = fixture();
    let big = "x".repeat(64 * 1024 + 1);
    assert_eq!(
        fx.call(
            "snippets",
            json!({"action": "save", "name": "big", "content": big})
        )
        .await,
        Err(ToolError::new(
            ToolErrorCode::TooLarge,
            "the content is 65537 bytes; a snippet holds at most 65536 bytes (64 KiB)"
        ))
    );
    let exact = "x".repeat(64 * 1024);
    assert!(
        fx.call(
            "snippets",
            json!({"action": "save", "name": "exact", "content": exact})
        )
        .await
        .is_ok()
    );
    assert_eq!(
        fx.call(
            "snippets",
            json!({"action": "save", "name": "  ", "content": "x"})
        )
        .await
        .map_err(|error| error.code),
        Err(ToolErrorCode::InvalidArguments)
    );
    assert_eq!(
        fx.call("snippets", json!({"action": "save", "content": "x"}))
            .await
            .map_err(|error| error.code),
        Err(ToolErrorCode::InvalidArguments)
    );
}

#[tokio::test]
async fn without_a_snippet_book_every_snippet_tool_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::open(dir.path()).unwrap();
    let registry = ToolRegistry::with_builtins();
    let expected = Err(ToolError::new(
        ToolErrorCode::Failed,
        "snippets are not available here (no snippet store is open)",
    ));
    for args in [
        json!({"action": "save", "name": "a", "content": "b"}),
        json!({"action": "load", "name": "a"}),
        json!({"action": "list"}),
    ] {
        assert_eq!(
            registry.call("snippets", &args.to_string(), &ctx).await,
            expected,
            "{args}"
        );
    }
}

#[test]
fn saving_a_snippet_runs_without_asking_though_the_spec_says_the_tool_writes() {
    let fx = fixture();
    let tool = fx.registry.get("snippets").unwrap();
    assert!(!tool.spec().read_only);
    assert_eq!(
        tool.gate(
            &json!({"action": "save", "name": "a", "content": "b"}),
            &fx.ctx
        ),
        Gate::ReadOnly
    );
}

#[tokio::test]
async fn an_action_without_the_parameter_it_needs_names_it() {
    let fx = fixture();
    assert_eq!(
        fx.call("snippets", json!({"action": "load"})).await,
        Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            "invalid arguments for snippets: `load` needs the parameter `name`"
        ))
    );
    assert_eq!(
        fx.call("snippets", json!({"action": "save", "name": "a"}))
            .await,
        Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            "invalid arguments for snippets: `save` needs the parameter `content`"
        ))
    );
    let Err(error) = fx.call("snippets", json!({"action": "delete"})).await else {
        panic!("there is no action `delete`");
    };
    assert_eq!(error.code, ToolErrorCode::InvalidArguments);
}

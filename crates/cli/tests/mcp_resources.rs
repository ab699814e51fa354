//! `tooltrail mcp resources|read|prompts` and `tooltrail ask --attach/--prompt/--arg` against
//! the reference server `@modelcontextprotocol/server-everything` (pinned in
//! `tests/mcp/package.json`; installed on first run when missing), with a scripted model that
//! records what each request carries. Without node the tests say so and pass.

#![allow(clippy::unwrap_used)]

use crate::support::mcp as support;

use std::path::Path;
use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{Setup, ask, reference_server, text, tooltrail};
use tooltrail_test_support::{Reply, ScriptedServer};

/// A workspace with one file, and an mcp.json with server-everything as `everything`.
fn setup(entry: &Path) -> Setup {
    Setup::new(
        &[("notes.txt", "alpha\nbeta\n")],
        |_| json!({"mcpServers": {"everything": {"command": "node", "args": [entry, "stdio"]}}}),
        "",
    )
}

fn docs_file(entry: &Path, name: &str) -> String {
    std::fs::read_to_string(entry.parent().unwrap().join("docs").join(name)).unwrap()
}

const INSTRUCTIONS: &str = "demo://resource/static/document/instructions.md";

#[tokio::test]
async fn mcp_resources_read_and_prompts_list_what_the_server_has() {
    let Some(entry) = reference_server("server-everything") else {
        return;
    };
    let setup = setup(&entry);

    let out = tooltrail(&["mcp", "resources", "everything"], &setup).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    assert!(listing.starts_with("resources:\n"), "{listing}");
    assert!(
        listing.contains(&format!(
            "  {INSTRUCTIONS}  instructions.md (text/markdown) — "
        )),
        "{listing}"
    );
    assert!(
        listing.contains("templates:\n  demo://resource/dynamic/text/{resourceId}  Dynamic Text Resource (text/plain)"),
        "{listing}"
    );

    let out = tooltrail(&["mcp", "resources", "everything", "--json"], &setup).await;
    let items: Value = serde_json::from_slice(&out.stdout).unwrap();
    let templates: Vec<&Value> = items
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["template"] == true)
        .collect();
    assert_eq!(templates.len(), 2);

    let out = tooltrail(&["mcp", "read", "everything", INSTRUCTIONS], &setup).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim_end(),
        docs_file(&entry, "instructions.md").trim_end()
    );

    let out = tooltrail(
        &[
            "mcp",
            "read",
            "everything",
            "demo://resource/dynamic/text/0",
        ],
        &setup,
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .starts_with("error: the MCP server \"everything\" failed to read the resource: "),
        "{}",
        text(&out.stderr)
    );

    let out = tooltrail(&["mcp", "prompts", "everything"], &setup).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    assert!(
        listing.contains(
            "everything/args-prompt — A prompt with two arguments, one required and one optional\n  --arg city=… (required): Name of the city\n  --arg state=…\n"
        ),
        "{listing}"
    );
}

/// The messages of the last chat request the model received.
/// The messages of the last request, the first question without the folder's context at its
/// head (which the agent's tests cover): what the user asked, as the model reads it.
fn last_messages(model: &ScriptedServer) -> Vec<Value> {
    let requests = model.chat_requests();
    let mut messages = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let first = messages
        .iter_mut()
        .find(|message| message["role"] == "user")
        .unwrap();
    let content = first["content"].as_str().unwrap().to_string();
    assert!(
        content.starts_with("<context>\nThe project folder is \""),
        "{content}"
    );
    first["content"] = json!(content.split_once("\n</context>\n\n").unwrap().1);
    messages
}

#[tokio::test]
async fn ask_carries_attached_files_and_resources_in_the_question() {
    let Some(entry) = reference_server("server-everything") else {
        return;
    };
    let setup = setup(&entry);
    let model = ScriptedServer::start(vec![Reply::text("Read them.")]).await;
    let out = ask(
        &model,
        &[
            "--no-history",
            "--attach",
            "notes.txt",
            "--attach",
            &format!("everything:{INSTRUCTIONS}"),
            "What do these say?",
        ],
        &setup,
    )
    .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("· attached notes.txt (11 characters)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("· attached everything:{INSTRUCTIONS} (")),
        "{stderr}"
    );
    let messages = last_messages(&model);
    let question = messages.last().unwrap();
    assert_eq!(question["role"], "user");
    let instructions = docs_file(&entry, "instructions.md");
    let expected = format!(
        "<attachment name=\"notes.txt\" source=\"notes.txt\">\nalpha\nbeta\n</attachment>\n\n\
         <attachment name=\"instructions.md\" source=\"everything:{INSTRUCTIONS}\" \
         type=\"text/markdown\">\n{}{}</attachment>\n\nWhat do these say?",
        instructions,
        if instructions.ends_with('\n') {
            ""
        } else {
            "\n"
        }
    );
    assert_eq!(untagged(question["content"].as_str().unwrap()), expected);

    // A file outside the folder is refused before the model is asked.
    let out = tooltrail(
        &[
            "ask",
            "--base-url",
            &model.base_url(),
            "--no-history",
            "--attach",
            "/etc/hostname",
            "Hi",
        ],
        &setup,
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("could not attach /etc/hostname"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn attachments_are_cut_to_the_room_the_window_leaves() {
    let Some(entry) = reference_server("server-everything") else {
        return;
    };
    let setup = setup(&entry);
    let big = "word ".repeat(20_000);
    std::fs::write(setup.workspace.join("big.txt"), &big).unwrap();
    let model = ScriptedServer::start(vec![Reply::text("Long.")]).await;
    let out = ask(
        &model,
        &[
            "--no-history",
            "--context-window",
            "16384",
            "--attach",
            "big.txt",
            "How long is it?",
        ],
        &setup,
    )
    .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("· an attachment was cut to fit the model's 16384-token window"),
        "{stderr}"
    );
    // The model got the question whole, with the start of the file: the request fitted, so
    // the turn went on without telling the model its window was full.
    let requests = model.chat_requests();
    assert_eq!(requests.len(), 1);
    let content = untagged(
        last_messages(&model).last().unwrap()["content"]
            .as_str()
            .unwrap(),
    );
    assert!(
        content.ends_with("</attachment>\n\nHow long is it?"),
        "{content}"
    );
    let attached = content
        .split_once(">\n")
        .unwrap()
        .1
        .split_once("\n</attachment>")
        .unwrap()
        .0;
    assert!(attached.ends_with("it would not fit in the model's window]"));
    let kept = attached.split_once("\n[…").unwrap().0;
    assert!(big.starts_with(kept));
    // Half of 16,384 tokens is more than the file; the tools and the answer take their share.
    assert!(
        kept.len() > 4_000 && kept.len() < 3 * 8_192,
        "{}",
        kept.len()
    );
}

#[tokio::test]
async fn ask_starts_from_a_prompt_with_its_arguments() {
    let Some(entry) = reference_server("server-everything") else {
        return;
    };
    let setup = setup(&entry);
    let model = ScriptedServer::start(vec![Reply::text("Rainy."), Reply::text("Noted.")]).await;
    let out = ask(
        &model,
        &[
            "--no-history",
            "--prompt",
            "everything/args-prompt",
            "--arg",
            "city=Portland",
            "--arg",
            "state=Oregon",
            "Answer in one word.",
        ],
        &setup,
    )
    .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("· prompt everything/args-prompt: 1 message(s)"),
        "{stderr}"
    );
    let messages = last_messages(&model);
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "user", "content": "What's weather in Portland, Oregon?\n\nAnswer in one word."})
    );

    // A prompt alone is a question; one with an embedded resource inlines it.
    let out = ask(
        &model,
        &[
            "--no-history",
            "--prompt",
            "everything/resource-prompt",
            "--arg",
            "resourceType=Text",
            "--arg",
            "resourceId=2",
        ],
        &setup,
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let messages = last_messages(&model);
    let user: Vec<&str> = messages
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        user[0],
        "This prompt includes the Text resource with id: 2. Please analyze the following resource:"
    );
    assert!(
        user[1].starts_with(
            "<resource uri=\"demo://resource/dynamic/text/2\">\nResource 2: This is a plaintext resource created at"
        ),
        "{user:?}"
    );

    // A missing required argument is the server's sentence, before the model is asked.
    let requests_before = model.chat_requests().len();
    let out = tooltrail(
        &[
            "ask",
            "--base-url",
            &model.base_url(),
            "--no-history",
            "--prompt",
            "everything/args-prompt",
        ],
        &setup,
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("could not use the prompt everything/args-prompt"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(model.chat_requests().len(), requests_before);
}

/// The `read_resource` calls the record of `setup` holds, as `tooltrail history --json` lists
/// them: (source, status, allowed, by).
async fn recorded_reads(setup: &Setup) -> Vec<(Value, Value, Value, Value)> {
    let out = tooltrail(&["history", "--json", "--tool", "read_resource"], setup).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page: Value = serde_json::from_slice(&out.stdout).unwrap();
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["source"].clone(),
                row["status"].clone(),
                row["approval"]["allowed"].clone(),
                row["approval"]["by"].clone(),
            )
        })
        .collect()
}

/// The text of the tool message the model got back for the call, in the last request.
fn tool_reply(model: &ScriptedServer) -> String {
    last_messages(model)
        .iter()
        .find(|message| message["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A line of instructions.md long enough to tell whether its text got somewhere.
fn instructions_marker(entry: &Path) -> String {
    docs_file(entry, "instructions.md")
        .lines()
        .find(|line| line.len() > 20)
        .unwrap()
        .to_string()
}

/// Runs `tooltrail ask FLAGS "Read it."` in `setup` against a model that has `everything` read
/// the instructions, then answers; what tooltrail printed, and the tool message the model got
/// back for the read.
async fn ask_to_read_the_instructions(setup: &Setup, flags: &[&str]) -> (Output, String) {
    let read = json!({"server": "everything", "uri": INSTRUCTIONS}).to_string();
    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_resource", read.as_str())]),
        Reply::text("Done."),
    ])
    .await;
    let mut args = flags.to_vec();
    args.push("Read it.");
    let out = ask(&model, &args, setup).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reply = tool_reply(&model);
    (out, reply)
}

/// Where a read of `everything` is recorded as coming from.
fn everything_source() -> Value {
    json!({"kind": "mcp", "server": "everything"})
}

/// A recorded read of `everything` with `status`, `allowed` or not by a setting.
fn everything_read(status: &str, allowed: bool) -> (Value, Value, Value, Value) {
    (
        everything_source(),
        json!(status),
        json!(allowed),
        json!({"kind": "setting"}),
    )
}

#[tokio::test]
async fn attack_approvals_read_resource_of_an_ask_server_runs_only_when_the_user_allows() {
    let Some(entry) = reference_server("server-everything") else {
        return;
    };
    // `everything` has no `approval`: the default, "ask".
    let setup = setup(&entry);
    let marker = instructions_marker(&entry);

    // Without a terminal and without --approve, calls that need approval are refused.
    let (out, reply) = ask_to_read_the_instructions(&setup, &[]).await;
    assert!(!reply.contains(&marker), "{reply}");
    assert!(
        !text(&out.stdout).contains(&marker) && !text(&out.stderr).contains(&marker),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        recorded_reads(&setup).await,
        vec![everything_read("denied", false)]
    );

    // Given approval, the resource is read, and recorded as the server's call.
    let (_, reply) = ask_to_read_the_instructions(&setup, &["--approve", "all"]).await;
    assert!(reply.contains(&marker), "{reply}");
    let reads = recorded_reads(&setup).await;
    assert_eq!(reads.len(), 2, "{reads:?}");
    assert!(
        reads.contains(&everything_read("success", true)),
        "{reads:?}"
    );
}

#[tokio::test]
async fn attack_approvals_read_resource_follows_never_and_allow_in_mcp_json() {
    let Some(entry) = reference_server("server-everything") else {
        return;
    };
    let marker = instructions_marker(&entry);
    for (approval, read_it, status) in [("never", false, "denied"), ("allow", true, "success")] {
        let setup = Setup::new(
            &[],
            |_| {
                json!({"mcpServers": {"everything": {
                    "command": "node", "args": [&entry, "stdio"], "approval": approval}}})
            },
            "",
        );
        // --approve deny: only mcp.json's own "allow" lets the read run.
        let (_, reply) = ask_to_read_the_instructions(&setup, &["--approve", "deny"]).await;
        assert_eq!(reply.contains(&marker), read_it, "{approval}");
        let reads = recorded_reads(&setup).await;
        assert_eq!(reads.len(), 1, "{reads:?}");
        assert_eq!(reads[0].0, everything_source());
        assert_eq!(reads[0].1, json!(status), "{approval}");
    }
}

/// `content` with its blocks' nonce taken out of their tags (`<attachment-NONCE …>` as
/// `<attachment …>`), so that the rest can be compared whole.
fn untagged(content: &str) -> String {
    let nonce = content
        .strip_prefix("<attachment-")
        .and_then(|rest| rest.split_once(' '))
        .map(|(nonce, _)| nonce)
        .unwrap_or_else(|| panic!("no tagged block at the head of {content}"));
    assert_eq!(nonce.len(), 16, "{content}");
    content.replace(&format!("attachment-{nonce}"), "attachment")
}

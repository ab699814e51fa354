//! The UI's TypeScript types must match the Rust protocol. This test fails when they drift;
//! `UPDATE_BINDINGS=1 cargo test -p tooltrail-protocol --test bindings` rewrites them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

fn bindings_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/bindings")
}

/// The generated `.ts` files under `dir` (one folder deep), relative and with `/` separators.
fn generated_files(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if path.is_dir() {
            if let Ok(inner) = std::fs::read_dir(&path) {
                for file in inner.flatten() {
                    let file_name = file.file_name().to_string_lossy().into_owned();
                    if file_name.ends_with(".ts") {
                        found.push(format!("{name}/{file_name}"));
                    }
                }
            }
        } else if name.ends_with(".ts") && name != "index.ts" {
            found.push(name);
        }
    }
    found
}

#[test]
fn committed_typescript_bindings_match_the_protocol() {
    let files = tooltrail_protocol::bindings::render().expect("bindings render");
    let dir = bindings_dir();
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::create_dir_all(&dir).expect("create bindings folder");
        for old in generated_files(&dir) {
            std::fs::remove_file(dir.join(old)).expect("remove old binding");
        }
        for (name, text) in &files {
            let path = dir.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("create bindings folder");
            }
            std::fs::write(path, text).expect("write binding");
        }
        let index: String = files
            .iter()
            .map(|(name, _)| {
                let module = name.trim_end_matches(".ts");
                let stem = module.rsplit('/').next().unwrap_or(module);
                format!("export type {{ {stem} }} from \"./{module}\";\n")
            })
            .collect();
        std::fs::write(dir.join("index.ts"), index).expect("write index");
        return;
    }
    let mut stale = Vec::new();
    for (name, text) in &files {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(committed) if &committed == text => {}
            Ok(_) => stale.push(format!("{name} differs")),
            Err(_) => stale.push(format!("{name} is missing")),
        }
    }
    let extra: Vec<String> = generated_files(&dir)
        .into_iter()
        .filter(|name| !files.iter().any(|(generated, _)| generated == name))
        .collect();
    assert!(
        stale.is_empty() && extra.is_empty(),
        "ui/src/bindings is out of date ({:?}; not generated any more: {:?}). Run \
         UPDATE_BINDINGS=1 cargo test -p tooltrail-protocol --test bindings",
        stale,
        extra
    );
}

#[test]
fn events_serialise_with_a_snake_case_type_tag() {
    use tooltrail_protocol::{ApprovalRecord, Event, EventBody, ToolSource, ToolStatus, TurnEnd};
    let event = Event {
        conversation_id: "c".into(),
        turn_id: "t".into(),
        seq: 7,
        time_ms: 1_700_000_000_000,
        body: EventBody::ToolCallFinished {
            round: 1,
            call_id: "call_1".into(),
            tool: "read_file".into(),
            source: ToolSource::Builtin,
            description: "Read a file".into(),
            arguments: serde_json::json!({"path": "README.md"}),
            status: ToolStatus::Success,
            duration_ms: 3,
            result: "1\t# Hi".into(),
            data: None,
            error: None,
            approval: ApprovalRecord::not_needed(),
            truncated_for_model: false,
        },
    };
    let json = serde_json::to_value(&event).unwrap();
    pretty_assertions::assert_eq!(
        json,
        serde_json::json!({
            "conversation_id": "c", "turn_id": "t", "seq": 7, "time_ms": 1_700_000_000_000i64,
            "type": "tool_call_finished", "round": 1, "call_id": "call_1", "tool": "read_file",
            "source": {"kind": "builtin"}, "description": "Read a file",
            "arguments": {"path": "README.md"}, "status": "success", "duration_ms": 3,
            "result": "1\t# Hi", "approval": {"allowed": true, "by": {"kind": "policy"}},
            "truncated_for_model": false
        })
    );
    let back: Event = serde_json::from_value(json).unwrap();
    assert_eq!(back, event);
    let finished = EventBody::TurnFinished {
        reason: TurnEnd::RoundLimit,
        rounds: 11,
        text: String::new(),
    };
    assert_eq!(
        serde_json::to_value(&finished).unwrap()["type"],
        "turn_finished"
    );
    assert_eq!(finished.kind(), "turn_finished");
}

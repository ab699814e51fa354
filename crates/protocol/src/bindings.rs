//! TypeScript bindings for the UI, generated from the Rust types.
//!
//! [`render`] produces every file; the `bindings` test compares them with the committed copies in
//! `ui/src/bindings/` and fails on drift. Run `UPDATE_BINDINGS=1 cargo test -p
//! tooltrail-protocol --test bindings` to rewrite them.

use ts_rs::{Config, TS};

use crate::{
    ApprovalBy, ApprovalRecord, ApprovalReply, ErrorCode, Event, EventBody, Message, ToolCall,
    ToolChoice, ToolError, ToolErrorCode, ToolOutput, ToolProgress, ToolSource, ToolSpec,
    ToolStatus, TurnEnd, Usage,
};

/// Every exported type as `(file name, TypeScript source)`, sorted by file name.
pub fn render() -> Result<Vec<(String, String)>, ts_rs::ExportError> {
    let config = Config::default();
    let mut files = vec![
        file::<ApprovalBy>(&config)?,
        file::<ApprovalRecord>(&config)?,
        file::<ApprovalReply>(&config)?,
        file::<ErrorCode>(&config)?,
        file::<Event>(&config)?,
        file::<EventBody>(&config)?,
        file::<Message>(&config)?,
        file::<ToolCall>(&config)?,
        file::<ToolChoice>(&config)?,
        file::<ToolError>(&config)?,
        file::<ToolErrorCode>(&config)?,
        file::<ToolOutput>(&config)?,
        file::<ToolProgress>(&config)?,
        file::<ToolSource>(&config)?,
        file::<ToolSpec>(&config)?,
        file::<ToolStatus>(&config)?,
        file::<TurnEnd>(&config)?,
        file::<Usage>(&config)?,
    ];
    // `serde_json::Value` is referenced by several types, which import it from this path.
    files.push((
        "serde_json/JsonValue.ts".to_string(),
        <serde_json::Value as TS>::export_to_string(&config)?,
    ));
    files.sort();
    Ok(files)
}

fn file<T: TS + 'static>(config: &Config) -> Result<(String, String), ts_rs::ExportError> {
    Ok((
        format!("{}.ts", T::name(config)),
        T::export_to_string(config)?,
    ))
}

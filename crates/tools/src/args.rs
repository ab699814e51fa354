//! Reading a tool's (already schema-validated) arguments into a typed struct, and running the
//! blocking part of a call off the async runtime.

use serde::de::DeserializeOwned;
use serde_json::Value;
use tooltrail_protocol::{ToolError, ToolErrorCode};

/// Deserialises validated arguments. The schema has already named any bad parameter, so this
/// only fails when a schema is looser than its struct.
pub(crate) fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|err| {
        ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("invalid arguments for {tool}: {err}"),
        )
    })
}

/// Runs file-system work on the blocking pool so that it never stalls the runtime.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| ToolError::new(ToolErrorCode::Failed, "the tool stopped unexpectedly"))?
}

/// Said under a result that found nothing while ignored files were left out: `include_ignored`
/// is not offered up front (see [`Tool::unoffered_parameters`](crate::Tool::unoffered_parameters)),
/// so the result names it where it could change the answer.
pub(crate) fn nothing_found_note(include_ignored: bool) -> &'static str {
    if include_ignored {
        ""
    } else {
        "(files that .gitignore or .ignore leave out were not looked at; `include_ignored: true` \
         looks at them too)\n"
    }
}

/// The parameters the walking tools share and do not offer up front.
pub(crate) const WALK_UNOFFERED: &[&str] = &["include_ignored"];

pub(crate) fn cancelled() -> ToolError {
    ToolError::new(ToolErrorCode::Cancelled, "the call was cancelled")
}

/// A short form of an I/O error for the model: its kind, never the OS text (which may carry
/// system paths).
pub(crate) fn io_error(path: &str, err: &std::io::Error) -> ToolError {
    ToolError::new(ToolErrorCode::Io, format!("`{path}`: {}", err.kind()))
}

//! The status of a recorded call: the protocol's [`ToolStatus`] plus `running`, which only the
//! record has (a call that started and has not finished, or had not when its process died).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use tooltrail_protocol::ToolStatus;
use ts_rs::TS;

use crate::error::StoreError;

/// How a recorded call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Running,
    Success,
    Error,
    Denied,
    Cancelled,
    Timeout,
}

impl CallStatus {
    /// Every status, in the order stats list them.
    pub const ALL: [CallStatus; 6] = [
        Self::Running,
        Self::Success,
        Self::Error,
        Self::Denied,
        Self::Cancelled,
        Self::Timeout,
    ];

    /// The stored and printed name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Success => "success",
            Self::Error => "error",
            Self::Denied => "denied",
            Self::Cancelled => "cancelled",
            Self::Timeout => "timeout",
        }
    }

    /// The protocol status, for calls that have ended.
    pub fn finished(self) -> Option<ToolStatus> {
        match self {
            Self::Running => None,
            Self::Success => Some(ToolStatus::Success),
            Self::Error => Some(ToolStatus::Error),
            Self::Denied => Some(ToolStatus::Denied),
            Self::Cancelled => Some(ToolStatus::Cancelled),
            Self::Timeout => Some(ToolStatus::Timeout),
        }
    }
}

impl From<ToolStatus> for CallStatus {
    fn from(status: ToolStatus) -> Self {
        match status {
            ToolStatus::Success => Self::Success,
            ToolStatus::Error => Self::Error,
            ToolStatus::Denied => Self::Denied,
            ToolStatus::Cancelled => Self::Cancelled,
            ToolStatus::Timeout => Self::Timeout,
        }
    }
}

impl fmt::Display for CallStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CallStatus {
    type Err = StoreError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        Self::ALL
            .into_iter()
            .find(|status| status.as_str().eq_ignore_ascii_case(text))
            .ok_or_else(|| StoreError::BadStatus(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_parse_back() {
        for status in CallStatus::ALL {
            assert_eq!(status.as_str().parse::<CallStatus>().unwrap(), status);
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                serde_json::json!(status.as_str())
            );
        }
        assert_eq!("ERROR".parse::<CallStatus>().unwrap(), CallStatus::Error);
        assert!("failed".parse::<CallStatus>().is_err());
    }
}

//! What every request handler shares.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tooltrail_host::Host;
use tooltrail_host::{ApprovalRequest, Approver, Decision};
use tooltrail_protocol::{ApprovalBy, ApprovalReply};
use tooltrail_settings::Overrides;

use crate::metrics::Metrics;
use crate::origin::Origins;
use crate::plan::DefaultTools;
use crate::sessions::Sessions;
use crate::token::Token;

/// What happens to calls that need approval: no person is at the server to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approve {
    /// Denied, with the reason sent to the model (unless a standing rule allows them).
    Deny,
    /// Allowed.
    All,
}

/// The server's approver: a setting, recorded as such with every call it decides.
#[derive(Debug, Clone, Copy)]
pub struct Unattended(pub Approve);

#[async_trait]
impl Approver for Unattended {
    async fn decide(&self, _request: &ApprovalRequest) -> Decision {
        let reply = match self.0 {
            Approve::All => ApprovalReply::AllowOnce,
            Approve::Deny => ApprovalReply::Deny {
                reason: Some(
                    "no one is at the server to approve calls that could change something \
                     (tooltrail serve --approve deny); use read-only tools"
                        .to_string(),
                ),
            },
        };
        Decision {
            reply,
            by: ApprovalBy::Setting,
        }
    }
}

pub struct AppState {
    pub host: Arc<Host>,
    /// The model flags of `tooltrail serve`.
    pub overrides: Overrides,
    pub approve: Approve,
    pub sessions: Arc<Sessions>,
    pub metrics: Arc<Metrics>,
    /// One permit per request being answered (`--max-concurrent`).
    pub slots: Arc<Semaphore>,
    pub max_concurrent: usize,
    pub token: Token,
    /// The `Host` and `Origin` requests may come with (`--allow-origin`).
    pub origins: Origins,
    /// What a request that declares no tools is offered (`--default-tools`).
    pub default_tools: DefaultTools,
    pub body_limit: usize,
    /// Cancelled when shutting down begins: new requests are refused.
    pub draining: CancellationToken,
    /// Cancelled when the drain's time is up: every turn still running stops.
    pub turns: CancellationToken,
}

/// Times one request for the metrics; a request dropped before it was recorded (its client
/// went away) counts as `client_closed`.
pub struct RequestTimer {
    metrics: Arc<Metrics>,
    started: Instant,
    recorded: bool,
}

impl RequestTimer {
    pub fn start(metrics: Arc<Metrics>) -> Self {
        Self {
            metrics,
            started: Instant::now(),
            recorded: false,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn finish(mut self, with_tool_calls: bool, error: Option<&str>) {
        self.record(with_tool_calls, error);
    }

    fn record(&mut self, with_tool_calls: bool, error: Option<&str>) {
        if !self.recorded {
            self.recorded = true;
            self.metrics
                .request(self.started.elapsed(), with_tool_calls, error);
        }
    }
}

impl Drop for RequestTimer {
    fn drop(&mut self) {
        self.record(false, Some("client_closed"));
    }
}

//! What `tooltrail ask` says when the model endpoint cannot be reached, which is what a new
//! user meets first (nothing listens on Ollama's port): the model servers running on this
//! machine, and the ways to a first answer as commands to copy.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tooltrail_host::EventSink;
use tooltrail_protocol::{ErrorCode, Event, EventBody};
use tooltrail_settings::ConfigFile;

use crate::providers_cmd::{look, use_command, ways_forward, where_looked};

/// Whether the turn ended because the endpoint could not be reached; set by the sink that
/// [`Unreachable::watching`] wraps around the screen.
#[derive(Clone, Default)]
pub struct Unreachable(Arc<AtomicBool>);

impl Unreachable {
    /// `screen`, noting the fatal error that says the endpoint could not be reached.
    pub fn watching(&self, screen: Box<dyn EventSink>) -> Box<dyn EventSink> {
        Box::new(Watch {
            screen,
            seen: self.clone(),
        })
    }

    pub fn seen(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

struct Watch {
    screen: Box<dyn EventSink>,
    seen: Unreachable,
}

impl EventSink for Watch {
    fn emit(&self, event: Event) {
        if let EventBody::Error {
            code: ErrorCode::Unreachable,
            fatal: true,
            ..
        } = &event.body
        {
            self.seen.0.store(true, Ordering::Relaxed);
        }
        self.screen.emit(event);
    }
}

/// Looks for model servers (also at the `detect_urls` of the config file at `config_path`) and
/// prints, on stderr, what was found and the ways forward.
pub async fn guide(config_path: &Path) {
    // A config file that cannot be read was already reported; its URLs are then not asked.
    let urls = ConfigFile::read(config_path)
        .map(|file| file.detect_urls)
        .unwrap_or_default();
    let looked = match look(&urls).await {
        Ok(looked) => looked,
        Err(error) => {
            errln!("warning: {error:#}; looking at the usual addresses only");
            match look(&[]).await {
                Ok(looked) => looked,
                Err(_) => return,
            }
        }
    };
    let mut lines = vec![String::new()];
    if looked.found.is_empty() {
        lines.push(format!(
            "No model server answered on this machine ({}). Ways forward:",
            where_looked(&looked)
        ));
        lines.extend(ways_forward(true));
    } else {
        lines.push(format!(
            "Model servers found (in {} ms):",
            looked.took.as_millis()
        ));
        for server in &looked.found {
            let models: Vec<&str> = server.models.iter().map(|m| m.id.as_str()).collect();
            lines.push(format!(
                "  {} at {}{}",
                server.kind.name(),
                server.base_url,
                if models.is_empty() {
                    String::new()
                } else {
                    format!(": {}", models.join(", "))
                }
            ));
        }
        lines.push("To send questions to one:".to_string());
        for server in &looked.found {
            lines.push(format!("  {}", use_command(server)));
        }
        lines.push("Or:".to_string());
        lines.extend(ways_forward(false));
    }
    for line in lines {
        errln!("{line}");
    }
}

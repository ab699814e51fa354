//! What can go wrong with the keychain, in two kinds: none is running, or the one there failed.

/// The keychain's trouble. Callers word it for their own readers; the text here is a fallback.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeychainError {
    /// Nothing answers on the session's D-Bus: no session bus, or no Secret Service on it.
    /// Nothing can be kept until one runs.
    #[error("no system keychain is running")]
    NoService,
    /// The keychain answered with an error (locked, refused, ...), in the platform's words.
    #[error("the system keychain could not be used: {0}")]
    Failed(String),
}

impl KeychainError {
    /// The error a platform's own `detail` stands for: a missing Secret Service is told apart
    /// from every other failure, since its raw D-Bus text helps no one and what to do about it
    /// does.
    pub fn from_platform(detail: impl Into<String>) -> Self {
        let detail = detail.into();
        if no_service(&detail) {
            Self::NoService
        } else {
            Self::Failed(detail)
        }
    }
}

/// Whether the Secret Service's error says that nothing answers on D-Bus: no session bus
/// (`Failed to connect to socket`, X11 autolaunch disabled) or no keychain on it
/// (`org.freedesktop.secrets was not provided`).
fn no_service(detail: &str) -> bool {
    let detail = detail.to_ascii_lowercase();
    detail.contains("dbus error")
        || detail.contains("d-bus")
        || detail.contains("org.freedesktop.dbus.error")
        || detail.contains("org.freedesktop.secrets")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn no_answer_on_d_bus_is_no_service_and_anything_else_keeps_its_words() {
        for detail in [
            "DBus error: Using X11 for dbus-daemon autolaunch was disabled at compile time, set your DBUS_SESSION_BUS_ADDRESS instead",
            "DBus error: Failed to connect to socket /run/user/1000/bus: No such file or directory",
            "DBus error: org.freedesktop.DBus.Error.ServiceUnknown: The name org.freedesktop.secrets was not provided by any .service files",
        ] {
            assert_eq!(
                KeychainError::from_platform(detail),
                KeychainError::NoService,
                "{detail}"
            );
        }
        assert_eq!(
            KeychainError::from_platform("locked"),
            KeychainError::Failed("locked".to_string())
        );
    }
}

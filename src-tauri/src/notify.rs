//! An OS notification for what waits on the user, shown only when the window is in the
//! background: in front, the card in the chat says it already.

use tauri::{AppHandle, Manager};
use tauri_plugin_notification::NotificationExt;

/// Shows `title` and `body` when the main window does not have the focus.
pub fn when_in_background(app: &AppHandle, title: &str, body: &str) {
    let focused = app
        .get_webview_window("main")
        .and_then(|window| window.is_focused().ok())
        .unwrap_or(true);
    if focused {
        return;
    }
    // Without a notification daemon (a bare X server, say) this fails; the card is still there.
    let _ = app.notification().builder().title(title).body(body).show();
}

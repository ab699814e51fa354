//! The main window is created hidden (tauri.conf.json) and shown once the page has built its
//! first screen, so that the first frame drawn is the app and not an empty page: no white flash.
//! On X11 it also spares, in about half of the starts (docs/performance.md), a second
//! whole-window image right after the first, whose buffer stayed for as long as the app ran.
//! A page that never says it is ready (a script that failed to load) is shown all the same
//! after [`AT_THE_LATEST`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tauri::{AppHandle, Manager, Runtime, State, WebviewWindow};

/// How long a silent page keeps the window hidden.
const AT_THE_LATEST: Duration = Duration::from_secs(3);

/// Whether the window has been shown once; later calls leave it as the user has it.
#[derive(Default)]
pub struct FirstShow(AtomicBool);

impl FirstShow {
    /// True the first time only.
    fn claim(&self) -> bool {
        !self.0.swap(true, Ordering::AcqRel)
    }
}

/// Shows the main window after [`AT_THE_LATEST`] if the page has not asked for it by then.
pub fn show_at_the_latest<R: Runtime>(app: &AppHandle<R>) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(AT_THE_LATEST).await;
        if let Some(window) = app.get_webview_window("main") {
            show_once(&window, &app.state::<FirstShow>());
        }
    });
}

fn show_once<R: Runtime>(window: &WebviewWindow<R>, shown: &FirstShow) {
    if !shown.claim() {
        return;
    }
    if let Err(error) = window.show() {
        eprintln!("tooltrail: the window could not be shown: {error}");
    }
    let _ = window.set_focus();
}

/// The page has built its first screen: the window appears with it.
#[tauri::command]
pub fn window_ready(window: WebviewWindow, shown: State<'_, FirstShow>) {
    show_once(&window, &shown);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_shown_by_whichever_comes_first_and_never_again() {
        let shown = FirstShow::default();
        assert!(shown.claim(), "the first call shows the window");
        assert!(
            !shown.claim(),
            "a later call leaves the window as the user has it"
        );
    }
}

//! Recording a turn in the store while it is shown.

use std::sync::atomic::{AtomicBool, Ordering};

use tooltrail_agent::EventSink;
use tooltrail_protocol::Event;
use tooltrail_store::Recorder;

/// Sends each event to the recorder, then to the screen. An event is committed before it is
/// shown, so a crash never loses something the user saw.
pub struct Recorded<'a> {
    pub screen: &'a dyn EventSink,
    pub recorder: &'a Recorder,
    warned: AtomicBool,
}

impl<'a> Recorded<'a> {
    pub fn new(screen: &'a dyn EventSink, recorder: &'a Recorder) -> Self {
        Self {
            screen,
            recorder,
            warned: AtomicBool::new(false),
        }
    }
}

impl EventSink for Recorded<'_> {
    fn emit(&self, event: Event) {
        self.recorder.record(event.clone());
        if let Err(err) = self.recorder.flush()
            && !self.warned.swap(true, Ordering::SeqCst)
        {
            eprintln!("warning: the history could not be written ({err}); the answer goes on");
        }
        self.screen.emit(event);
    }
}

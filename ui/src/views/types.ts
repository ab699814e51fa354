// The types of MCP App views the window uses, named once: the link a call carries to its view,
// the view turn's events, the plan and start of a view (all generated from
// crates/protocol/src/view.rs), and the view's text kept for the next question.
import type { AttachmentSource, EventBody } from "../bindings";

export type { ViewEnd, ViewLink, ViewOutcome, ViewPlan, ViewStart } from "../bindings";

/** The Permission Policy features a view may ask for. */
export type ViewPermission = "camera" | "microphone" | "geolocation" | "clipboard-write";

/** The first event of a view turn. */
export type ViewOpenedBody = Extract<EventBody, { type: "view_opened" }>;

/** The latest `ui/update-model-context` of a view, attached to the next question. */
export type ViewAttachmentSource = Extract<AttachmentSource, { kind: "view" }>;

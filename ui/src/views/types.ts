// The types of MCP App views the window uses, named once: the link a call carries to its view,
// the view turn's events, the plan and start of a view (all generated from
// crates/protocol/src/view.rs), and the view's text kept for the next question.
import type { AttachmentSource, Event, EventBody } from "../bindings";

export type { ViewEnd, ViewLink, ViewOutcome, ViewPlan, ViewStart } from "../bindings";
import type { ViewLink } from "../bindings";

/** The Permission Policy features a view may ask for. */
export type ViewPermission = "camera" | "microphone" | "geolocation" | "clipboard-write";

/** The first and last events of a view turn. */
export type ViewOpenedBody = Extract<EventBody, { type: "view_opened" }>;
export type ViewClosedBody = Extract<EventBody, { type: "view_closed" }>;

/** Every event the chat folds: the model's turns and the views' turns. */
export type ChatEvent = Event;

/** The latest `ui/update-model-context` of a view, attached to the next question. */
export type ViewAttachmentSource = Extract<AttachmentSource, { kind: "view" }>;

/** Any attachment a question may carry. */
export type QuestionAttachment = AttachmentSource;

/** The view link a call's started or finished event carries, whichever bindings are in use. */
export function viewLinkOf(event: object): ViewLink | undefined {
  const view = (event as { view?: unknown }).view;
  if (view && typeof view === "object" && typeof (view as { resource_uri?: unknown }).resource_uri === "string") {
    return { resource_uri: (view as ViewLink).resource_uri };
  }
  return undefined;
}

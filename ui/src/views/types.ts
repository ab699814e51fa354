// The types of MCP App views that the window shares with the Rust side: the link a call carries
// to its view, the view turn's events, the plan and start of a view, and the view's text kept
// for the next question. They mirror crates/protocol/src/view.rs field for field; where the
// generated bindings already carry a type, the union below absorbs it unchanged.
import type { AttachmentSource, Event, JsonValue } from "../bindings";

/** The view a tool has: the `ui://` page its server renders the tool's results with. */
export type ViewLink = { resource_uri: string };

/** Why a view was closed. */
export type ViewEnd = "closed" | "navigated" | "flooded" | "unresponsive" | "server_gone" | "app_closed";

/** The Permission Policy features a view may ask for. */
export type ViewPermission = "camera" | "microphone" | "geolocation" | "clipboard-write";

export type ViewOpenedBody = {
  type: "view_opened";
  parent_turn_id: string;
  parent_call_id: string;
  server: string;
  tool: string;
  resource_uri: string;
  csp: string;
  refused_domains?: string[];
  granted?: string[];
};

export type ViewClosedBody = { type: "view_closed"; reason: ViewEnd };

type Envelope = { conversation_id: string; turn_id: string; seq: number; time_ms: number };

/** The first and last events of a view turn. */
export type ViewEvent = Envelope & (ViewOpenedBody | ViewClosedBody);

/** Every event the chat folds: the turn's own, and those of view turns. */
export type ChatEvent = Event | ViewEvent;

/** What a call's view needs before it can be shown, read and checked by the Rust side. */
export type ViewPlan = {
  view_id: string;
  server: string;
  tool: string;
  resource_uri: string;
  permissions: string[];
  prefers_border?: boolean;
  /** The MCP Tool definition, for the host context's `toolInfo.tool`. */
  tool_info: JsonValue;
  input: JsonValue;
  outcome: ViewOutcome;
};

/** How the call that opened the view ended, as far as it has. */
export type ViewOutcome = { kind: "pending" } | { kind: "result"; result: JsonValue } | { kind: "cancelled"; reason: string };

/** The view's own loopback origin, opened for it. */
export type ViewStart = { url: string; origin: string; csp: string; refused_domains: string[] };

/** The latest `ui/update-model-context` of a view, attached to the next question. */
export type ViewAttachmentSource = { kind: "view"; server: string; tool: string; text: string };

/** Any attachment a question may carry. */
export type QuestionAttachment = AttachmentSource | ViewAttachmentSource;

/** The view link a call's started or finished event carries, whichever bindings are in use. */
export function viewLinkOf(event: object): ViewLink | undefined {
  const view = (event as { view?: unknown }).view;
  if (view && typeof view === "object" && typeof (view as { resource_uri?: unknown }).resource_uri === "string") {
    return { resource_uri: (view as ViewLink).resource_uri };
  }
  return undefined;
}

// The mock's side of MCP App views: a call's plan as the test gives it, the view served from
// the URL the test gives, and the view turn's events sent down the channel start_view opened,
// as the Rust side does (view_opened first, each call the view makes, view_closed last).
import type { Event, EventBody, JsonValue, ViewPlan, ViewStart } from "../src/bindings";

export interface ViewsConfig {
  /** By call id: what prepare_view answers (a rejection when absent). */
  viewPlans?: Record<string, ViewPlan>;
  /** What start_view answers: where the view's page is served. */
  viewStart?: ViewStart;
  /** What view_call_tool answers; a text "12:00" by default. */
  viewToolResult?: JsonValue;
}

interface ChannelLike {
  id: number;
}

interface OpenView {
  channel: ChannelLike;
  next: number;
  seq: number;
  conversationId: string;
  plan: ViewPlan;
  calls: number;
}

type Send = (channelId: number, data: unknown) => void;

const open = new Map<string, OpenView>();
/** By view id: the turn and call whose view it is, as prepare_view was asked. */
const parents = new Map<string, { turnId: string; callId: string }>();

function push(view: OpenView, body: EventBody, send: Send) {
  const event = { conversation_id: view.conversationId, turn_id: view.plan.view_id, seq: view.seq++, time_ms: Date.now(), ...body } as Event;
  send(view.channel.id, { index: view.next++, message: event });
}

/** The answer to one of the view commands, or `undefined` when `cmd` is not one. */
export function viewsCommand(cmd: string, args: Record<string, unknown>, config: ViewsConfig, conversationId: string, send: Send): unknown {
  if (cmd === "prepare_view") {
    const plan = config.viewPlans?.[String(args.callId)];
    if (plan) parents.set(plan.view_id, { turnId: String(args.turnId), callId: String(args.callId) });
    return plan ? plan : Promise.reject({ code: "views", message: "This call has no view." });
  }
  if (cmd === "start_view") {
    const plan = Object.values(config.viewPlans ?? {}).find((known) => known.view_id === args.viewId);
    if (!plan || !config.viewStart) return Promise.reject({ code: "views", message: "This view cannot be started." });
    const view: OpenView = { channel: args.onEvent as ChannelLike, next: 0, seq: 0, conversationId, plan, calls: 0 };
    open.set(plan.view_id, view);
    push(
      view,
      { type: "view_opened", parent_turn_id: parents.get(plan.view_id)?.turnId ?? "", parent_call_id: parents.get(plan.view_id)?.callId ?? "", server: plan.server, tool: plan.tool, resource_uri: plan.resource_uri, csp: config.viewStart.csp, granted: args.granted as string[] },
      send,
    );
    return config.viewStart;
  }
  if (cmd === "view_call_tool") {
    const view = open.get(String(args.viewId));
    if (!view) return Promise.reject({ code: "views", message: "This view is closed." });
    const callId = `${view.plan.view_id}_call_${++view.calls}`;
    const tool = `${view.plan.server}__${String(args.name)}`;
    const source = { kind: "mcp" as const, server: view.plan.server };
    const result = config.viewToolResult ?? { content: [{ type: "text", text: "12:00" }] };
    const approval = { allowed: true, by: { kind: "user" as const } };
    push(view, { type: "tool_call_started", round: 0, call_id: callId, tool, source, description: "", arguments: (args.arguments ?? {}) as JsonValue, approval }, send);
    push(
      view,
      { type: "tool_call_finished", round: 0, call_id: callId, tool, source, description: "", arguments: (args.arguments ?? {}) as JsonValue, status: "success", duration_ms: 3, result: JSON.stringify(result), data: { server: view.plan.server, tool: String(args.name), result }, approval, truncated_for_model: false },
      send,
    );
    return result;
  }
  if (cmd === "view_read_resource") return { contents: [] };
  if (cmd === "close_view") {
    const view = open.get(String(args.viewId));
    if (view) {
      open.delete(String(args.viewId));
      push(view, { type: "view_closed", reason: args.reason as "closed" }, send);
    }
    return null;
  }
  if (cmd === "save_view_file") {
    // Saved as the save dialog would have it: in the user's downloads, under the view's name.
    const file = args.file as { name?: string } | undefined;
    return { path: `/home/user/Downloads/${file?.name ?? "download"}`, bytes: 0 };
  }
  if (cmd === "open_view_link") {
    const url = String(args.url);
    return /^https?:\/\//.test(url) ? null : Promise.reject({ code: "views", message: "Only http and https links are opened." });
  }
  return undefined;
}

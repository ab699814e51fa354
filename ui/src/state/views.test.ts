// The chat's state with MCP App views: a call carries its view, and the calls a view makes hang
// under that call on the timeline without joining any of the model's rounds.
import { describe, expect, it } from "vitest";
import { StreamBuilder } from "../fixtures/stream";
import { VIEW_TOOL, VIEW_URI, turnWithView, viewTurn } from "../fixtures/views";
import { applyEvent, applyEvents, emptyChat, type ChatState } from "./chat";

function both(b: StreamBuilder): ChatState[] {
  // A redraw and a live stream fold the same.
  return [applyEvents(emptyChat, b.events), b.events.reduce(applyEvent, emptyChat)];
}

describe("views in the chat state", () => {
  it("keeps the view a call's result has", () => {
    for (const state of both(turnWithView())) {
      expect(state.calls.call_time?.view).toEqual({ resource_uri: VIEW_URI });
      expect(state.calls.call_time?.server).toBe("basic");
    }
  });

  it("puts a view's calls under their call, after its earlier ones, in no round", () => {
    const b = turnWithView();
    // Another call of the model's in the same turn came after the call with the view.
    const [first] = both(b);
    expect(first!.timeline).toEqual(["call_time"]);
    b.start("turn_2", "And the date?").call(1, 0, "call_later", "read_file", { path: "a" }, "a");
    viewTurn(b, "view_1", "vcall_1");
    viewTurn(b, "view_2", "vcall_2");
    for (const state of both(b)) {
      expect(state.timeline).toEqual(["call_time", "vcall_1", "vcall_2", "call_later"]);
      const call = state.calls.vcall_1!;
      expect(call).toMatchObject({ viewOf: "call_time", viewId: "view_1", round: 0, tool: VIEW_TOOL, phase: "success" });
      expect(state.calls.vcall_2).toMatchObject({ viewOf: "call_time", viewId: "view_2" });
      // No turn for the view, and no round of a turn lists its calls.
      expect(state.turns.map((turn) => turn.id)).toEqual(["turn_1", "turn_2"]);
      const inRounds = state.turns.flatMap((turn) => turn.rounds.flatMap((round) => round.callIds));
      expect(inRounds).not.toContain("vcall_1");
      expect(inRounds).not.toContain("vcall_2");
      expect(state.viewTurns).toEqual({ view_1: "call_time", view_2: "call_time" });
      expect(state.calls.call_time).toMatchObject({ viewId: "view_2", viewEnd: "closed" });
    }
  });

  it("lists a view's call waiting for approval among the waiting ones, and closes it with the view", () => {
    const b = turnWithView();
    b.enter("view_1").push({ type: "view_opened", parent_turn_id: "turn_1", parent_call_id: "call_time", server: "basic", tool: VIEW_TOOL, resource_uri: VIEW_URI, csp: "" });
    b.ask("vcall_1", VIEW_TOOL, {}, "basic__get-time {}", "The view asks to call a tool of its server.");
    const asked = applyEvents(emptyChat, b.events);
    expect(asked.waiting).toEqual(["vcall_1"]);
    expect(asked.calls.vcall_1).toMatchObject({ phase: "waiting", viewOf: "call_time", round: 0 });
    b.tick(5).push({ type: "view_closed", reason: "unresponsive" });
    const closed = applyEvents(emptyChat, b.events);
    expect(closed.waiting).toEqual([]);
    expect(closed.calls.vcall_1?.phase).toBe("cancelled");
    expect(closed.calls.call_time?.viewEnd).toBe("unresponsive");
  });

  it("leaves a view's calls alone when a model turn finishes", () => {
    const b = new StreamBuilder("conv_1", 1_000_000);
    turnWithView(b, "call_time", true);
    // The view opens while the model's turn still runs, and its call is running as the turn ends.
    b.enter("view_1").push({ type: "view_opened", parent_turn_id: "turn_1", parent_call_id: "call_time", server: "basic", tool: VIEW_TOOL, resource_uri: VIEW_URI, csp: "" });
    b.push({ type: "tool_call_started", round: 0, call_id: "vcall_1", tool: VIEW_TOOL, source: { kind: "mcp", server: "basic" }, description: "", arguments: {}, approval: { allowed: true, by: { kind: "user" } } });
    b.enter("turn_1").push({ type: "turn_finished", reason: "cancelled", rounds: 1, text: "" });
    const state = applyEvents(emptyChat, b.events);
    expect(state.calls.call_time?.phase).toBe("cancelled");
    expect(state.calls.vcall_1?.phase).toBe("running");
  });
});

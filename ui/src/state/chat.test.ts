import { describe, expect, it } from "vitest";
import { answeredTurn, approvedAndAnswered, cancelledTurn, failedTurn, manyCalls, StreamBuilder } from "../fixtures/stream";
import { applyEvent, applyEvents, emptyChat, runningTurn, type ChatState } from "./chat";

function replay(b: StreamBuilder): ChatState {
  return b.events.reduce(applyEvent, emptyChat);
}

describe("applyEvent", () => {
  it("leaves the state it was given untouched", () => {
    const b = answeredTurn();
    const before = replay(new StreamBuilder().start("turn_1", "q"));
    const snapshot = JSON.stringify(before);
    applyEvent(before, b.events[2]!);
    expect(JSON.stringify(before)).toBe(snapshot);
  });

  it("starts a turn with the question and the conversation id", () => {
    const state = replay(new StreamBuilder("conv_9").start("turn_1", "What is this?", "qwen3"));
    expect(state.conversationId).toBe("conv_9");
    expect(state.turns).toHaveLength(1);
    expect(state.turns[0]).toMatchObject({ id: "turn_1", question: "What is this?", model: "qwen3", status: "running", rounds: [] });
    expect(runningTurn(state)?.id).toBe("turn_1");
  });

  it("keeps a turn's rounds in order when a later round's event comes first", () => {
    const b = new StreamBuilder("conv_1").start("t", "q").text(1, "one").text(3, "three").text(2, "two").text(5, "five").text(4, "four");
    // One fold (a redraw) and event by event (a live stream) agree.
    for (const state of [applyEvents(emptyChat, b.events), replay(b)]) {
      expect(state.turns[0]!.rounds.map((r) => [r.round, r.text])).toEqual([
        [1, "one"],
        [2, "two"],
        [3, "three"],
        [4, "four"],
        [5, "five"],
      ]);
    }
  });

  it("appends streamed text to its round", () => {
    const state = replay(new StreamBuilder("conv_1", 1_000).start("t", "q").text(1, "Hello, world", 4));
    // The first piece's time is where the waterfall's streaming bar begins.
    expect(state.turns[0]!.rounds).toEqual([{ round: 1, text: "Hello, world", callIds: [], firstOutputMs: 1_000 }]);
  });

  it("shows parallel calls in call order, streaming, running, then finished with durations", () => {
    const b = new StreamBuilder().start("t", "q");
    b.callDelta(1, 0, "a", "read_file", { path: "README.md" });
    b.callDelta(1, 1, "b", "search_text", { pattern: "x" });
    let state = replay(b);
    expect(state.timeline).toEqual(["a", "b"]);
    expect(state.calls.a).toMatchObject({ tool: "read_file", phase: "streaming", argumentsText: '{"path":"README.md"}' });

    b.started(1, "a", "read_file", { path: "README.md" });
    b.started(1, "b", "search_text", { pattern: "x" });
    state = replay(b);
    expect(state.calls.a!.phase).toBe("running");
    expect(state.calls.b!.startedMs).toBeTypeOf("number");

    b.tick(30).finished(1, "b", "search_text", { pattern: "x" }, "error", 30, "bad pattern");
    b.finished(1, "a", "read_file", { path: "README.md" }, "success", 31, "# Demo");
    state = replay(b);
    expect(state.calls.a).toMatchObject({ phase: "success", durationMs: 31, result: "# Demo" });
    expect(state.calls.b).toMatchObject({ phase: "error", durationMs: 30, error: { code: "failed", message: "bad pattern" } });
    expect(state.turns[0]!.rounds[0]!.callIds).toEqual(["a", "b"]);
  });

  it("shows the latest progress of a running call and drops it once the call ends", () => {
    const b = new StreamBuilder().start("t", "q");
    b.callDelta(1, 0, "m", "docs__index", {}).started(1, "m", "docs__index", {});
    b.push({ type: "tool_call_progress", call_id: "m", tool: "docs__index", progress: 1, total: 4 });
    b.push({ type: "tool_call_progress", call_id: "m", tool: "docs__index", progress: 3, total: 4, message: "indexing src" });
    let state = replay(b);
    expect(state.calls.m!.progress).toEqual({ progress: 3, total: 4, message: "indexing src" });
    expect(state.calls.m!.server).toBe("docs");
    b.finished(1, "m", "docs__index", {}, "success", 40, "indexed");
    b.push({ type: "tool_call_progress", call_id: "m", tool: "docs__index", progress: 4, total: 4 });
    state = replay(b);
    expect(state.calls.m).toMatchObject({ phase: "success", progress: { progress: 3, total: 4 } });
  });

  it("names the MCP server of an MCP tool's call, and none for a built-in tool", () => {
    const b = new StreamBuilder().start("t", "q");
    b.callDelta(1, 0, "a", "fs__read_text_file", { path: "README.md" }).callDelta(1, 1, "b", "read_file", { path: "README.md" });
    b.started(1, "a", "fs__read_text_file", { path: "README.md" }).started(1, "b", "read_file", { path: "README.md" });
    b.finished(1, "a", "fs__read_text_file", { path: "README.md" }, "success", 9, "# Demo");
    b.finished(1, "b", "read_file", { path: "README.md" }, "success", 2, "1  # Demo");
    const state = replay(b);
    expect(state.calls.a!.server).toBe("fs");
    expect(state.calls.b!.server).toBeUndefined();
  });

  it("waits for approval, then runs once the user allows it", () => {
    let state = replay(answeredTurn());
    expect(state.waiting).toEqual(["call_bash"]);
    expect(state.calls.call_bash).toMatchObject({
      phase: "waiting",
      ask: { summary: "go vet ./... > vet.txt", cwd: ".", reason: "it writes to a file (redirection)" },
    });
    state = replay(approvedAndAnswered());
    expect(state.waiting).toEqual([]);
    expect(state.calls.call_bash).toMatchObject({ phase: "success", durationMs: 340, approval: { allowed: true, by: { kind: "user" } } });
    expect(state.turns[0]!.status).toBe("completed");
    expect(state.turns[0]!.usage.total_tokens).toBe(540);
    expect(state.turns[0]!.rounds.map((r) => r.round)).toEqual([1, 2, 3]);
  });

  it("keeps a fatal error on its turn", () => {
    const state = replay(failedTurn());
    expect(state.turns[0]).toMatchObject({ status: "error", errors: [{ code: "unreachable", fatal: true }] });
    expect(state.turns[0]!.rounds[0]!.text).toBe("Checking the tests");
  });

  it("marks calls a cancelled turn left behind as cancelled", () => {
    const b = new StreamBuilder().start("t", "q");
    b.callDelta(1, 0, "a", "execute_bash", { command: "sleep 10" }).ask("a", "execute_bash", { command: "sleep 10" }, "sleep 10", "unknown program");
    b.tick(500).finish("cancelled", 1, "");
    const state = replay(b);
    expect(state.calls.a!.phase).toBe("cancelled");
    expect(state.waiting).toEqual([]);
    expect(replay(cancelledTurn()).calls.call_count!.phase).toBe("cancelled");
  });

  it("knows what a call's tool does from its start, so a call stopped while running keeps it", () => {
    const b = new StreamBuilder("conv_1", 1_000).start("t", "q");
    b.callDelta(1, 0, "a", "count_lines", { path: "." }).tick(5).started(1, "a", "count_lines", { path: "." });
    expect(replay(b).calls.a).toMatchObject({ phase: "running", description: "The count_lines tool.", startedMs: 1_005 });
    b.tick(400).finish("cancelled", 1, "");
    expect(replay(b).calls.a).toMatchObject({ phase: "cancelled", description: "The count_lines tool.", startedMs: 1_005, durationMs: 400 });
  });

  it("keeps the description a call stopped while it waited for approval ends with", () => {
    const b = new StreamBuilder("conv_1", 1_000).start("t", "q");
    b.callDelta(1, 0, "a", "execute_bash", { command: "sleep 10" }).ask("a", "execute_bash", { command: "sleep 10" }, "sleep 10", "unknown program");
    b.tick(500).finished(1, "a", "execute_bash", { command: "sleep 10" }, "cancelled", 0, "the user stopped the answer before this call ran");
    expect(replay(b).calls.a).toMatchObject({ phase: "cancelled", description: "The execute_bash tool.", startedMs: 1_500 });
  });

  it("redraws a stored turn, which has the assistant's messages instead of text pieces", () => {
    const b = new StreamBuilder().start("t", "q");
    b.push({ type: "message_added", message: { role: "assistant", content: "", tool_calls: [{ id: "a", name: "read_file", arguments: "{}" }] } });
    b.started(1, "a", "read_file", { path: "x" }).finished(1, "a", "read_file", { path: "x" }, "success", 3, "ok");
    b.push({ type: "message_added", message: { role: "tool", tool_call_id: "a", name: "read_file", content: "ok" } });
    b.push({ type: "message_added", message: { role: "assistant", content: "The answer." } });
    b.finish("completed", 2, "The answer.");
    const state = replay(b);
    expect(state.turns[0]!.rounds.map((r) => [r.round, r.text, r.callIds])).toEqual([
      [1, "", ["a"]],
      [2, "The answer.", []],
    ]);
  });

  it("does not double streamed text when its message follows", () => {
    const b = new StreamBuilder().start("t", "q").text(1, "Hello", 2);
    b.push({ type: "message_added", message: { role: "assistant", content: "Hello" } });
    expect(replay(b).turns[0]!.rounds[0]!.text).toBe("Hello");
  });

  it("notes the round limit", () => {
    const state = replay(new StreamBuilder().start("t", "q").push({ type: "round_limit_reached", limit: 10 }));
    expect(state.turns[0]!.roundLimit).toBe(10);
  });

  it("notes the tool mode, and keeps that the server refused native tools", () => {
    const b = new StreamBuilder().start("t", "q");
    expect(replay(b).turns[0]!.toolMode).toBeUndefined();
    b.push({ type: "tool_mode_used", mode: "prompt", fell_back: true });
    b.push({ type: "tool_mode_used", mode: "prompt", fell_back: false });
    expect(replay(b).turns[0]).toMatchObject({ toolMode: "prompt", toolModeFellBack: true });
  });

  it("ignores a repeated turn_started and events of unknown turns", () => {
    const b = new StreamBuilder().start("t", "q");
    const twice = applyEvents(emptyChat, [...b.events, b.events[0]!]);
    expect(twice.turns).toHaveLength(1);
    const stray = applyEvent(twice, { ...b.events[0]!, turn_id: "nope", type: "text_delta", round: 1, text: "x" } as never);
    expect(stray.turns[0]!.rounds).toEqual([]);
  });

  it("gives the same state whether events come one by one or in a batch", () => {
    const b = approvedAndAnswered();
    b.events.push(...failedTurn(new StreamBuilder()).events);
    expect(applyEvents(emptyChat, b.events)).toEqual(b.events.reduce(applyEvent, emptyChat));
  });

  it("folds ten thousand calls quickly in one batch", () => {
    const events = manyCalls(10_000);
    const start = performance.now();
    const state = applyEvents(emptyChat, events);
    const took = performance.now() - start;
    expect(state.timeline).toHaveLength(10_000);
    // Not a benchmark (scripts/bench-app is); a guard against accidental quadratic folding.
    expect(took).toBeLessThan(5000);
  });
});

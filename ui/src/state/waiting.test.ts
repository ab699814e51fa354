import { describe, expect, it } from "vitest";
import type { Event } from "../bindings";
import { longPromptAnswered, longPromptTurn, StreamBuilder } from "../fixtures/stream";
import { applyEvent, applyEvents, emptyChat, type ChatState } from "./chat";
import { foldLocalStatus, waitAfterEvents, type LocalWait } from "./localWait";

function replay(b: StreamBuilder): ChatState {
  return b.events.reduce(applyEvent, emptyChat);
}

describe("the local model's start, as a question waits for it", () => {
  it("says starting, then preparing, on one clock from the first step", () => {
    const starting = foldLocalStatus(null, { phase: "starting", model: "gemma3-270m" }, 10_000);
    expect(starting).toEqual({ phase: "starting", model: "gemma3-270m", sinceMs: 10_000 });
    const warming = foldLocalStatus(starting, { phase: "warming", model: "gemma3-270m" }, 13_500);
    expect(warming).toEqual({ phase: "warming", model: "gemma3-270m", sinceMs: 10_000 });
  });

  it("is over once the model is ready", () => {
    const warming: LocalWait = { phase: "warming", model: "gemma3-270m", sinceMs: 10_000 };
    expect(foldLocalStatus(warming, { phase: "ready", model: "gemma3-270m", seconds: 4.2 }, 14_200)).toBeNull();
    expect(foldLocalStatus(null, { phase: "ready", model: "gemma3-270m", seconds: 0.1 }, 14_200)).toBeNull();
  });

  it("keeps showing while the turn has only begun, and ends when the turn shows something of its own", () => {
    const wait: LocalWait = { phase: "starting", model: "gemma3-270m", sinceMs: 1 };
    const begun = new StreamBuilder().start("t", "What is here?").context(1, 900, 8_192);
    expect(waitAfterEvents(wait, begun.events)).toBe(wait);
    for (const next of [
      new StreamBuilder().start("t", "q").promptProgress(1, 100, 1_200, 0, 300),
      new StreamBuilder().start("t", "q").text(1, "Hi"),
      new StreamBuilder().start("t", "q").callDelta(1, 0, "c", "read_file", { path: "a" }),
      new StreamBuilder().start("t", "q").error("The local model could not start."),
    ]) {
      expect(waitAfterEvents(wait, next.events.slice(2))).toBeNull();
    }
    expect(waitAfterEvents(null, begun.events)).toBeNull();
  });
});

describe("the prompt's progress in a round", () => {
  it("shows the latest report of the server reading the prompt, before the first token", () => {
    const round = replay(longPromptTurn()).turns[0]!.rounds[0]!;
    expect(round.prompt).toEqual({ processed: 640, total: 1_200, cached: 300, elapsedMs: 1_200 });
    expect(round.text).toBe("");
  });

  it("is gone once the round's text streams", () => {
    const b = longPromptTurn().tick(10).text(1, "A small");
    const round = replay(b).turns[0]!.rounds[0]!;
    expect(round.prompt).toBeUndefined();
    expect(round.text).toBe("A small");
  });

  it("is gone once a call streams", () => {
    const b = longPromptTurn().callDelta(1, 0, "call_1", "list_files", { path: "." });
    expect(replay(b).turns[0]!.rounds[0]!.prompt).toBeUndefined();
  });

  it("ignores a report that comes after the round began to answer", () => {
    const b = longPromptTurn().text(1, "A").promptProgress(1, 1_200, 1_200, 300, 1_900);
    expect(replay(b).turns[0]!.rounds[0]!.prompt).toBeUndefined();
  });

  it("belongs to its round: a later round's reading shows while the first round's answer stays", () => {
    const b = longPromptTurn().text(1, "Looking.").promptProgress(2, 50, 2_000, 1_800, 100);
    const rounds = replay(b).turns[0]!.rounds;
    expect(rounds.map((r) => [r.round, r.prompt?.processed])).toEqual([
      [1, undefined],
      [2, 50],
    ]);
  });

  it("leaves nothing behind in a stored conversation, whose text comes as whole messages", () => {
    // A stored conversation replays its events without the text pieces: the reports, then the
    // assistant's message, then the turn's end.
    const stored = longPromptAnswered().events.filter((event: Event) => event.type !== "text_delta");
    const state = applyEvents(emptyChat, stored);
    expect(state.turns[0]!.status).toBe("completed");
    expect(state.turns[0]!.rounds.map((r) => r.prompt)).toEqual([undefined]);
    expect(state.turns[0]!.rounds[0]!.text).toBe("A small Go service.");
  });

  it("is dropped when the turn ends before the first token", () => {
    const b = longPromptTurn().finish("cancelled", 1, "");
    expect(replay(b).turns[0]!.rounds[0]!.prompt).toBeUndefined();
  });

  it("is not taken for a turn that has ended", () => {
    const b = new StreamBuilder().start("t", "q").finish("error", 1, "").promptProgress(1, 10, 100, 0, 5);
    expect(replay(b).turns[0]!.rounds).toEqual([]);
  });
});

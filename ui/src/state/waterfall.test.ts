import { describe, expect, it } from "vitest";
import { answeredTurn, approvedAndAnswered, StreamBuilder } from "../fixtures/stream";
import { applyEvents, emptyChat } from "./chat";
import { callSegments, modelSegments, placeOnAxis, turnSpan, waitMs, waterfallRows } from "./waterfall";

const T0 = 1_000_000;

describe("waterfall", () => {
  it("gives each turn a head, each round a model row, and each call a row, in order", () => {
    const chat = applyEvents(emptyChat, approvedAndAnswered(answeredTurn(new StreamBuilder("conv_1", T0))).events);
    expect(waterfallRows(chat.turns).map((row) => (row.kind === "call" ? row.callId : row.kind === "model" ? `model ${row.round}` : "turn"))).toEqual([
      "turn",
      "model 1",
      "call_read",
      "call_grep",
      "model 2",
      "call_bash",
      "model 3",
    ]);
  });

  it("draws calls that ran at the same time as bars that overlap on the axis", () => {
    const chat = applyEvents(emptyChat, approvedAndAnswered(answeredTurn(new StreamBuilder("conv_1", T0))).events);
    const span = turnSpan(chat.turns[0]!, chat.calls, T0 + 60_000);
    const [read] = callSegments(chat.calls.call_read!, T0).map((s) => placeOnAxis(s, span));
    const [grep] = callSegments(chat.calls.call_grep!, T0).map((s) => placeOnAxis(s, span));
    expect(read!.left).toBe(grep!.left);
    expect(read!.left + read!.width).toBeGreaterThan(grep!.left);
    expect(grep!.width).toBeGreaterThan(read!.width);
  });

  it("shows an approval's wait as its own piece before the run", () => {
    const b = answeredTurn(new StreamBuilder("conv_1", T0));
    const asked = b.events.at(-1)!.time_ms;
    const chat = applyEvents(emptyChat, approvedAndAnswered(b).events);
    const bash = chat.calls.call_bash!;
    expect(callSegments(bash, 0)).toEqual([
      { kind: "wait", startMs: asked, endMs: asked + 1500, live: false },
      { kind: "run", startMs: asked + 1500, endMs: asked + 1840, live: false },
    ]);
    expect(waitMs(bash, 0)).toBe(1500);
    // Calls that never asked have no wait.
    expect(callSegments(chat.calls.call_read!, 0).map((s) => s.kind)).toEqual(["run"]);
  });

  it("grows the wait of a call still waiting, and the run of a call still running, up to now", () => {
    const chat = applyEvents(emptyChat, answeredTurn(new StreamBuilder("conv_1", T0)).events);
    const bash = chat.calls.call_bash!;
    expect(callSegments(bash, bash.askedMs! + 700)).toEqual([{ kind: "wait", startMs: bash.askedMs, endMs: bash.askedMs! + 700, live: true }]);
  });

  it("splits the model's part of a round into thinking until the first piece, then streaming", () => {
    const chat = applyEvents(emptyChat, approvedAndAnswered(answeredTurn(new StreamBuilder("conv_1", T0))).events);
    const turn = chat.turns[0]!;
    const round1 = turn.rounds[0]!;
    const segments = modelSegments(turn, round1, chat.calls, T0 + 60_000);
    expect(segments[0]).toMatchObject({ kind: "thinking", startMs: round1.requestMs, endMs: round1.firstOutputMs });
    expect(segments[1]).toMatchObject({ kind: "streaming", startMs: round1.firstOutputMs });
    expect(round1.firstOutputMs! - round1.requestMs!).toBe(40);
  });

  it("keeps a live round's bar growing until now", () => {
    const b = new StreamBuilder("conv_1", T0).start("t", "q").context(1, 100, 4096).tick(50);
    const chat = applyEvents(emptyChat, b.events);
    const turn = chat.turns[0]!;
    expect(modelSegments(turn, turn.rounds[0]!, chat.calls, T0 + 500)).toEqual([{ kind: "thinking", startMs: T0, endMs: T0 + 500, live: true }]);
  });

  it("places pieces in percent of the turn's axis", () => {
    expect(placeOnAxis({ kind: "run", startMs: 250, endMs: 500, live: false }, { startMs: 0, endMs: 1000 })).toEqual({ left: 25, width: 25 });
    expect(placeOnAxis({ kind: "run", startMs: -10, endMs: 2000, live: false }, { startMs: 0, endMs: 1000 })).toEqual({ left: 0, width: 100 });
  });
});

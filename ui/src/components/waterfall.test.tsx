import { render } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { manyCalls, StreamBuilder } from "../fixtures/stream";
import { I18nProvider } from "../i18n";
import { applyEvents, emptyChat, type ChatState } from "../state/chat";
import Waterfall from "./Waterfall";

const format = vi.hoisted(() => ({ summarized: 0 }));
vi.mock("../format", async (original) => {
  const real = await original<typeof import("../format")>();
  return {
    ...real,
    summarizeArguments: (...args: Parameters<typeof real.summarizeArguments>) => {
      format.summarized++;
      return real.summarizeArguments(...args);
    },
  };
});

const onSelect = () => {};
const draw = (chat: ChatState) => (
  <I18nProvider initial="en">
    <Waterfall turns={chat.turns} calls={chat.calls} selected={null} reveal={0} onSelect={onSelect} />
  </I18nProvider>
);

describe("Waterfall drawing", () => {
  // jsdom lays nothing out: the view is as high as the window.
  beforeEach(() => {
    vi.spyOn(Element.prototype, "clientHeight", "get").mockReturnValue(600);
  });
  afterEach(() => vi.restoreAllMocks());

  it("draws only the rows in view of a 10,000-call turn, at its end", () => {
    const chat = applyEvents(emptyChat, manyCalls(10_000));
    const { container } = render(draw(chat));
    const rows = container.querySelectorAll(".wf-row");
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.length).toBeLessThan(100);
    expect(container.querySelector('[data-call-id="call_9999"]')).not.toBeNull();
    expect(container.querySelector('[data-call-id="call_0"]')).toBeNull();
  });

  it("redraws no call's row for a streamed token", () => {
    const b = new StreamBuilder("conv_1", 1_000_000).start("turn_1", "Read them");
    for (let i = 0; i < 6; i++) b.call(1, i, `call_${i}`, "read_file", { path: `f${i}.txt` }, "ok");
    b.text(2, "Reading");
    let chat = applyEvents(emptyChat, b.events);
    const { rerender, container } = render(draw(chat));
    expect(container.querySelectorAll("button.wf-call")).toHaveLength(6);
    const before = format.summarized;
    for (const piece of [" the", " files", " now"]) {
      chat = applyEvents(chat, [{ ...b.events.at(-1)!, seq: b.events.length, type: "text_delta", round: 2, text: piece }]);
      rerender(draw(chat));
    }
    expect(format.summarized).toBe(before);
  });
});

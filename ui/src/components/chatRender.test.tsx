import { render } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { StreamBuilder } from "../fixtures/stream";
import { I18nProvider } from "../i18n";
import { applyEvents, emptyChat, type ChatState } from "../state/chat";
import { Chat } from "./Chat";

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

const handlers = { onSelectCall: vi.fn(), onAnswer: vi.fn(), onAnswerQuestion: vi.fn(), onUndo: vi.fn(), onRetry: vi.fn() };
const changes = {};
const draw = (chat: ChatState) => (
  <I18nProvider initial="en">
    <Chat chat={chat} outgoing={null} folder="demo" selected={null} reveal={0} changes={changes} {...handlers} />
  </I18nProvider>
);

describe("Chat while an answer streams", () => {
  it("redraws the growing message, not the calls of its turn", () => {
    const b = new StreamBuilder("conv_1", 1_000_000).start("turn_1", "Read them, then explain");
    for (let i = 0; i < 6; i++) b.call(1, i, `call_${i}`, "read_file", { path: `f${i}.txt` }, "ok");
    b.text(2, "They");
    let chat = applyEvents(emptyChat, b.events);
    const { rerender, container } = render(draw(chat));
    expect(container.querySelectorAll(".call-chip")).toHaveLength(6);
    const before = format.summarized;
    for (const piece of [" say", " hello", " world"]) {
      chat = applyEvents(chat, [{ ...b.events.at(-1)!, seq: chat.turns[0]!.rounds.length + 100, type: "text_delta", round: 2, text: piece }]);
      rerender(draw(chat));
    }
    expect(container.querySelector(".md")).toHaveTextContent("They say hello world");
    expect(format.summarized).toBe(before);
  });
});

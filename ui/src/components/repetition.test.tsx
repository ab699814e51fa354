import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { StreamBuilder } from "../fixtures/stream";
import { I18nProvider, type Lang } from "../i18n";
import { applyEvents, emptyChat } from "../state/chat";
import { Chat } from "./Chat";

afterEach(cleanup);

/** A turn whose first answer repeated a call and whose second copied text over and over. */
function looped() {
  const stream = new StreamBuilder()
    .start("turn_1", "What does the README say?")
    .callDelta(1, 0, "call_1", "read_file", { path: "README.md" })
    .callDelta(1, 1, "call_2", "read_file", { path: "README.md" })
    .push({ type: "repetition_stopped", round: 1, tool: "read_file", repeats: 2, tokens: 420, dropped: ["call_2"] })
    .call(1, 0, "call_1", "read_file", { path: "README.md" }, "# Demo")
    .text(2, "It is a demo.")
    .push({ type: "repetition_stopped", round: 2, repeats: 3, tokens: 150 })
    .text(3, "You are Tooltrail")
    .push({ type: "repetition_stopped", round: 3, repeats: 1, tokens: 170 })
    .finish("completed", 3, "It is a demo.");
  return applyEvents(emptyChat, stream.events);
}

function show(lang: Lang) {
  const noop = async () => {
    throw new Error("not used");
  };
  render(
    <I18nProvider initial={lang}>
      <Chat
        chat={looped()}
        outgoing={null}
        folder="demo"
        selected={null}
        reveal={0}
        onSelectCall={() => {}}
        onAnswer={noop}
        onAnswerQuestion={noop}
        changes={{}}
        onUndo={noop}
        onRetry={() => {}}
      />
    </I18nProvider>,
  );
}

describe("a model stopped for repeating itself", () => {
  it("says so under the turn, round by round, with the call and the tokens", () => {
    show("en");
    expect(
      screen.getByText(
        "The model repeated the call to read_file (2 times) in round 1; Tooltrail stopped it after about 420 tokens and kept what came before.",
      ),
    ).toBeTruthy();
    expect(
      screen.getByText(
        "The model repeated the same text (3 times) in round 2; Tooltrail stopped it after about 150 tokens and kept it once.",
      ),
    ).toBeTruthy();
  });

  it("says a model copying its own instructions did that, not that it repeated text once", () => {
    show("en");
    expect(
      screen.getByText("The model began to repeat its own instructions in round 3; Tooltrail stopped it after about 170 tokens."),
    ).toBeTruthy();
    expect(screen.queryByText(/\(1 times\)/)).toBeNull();
  });

  it("keeps the copy that was cut off the timeline", () => {
    const chat = looped();
    expect(chat.turns[0]?.rounds[0]?.callIds).toEqual(["call_1"]);
    expect(Object.keys(chat.calls)).toEqual(["call_1"]);
    expect(chat.timeline).toEqual(["call_1"]);
  });

  it("speaks Chinese", () => {
    show("zh");
    expect(screen.getByText("模型在第 1 轮重复调用 read_file（2 次）；Tooltrail 在约 420 个词元后将其停止，保留了之前的内容。")).toBeTruthy();
  });
});

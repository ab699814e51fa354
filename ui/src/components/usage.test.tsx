import { cleanup, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { answeredTurn, approvedAndAnswered, StreamBuilder } from "../fixtures/stream";
import { I18nProvider, type Lang } from "../i18n";
import { applyEvents, emptyChat, type ChatState } from "../state/chat";
import { ContextMeter } from "./ContextMeter";
import { Timeline } from "./Timeline";
import { useTimelineMode } from "./timelineMode";

const inLang = (lang: Lang, ui: React.ReactNode) => render(<I18nProvider initial={lang}>{ui}</I18nProvider>);

afterEach(() => {
  cleanup();
  localStorage.clear();
});

describe("ContextMeter", () => {
  it("shows the latest request's share of the window, and the conversation's tokens", () => {
    const chat = applyEvents(emptyChat, approvedAndAnswered().events);
    inLang("en", <ContextMeter turns={chat.turns} />);
    const meter = screen.getByRole("meter", { name: "Context window" });
    expect(meter).toHaveTextContent("5,480 / 8,192 tokens");
    expect(meter).toHaveAttribute("title", "The latest request to the model took 5,480 of its 8,192-token context window (67%).");
    // Two thirds full: amber.
    expect(meter).toHaveClass("level-high");
    expect(screen.getByTestId("conversation-tokens")).toHaveTextContent("540 tokens in this conversation");
  });

  it("turns red when little room is left, and speaks Chinese", () => {
    const b = new StreamBuilder().start("t", "q").context(1, 1_900, 2_048);
    inLang("zh", <ContextMeter turns={applyEvents(emptyChat, b.events).turns} />);
    const meter = screen.getByRole("meter", { name: "上下文窗口" });
    expect(meter).toHaveClass("level-full");
    expect(meter).toHaveTextContent("1,900 / 2,048 词元");
  });

  it("shows nothing before the first request", () => {
    const { container } = inLang("en", <ContextMeter turns={[]} />);
    expect(container.querySelector(".context-meter")).toBeNull();
  });
});

function TimelineHost({ chat }: { chat: ChatState }) {
  const [mode, setMode] = useTimelineMode();
  const [selected, setSelected] = useState<string | null>(null);
  return (
    <Timeline
      calls={chat.calls}
      timeline={chat.timeline}
      selected={selected}
      reveal={0}
      onSelect={setSelected}
      onShowInChat={vi.fn()}
      mode={mode}
      onMode={setMode}
      {...(mode === "waterfall" ? { turns: chat.turns } : {})}
    />
  );
}

describe("Timeline waterfall", () => {
  // jsdom lays nothing out; the virtualised rows need a viewport to appear in.
  beforeEach(() => {
    vi.spyOn(Element.prototype, "clientHeight", "get").mockReturnValue(600);
    vi.spyOn(Element.prototype, "clientWidth", "get").mockReturnValue(420);
  });
  afterEach(() => vi.restoreAllMocks());

  it("switches to the waterfall, remembers it, and draws parallel calls and an approval's wait", async () => {
    const chat = applyEvents(emptyChat, approvedAndAnswered(answeredTurn(new StreamBuilder("conv_1", 1_000_000))).events);
    const first = inLang("en", <TimelineHost chat={chat} />);
    await userEvent.click(screen.getByRole("radio", { name: "Waterfall" }));
    const waterfall = await screen.findByTestId("waterfall");
    await waitFor(() => expect(waterfall.querySelector('[data-call-id="call_bash"]')).not.toBeNull());
    expect(localStorage.getItem("tooltrail.timelineView")).toBe("waterfall");

    const row = (callId: string) => waterfall.querySelector<HTMLElement>(`[data-call-id="${callId}"]`)!;
    const bar = (callId: string, kind: string) => row(callId).querySelector<HTMLElement>(`.wf-bar[data-kind="${kind}"]`)!;
    // The two reads started together: their bars begin at the same place and overlap.
    expect(bar("call_read", "run").style.left).toBe(bar("call_grep", "run").style.left);
    // The command waited 1.5 s for the user before it ran.
    expect(bar("call_bash", "wait")).toBeTruthy();
    expect(parseFloat(bar("call_bash", "wait").style.left) + parseFloat(bar("call_bash", "wait").style.width)).toBeCloseTo(parseFloat(bar("call_bash", "run").style.left), 5);
    expect(row("call_bash")).toHaveAccessibleName(/Waited for approval: 1\.5 s/);
    expect(within(waterfall).getByText("model · round 3")).toBeInTheDocument();

    // Remembered: a new timeline opens as a waterfall.
    first.unmount();
    inLang("en", <TimelineHost chat={chat} />);
    expect(await screen.findByTestId("waterfall")).toBeInTheDocument();
    expect(screen.getByRole("radio", { name: "Waterfall" })).toHaveAttribute("aria-checked", "true");
  });

  it("shows the times on hover", async () => {
    localStorage.setItem("tooltrail.timelineView", "waterfall");
    const chat = applyEvents(emptyChat, approvedAndAnswered(answeredTurn(new StreamBuilder("conv_1", 1_000_000))).events);
    inLang("en", <TimelineHost chat={chat} />);
    const waterfall = await screen.findByTestId("waterfall");
    await waitFor(() => expect(waterfall.querySelector('[data-call-id="call_bash"]')).not.toBeNull());
    await userEvent.hover(waterfall.querySelector('[data-call-id="call_bash"] .wf-track')!);
    const tip = screen.getByRole("tooltip");
    expect(tip).toHaveTextContent("execute_bash go vet ./... > vet.txt — Done");
    expect(tip).toHaveTextContent("Duration: 340 ms");
    expect(tip).toHaveTextContent("Waited for approval: 1.5 s");
    expect(tip).toHaveTextContent(/Start: \+\d/);
  });
});

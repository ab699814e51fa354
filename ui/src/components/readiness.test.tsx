import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, type Event, type GuideView, type LocalModelStatus } from "../api";
import { App } from "../App";
import { longPromptAnswered, longPromptTurn, StreamBuilder } from "../fixtures/stream";
import { I18nProvider, type Lang } from "../i18n";
import { applyEvents, emptyChat, type ChatState } from "../state/chat";
import type { LocalWait } from "../state/localWait";
import { Chat } from "./Chat";
import { NoModelNotice } from "./NoModelNotice";

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const endpoint = { base_url: "http://localhost:11434/v1", model: null, api_key_set: false, config_path: "/home/me/.config/tooltrail/config.toml", problem: null, key_problem: null };
const refused = "Could not connect to the model endpoint http://localhost:11434/v1 (connection refused).";
const notReady: GuideView = { ready: false, problem: refused, local: false, endpoint, servers: [], looked_ms: 2 };
const ready: GuideView = { ready: true, problem: null, local: true, endpoint: { ...endpoint, model: "gemma3-270m" }, servers: [], looked_ms: 2 };

function chatIn(lang: Lang, chat: ChatState, outgoing: { text: string } | null, localWait: LocalWait | null) {
  const ui = (state: ChatState, pending: { text: string } | null, wait: LocalWait | null) => (
    <I18nProvider initial={lang}>
      <Chat
        chat={state}
        outgoing={pending}
        localWait={wait}
        folder="demo"
        selected={null}
        reveal={0}
        onSelectCall={() => {}}
        onAnswer={() => Promise.resolve()}
        onAnswerQuestion={() => Promise.resolve()}
        changes={{}}
        onUndo={() => Promise.reject(new Error("not in this test"))}
        onRetry={() => {}}
      />
    </I18nProvider>
  );
  const rendered = render(ui(chat, outgoing, localWait));
  return { ...rendered, again: (state: ChatState, pending: { text: string } | null, wait: LocalWait | null) => rendered.rerender(ui(state, pending, wait)) };
}

describe("a question waiting for the local model", () => {
  it("says the model is starting, with the seconds counting, then that it is being prepared", () => {
    vi.useFakeTimers({ now: 100_000 });
    const { again } = chatIn("en", emptyChat, { text: "What is here?" }, { phase: "starting", model: "gemma3-270m", sinceMs: 100_000 });
    const wait = screen.getByTestId("local-model-wait");
    expect(within(wait).getByRole("status")).toHaveTextContent("Starting the local model (gemma3-270m)…");
    expect(screen.getByTestId("local-model-seconds")).toHaveTextContent("0 s");
    expect(screen.queryByText("Thinking…")).toBeNull();
    act(() => vi.advanceTimersByTime(3_000));
    expect(screen.getByTestId("local-model-seconds")).toHaveTextContent("3 s");
    again(emptyChat, { text: "What is here?" }, { phase: "warming", model: "gemma3-270m", sinceMs: 100_000 });
    expect(within(screen.getByTestId("local-model-wait")).getByRole("status")).toHaveTextContent("Preparing the model (gemma3-270m)…");
    expect(screen.getByTestId("local-model-seconds")).toHaveTextContent("3 s");
    // Ready: the wait is over and the pending turn thinks.
    again(emptyChat, { text: "What is here?" }, null);
    expect(screen.queryByTestId("local-model-wait")).toBeNull();
    expect(screen.getByText("Thinking…")).toBeInTheDocument();
  });

  it("shows in a turn that has begun but has nothing of its own yet", () => {
    const begun = applyEvents(emptyChat, new StreamBuilder().start("t", "What is here?").context(1, 900, 8_192).events);
    chatIn("en", begun, null, { phase: "warming", model: "gemma3-270m", sinceMs: Date.now() });
    expect(screen.getByTestId("local-model-wait")).toHaveTextContent("Preparing the model (gemma3-270m)…");
    expect(screen.queryByText("Thinking…")).toBeNull();
  });

  it("is said in Chinese", () => {
    vi.useFakeTimers({ now: 50_000 });
    chatIn("zh", emptyChat, { text: "这里有什么？" }, { phase: "starting", model: "gemma3-270m", sinceMs: 38_000 });
    expect(screen.getByTestId("local-model-wait")).toHaveTextContent("正在启动本地模型（gemma3-270m）…");
    expect(screen.getByTestId("local-model-seconds")).toHaveTextContent("12 秒");
  });
});

describe("the prompt's progress in the turn", () => {
  it("says how much of the prompt the server has read, from its cache too, with a labelled bar", () => {
    chatIn("en", applyEvents(emptyChat, longPromptTurn().events), null, null);
    expect(screen.getByTestId("prompt-progress")).toHaveTextContent("Reading the prompt: 640 of 1,200 tokens (300 from cache) · 1.2 s");
    const bar = screen.getByRole("progressbar", { name: "Prompt read" }) as HTMLProgressElement;
    expect([bar.value, bar.max]).toEqual([640, 1_200]);
    expect(screen.queryByText("Thinking…")).toBeNull();
  });

  it("leaves out the cache when nothing came from it, and is said in Chinese", () => {
    const events = new StreamBuilder().start("t", "q").promptProgress(1, 100, 1_200, 0, 300).events;
    const { unmount } = chatIn("en", applyEvents(emptyChat, events), null, null);
    expect(screen.getByTestId("prompt-progress")).toHaveTextContent(/^Reading the prompt: 100 of 1,200 tokens · 0\.3 s$/);
    unmount();
    chatIn("zh", applyEvents(emptyChat, longPromptTurn().events), null, null);
    expect(screen.getByTestId("prompt-progress")).toHaveTextContent("正在读取提示：1,200 个词元中已读 640 个（300 个来自缓存）· 1.2 秒");
    expect(screen.getByRole("progressbar", { name: "提示读取进度" })).toBeInTheDocument();
  });

  it("goes once the answer streams", () => {
    const b = longPromptTurn();
    const { again } = chatIn("en", applyEvents(emptyChat, b.events), null, null);
    expect(screen.getByRole("progressbar")).toBeInTheDocument();
    again(applyEvents(emptyChat, b.text(1, "A small Go service.").events), null, null);
    expect(screen.queryByRole("progressbar")).toBeNull();
    expect(screen.queryByTestId("prompt-progress")).toBeNull();
  });

  it("never shows in a reopened conversation", () => {
    const stored = longPromptAnswered().events.filter((event) => event.type !== "text_delta");
    chatIn("en", applyEvents(emptyChat, stored), null, null);
    expect(screen.getByText("A small Go service.")).toBeInTheDocument();
    expect(screen.queryByRole("progressbar")).toBeNull();
  });
});

describe("the notice that no model answers", () => {
  it("says so with the reason and offers the guide and another look", async () => {
    const onChoose = vi.fn();
    const onCheckAgain = vi.fn();
    render(
      <I18nProvider initial="en">
        <NoModelNotice guide={notReady} folder="demo" checking={false} onChoose={onChoose} onCheckAgain={onCheckAgain} />
      </I18nProvider>,
    );
    const status = screen.getByRole("status");
    expect([...status.querySelectorAll("p")].map((p) => p.textContent)).toEqual([
      "No model answers questions yet.",
      "A question about demo would fail until you choose one.",
      `Why: ${refused}`,
    ]);
    await userEvent.click(screen.getByRole("button", { name: "Choose a model…" }));
    expect(onChoose).toHaveBeenCalledTimes(1);
    await userEvent.click(screen.getByRole("button", { name: "Check again" }));
    expect(onCheckAgain).toHaveBeenCalledTimes(1);
  });

  it("does not look again while a look is under way, and keeps the button", async () => {
    const onCheckAgain = vi.fn();
    render(
      <I18nProvider initial="en">
        <NoModelNotice guide={notReady} folder="demo" checking onChoose={() => {}} onCheckAgain={onCheckAgain} />
      </I18nProvider>,
    );
    const button = screen.getByRole("button", { name: "Checking…" });
    expect(button).toHaveAttribute("aria-disabled", "true");
    await userEvent.click(button);
    expect(onCheckAgain).not.toHaveBeenCalled();
  });

  it("says nothing when a model answers, or before the check has answered", () => {
    for (const guide of [ready, null]) {
      const { unmount } = render(
        <I18nProvider initial="en">
          <NoModelNotice guide={guide} folder="demo" checking={false} onChoose={() => {}} onCheckAgain={() => {}} />
        </I18nProvider>,
      );
      expect(screen.queryByTestId("no-model")).toBeNull();
      expect(screen.queryAllByRole("button")).toEqual([]);
      expect(screen.getByRole("status")).toHaveTextContent(/^$/);
      unmount();
    }
  });

  it("is said in Chinese", () => {
    render(
      <I18nProvider initial="zh">
        <NoModelNotice guide={notReady} folder="demo" checking={false} onChoose={() => {}} onCheckAgain={() => {}} />
      </I18nProvider>,
    );
    expect([...screen.getByRole("status").querySelectorAll("p")].map((p) => p.textContent)).toEqual([
      "还没有可以回答问题的模型。",
      "选择模型之前，关于 demo 的提问都会失败。",
      `原因：${refused}`,
    ]);
    expect(screen.getByRole("button", { name: "选择模型…" })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "重新检查" })).toBeInTheDocument();
  });
});

/** The window with a folder open from the start (or, "unreadable", a backend that cannot say which), the backend mocked where the window asks it. */
function appWithFolder(firstCheck: GuideView, folder: "opened" | "unreadable" = "opened") {
  vi.spyOn(api, "appInfo").mockResolvedValue({ version: "0.1.0", endpoint });
  const current = vi.spyOn(api, "currentWorkspace");
  if (folder === "opened") current.mockResolvedValue({ path: "/home/me/demo", name: "demo", watched: true });
  else current.mockRejectedValue(new Error("the backend is gone"));
  vi.spyOn(api, "recentWorkspaces").mockResolvedValue([]);
  vi.spyOn(api, "listConversations").mockResolvedValue([]);
  vi.spyOn(api, "mcpServers").mockResolvedValue({ servers: [] });
  vi.spyOn(api, "onMcpChanged").mockResolvedValue(() => {});
  vi.spyOn(api, "onFilesChanged").mockResolvedValue(() => {});
  vi.spyOn(api, "onPull").mockResolvedValue(() => {});
  vi.spyOn(api, "downloads").mockResolvedValue([]);
  vi.spyOn(api, "turnChanges").mockResolvedValue([]);
  vi.spyOn(api, "projectInstructions").mockResolvedValue({ file: null, on: true, cut: false, limit_kib: 16, left_out: [] });
  const check = vi.spyOn(api, "modelGuide").mockResolvedValue(firstCheck);
  // What the page had built when it asked for the window to be shown.
  const shown: { boxes: number[] } = { boxes: [] };
  const windowReady = vi.spyOn(api, "windowReady").mockImplementation(() => {
    shown.boxes.push(screen.queryAllByRole("textbox", { name: /Ask about demo/ }).length);
    return Promise.resolve(null);
  });
  const local: { emit?: (status: LocalModelStatus) => void } = {};
  vi.spyOn(api, "onLocalModel").mockImplementation((handler) => {
    local.emit = handler;
    return Promise.resolve(() => {});
  });
  const turn: { deliver?: (event: Event) => void } = {};
  const send = vi.spyOn(api, "sendMessage").mockImplementation((_conversation, _text, onEvent) => {
    turn.deliver = onEvent;
    return Promise.resolve("conv_1");
  });
  render(
    <I18nProvider initial="en">
      <App />
    </I18nProvider>,
  );
  return { check, local, turn, send, shown, windowReady };
}

async function ask(question: string) {
  const box = await screen.findByRole("textbox", { name: /Ask about demo/ });
  await userEvent.type(box, `${question}{Enter}`);
}

describe("the window with a folder open", () => {
  it("is shown once, when the folder's screen with its question box is built", async () => {
    const { shown, windowReady } = appWithFolder(ready);
    await waitFor(() => expect(windowReady).toHaveBeenCalled());
    await ask("What is here?");
    expect(shown.boxes).toEqual([1]);
    expect(windowReady).toHaveBeenCalledTimes(1);
  });

  it("is shown even when the folder could not be asked for", async () => {
    const { windowReady } = appWithFolder(ready, "unreadable");
    await waitFor(() => expect(windowReady).toHaveBeenCalledTimes(1));
  });

  it("says above the composer that no model answers, and the composer still sends", async () => {
    const { check, send } = appWithFolder(notReady);
    const notice = await screen.findByTestId("no-model");
    expect(check).toHaveBeenCalled();
    expect(within(notice).getByRole("status")).toHaveTextContent(refused);
    const box = screen.getByRole("textbox", { name: /Ask about demo/ });
    // Above the composer: the notice comes first in the page.
    expect(notice.compareDocumentPosition(box) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    await ask("What is here?");
    expect(send).toHaveBeenCalledWith(null, "What is here?", expect.any(Function), []);
  });

  it("takes the notice away once another look finds a model that answers", async () => {
    const { check } = appWithFolder(notReady);
    const notice = await screen.findByTestId("no-model");
    check.mockResolvedValue(ready);
    await userEvent.click(within(notice).getByRole("button", { name: "Check again" }));
    await waitFor(() => expect(screen.queryByTestId("no-model")).toBeNull());
  });

  it("looks again after a turn while the notice shows, and takes it away when a model answered", async () => {
    const { check, turn } = appWithFolder(notReady);
    await screen.findByTestId("no-model");
    const looks = check.mock.calls.length;
    check.mockResolvedValue(ready);
    await ask("What is here?");
    const answered = new StreamBuilder().start("turn_1", "What is here?").text(1, "A Go service.").finish("completed", 1, "A Go service.");
    await act(async () => answered.events.forEach((event) => turn.deliver!(event)));
    await waitFor(() => expect(screen.queryByTestId("no-model")).toBeNull());
    expect(check.mock.calls.length).toBe(looks + 1);
  });

  it("does not look again after a turn when a model answered from the start", async () => {
    const { check, turn } = appWithFolder(ready);
    await screen.findByRole("textbox", { name: /Ask about demo/ });
    await waitFor(() => expect(check).toHaveBeenCalledTimes(1));
    await ask("What is here?");
    const answered = new StreamBuilder().start("turn_1", "What is here?").text(1, "A Go service.").finish("completed", 1, "A Go service.");
    await act(async () => answered.events.forEach((event) => turn.deliver!(event)));
    await screen.findByText("A Go service.");
    expect(check).toHaveBeenCalledTimes(1);
  });

  it("opens the guide to choosing a model from the notice", async () => {
    vi.spyOn(api, "listModels").mockResolvedValue({ dir: "/m", local_model: null, local_active: false, installed: [], unfinished: [], catalogue: [], runtime: null, server_problem: null, runtime_supported: true });
    appWithFolder(notReady);
    await userEvent.click(within(await screen.findByTestId("no-model")).getByRole("button", { name: "Choose a model…" }));
    expect(await screen.findByTestId("model-guide")).toBeInTheDocument();
  });

  it("says nothing when a model answers", async () => {
    const { check } = appWithFolder(ready);
    await screen.findByRole("textbox", { name: /Ask about demo/ });
    await waitFor(() => expect(check).toHaveBeenCalled());
    await act(async () => {});
    expect(screen.queryByTestId("no-model")).toBeNull();
  });

  it("shows the local model's start in the pending turn, then the prompt being read, then the answer", async () => {
    const { local, turn } = appWithFolder(ready);
    await ask("What is here?");
    await screen.findByText("Thinking…");
    act(() => local.emit!({ phase: "starting", model: "gemma3-270m" }));
    expect(await screen.findByText("Starting the local model (gemma3-270m)…")).toBeInTheDocument();
    expect(screen.queryByText("Thinking…")).toBeNull();
    act(() => local.emit!({ phase: "warming", model: "gemma3-270m" }));
    expect(await screen.findByText("Preparing the model (gemma3-270m)…")).toBeInTheDocument();

    // The turn begins and the server reads the prompt: the wait gives way to its progress.
    const b = longPromptTurn();
    await act(async () => b.events.forEach((event) => turn.deliver!(event)));
    expect(screen.queryByTestId("local-model-wait")).toBeNull();
    expect(await screen.findByTestId("prompt-progress")).toHaveTextContent("Reading the prompt: 640 of 1,200 tokens (300 from cache) · 1.2 s");

    await act(async () => longPromptAnswered().events.slice(b.events.length).forEach((event) => turn.deliver!(event)));
    expect(await screen.findByText("A small Go service.")).toBeInTheDocument();
    expect(screen.queryByTestId("prompt-progress")).toBeNull();
  });

  it("clears the wait when the question could not be sent", async () => {
    const { local, send } = appWithFolder(ready);
    let fail: (error: unknown) => void = () => {};
    send.mockImplementation(() => new Promise((_, reject) => (fail = reject)));
    await ask("What is here?");
    act(() => local.emit!({ phase: "starting", model: "gemma3-270m" }));
    await screen.findByTestId("local-model-wait");
    await act(async () => fail({ code: "unreachable", message: "The local model could not start: llama-server exited." }));
    await screen.findByText(/The local model could not start/);
    expect(screen.queryByTestId("local-model-wait")).toBeNull();
    // Nor does it come back on the next question.
    send.mockResolvedValue("conv_1");
    await ask("Again?");
    await screen.findByText("Thinking…");
    expect(screen.queryByTestId("local-model-wait")).toBeNull();
  });

  it("clears the wait when the model is ready", async () => {
    const { local } = appWithFolder(ready);
    await ask("What is here?");
    act(() => local.emit!({ phase: "starting", model: "gemma3-270m" }));
    await screen.findByTestId("local-model-wait");
    act(() => local.emit!({ phase: "ready", model: "gemma3-270m", seconds: 2.5 }));
    await waitFor(() => expect(screen.queryByTestId("local-model-wait")).toBeNull());
    expect(screen.getByText("Thinking…")).toBeInTheDocument();
  });
});

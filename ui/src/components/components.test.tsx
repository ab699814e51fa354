import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { answeredTurn, StreamBuilder } from "../fixtures/stream";
import { I18nProvider } from "../i18n";
import { applyEvents, emptyChat } from "../state/chat";
import { ApprovalCard } from "./ApprovalCard";
import { Composer } from "./Composer";
import { Markdown } from "./Markdown";
import { LanguagePicker, Sidebar } from "./Sidebar";
import { TimelineCard } from "./TimelineCard";

const inEnglish = (ui: React.ReactNode) => render(<I18nProvider initial="en">{ui}</I18nProvider>);

describe("Markdown", () => {
  it("renders markdown with highlighted code and never the model's HTML", () => {
    const { container } = inEnglish(<Markdown text={'# Hi\n\n<img src=x onerror="alert(1)"><script>alert(2)</script>\n\n```go\nfunc main() {}\n```\n\n[link](https://example.com)'} />);
    expect(screen.getByRole("heading", { name: "Hi" })).toBeInTheDocument();
    expect(container.querySelector("script, img, a")).toBeNull();
    expect(container.querySelector(".hljs-keyword")?.textContent).toBe("func");
    expect(screen.getByText("link")).toHaveAttribute("title", "https://example.com");
  });
});

describe("Composer", () => {
  it("sends on Enter, adds a line on Shift+Enter, and offers Stop while busy", async () => {
    const onSend = vi.fn();
    const onStop = vi.fn();
    const { rerender } = inEnglish(<Composer folder="demo" busy={false} onSend={onSend} onStop={onStop} />);
    const box = screen.getByRole("textbox");
    await userEvent.type(box, "first line{Shift>}{Enter}{/Shift}second{Enter}");
    expect(onSend).toHaveBeenCalledWith("first line\nsecond", []);
    expect(box).toHaveValue("");
    rerender(
      <I18nProvider initial="en">
        <Composer folder="demo" busy onSend={onSend} onStop={onStop} />
      </I18nProvider>,
    );
    await userEvent.click(screen.getByRole("button", { name: /Stop/ }));
    expect(onStop).toHaveBeenCalled();
  });
});

describe("ApprovalCard", () => {
  const call = applyEvents(emptyChat, answeredTurn().events).calls.call_bash!;

  it("shows the exact command, the folder and the reason, and waits", () => {
    const onAnswer = vi.fn(() => Promise.resolve());
    inEnglish(<ApprovalCard call={call} primary onAnswer={onAnswer} />);
    expect(screen.getByText("go vet ./... > vet.txt")).toBeInTheDocument();
    expect(screen.getByText("in the workspace folder")).toBeInTheDocument();
    expect(screen.getByText("Why it asks: it writes to a file (redirection)")).toBeInTheDocument();
    expect(onAnswer).not.toHaveBeenCalled();
  });

  it("answers from the keyboard: A allows for the conversation", () => {
    const onAnswer = vi.fn(() => Promise.resolve());
    inEnglish(<ApprovalCard call={call} primary onAnswer={onAnswer} />);
    act(() => {
      fireEvent.keyDown(window, { key: "a" });
    });
    expect(onAnswer).toHaveBeenCalledWith("call_bash", { decision: "allow_for_conversation" });
  });

  it("offers always allowing in the folder only when the call can be a rule, and says what the rule is", async () => {
    const onAnswer = vi.fn(() => Promise.resolve());
    // The redirection cannot be a rule: no button, and W does nothing.
    const { unmount } = inEnglish(<ApprovalCard call={call} primary onAnswer={onAnswer} />);
    expect(screen.queryByRole("button", { name: /Always allow in this folder/ })).toBeNull();
    act(() => {
      fireEvent.keyDown(window, { key: "w" });
    });
    expect(onAnswer).not.toHaveBeenCalled();
    unmount();

    const cmd = { command: "go test ./..." };
    const b = new StreamBuilder().start("turn_1", "test it");
    b.callDelta(1, 0, "call_test", "execute_bash", cmd).ask("call_test", "execute_bash", cmd, "go test ./...", "unknown program", ".", "go test ./...");
    const ruled = applyEvents(emptyChat, b.events).calls.call_test!;
    inEnglish(<ApprovalCard call={ruled} primary onAnswer={onAnswer} />);
    expect(screen.getByText(/commands starting with “go test \.\/\.\.\.” run in this folder without asking/)).toBeInTheDocument();
    act(() => {
      fireEvent.keyDown(window, { key: "w" });
    });
    expect(onAnswer).toHaveBeenCalledWith("call_test", { decision: "allow_in_workspace" });
  });

  it("denies with the reason typed for the model", async () => {
    const onAnswer = vi.fn(() => Promise.resolve());
    inEnglish(<ApprovalCard call={call} primary onAnswer={onAnswer} />);
    await userEvent.click(screen.getByRole("button", { name: /Deny/ }));
    await userEvent.type(screen.getByRole("textbox"), "not now{Enter}");
    expect(onAnswer).toHaveBeenCalledWith("call_bash", { decision: "deny", reason: "not now" });
  });

  it("ignores letters typed into a text box", () => {
    const onAnswer = vi.fn(() => Promise.resolve());
    inEnglish(
      <>
        <textarea defaultValue="draft" />
        <ApprovalCard call={call} primary onAnswer={onAnswer} />
      </>,
    );
    fireEvent.keyDown(screen.getAllByRole("textbox")[0]!, { key: "y" });
    expect(onAnswer).not.toHaveBeenCalled();
  });
});

describe("TimelineCard", () => {
  it("expands to the full arguments, result and error", async () => {
    const b = new StreamBuilder().start("t", "q");
    b.callDelta(1, 0, "c1", "read_file", { path: "missing.md" }).started(1, "c1", "read_file", { path: "missing.md" });
    b.tick(7).finished(1, "c1", "read_file", { path: "missing.md" }, "error", 7, "missing.md was not found");
    const failed = applyEvents(emptyChat, b.events).calls.c1!;
    const onToggle = vi.fn();
    const { rerender } = inEnglish(<TimelineCard call={failed} expanded={false} selected={false} onToggle={onToggle} onShowInChat={() => {}} />);
    expect(screen.getByText("read_file")).toBeInTheDocument();
    expect(screen.getByText("missing.md")).toBeInTheDocument();
    expect(screen.getByText("Failed")).toBeInTheDocument();
    expect(screen.getByText("7 ms")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { expanded: false }));
    expect(onToggle).toHaveBeenCalledWith("c1");
    rerender(
      <I18nProvider initial="en">
        <TimelineCard call={failed} expanded selected onToggle={onToggle} onShowInChat={() => {}} />
      </I18nProvider>,
    );
    expect(screen.getByText(/"path": "missing.md"/)).toBeInTheDocument();
    expect(screen.getByText("[failed] missing.md was not found")).toBeInTheDocument();
    expect(screen.getAllByRole("button", { name: /Copy/ })).toHaveLength(2);
  });

  it("shows what the tool does and when the call started, with the full time on hover, even when stopped before it finished", () => {
    const started = new Date(2024, 4, 3, 14, 5, 9).getTime();
    const b = new StreamBuilder("conv_1", started).start("t", "q");
    b.callDelta(1, 0, "c1", "count_lines", { path: "." }).started(1, "c1", "count_lines", { path: "." }).tick(300).finish("cancelled", 1, "");
    const stopped = applyEvents(emptyChat, b.events).calls.c1!;
    expect(stopped.phase).toBe("cancelled");
    inEnglish(<TimelineCard call={stopped} expanded={false} selected={false} onToggle={() => {}} onShowInChat={() => {}} />);
    expect(screen.getByText("The count_lines tool.")).toBeInTheDocument();
    const time = screen.getByText("14:05:09");
    expect(time.tagName).toBe("TIME");
    expect(time).toHaveAttribute("datetime", new Date(started).toISOString());
    expect(time.getAttribute("title")).toMatch(/^Started 3 May 2024,? 14:05:09$/);
  });
});

describe("Sidebar", () => {
  const workspace = { path: "/home/me/demo", name: "demo", watched: true };
  const noop = () => {};
  const draw = (mcp: Parameters<typeof Sidebar>[0]["mcp"]) =>
    inEnglish(
      <Sidebar workspace={workspace} conversations={[]} activeConversation={null} recent={[]} mcp={mcp} onOpenFolder={noop} onOpenConversation={noop} onNewConversation={noop} screen="chat" onScreen={noop} onConversationsChanged={noop} />,
    );

  it("lists MCP servers with their state, tool count and why one failed", () => {
    draw({
      servers: [
        { name: "fs", state: "running", tools: 14 },
        { name: "db", state: "failed", tools: 0, error: "the MCP server \"db\" could not be started", stderr: ["boom"] },
      ],
    });
    const section = screen.getByTestId("mcp-servers");
    expect(section).toHaveTextContent("MCP servers");
    expect(section).toHaveTextContent("fsrunning · 14 tools");
    expect(section).toHaveTextContent("dbfailed");
    expect(screen.getByText('the MCP server "db" could not be started')).toBeInTheDocument();
  });

  it("says what is wrong with mcp.json, and shows no section without servers", () => {
    draw({ servers: [], problem: "mcp.json: server \"fs\": \"command\" or \"url\" is required" });
    expect(screen.getByTestId("mcp-servers")).toHaveTextContent('"command" or "url" is required');
    cleanup();
    draw({ servers: [] });
    expect(screen.queryByTestId("mcp-servers")).toBeNull();
  });
});

describe("LanguagePicker", () => {
  it("lists the other language once reached, and switches the window to it", async () => {
    const user = userEvent.setup();
    inEnglish(<LanguagePicker />);
    const menu = screen.getByRole("combobox", { name: "Language" });
    const offered = () => [...menu.querySelectorAll("option")].map((option) => option.textContent);
    // Nothing in the window lays out the Chinese name until the menu is reached.
    expect(offered()).toEqual(["English"]);
    await user.tab();
    expect(menu).toHaveFocus();
    expect(offered()).toEqual(["English", "简体中文"]);
    await user.selectOptions(menu, "zh");
    expect(screen.getByRole("combobox", { name: "语言" })).toHaveValue("zh");
  });
});

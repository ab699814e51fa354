import { act, fireEvent, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { FileChange, TurnChanges } from "../bindings";
import { StreamBuilder } from "../fixtures/stream";
import { I18nProvider } from "../i18n";
import { applyEvents, emptyChat } from "../state/chat";
import { ApprovalCard } from "./ApprovalCard";
import { DiffView } from "./DiffView";
import { QuestionCard } from "./QuestionCard";
import { UndoChanges } from "./UndoChanges";

const inEnglish = (ui: React.ReactNode) => render(<I18nProvider initial="en">{ui}</I18nProvider>);

const change: FileChange = {
  path: "src/main.rs",
  mode: "overwrite",
  existed: true,
  added: 1,
  removed: 1,
  truncated: false,
  hunks: [
    {
      old_start: 1,
      new_start: 1,
      old_lines: 2,
      new_lines: 2,
      lines: [
        { kind: "context", old_line: 1, new_line: 1, text: "fn main() {" },
        { kind: "removed", old_line: 2, text: '    println!("old");' },
        { kind: "added", new_line: 2, text: '    println!("new");' },
      ],
    },
  ],
};

function writeCall() {
  const stream = new StreamBuilder().start("turn_1", "Fix it")
    .callDelta(1, 0, "call_w", "file_write", { path: "src/main.rs", content: "…" })
    .push({
      type: "approval_requested",
      call_id: "call_w",
      tool: "file_write",
      arguments: { path: "src/main.rs", content: "…" },
      summary: "overwrite src/main.rs (+1 −1 lines)",
      reason: "file_write changes a file in the workspace; each write is approved on its own",
      change,
      once_only: true,
    });
  return applyEvents(emptyChat, stream.events).calls.call_w!;
}

describe("DiffView", () => {
  it("shows both sides' line numbers, the marks, and coloured code", () => {
    const { container } = inEnglish(<DiffView change={change} />);
    expect(screen.getByText("Changes to src/main.rs")).toBeInTheDocument();
    const rows = [...container.querySelectorAll("tr.diff-line")].map((row) =>
      [...row.querySelectorAll("td")].map((cell) => cell.textContent),
    );
    expect(rows).toEqual([
      ["1", "1", " ", "fn main() {"],
      ["2", "", "−", '    println!("old");'],
      ["", "2", "+", '    println!("new");'],
    ]);
    expect(container.querySelector(".diff-added .hljs-string")?.textContent).toBe('"new"');
  });

  it("says when the diff was cut", () => {
    inEnglish(<DiffView change={{ ...change, truncated: true, added: 5000 }} />);
    expect(screen.getByText("The rest of the diff is not shown (5000 lines added and 1 removed in all).")).toBeInTheDocument();
  });
});

describe("ApprovalCard for a file write", () => {
  it("shows the diff and offers only allow once or deny, from the keyboard too", async () => {
    const onAnswer = vi.fn(() => Promise.resolve());
    inEnglish(<ApprovalCard call={writeCall()} primary onAnswer={onAnswer} />);
    // The diff view (and its highlighter) loads when a card first needs it.
    expect(await screen.findByText("Changes to src/main.rs")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /Allow for this conversation/ })).toBeNull();
    expect(screen.getByText("Y allow once · N deny")).toBeInTheDocument();
    act(() => {
      fireEvent.keyDown(window, { key: "a" });
    });
    expect(onAnswer).not.toHaveBeenCalled();
    act(() => {
      fireEvent.keyDown(window, { key: "y" });
    });
    expect(onAnswer).toHaveBeenCalledWith("call_w", { decision: "allow_once" });
  });
});

function questionCall() {
  const stream = new StreamBuilder().start("turn_1", "Deploy")
    .started(1, "call_q", "ask_user", { question: "Which branch?", choices: ["main", "dev"] })
    .push({ type: "user_question", call_id: "call_q", question: "Which branch?", choices: ["main", "dev"] });
  return applyEvents(emptyChat, stream.events).calls.call_q!;
}

describe("QuestionCard", () => {
  it("keeps the question on the call and answers with a choice's number", async () => {
    const call = questionCall();
    expect(call.question).toEqual({ text: "Which branch?", choices: ["main", "dev"] });
    const onAnswer = vi.fn(() => Promise.resolve());
    inEnglish(<QuestionCard call={call} primary onAnswer={onAnswer} />);
    expect(screen.getByText("Which branch?")).toBeInTheDocument();
    await userEvent.keyboard("2");
    expect(onAnswer).toHaveBeenCalledWith("call_q", "dev");
  });

  it("answers in the user's words with Enter, and Escape dismisses", async () => {
    const onAnswer = vi.fn(() => Promise.resolve());
    const { unmount } = inEnglish(<QuestionCard call={questionCall()} primary onAnswer={onAnswer} />);
    await userEvent.keyboard("release{Enter}");
    expect(onAnswer).toHaveBeenCalledWith("call_q", "release");
    unmount();
    const onDismiss = vi.fn(() => Promise.resolve());
    inEnglish(<QuestionCard call={questionCall()} primary onAnswer={onDismiss} />);
    await userEvent.keyboard("{Escape}");
    expect(onDismiss).toHaveBeenCalledWith("call_q", null);
  });
});

describe("UndoChanges", () => {
  const turn: TurnChanges = { turn_id: "turn_1", paths: ["src/main.rs"], undone: false };

  it("offers undo anyway when a file changed since, and says so", async () => {
    const onUndo = vi
      .fn()
      .mockRejectedValueOnce({ code: "changed_since", message: "Nothing was undone: `src/main.rs` changed since Tooltrail wrote it." })
      .mockResolvedValueOnce({ restored: ["src/main.rs"], removed: [] });
    inEnglish(<UndoChanges changes={turn} onUndo={onUndo} />);
    await userEvent.click(screen.getByRole("button", { name: "Undo these changes" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Undo failed: Nothing was undone: `src/main.rs` changed since Tooltrail wrote it.");
    await userEvent.click(screen.getByRole("button", { name: "Undo anyway" }));
    expect(onUndo).toHaveBeenLastCalledWith("turn_1", true);
  });

  it("says when the changes are undone", () => {
    inEnglish(<UndoChanges changes={{ ...turn, undone: true }} onUndo={vi.fn()} />);
    expect(screen.getByText("These changes were undone.")).toBeInTheDocument();
  });
});

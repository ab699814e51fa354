import { cleanup, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, type InstructionsView } from "../api";
import { StreamBuilder } from "../fixtures/stream";
import { I18nProvider, type Lang } from "../i18n";
import { applyEvents, emptyChat } from "../state/chat";
import { instructionsIn } from "../state/instructions";
import { ContextMeter } from "./ContextMeter";
import { InstructionsLine } from "./Welcome";

const view = (given: Partial<InstructionsView>): InstructionsView => ({ file: null, on: true, cut: false, limit_kib: 16, left_out: [], ...given });
const LINKED_OUT = { file: "AGENTS.md", reason: "link_outside" } as const;

const inLang = (lang: Lang, ui: React.ReactNode) => render(<I18nProvider initial={lang}>{ui}</I18nProvider>);

// As crates/host/src/instructions.rs writes the section after the built-in prompt.
const SYSTEM = `You answer questions about the project folder "demo".

The project's instructions for agents, from AGENTS.md (follow them where they apply to the question):

Run make test before answering about tests.`;

function conversation(system: string) {
  const b = new StreamBuilder().start("t1", "What does it do?");
  b.push({ type: "message_added", message: { role: "system", content: system } });
  b.context(1, 900, 8_192);
  return applyEvents(emptyChat, b.events);
}

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("project instructions in the system prompt", () => {
  it("names the file, and whether it was shortened", () => {
    expect(instructionsIn(SYSTEM)).toEqual({ file: "AGENTS.md", truncated: false });
    const cut = SYSTEM.replace("AGENTS.md", "../CLAUDE.md") + "\n[the rest of ../CLAUDE.md is left out for room]";
    expect(instructionsIn(cut)).toEqual({ file: "../CLAUDE.md", truncated: true });
    expect(instructionsIn('You answer questions about the project folder "demo".')).toBeUndefined();
  });

  it("shows in the request's context meter, in both languages", () => {
    const chat = conversation(SYSTEM);
    const { unmount } = inLang("en", <ContextMeter turns={chat.turns} />);
    const line = screen.getByTestId("meter-instructions");
    expect(line).toHaveTextContent("Follows AGENTS.md");
    expect(line).toHaveAttribute("title", "The project's instructions in AGENTS.md are part of every request of this conversation.");
    unmount();
    inLang("zh", <ContextMeter turns={conversation(SYSTEM + "\n[the rest of AGENTS.md is left out for room]").turns} />);
    expect(screen.getByTestId("meter-instructions")).toHaveTextContent("遵循 AGENTS.md（已缩短）");
  });

  it("is not claimed for a conversation whose prompt has none", () => {
    vi.spyOn(api, "projectInstructions").mockResolvedValue(view({}));
    inLang("en", <ContextMeter turns={conversation('You answer questions about the project folder "demo".').turns} />);
    expect(screen.queryByTestId("meter-instructions")).not.toBeInTheDocument();
    expect(screen.getByRole("meter")).toBeInTheDocument();
  });
});

describe("the open folder's instructions line", () => {
  it("says which file new conversations follow, and turns it off and on for the folder", async () => {
    vi.spyOn(api, "projectInstructions").mockResolvedValue(view({ file: "AGENTS.md" }));
    const set = vi.spyOn(api, "setProjectInstructions").mockImplementation((on) => Promise.resolve(view({ file: "AGENTS.md", on })));
    inLang("en", <InstructionsLine />);
    const line = await screen.findByTestId("project-instructions");
    expect(line).toHaveTextContent("New conversations follow the project's instructions in AGENTS.md.");
    await userEvent.click(screen.getByRole("button", { name: "Turn off" }));
    expect(set).toHaveBeenCalledWith(false);
    await waitFor(() => expect(line).toHaveTextContent("The project's instructions in AGENTS.md are off for this folder."));
    await userEvent.click(screen.getByRole("button", { name: "Turn on" }));
    expect(set).toHaveBeenLastCalledWith(true);
    await waitFor(() => expect(line).toHaveTextContent("New conversations follow"));
  });

  it("shows nothing for a folder without instructions", async () => {
    const asked = vi.spyOn(api, "projectInstructions").mockResolvedValue(view({}));
    const { container } = inLang("zh", <InstructionsLine />);
    await waitFor(() => expect(asked).toHaveBeenCalled());
    expect(container).toBeEmptyDOMElement();
  });

  it("says which file was left out and why, and which one is followed instead", async () => {
    vi.spyOn(api, "projectInstructions").mockResolvedValue(
      view({ file: "CLAUDE.md", cut: true, left_out: [LINKED_OUT, { file: ".cursorrules", reason: "not_a_file" }] }),
    );
    inLang("en", <InstructionsLine />);
    const line = await screen.findByTestId("project-instructions");
    const leftOut = screen.getAllByTestId("instructions-left-out");
    expect(leftOut.map((p) => p.textContent)).toEqual([
      "AGENTS.md was left out: it is a link to a file outside the folder.",
      ".cursorrules was left out: it is not an ordinary file (a folder, a pipe or a device).",
    ]);
    expect(line).toHaveTextContent("New conversations follow the project's instructions in CLAUDE.md.");
    expect(screen.getByTestId("instructions-cut")).toHaveTextContent("CLAUDE.md is over 16 KiB: new conversations get only its beginning.");
  });

  it("says a file was left out when none is followed, in Chinese too", async () => {
    vi.spyOn(api, "projectInstructions").mockResolvedValue(view({ left_out: [LINKED_OUT] }));
    inLang("zh", <InstructionsLine />);
    expect(await screen.findByTestId("instructions-left-out")).toHaveTextContent("未采用 AGENTS.md：它是指向文件夹外文件的链接。");
    expect(screen.queryByRole("button")).not.toBeInTheDocument();
  });

  it("says nothing of files left out when the folder's instructions are off", async () => {
    const asked = vi.spyOn(api, "projectInstructions").mockResolvedValue(view({ on: false, left_out: [LINKED_OUT] }));
    const { container } = inLang("en", <InstructionsLine />);
    await waitFor(() => expect(asked).toHaveBeenCalled());
    expect(container).toBeEmptyDOMElement();
  });
});

describe("the context meter of a conversation without instructions", () => {
  const NONE = 'You answer questions about the project folder "demo".';

  it("names the file left out, with why in its title", async () => {
    vi.spyOn(api, "projectInstructions").mockResolvedValue(view({ left_out: [LINKED_OUT] }));
    inLang("en", <ContextMeter turns={conversation(NONE).turns} />);
    const meter = await screen.findByTestId("meter-instructions-left-out");
    expect(meter).toHaveTextContent("AGENTS.md left out");
    expect(meter).toHaveAttribute("title", "AGENTS.md was left out: it is a link to a file outside the folder.");
  });

  it("shows the file followed, not the folder's left-out ones, when the conversation carries one", async () => {
    const asked = vi.spyOn(api, "projectInstructions").mockResolvedValue(view({ left_out: [LINKED_OUT] }));
    inLang("zh", <ContextMeter turns={conversation(SYSTEM).turns} />);
    expect(screen.getByTestId("meter-instructions")).toHaveTextContent("遵循 AGENTS.md");
    expect(asked).not.toHaveBeenCalled();
    expect(screen.queryByTestId("meter-instructions-left-out")).not.toBeInTheDocument();
  });
});

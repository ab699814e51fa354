import { cleanup, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api } from "../api";
import { StreamBuilder } from "../fixtures/stream";
import { I18nProvider, type Lang } from "../i18n";
import { applyEvents, emptyChat } from "../state/chat";
import { instructionsIn } from "../state/instructions";
import { ContextMeter } from "./ContextMeter";
import { InstructionsLine } from "./Welcome";

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
    inLang("en", <ContextMeter turns={conversation('You answer questions about the project folder "demo".').turns} />);
    expect(screen.queryByTestId("meter-instructions")).not.toBeInTheDocument();
    expect(screen.getByRole("meter")).toBeInTheDocument();
  });
});

describe("the open folder's instructions line", () => {
  it("says which file new conversations follow, and turns it off and on for the folder", async () => {
    vi.spyOn(api, "projectInstructions").mockResolvedValue({ file: "AGENTS.md", on: true });
    const set = vi.spyOn(api, "setProjectInstructions").mockImplementation((on) => Promise.resolve({ file: "AGENTS.md", on }));
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
    const asked = vi.spyOn(api, "projectInstructions").mockResolvedValue({ file: null, on: true });
    const { container } = inLang("zh", <InstructionsLine />);
    await waitFor(() => expect(asked).toHaveBeenCalled());
    expect(container).toBeEmptyDOMElement();
  });
});

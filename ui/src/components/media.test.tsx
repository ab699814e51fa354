import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it } from "vitest";
import type { EventBody, JsonValue } from "../bindings";
import { StreamBuilder } from "../fixtures/stream";
import { I18nProvider } from "../i18n";
import { applyEvents, emptyChat } from "../state/chat";
import { mediaOf, structuredOf } from "./CallMedia";
import { TimelineCard } from "./TimelineCard";

const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const inLanguage = (lang: "en" | "zh", ui: React.ReactNode) => render(<I18nProvider initial={lang}>{ui}</I18nProvider>);

/** A finished MCP call whose data is `result`, as the engine records it. */
function mcpCall(tool: string, result: JsonValue) {
  const b = new StreamBuilder().start("t", "q");
  b.callDelta(1, 0, "c1", tool, {}).started(1, "c1", tool, {});
  b.tick(5).push({
    type: "tool_call_finished",
    round: 1,
    call_id: "c1",
    tool,
    source: { kind: "mcp", server: "everything" },
    description: "A tool of everything.",
    arguments: {},
    status: "success",
    duration_ms: 5,
    result: "Here's the image you requested:\n[image 1: image/png, 70 bytes]",
    data: { server: "everything", tool: "get-tiny-image", result },
    approval: { allowed: true, by: { kind: "policy" } },
    truncated_for_model: false,
  } as EventBody);
  return applyEvents(emptyChat, b.events).calls.c1!;
}

afterEach(cleanup);

describe("media of a call", () => {
  it("takes images, sounds and image resources, and leaves out types it does not draw", () => {
    const items = mediaOf({
      result: {
        content: [
          { type: "text", text: "hi" },
          { type: "image", mimeType: "image/png", data: PIXEL },
          { type: "image", mimeType: "image/svg+xml", data: "PHN2Zz4=" },
          { type: "audio", mimeType: "audio/wav", data: "UklGRg==" },
          { type: "resource", resource: { uri: "mem://a", mimeType: "image/gif", blob: "R0lGOD==" } },
        ],
      },
    });
    expect(items.map((item) => `${item.kind} ${item.mimeType}`)).toEqual(["image image/png", "audio audio/wav", "image image/gif"]);
    expect(mediaOf({ path: "a.txt" })).toEqual([]);
    expect(structuredOf({ result: { content: [], structuredContent: { a: 1 } } })).toEqual({ a: 1 });
    expect(structuredOf({ result: { content: [] } })).toBeNull();
  });

  for (const lang of ["en", "zh"] as const) {
    it(`shows the image on the card and full size on a click (${lang})`, async () => {
      const call = mcpCall("everything__get-tiny-image", { content: [{ type: "text", text: "Here's the image you requested:" }, { type: "image", mimeType: "image/png", data: PIXEL }] });
      inLanguage(lang, <TimelineCard call={call} expanded={false} selected={false} onToggle={() => {}} onShowInChat={() => {}} />);
      const strip = screen.getByTestId("call-media");
      const thumb = within(strip).getByRole("img");
      expect(thumb).toHaveAttribute("src", `data:image/png;base64,${PIXEL}`);
      expect(thumb).toHaveAttribute("alt", lang === "en" ? "Image 1 from the tool (image/png, 70 B)" : "工具返回的图片 1（image/png，70 B）");
      await userEvent.click(within(strip).getByRole("button"));
      const dialog = screen.getByRole("dialog");
      expect(within(dialog).getByRole("img")).toHaveAttribute("src", `data:image/png;base64,${PIXEL}`);
      expect(within(dialog).getByRole("button")).toHaveFocus();
      fireEvent.keyDown(window, { key: "Escape" });
      expect(screen.queryByRole("dialog")).toBeNull();
    });
  }

  it("shows structured content as a table in the expanded card", () => {
    const call = mcpCall("everything__get-structured-content", {
      content: [{ type: "text", text: '{"temperature":36}' }],
      structuredContent: { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 },
    });
    inLanguage("en", <TimelineCard call={call} expanded selected={false} onToggle={() => {}} onShowInChat={() => {}} />);
    const table = screen.getByTestId("structured-table");
    const rows = within(table)
      .getAllByRole("row")
      .map((row) => row.textContent);
    expect(rows).toEqual(["FieldValue", "temperature36", "conditionsLight rain / drizzle", "humidity82"]);
    expect(screen.queryByTestId("call-media")).toBeNull();
  });
});

describe("the provider's vision setting", () => {
  it("is sent when chosen and left to the server otherwise", async () => {
    const { EMPTY_PROVIDER_FORM, providerFormFrom, providerInput } = await import("./settings/forms");
    const form = { ...EMPTY_PROVIDER_FORM, name: "Ollama", base_url: "http://127.0.0.1:11434/v1" };
    expect("vision" in providerInput(form)).toBe(false);
    expect(providerInput({ ...form, vision: true }).vision).toBe(true);
    expect(providerInput({ ...form, vision: false }).vision).toBe(false);
    const stored = { id: "o", name: "Ollama", base_url: "http://127.0.0.1:11434/v1", model: null, key_stored: false, active: true, tool_mode: null, vision: true };
    expect(providerFormFrom(stored).vision).toBe(true);
    expect(providerFormFrom({ ...stored, vision: undefined }).vision).toBeNull();
  });
});

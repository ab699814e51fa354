// What a view is told about the window: the palette of the theme in use, the app's language,
// the size of its frame, and only what changed afterwards.
import { describe, expect, it } from "vitest";
import { MAX_INLINE_HEIGHT, contextChanges, hostContext, sandboxCsp, styleVariables, type ContextInput } from "./hostContext";

const TOOL = { name: "get-time", inputSchema: { type: "object" }, _meta: { ui: { resourceUri: "ui://get-time/mcp-app.html" } } };
const base: ContextInput = { theme: "light", lang: "en", version: "0.1.0", displayMode: "inline", width: 412.6, callId: "call_time", tool: TOOL };

/** The spec's standard names for the colours a view draws its text and background with. */
const CORE = ["--color-background-primary", "--color-text-primary", "--color-text-secondary", "--color-border-primary", "--color-ring-primary", "--font-sans", "--font-mono"];

describe("the host context", () => {
  it("gives the light palette in the light theme and the dark one in the dark", () => {
    const light = hostContext(base);
    const dark = hostContext({ ...base, theme: "dark" });
    expect(light.theme).toBe("light");
    expect(dark.theme).toBe("dark");
    const lightVars = (light.styles as { variables: Record<string, string> }).variables;
    const darkVars = (dark.styles as { variables: Record<string, string> }).variables;
    expect(lightVars["--color-background-primary"]).toBe("#ffffff");
    expect(lightVars["--color-text-primary"]).toBe("#1d2330");
    expect(darkVars["--color-background-primary"]).toBe("#16181d");
    expect(darkVars["--color-text-primary"]).toBe("#e6e8ee");
    for (const name of CORE) {
      expect(lightVars[name], name).toBeTruthy();
      expect(darkVars[name], name).toBeTruthy();
    }
    // Every standard name has a value in both themes, and only standard names are sent.
    expect(Object.keys(styleVariables("light")).sort()).toEqual(Object.keys(styleVariables("dark")).sort());
    expect(Object.keys(lightVars)).toHaveLength(76);
    expect(Object.keys(lightVars).every((name) => /^--(color|font|border|shadow)-/.test(name))).toBe(true);
  });

  it("names the locale of the app's language, English or Chinese", () => {
    expect(hostContext(base).locale).toBe("en-US");
    expect(hostContext({ ...base, lang: "zh" }).locale).toBe("zh-CN");
    expect(hostContext(base).timeZone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
  });

  it("says what the host is, which call the view shows, and the modes it offers", () => {
    const context = hostContext(base);
    expect(context).toMatchObject({
      platform: "desktop",
      userAgent: "Tooltrail/0.1.0",
      toolInfo: { id: "call_time", tool: TOOL },
      displayMode: "inline",
      availableDisplayModes: ["inline", "fullscreen"],
      containerDimensions: { width: 413, maxHeight: MAX_INLINE_HEIGHT },
    });
    expect(hostContext({ ...base, displayMode: "fullscreen", width: 1000, height: 700 }).containerDimensions).toEqual({ width: 1000, height: 700 });
  });

  it("sends only what changed: the theme and its palette, or the language", () => {
    const before = hostContext(base);
    expect(contextChanges(before, hostContext(base))).toBeNull();
    const darker = contextChanges(before, hostContext({ ...base, theme: "dark" }));
    expect(Object.keys(darker ?? {}).sort()).toEqual(["styles", "theme"]);
    const chinese = contextChanges(before, hostContext({ ...base, lang: "zh" }));
    expect(chinese).toEqual({ locale: "zh-CN" });
    const full = contextChanges(before, hostContext({ ...base, displayMode: "fullscreen", width: 1000, height: 700 }));
    expect(full).toEqual({ displayMode: "fullscreen", containerDimensions: { width: 1000, height: 700 } });
  });

  it("leaves out a tool the server never described", () => {
    expect(hostContext({ ...base, tool: null }).toolInfo).toBeUndefined();
    expect(hostContext({ ...base, tool: "get-time" }).toolInfo).toBeUndefined();
  });

  it("tells the view which domains its CSP lets it reach, and none under the strict default", () => {
    const strict = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none';";
    expect(sandboxCsp(strict)).toEqual({ connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] });
    const declared =
      "default-src 'none'; script-src 'self' 'unsafe-inline' https://cdn.example.com; connect-src 'self' https://api.example.com wss://live.example.com; img-src 'self' data: https://cdn.example.com; frame-src 'none'; object-src 'none'; base-uri 'self'";
    expect(sandboxCsp(declared)).toEqual({
      connectDomains: ["https://api.example.com", "wss://live.example.com"],
      resourceDomains: ["https://cdn.example.com"],
      frameDomains: [],
      baseUriDomains: [],
    });
  });
});

// The host context a view is given at `ui/initialize` and kept up to date with: Tooltrail's
// theme and palette under the specification's standard CSS variable names, the app's language,
// the time zone, the frame's size and display mode, and the tool whose result it shows.
import type { JsonValue } from "../bindings";
import type { Lang } from "../i18n";

export type Theme = "light" | "dark";
export type HostDisplayMode = "inline" | "fullscreen";

/** The display modes this window offers a view. */
export const AVAILABLE_DISPLAY_MODES: HostDisplayMode[] = ["inline", "fullscreen"];
/** The tallest an inline view's frame grows. */
export const MAX_INLINE_HEIGHT = 800;

/** The app's palette (ui/src/styles.css), one set a theme. */
const PALETTE: Record<Theme, Record<string, string>> = {
  light: {
    bg: "#ffffff",
    bgSide: "#f6f7f9",
    bgSoft: "#f1f3f6",
    fg: "#1d2330",
    fgMuted: "#5f6b7f",
    border: "#e3e6eb",
    accent: "#2160e6",
    accentSoft: "#e8efff",
    ok: "#15803d",
    okBg: "#ecfdf3",
    err: "#c2410c",
    errBg: "#fff3ed",
    warn: "#b45309",
    warnBg: "#fff8e6",
    cancel: "#6b7280",
    shadow: "0 1px 2px rgb(0 0 0 / 6%), 0 2px 8px rgb(0 0 0 / 5%)",
  },
  dark: {
    bg: "#16181d",
    bgSide: "#1c1f26",
    bgSoft: "#232730",
    fg: "#e6e8ee",
    fgMuted: "#9aa3b2",
    border: "#2e333d",
    accent: "#6392ff",
    accentSoft: "#1f2b48",
    ok: "#4ade80",
    okBg: "#12291b",
    err: "#fb923c",
    errBg: "#3a2418",
    warn: "#fbbf24",
    warnBg: "#3a2f14",
    cancel: "#9ca3af",
    shadow: "0 1px 2px rgb(0 0 0 / 40%)",
  },
};

const FONT_SANS = 'system-ui, -apple-system, "Segoe UI", "Noto Sans", "DejaVu Sans", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif';
const FONT_MONO = 'ui-monospace, "SFMono-Regular", "JetBrains Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace';

/** The specification's standard variables, valued from the palette of `theme`. */
export function styleVariables(theme: Theme): Record<string, string> {
  const p = PALETTE[theme];
  const c = (key: string) => p[key] ?? "";
  return {
    "--color-background-primary": c("bg"),
    "--color-background-secondary": c("bgSide"),
    "--color-background-tertiary": c("bgSoft"),
    "--color-background-inverse": c("fg"),
    "--color-background-ghost": "transparent",
    "--color-background-info": c("accentSoft"),
    "--color-background-danger": c("errBg"),
    "--color-background-success": c("okBg"),
    "--color-background-warning": c("warnBg"),
    "--color-background-disabled": c("bgSoft"),
    "--color-text-primary": c("fg"),
    "--color-text-secondary": c("fgMuted"),
    "--color-text-tertiary": c("fgMuted"),
    "--color-text-inverse": c("bg"),
    "--color-text-ghost": c("fgMuted"),
    "--color-text-info": c("accent"),
    "--color-text-danger": c("err"),
    "--color-text-success": c("ok"),
    "--color-text-warning": c("warn"),
    "--color-text-disabled": c("cancel"),
    "--color-border-primary": c("border"),
    "--color-border-secondary": c("border"),
    "--color-border-tertiary": c("border"),
    "--color-border-inverse": c("fg"),
    "--color-border-ghost": "transparent",
    "--color-border-info": c("accent"),
    "--color-border-danger": c("err"),
    "--color-border-success": c("ok"),
    "--color-border-warning": c("warn"),
    "--color-border-disabled": c("border"),
    "--color-ring-primary": c("accent"),
    "--color-ring-secondary": c("fgMuted"),
    "--color-ring-inverse": c("bg"),
    "--color-ring-info": c("accent"),
    "--color-ring-danger": c("err"),
    "--color-ring-success": c("ok"),
    "--color-ring-warning": c("warn"),
    "--font-sans": FONT_SANS,
    "--font-mono": FONT_MONO,
    "--font-weight-normal": "400",
    "--font-weight-medium": "500",
    "--font-weight-semibold": "600",
    "--font-weight-bold": "700",
    "--font-text-xs-size": "12px",
    "--font-text-sm-size": "13px",
    "--font-text-md-size": "14px",
    "--font-text-lg-size": "16px",
    "--font-text-xs-line-height": "1.5",
    "--font-text-sm-line-height": "1.5",
    "--font-text-md-line-height": "1.5",
    "--font-text-lg-line-height": "1.5",
    "--font-heading-xs-size": "12px",
    "--font-heading-sm-size": "13px",
    "--font-heading-md-size": "14px",
    "--font-heading-lg-size": "16px",
    "--font-heading-xl-size": "18px",
    "--font-heading-2xl-size": "22px",
    "--font-heading-3xl-size": "28px",
    "--font-heading-xs-line-height": "1.4",
    "--font-heading-sm-line-height": "1.4",
    "--font-heading-md-line-height": "1.4",
    "--font-heading-lg-line-height": "1.3",
    "--font-heading-xl-line-height": "1.3",
    "--font-heading-2xl-line-height": "1.25",
    "--font-heading-3xl-line-height": "1.2",
    "--border-radius-xs": "2px",
    "--border-radius-sm": "4px",
    "--border-radius-md": "6px",
    "--border-radius-lg": "8px",
    "--border-radius-xl": "12px",
    "--border-radius-full": "9999px",
    "--border-width-regular": "1px",
    "--shadow-hairline": `0 0 0 1px ${c("border")}`,
    "--shadow-sm": c("shadow"),
    "--shadow-md": c("shadow"),
    "--shadow-lg": c("shadow"),
  };
}

/** The app's theme now: it follows the system's, as styles.css does. */
export function currentTheme(): Theme {
  return typeof window !== "undefined" && window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

/** The locale a view is told for the app's language. */
export function localeOf(lang: Lang): string {
  return lang === "zh" ? "zh-CN" : "en-US";
}

export interface ContextInput {
  theme: Theme;
  lang: Lang;
  /** Tooltrail's version, for the user agent. */
  version: string;
  displayMode: HostDisplayMode;
  /** The frame's width; in fullscreen, its height too. */
  width: number;
  height?: number;
  /** The call whose result the view shows, and its tool's MCP definition. */
  callId: string;
  tool: JsonValue;
  hover?: boolean;
  touch?: boolean;
}

/** The whole host context for `ui/initialize`. */
export function hostContext(input: ContextInput): Record<string, JsonValue> {
  const width = Math.max(0, Math.round(input.width));
  const dimensions: Record<string, number> =
    input.displayMode === "fullscreen" ? { width, height: Math.max(0, Math.round(input.height ?? MAX_INLINE_HEIGHT)) } : { width, maxHeight: MAX_INLINE_HEIGHT };
  const tool = input.tool;
  // A view checks the tool as an MCP Tool; one the server never described is left out.
  const described = typeof tool === "object" && tool !== null && !Array.isArray(tool) && typeof tool.name === "string";
  return {
    ...(described ? { toolInfo: { id: input.callId, tool } } : {}),
    theme: input.theme,
    styles: { variables: styleVariables(input.theme) },
    displayMode: input.displayMode,
    availableDisplayModes: AVAILABLE_DISPLAY_MODES,
    containerDimensions: dimensions,
    locale: localeOf(input.lang),
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    userAgent: `Tooltrail/${input.version}`,
    platform: "desktop",
    deviceCapabilities: { hover: input.hover ?? true, touch: input.touch ?? false },
  };
}

/** The fields of `after` that differ from `before`: a `host-context-changed`, or null when none do. */
export function contextChanges(before: Record<string, JsonValue>, after: Record<string, JsonValue>): Record<string, JsonValue> | null {
  const changed: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(after)) {
    if (JSON.stringify(before[key]) !== JSON.stringify(value)) changed[key] = value;
  }
  return Object.keys(changed).length > 0 ? changed : null;
}

/** The domains a Content-Security-Policy header lets the view reach, as the specification's
 * `hostCapabilities.sandbox.csp` names them: what the host approved, after any refusal. */
export function sandboxCsp(header: string): Record<string, string[]> {
  const directives = new Map<string, string[]>();
  for (const part of header.split(";")) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) directives.set(name.toLowerCase(), values);
  }
  const domains = (name: string) => (directives.get(name) ?? []).filter((value) => !value.startsWith("'") && !/^[a-z-]+:$/i.test(value));
  return {
    connectDomains: domains("connect-src"),
    resourceDomains: domains("script-src"),
    frameDomains: domains("frame-src"),
    baseUriDomains: domains("base-uri"),
  };
}

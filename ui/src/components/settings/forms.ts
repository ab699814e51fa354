// What the settings forms hold, how they are checked before anything is sent, and how they turn
// into the commands' payloads. No React here, so every rule is tested on its own.
import type { EndpointInfo, Limits, McpApproval, McpServerConfig, McpServerView, ProviderInput, ProviderView, ToolMode } from "../../api";
import type { MessageKey } from "../../i18n/en";
import type { ProviderPreset } from "./presets";

/** A message for the user: a string key and its placeholders. */
export interface Problem {
  key: MessageKey;
  vars?: Record<string, string | number>;
}

export type Problems<Field extends string> = Partial<Record<Field, Problem>>;

export function hasProblems(problems: Problems<string>): boolean {
  return Object.values(problems).some(Boolean);
}

export function isHttpUrl(text: string): boolean {
  const trimmed = text.trim();
  if (!/^https?:\/\//i.test(trimmed)) return false;
  try {
    return new URL(trimmed).host !== "";
  } catch {
    return false;
  }
}

/** The same endpoint, ignoring a trailing slash and the case of the scheme and host. */
export function sameUrl(a: string, b: string): boolean {
  const norm = (url: string) => {
    const trimmed = url.trim().replace(/\/+$/, "");
    try {
      const parsed = new URL(trimmed);
      return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, "")}${parsed.search}`;
    } catch {
      return trimmed;
    }
  };
  return norm(a) === norm(b);
}

// ---- Providers ----

export interface ProviderForm {
  /** null: a new provider. */
  id: string | null;
  name: string;
  base_url: string;
  model: string;
  /** A new key; empty keeps the stored one. Never filled from the backend. */
  api_key: string;
  /** Remove the stored key on save. */
  removeKey: boolean;
  /** Whether the endpoint wants a key, when a preset said so. */
  needsKey: boolean | null;
  /** How tools are offered to its models; null: the default, auto. */
  tool_mode: ToolMode | null;
  /** US dollars per million prompt and answer tokens, as typed; empty for no price. */
  price_input: string;
  price_output: string;
  /** Whether its models see images; null: as the server says. */
  vision: boolean | null;
}

export const EMPTY_PROVIDER_FORM: ProviderForm = { id: null, name: "", base_url: "", model: "", api_key: "", removeKey: false, needsKey: null, tool_mode: null, price_input: "", price_output: "", vision: null };

export function providerFormFrom(provider: ProviderView): ProviderForm {
  return { id: provider.id, name: provider.name, base_url: provider.base_url, model: provider.model ?? "", api_key: "", removeKey: false, needsKey: null, tool_mode: provider.tool_mode, price_input: priceText(provider.price_input_per_mtok), price_output: priceText(provider.price_output_per_mtok), vision: provider.vision ?? null };
}

function priceText(price: number | null | undefined): string {
  return price === undefined || price === null ? "" : String(price);
}

/** A typed price: a number of dollars, 0 or more; `null` when the field is empty; NaN when it is not a price. */
export function parsePrice(text: string): number | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  const price = Number(trimmed);
  return Number.isFinite(price) && price >= 0 ? price : Number.NaN;
}

/** The tool modes offered in the provider form, the default first. */
export const TOOL_MODES: readonly ToolMode[] = ["auto", "native", "prompt"];

/**
 * What choosing `choice` in the select stores: auto is the default, so choosing it stores none
 * and the settings file says nothing for the provider. (A provider stored with "auto" keeps it
 * while the select is left alone.)
 */
export function chosenToolMode(choice: ToolMode): ToolMode | null {
  return choice === "auto" ? null : choice;
}

/** `base`, or `base 2`, `base 3` ... when a provider already has that name. */
export function uniqueName(base: string, taken: readonly string[]): string {
  const used = new Set(taken.map((name) => name.trim().toLowerCase()));
  if (!used.has(base.toLowerCase())) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base} ${n}`;
    if (!used.has(candidate.toLowerCase())) return candidate;
  }
}

/**
 * The form with a preset's name and address. The model is cleared (another endpoint lists other
 * models); a typed key is kept only when the preset wants one.
 */
export function applyPreset(form: ProviderForm, preset: ProviderPreset, takenNames: readonly string[]): ProviderForm {
  return {
    ...form,
    name: uniqueName(preset.name, takenNames),
    base_url: preset.base_url,
    model: "",
    api_key: preset.needsKey ? form.api_key : "",
    removeKey: false,
    needsKey: preset.needsKey,
    // Another endpoint may do function calling or not: back to the default.
    tool_mode: null,
    // Another endpoint charges other prices, if any.
    price_input: "",
    price_output: "",
    // Another endpoint's models may see images or not: back to asking the server.
    vision: null,
  };
}

export function validateProvider(form: ProviderForm, providers: readonly ProviderView[]): Problems<"name" | "base_url" | "price_input" | "price_output"> {
  const problems: Problems<"name" | "base_url" | "price_input" | "price_output"> = {};
  if (Number.isNaN(parsePrice(form.price_input))) problems.price_input = { key: "cfgPriceInvalid" };
  if (Number.isNaN(parsePrice(form.price_output))) problems.price_output = { key: "cfgPriceInvalid" };
  const name = form.name.trim();
  if (!name) problems.name = { key: "cfgNameRequired" };
  else if (providers.some((p) => p.id !== form.id && p.name.trim().toLowerCase() === name.toLowerCase())) {
    problems.name = { key: "cfgProviderNameTaken", vars: { name } };
  }
  if (!form.base_url.trim()) problems.base_url = { key: "cfgUrlRequired" };
  else if (!isHttpUrl(form.base_url)) problems.base_url = { key: "cfgUrlInvalid" };
  return problems;
}

/**
 * The payload of save_provider / test_connection: an empty key keeps the stored one, "" removes it;
 * a null tool mode leaves the provider to the default (auto).
 */
export function providerInput(form: ProviderForm): ProviderInput {
  const key = form.api_key.trim();
  return {
    id: form.id,
    name: form.name.trim(),
    base_url: form.base_url.trim(),
    model: form.model.trim() || null,
    api_key: form.removeKey ? "" : key || null,
    tool_mode: form.tool_mode,
    // Left out when not chosen: the server is then asked.
    ...(form.vision !== null ? { vision: form.vision } : {}),
    // Left out when empty: the provider then has no price.
    ...(priceOf(form.price_input) !== null ? { price_input_per_mtok: priceOf(form.price_input) } : {}),
    ...(priceOf(form.price_output) !== null ? { price_output_per_mtok: priceOf(form.price_output) } : {}),
  };
}

function priceOf(text: string): number | null {
  const price = parsePrice(text);
  return price === null || Number.isNaN(price) ? null : price;
}

/**
 * Whether questions go somewhere other than the active provider says: the environment variables
 * (TOOLTRAIL_BASE_URL, TOOLTRAIL_MODEL) win over the saved settings.
 */
export function endpointOverridden(endpoint: EndpointInfo, active: ProviderView | undefined): "address" | "model" | null {
  if (!active) return null;
  if (!sameUrl(endpoint.base_url, active.base_url)) return "address";
  return (endpoint.model ?? "") !== (active.model ?? "") ? "model" : null;
}

// ---- Limits ----

export interface LimitsForm {
  max_rounds: string;
  /** Shown in KB; saved in bytes. */
  max_result_kb: string;
  request_timeout_secs: string;
  command_timeout_secs: string;
}

/** What the backend accepts: [min, max] of each limit, in the form's units. */
export const LIMIT_RANGES: Record<keyof LimitsForm, readonly [number, number]> = {
  max_rounds: [1, 100],
  max_result_kb: [1, 1024],
  request_timeout_secs: [5, 3600],
  command_timeout_secs: [1, 120],
};

function kilobytes(bytes: number): string {
  return String(Math.round((bytes / 1024) * 100) / 100);
}

export function limitsFormFrom(limits: Limits): LimitsForm {
  return {
    max_rounds: String(limits.max_rounds),
    max_result_kb: kilobytes(limits.max_result_bytes),
    request_timeout_secs: String(limits.request_timeout_secs),
    command_timeout_secs: String(limits.command_timeout_secs),
  };
}

/** A whole number (or, with `decimals`, a plain decimal) written as digits; null otherwise. */
function parseNumber(text: string, decimals = false): number | null {
  const trimmed = text.trim();
  return (decimals ? /^\d+(\.\d+)?$/ : /^\d+$/).test(trimmed) ? Number(trimmed) : null;
}

/** The limits to save, or what is wrong with each field. */
export function validateLimits(form: LimitsForm): { problems: Problems<keyof LimitsForm>; limits: Limits | null } {
  const problems: Problems<keyof LimitsForm> = {};
  const values = {} as Record<keyof LimitsForm, number>;
  for (const field of Object.keys(LIMIT_RANGES) as (keyof LimitsForm)[]) {
    const [min, max] = LIMIT_RANGES[field];
    const decimals = field === "max_result_kb";
    const value = parseNumber(form[field], decimals);
    if (value === null) problems[field] = { key: decimals ? "cfgNotANumber" : "cfgNotAWholeNumber" };
    else if (value < min || value > max) problems[field] = { key: "cfgBetween", vars: { min, max } };
    else values[field] = value;
  }
  if (hasProblems(problems)) return { problems, limits: null };
  return {
    problems,
    limits: {
      max_rounds: values.max_rounds,
      max_result_bytes: Math.round(values.max_result_kb * 1024),
      request_timeout_secs: values.request_timeout_secs,
      command_timeout_secs: values.command_timeout_secs,
    },
  };
}

// ---- MCP servers ----

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `KEY=VALUE` lines; blank lines and `#` comments are skipped. The first mistake is reported. */
export function parseEnvLines(text: string): { env: Record<string, string>; problem: Problem | null } {
  const env: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? "").trim();
    if (!line || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq < 0) return { env, problem: { key: "cfgEnvNoEquals", vars: { line: i + 1 } } };
    const name = line.slice(0, eq).trim();
    if (!ENV_NAME.test(name)) return { env, problem: { key: "cfgEnvBadName", vars: { line: i + 1, name } } };
    if (Object.prototype.hasOwnProperty.call(env, name)) return { env, problem: { key: "cfgEnvDuplicate", vars: { line: i + 1, name } } };
    env[name] = line.slice(eq + 1).trimStart();
  }
  return { env, problem: null };
}

export function formatEnvLines(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([name, value]) => `${name}=${value}`)
    .join("\n");
}

/** One argument per line; blank lines are skipped. */
export function parseArgLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

export interface ToolOverrideRow {
  tool: string;
  approval: McpApproval;
}

export interface ToolTimeoutRow {
  tool: string;
  /** Whole seconds, as typed. */
  secs: string;
}

export interface McpForm {
  transport: "command" | "url";
  name: string;
  command: string;
  /** One per line. */
  args: string;
  url: string;
  /** KEY=VALUE lines. */
  env: string;
  cwd: string;
  enabled: boolean;
  approval: McpApproval;
  tools: ToolOverrideRow[];
  timeout_secs: string;
  toolTimeouts: ToolTimeoutRow[];
}

export const DEFAULT_MCP_TIMEOUT_SECS = 60;
const MCP_TIMEOUT_MAX = 86_400;
/** A tool's own limit may be longer than a server's: a task may run for hours (a week at most). */
const MCP_TOOL_TIMEOUT_MAX = 7 * 86_400;

export const EMPTY_MCP_FORM: McpForm = {
  transport: "command",
  name: "",
  command: "",
  args: "",
  url: "",
  env: "",
  cwd: "",
  enabled: true,
  approval: "ask",
  tools: [],
  timeout_secs: String(DEFAULT_MCP_TIMEOUT_SECS),
  toolTimeouts: [],
};

export function mcpFormFrom(server: McpServerConfig): McpForm {
  return {
    transport: server.url !== null && server.command === null ? "url" : "command",
    name: server.name,
    command: server.command ?? "",
    args: server.args.join("\n"),
    url: server.url ?? "",
    env: formatEnvLines(server.env),
    cwd: server.cwd ?? "",
    enabled: !server.disabled,
    approval: server.approval,
    tools: Object.entries(server.tools).map(([tool, approval]) => ({ tool, approval })),
    timeout_secs: String(server.timeout_secs),
    toolTimeouts: Object.entries(server.tool_timeouts_secs ?? {}).map(([tool, secs]) => ({ tool, secs: String(secs) })),
  };
}

export type McpField = "name" | "command" | "url" | "env" | "timeout_secs" | "tools" | "toolTimeouts";

/** The server to save, or what is wrong. `otherNames`: the other servers' names. */
export function validateMcp(form: McpForm, otherNames: readonly string[]): { problems: Problems<McpField>; server: McpServerConfig | null } {
  const problems: Problems<McpField> = {};
  const name = form.name.trim();
  if (!name) problems.name = { key: "cfgNameRequired" };
  else if (otherNames.includes(name)) problems.name = { key: "cfgMcpNameTaken", vars: { name } };

  let env: Record<string, string> = {};
  if (form.transport === "command") {
    if (!form.command.trim()) problems.command = { key: "cfgCommandRequired" };
    const parsed = parseEnvLines(form.env);
    if (parsed.problem) problems.env = parsed.problem;
    env = parsed.env;
  } else if (!form.url.trim()) problems.url = { key: "cfgUrlRequired" };
  else if (!isHttpUrl(form.url)) problems.url = { key: "cfgUrlInvalid" };

  const timeout = parseNumber(form.timeout_secs);
  if (timeout === null) problems.timeout_secs = { key: "cfgNotAWholeNumber" };
  else if (timeout < 1 || timeout > MCP_TIMEOUT_MAX) problems.timeout_secs = { key: "cfgBetween", vars: { min: 1, max: MCP_TIMEOUT_MAX } };

  const tools: Record<string, McpApproval> = {};
  for (const row of form.tools) {
    const tool = row.tool.trim();
    if (!tool) {
      problems.tools = { key: "cfgToolNameRequired" };
      break;
    }
    if (tool in tools) {
      problems.tools = { key: "cfgToolDuplicate", vars: { tool } };
      break;
    }
    tools[tool] = row.approval;
  }

  const toolTimeouts: Record<string, number> = {};
  for (const row of form.toolTimeouts) {
    const tool = row.tool.trim();
    if (!tool) {
      problems.toolTimeouts = { key: "cfgToolTimeoutNameRequired" };
      break;
    }
    if (tool in toolTimeouts) {
      problems.toolTimeouts = { key: "cfgToolTimeoutDuplicate", vars: { tool } };
      break;
    }
    const secs = parseNumber(row.secs);
    if (secs === null) {
      problems.toolTimeouts = { key: "cfgNotAWholeNumber" };
      break;
    }
    if (secs < 1 || secs > MCP_TOOL_TIMEOUT_MAX) {
      problems.toolTimeouts = { key: "cfgBetween", vars: { min: 1, max: MCP_TOOL_TIMEOUT_MAX } };
      break;
    }
    toolTimeouts[tool] = secs;
  }

  if (hasProblems(problems) || timeout === null) return { problems, server: null };
  const isCommand = form.transport === "command";
  return {
    problems,
    server: {
      name,
      command: isCommand ? form.command.trim() : null,
      args: isCommand ? parseArgLines(form.args) : [],
      url: isCommand ? null : form.url.trim(),
      env: isCommand ? env : {},
      cwd: isCommand ? form.cwd.trim() || null : null,
      approval: form.approval,
      tools,
      disabled: !form.enabled,
      timeout_secs: timeout,
      tool_timeouts_secs: toolTimeouts,
    },
  };
}

export interface McpRow {
  config: McpServerConfig;
  /** How it runs now; absent when the app has not heard of it yet. */
  live: McpServerView | undefined;
}

/** The configured servers, each with its live state. */
export function mergeMcp(servers: readonly McpServerConfig[], live: readonly McpServerView[]): McpRow[] {
  const byName = new Map(live.map((server) => [server.name, server]));
  return servers.map((config) => ({ config, live: byName.get(config.name) }));
}

/** How a configured server is launched, in one line. */
export function mcpLaunchLine(server: McpServerConfig): string {
  if (server.url) return server.url;
  const quote = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`);
  return [server.command ?? "", ...server.args].map(quote).join(" ");
}

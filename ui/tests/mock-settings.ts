// The mocked settings, rules and MCP-configuration commands (see mock-backend.ts). They keep
// their state in the config object, so a test can read what was saved from `window.__mock.config`.
import type {
  AppSettings,
  ConnectionTest,
  Limits,
  McpConfigView,
  McpOverview,
  McpServerConfig,
  ProviderInput,
  ProviderView,
  RuleView,
  SandboxView,
} from "../src/api";

/** The start state of these commands; tests set it through `window.__mockConfig`. */
export interface SettingsConfig {
  /**
   * An AppSettings object; a local Ollama provider when absent. Its `learned_tool_modes` (the
   * endpoints and models found to need prompt mode) shrink as forget_tool_mode is called.
   */
  settings?: AppSettings;
  /** The environment's TOOLTRAIL_BASE_URL: when set, questions go there whatever is active. */
  envBaseUrl?: string | null;
  /** Keys in the mocked keychain, by provider id (the UI must never see them). */
  keys?: Record<string, string>;
  /** When set, forget_tool_mode fails with this error (as tool-modes.json that cannot be written would). */
  forgetError?: { code: string; message: string } | null;
  /** When set, save_limits fails with this error (as a file that cannot be written would). */
  limitsError?: { code: string; message: string } | null;
  /** What test_connection lists when it connects. */
  models?: string[];
  /** How long test_connection takes, in ms (default 300). */
  testDelayMs?: number;
  sandbox?: SandboxView;
  mcpConfig?: McpConfigView;
  /** The live MCP status (an McpOverview) that mcp_servers answers with, in mock-backend.ts. */
  mcp?: unknown;
  /** The open folder's approval rules, revoked ones included. */
  rules?: RuleView[];
}

const DEFAULT_BASE_URL = "http://localhost:11434/v1";
const WORKSPACE = "/home/me/demo";

export const BUILTIN_TOOLS = [
  { name: "list_dir", description: "List a folder's entries with their type, size and modification time, sorted." },
  { name: "read_file", description: "Read a text file of the workspace. Returns the lines with their numbers." },
  { name: "search_files", description: "Find files by glob pattern, e.g. *.go or src/**/*.ts." },
  { name: "search_text", description: "Search file contents for a regular expression or plain text." },
  { name: "count_lines", description: "Count lines (as wc -l) in a file, or in every file below a folder." },
  { name: "execute_bash", description: "Run a bash command in the workspace; anything that could change files waits for approval." },
  { name: "file_write", description: "Write a text file in the workspace: overwrite (default), create (fails if it exists) or append." },
];

function defaultSettings(): AppSettings {
  return {
    providers: [{ id: "local-ollama", name: "Local Ollama", base_url: DEFAULT_BASE_URL, model: "qwen2.5-coder:7b", key_stored: false, active: true, tool_mode: null }],
    limits: { max_rounds: 10, max_result_bytes: 32 * 1024, request_timeout_secs: 120, command_timeout_secs: 30 },
    tools: BUILTIN_TOOLS.map((tool) => ({ ...tool, enabled: tool.name !== "file_write", off_by_default: tool.name === "file_write" })),
    config_path: "/home/me/.config/tooltrail/config.toml",
    endpoint: { base_url: DEFAULT_BASE_URL, model: "qwen2.5-coder:7b", api_key_set: false, config_path: "/home/me/.config/tooltrail/config.toml", problem: null, key_problem: null },
    keychain: { available: true, message: null, no_service: false },
    learned_tool_modes: [],
  };
}

const DEFAULT_SANDBOX: SandboxView = {
  enforced: true,
  summary: "enforced (Landlock ABI 5 and seccomp)",
  details: ["Writes are confined to the workspace and the temporary folder.", "Network access is blocked for commands.", "At most 256 processes per command (pids cgroup)."],
  folders: [
    { path: WORKSPACE, access: "write", kind: "workspace", reason: "workspace" },
    { path: "/tmp/tooltrail-home-XXXXXX", access: "write", kind: "temp", reason: "private temp and home folder of the call" },
    { path: "/home/me/.local/share/tooltrail/sandbox-cache/demo-0123456789abcdef", access: "write", kind: "cache", reason: "build caches of this workspace" },
    { path: "/home/me/.rustup", access: "read", kind: "toolchain", reason: "toolchain: rustup" },
    { path: "/home/me/.cargo", access: "read", kind: "toolchain", reason: "toolchain: cargo" },
    { path: "/proc", access: "read", kind: "processes", reason: "the command's own processes" },
    { path: "/usr", access: "read", kind: "system", reason: "system folder" },
    { path: "/dev/null", access: "write", kind: "device", reason: "device" },
  ],
  hidden: [{ path: "/home/me/.cargo/credentials.toml", what: "credentials" }],
  read_only_folders: [],
  network_commands: [],
  skipped: [],
};

/** Sets [sandbox] read_only_folders as the backend does: full paths or ~/..., else a sentence. */
function saveReadOnlyFolders(config: SettingsConfig, folders: string[]): SandboxView | Promise<never> {
  const kept = folders.map((folder) => folder.trim()).filter((folder) => folder.length > 0);
  const bad = kept.find((folder) => !(folder.startsWith("/") || folder === "~" || folder.startsWith("~/")));
  if (bad) return reject("settings", `The read-only folder "${bad}" must be a full path or start with ~/.`);
  const now = config.sandbox ?? structuredClone(DEFAULT_SANDBOX);
  const home = "/home/me";
  now.read_only_folders = kept;
  now.folders = [
    ...now.folders.filter((folder) => folder.kind !== "extra"),
    ...kept.map((folder) => ({ path: folder.replace(/^~/, home), access: "read", kind: "extra", reason: "extra folder from config.toml" })),
  ];
  config.sandbox = now;
  return structuredClone(now);
}

/** Sets [sandbox] network_commands as the backend does: plain words of one command, else a sentence. */
function saveNetworkCommands(config: SettingsConfig, commands: string[]): SandboxView | Promise<never> {
  const kept = commands.map((command) => command.trim().split(/\s+/).join(" ")).filter((command) => command.length > 0);
  for (const command of kept) {
    const bad = [...command].find((ch) => ";&|<>$`()'\"\\*?[{#~".includes(ch));
    if (bad) return reject("settings", `The network rule "${command}" must be plain words of one command, without \`${bad}\`.`);
  }
  const now = config.sandbox ?? structuredClone(DEFAULT_SANDBOX);
  now.network_commands = kept;
  config.sandbox = now;
  return structuredClone(now);
}

function reject(code: string, message: string): Promise<never> {
  return Promise.reject({ code, message });
}

function state(config: SettingsConfig): AppSettings {
  config.settings ??= defaultSettings();
  // A test's settings may leave out what it does not care about.
  config.settings.learned_tool_modes ??= [];
  for (const provider of config.settings.providers) provider.tool_mode ??= null;
  return config.settings;
}

function keys(config: SettingsConfig): Record<string, string> {
  config.keys ??= {};
  return config.keys;
}

/** Where questions go now: the active provider, unless the environment says otherwise. */
function refreshEndpoint(config: SettingsConfig) {
  const settings = state(config);
  const active = settings.providers.find((p) => p.active);
  settings.endpoint = {
    ...settings.endpoint,
    base_url: config.envBaseUrl ?? active?.base_url ?? DEFAULT_BASE_URL,
    model: active?.model ?? null,
    api_key_set: active?.key_stored ?? false,
  };
}

function activate(config: SettingsConfig, id: string) {
  for (const provider of state(config).providers) provider.active = provider.id === id;
  refreshEndpoint(config);
}

function saveProvider(config: SettingsConfig, input: ProviderInput, makeActive: boolean): ProviderView | Promise<never> {
  const settings = state(config);
  const name = (input.name ?? "").trim();
  const baseUrl = (input.base_url ?? "").trim().replace(/\/+$/, "");
  // The backend's checks and sentences (tooltrail-settings, ConfigEditor::upsert_provider).
  if (!name) return reject("settings", "A provider needs a name.");
  if (!/^https?:\/\/\S+$/.test(baseUrl)) return reject("settings", `The base URL "${baseUrl}" must start with http:// or https://.`);
  const apiKey = input.api_key?.trim();
  if (apiKey && !settings.keychain.available) return reject("keychain", `The key could not be stored: ${settings.keychain.message ?? "there is no keychain."}`);

  let provider = input.id ? settings.providers.find((p) => p.id === input.id) : undefined;
  if (input.id && !provider) return reject("not_found", `There is no provider "${input.id}".`);
  if (!provider) {
    // An id made from the name, as the backend makes it.
    const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "provider";
    let id = slug;
    for (let n = 2; settings.providers.some((p) => p.id === id); n++) id = `${slug}-${n}`;
    provider = { id, name, base_url: baseUrl, model: null, key_stored: false, active: false, tool_mode: null };
    settings.providers.push(provider);
  }
  provider.name = name;
  provider.base_url = baseUrl;
  provider.model = input.model?.trim() || null;
  // null (or left out): the default, auto; the backend leaves tool_mode out of the provider.
  provider.tool_mode = input.tool_mode ?? null;
  // Left out: no price (the backend leaves it out of the file and of the view).
  for (const key of ["price_input_per_mtok", "price_output_per_mtok"] as const) {
    const price = input[key];
    if (price === undefined || price === null) delete provider[key];
    else provider[key] = price;
  }
  if (apiKey === "") {
    delete keys(config)[provider.id];
    provider.key_stored = false;
  } else if (apiKey) {
    keys(config)[provider.id] = apiKey;
    provider.key_stored = true;
  }
  if (makeActive) activate(config, provider.id);
  else refreshEndpoint(config);
  return { ...provider };
}

/** The same endpoint, ignoring a trailing slash (as tool-modes.json compares them). */
const sameEndpoint = (a: string, b: string) => a.trim().replace(/\/+$/, "") === b.trim().replace(/\/+$/, "");

/** Forgets that a model at an endpoint needed prompt mode; nothing to forget is not an error. */
function forgetToolMode(config: SettingsConfig, baseUrl: string, model: string): null | Promise<never> {
  if (config.forgetError) return Promise.reject(config.forgetError);
  const settings = state(config);
  settings.learned_tool_modes = settings.learned_tool_modes.filter((entry) => !(sameEndpoint(entry.base_url, baseUrl) && entry.model === model));
  return null;
}

function testConnection(config: SettingsConfig, input: ProviderInput): Promise<ConnectionTest> {
  const url = (input.base_url ?? "").trim();
  let answer: ConnectionTest;
  if (url.includes("bad")) answer = { ok: false, models: [], message: `Could not connect to ${url}/models: connection refused.` };
  else if (url.includes("unauthorized")) answer = { ok: false, models: [], message: `${url}/models answered 401 Unauthorized: check the API key.` };
  else answer = { ok: true, models: config.models ?? ["qwen2.5-coder:7b", "llama3.1:8b", "deepseek-coder-v2:16b"], message: null };
  return new Promise((resolve) => setTimeout(() => resolve(answer), config.testDelayMs ?? 300));
}

function saveLimits(config: SettingsConfig, limits: Limits): Limits | Promise<never> {
  if (config.limitsError) return Promise.reject(config.limitsError);
  const within = (n: unknown, min: number, max: number) => typeof n === "number" && Number.isInteger(n) && n >= min && n <= max;
  // The backend's checks and sentences (tooltrail-settings, Limits::check).
  if (!within(limits.max_rounds, 1, 100)) return reject("settings", "The round limit must be between 1 and 100.");
  if (!within(limits.max_result_bytes, 1024, 1024 * 1024)) return reject("settings", "The result size limit must be between 1 KB and 1 MB.");
  if (!within(limits.request_timeout_secs, 5, 3600)) return reject("settings", "The model wait limit must be between 5 and 3600 seconds.");
  if (!within(limits.command_timeout_secs, 1, 120)) return reject("settings", "The command time limit must be between 1 and 120 seconds.");
  state(config).limits = { ...limits };
  return { ...limits };
}

// ---- Rules ----

const RUNS_ANYTHING = ["bash", "sh", "zsh", "python", "python3", "node", "perl", "ruby", "env", "xargs", "sudo", "eval"];

function quoteWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

// The backend's checks and sentences (tooltrail-sandbox, rules::prefix_for), roughly.
function addRule(config: SettingsConfig, kind: string, command: string): RuleView | Promise<never> {
  if (kind !== "allow" && kind !== "deny") return reject("bad_input", `"${kind}" is not allow or deny.`);
  const words = command.trim().split(/\s+/).filter(Boolean);
  const program = words[0];
  if (!program) return reject("bad_input", "Give the command's first words, such as `cargo test`.");
  if (kind === "allow") {
    if (program === "rm" && words.some((w) => w === "/" || w === "~" || w === "/*" || w === "~/")) {
      return reject("bad_rule", "It deletes the root or home folder, so it cannot be allowed.");
    }
    if (program.includes("/")) return reject("bad_rule", `\`${program}\` is a path; an allow rule names a program from PATH.`);
    if (RUNS_ANYTHING.includes(program)) return reject("bad_rule", `\`${program}\` runs other programs or code, so it cannot be always allowed.`);
    const glob = words.find((w) => /[*?[{]/.test(w));
    if (glob) return reject("bad_rule", `\`${glob}\` is a pattern; an allow rule holds plain words only.`);
  }
  config.rules ??= [];
  const rule: RuleView = {
    id: `rule_${config.rules.length + 1}`,
    workspace: WORKSPACE,
    kind,
    tool: "execute_bash",
    prefix: words,
    command: words.map(quoteWord).join(" "),
    created_ms: Date.now(),
    revoked_ms: null,
  };
  config.rules.push(rule);
  return rule;
}

function revokeRule(config: SettingsConfig, id: string): RuleView | Promise<never> {
  const rule = config.rules?.find((r) => r.id === id);
  if (!rule) return reject("not_found", `There is no rule "${id}".`);
  rule.revoked_ms ??= Date.now();
  return { ...rule };
}

// ---- MCP ----

function mcpState(config: SettingsConfig): McpConfigView {
  config.mcpConfig ??= { path: "/home/me/.config/tooltrail/mcp.json", servers: [], problem: null };
  return config.mcpConfig;
}

function liveState(config: SettingsConfig): McpOverview {
  config.mcp ??= { servers: [] };
  return config.mcp as McpOverview;
}

function saveMcpServer(config: SettingsConfig, previousName: string | null, server: McpServerConfig): null | Promise<never> {
  const file = mcpState(config);
  // The backend's checks and sentences (preferences::save_mcp_server, then mcp.json's reader).
  if (file.problem) return reject("mcp_config", file.problem);
  const name = server.name.trim();
  if (!name) return reject("bad_input", "An MCP server needs a name.");
  const approvals = ["allow", "ask", "never"];
  if (!approvals.includes(server.approval) || Object.values(server.tools).some((a) => !approvals.includes(a))) {
    return reject("bad_input", "Approval must be allow, ask or never.");
  }
  if (name !== previousName && file.servers.some((s) => s.name === name)) return reject("bad_input", `There is already an MCP server named "${name}" in mcp.json.`);
  const command = server.command?.trim() || null;
  const url = server.url?.trim() || null;
  if (command && url) return reject("mcp_config", `Mcp.json: server "${name}" has both "command" and "url"; give one.`);
  if (!command && !url) return reject("mcp_config", `Mcp.json: server "${name}" needs "command" (a program to run) or "url" (a Streamable HTTP endpoint).`);
  if (url && !/^https?:\/\//.test(url)) return reject("mcp_config", `Mcp.json: server "${name}": "url" must start with http:// or https://.`);
  if (!(Number.isInteger(server.timeout_secs) && server.timeout_secs > 0 && server.timeout_secs <= 86_400)) {
    return reject("mcp_config", `Mcp.json: server "${name}": "timeout_secs" must be a number of seconds above 0 (at most a day).`);
  }
  const stored: McpServerConfig = { ...server, name, command, url, cwd: server.cwd?.trim() || null };
  const index = previousName === null ? -1 : file.servers.findIndex((s) => s.name === previousName);
  if (index < 0) file.servers.push(stored);
  else file.servers[index] = stored;
  // The app restarts changed servers at the next question; until then they have not started.
  const live = liveState(config);
  live.servers = live.servers.filter((s) => s.name !== previousName && s.name !== name);
  live.servers.push({ name, state: server.disabled ? "disabled" : "idle", tools: 0 });
  return null;
}

function removeMcpServer(config: SettingsConfig, name: string): null | Promise<never> {
  const file = mcpState(config);
  if (!file.servers.some((s) => s.name === name)) return reject("not_found", `There is no server named "${name}".`);
  file.servers = file.servers.filter((s) => s.name !== name);
  const live = liveState(config);
  live.servers = live.servers.filter((s) => s.name !== name);
  return null;
}

/** The answer to `cmd`, or `undefined` when `cmd` is not one of these. */
export function settingsCommand(cmd: string, args: Record<string, unknown>, config: SettingsConfig): unknown {
  switch (cmd) {
    case "get_settings":
      state(config);
      refreshEndpoint(config);
      return structuredClone(state(config));
    case "save_provider":
      return saveProvider(config, args.provider as ProviderInput, Boolean(args.activate));
    case "delete_provider": {
      const settings = state(config);
      const id = String(args.id);
      if (!settings.providers.some((p) => p.id === id)) return reject("not_found", `There is no provider "${id}".`);
      settings.providers = settings.providers.filter((p) => p.id !== id);
      delete keys(config)[id];
      refreshEndpoint(config);
      return null;
    }
    case "activate_provider": {
      const id = String(args.id);
      if (!state(config).providers.some((p) => p.id === id)) return reject("settings", `There is no provider "${id}".`);
      activate(config, id);
      return null;
    }
    case "forget_tool_mode":
      return forgetToolMode(config, String(args.baseUrl), String(args.model));
    case "test_connection":
      return testConnection(config, args.provider as ProviderInput);
    case "save_limits":
      return saveLimits(config, args.limits as Limits);
    case "set_tool_enabled": {
      const tool = state(config).tools.find((t) => t.name === args.name);
      if (!tool) return reject("not_found", `There is no built-in tool "${String(args.name)}".`);
      tool.enabled = Boolean(args.enabled);
      return null;
    }
    case "sandbox_status":
      return config.sandbox ?? DEFAULT_SANDBOX;
    case "save_read_only_folders":
      return saveReadOnlyFolders(config, (args.folders as string[]) ?? []);
    case "save_network_commands":
      return saveNetworkCommands(config, (args.commands as string[]) ?? []);
    case "mcp_config":
      return structuredClone(mcpState(config));
    case "save_mcp_server":
      return saveMcpServer(config, (args.previousName as string | null) ?? null, args.server as McpServerConfig);
    case "remove_mcp_server":
      return removeMcpServer(config, String(args.name));
    case "list_rules":
      // The live rules, newest first.
      return (config.rules ?? []).filter((rule) => rule.revoked_ms === null).sort((a, b) => b.created_ms - a.created_ms).map((rule) => ({ ...rule }));
    case "add_rule":
      return addRule(config, String(args.kind), String(args.command ?? ""));
    case "revoke_rule":
      return revokeRule(config, String(args.id));
    default:
      return undefined;
  }
}

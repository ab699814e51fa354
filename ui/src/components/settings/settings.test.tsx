import { act, render, screen, waitFor, within } from "@testing-library/react";
import { useState } from "react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, type AppSettings, type EndpointInfo, type McpConfigView, type McpServerConfig, type ProviderView } from "../../api";
import { I18nProvider } from "../../i18n";
import { settingsEn, settingsZh } from "../../i18n/settings";
import {
  applyPreset,
  chosenToolMode,
  EMPTY_MCP_FORM,
  EMPTY_PROVIDER_FORM,
  endpointOverridden,
  formatEnvLines,
  limitsFormFrom,
  mcpFormFrom,
  mergeMcp,
  parseArgLines,
  parseEnvLines,
  providerFormFrom,
  providerInput,
  validateLimits,
  validateMcp,
  validateProvider,
} from "./forms";
import { LimitsSection } from "./LimitsSection";
import { McpSection } from "./McpSection";
import { PROVIDER_PRESETS } from "./presets";
import { ProvidersSection } from "./ProvidersSection";
import { RulesSection } from "./RulesSection";
import { ToolsSection } from "./ToolsSection";

const inEnglish = (ui: React.ReactNode) => render(<I18nProvider initial="en">{ui}</I18nProvider>);
const inChinese = (ui: React.ReactNode) => render(<I18nProvider initial="zh">{ui}</I18nProvider>);

afterEach(() => {
  vi.restoreAllMocks();
});

const preset = (id: string) => {
  const found = PROVIDER_PRESETS.find((p) => p.id === id);
  if (!found) throw new Error(`no preset ${id}`);
  return found;
};

const local: ProviderView = { id: "local", name: "Local Ollama", base_url: "http://localhost:11434/v1", model: "qwen2.5-coder:7b", key_stored: false, active: true, tool_mode: null };
const openai: ProviderView = { id: "openai", name: "OpenAI", base_url: "https://api.openai.com/v1", model: null, key_stored: true, active: false, tool_mode: null };
const endpoint: EndpointInfo = { base_url: "http://localhost:11434/v1", model: "qwen2.5-coder:7b", api_key_set: false, config_path: "/c/config.toml", problem: null, key_problem: null };

function appSettings(partial: Partial<AppSettings> = {}): AppSettings {
  return {
    providers: [local, openai],
    limits: { max_rounds: 10, max_result_bytes: 32 * 1024, request_timeout_secs: 120, command_timeout_secs: 30 },
    tools: [
      { name: "read_file", description: "Read a text file.", enabled: true, off_by_default: false },
      { name: "execute_bash", description: "Run a bash command.", enabled: true, off_by_default: false },
    ],
    config_path: "/c/config.toml",
    endpoint,
    keychain: { available: true, message: null, no_service: false },
    learned_tool_modes: [],
    ...partial,
  };
}

describe("presets", () => {
  it("are the six well-known endpoints, saying which need a key", () => {
    expect(PROVIDER_PRESETS.map((p) => [p.name, p.base_url, p.needsKey])).toEqual([
      ["Ollama", "http://localhost:11434/v1", false],
      ["LM Studio", "http://localhost:1234/v1", false],
      ["llama.cpp server", "http://localhost:8080/v1", false],
      ["OpenAI", "https://api.openai.com/v1", true],
      ["OpenRouter", "https://openrouter.ai/api/v1", true],
      ["DeepSeek", "https://api.deepseek.com/v1", true],
    ]);
  });

  it("fill the name and address, clear the model, and keep a typed key only when one is needed", () => {
    const typed = { ...EMPTY_PROVIDER_FORM, model: "gpt-4o", api_key: "sk-typed" };
    const keyed = applyPreset(typed, preset("openai"), []);
    expect(keyed).toMatchObject({ name: "OpenAI", base_url: "https://api.openai.com/v1", model: "", api_key: "sk-typed", needsKey: true, id: null });
    const keyless = applyPreset(typed, preset("ollama"), []);
    expect(keyless).toMatchObject({ name: "Ollama", base_url: "http://localhost:11434/v1", api_key: "", needsKey: false });
  });

  it("never reuse a name a provider already has", () => {
    expect(applyPreset(EMPTY_PROVIDER_FORM, preset("openai"), ["openai", "OpenAI 2"]).name).toBe("OpenAI 3");
  });
});

describe("provider form", () => {
  it("wants a name, an http(s) address and a name no other provider has", () => {
    expect(validateProvider(EMPTY_PROVIDER_FORM, [])).toEqual({ name: { key: "cfgNameRequired" }, base_url: { key: "cfgUrlRequired" } });
    expect(validateProvider({ ...EMPTY_PROVIDER_FORM, name: "x", base_url: "localhost:1234" }, []).base_url?.key).toBe("cfgUrlInvalid");
    expect(validateProvider({ ...EMPTY_PROVIDER_FORM, name: "x", base_url: "ftp://host/v1" }, []).base_url?.key).toBe("cfgUrlInvalid");
    expect(validateProvider({ ...EMPTY_PROVIDER_FORM, name: " local ollama ", base_url: "http://h/v1" }, [local]).name?.key).toBe("cfgProviderNameTaken");
    // Its own name is not taken.
    expect(validateProvider(providerFormFrom(local), [local])).toEqual({});
  });

  it("keeps the stored key when the field is empty, removes it on request, replaces it when typed", () => {
    const form = providerFormFrom(openai);
    expect(form.api_key).toBe("");
    expect(providerInput(form)).toEqual({ id: "openai", name: "OpenAI", base_url: "https://api.openai.com/v1", model: null, api_key: null, tool_mode: null });
    expect(providerInput({ ...form, api_key: "  sk-new  " }).api_key).toBe("sk-new");
    expect(providerInput({ ...form, removeKey: true }).api_key).toBe("");
    expect(providerInput({ ...form, model: "  gpt-4o " }).model).toBe("gpt-4o");
  });

  it("keeps the tool mode: auto, the default, is sent as none; a preset starts from the default", () => {
    expect(providerFormFrom(local).tool_mode).toBe(null);
    expect(providerInput(providerFormFrom({ ...local, tool_mode: "prompt" })).tool_mode).toBe("prompt");
    // A provider stored with "auto" keeps it while the select is left alone.
    expect(providerInput(providerFormFrom({ ...local, tool_mode: "auto" })).tool_mode).toBe("auto");
    expect(chosenToolMode("auto")).toBe(null);
    expect(chosenToolMode("native")).toBe("native");
    expect(applyPreset({ ...EMPTY_PROVIDER_FORM, tool_mode: "prompt" }, preset("ollama"), []).tool_mode).toBe(null);
  });

  it("notices when the environment sends questions elsewhere than the active provider", () => {
    expect(endpointOverridden(endpoint, local)).toBe(null);
    expect(endpointOverridden({ ...endpoint, base_url: "http://localhost:11434/v1/" }, local)).toBe(null);
    expect(endpointOverridden({ ...endpoint, base_url: "http://gpu-box:8000/v1" }, local)).toBe("address");
    expect(endpointOverridden({ ...endpoint, model: "llama3" }, local)).toBe("model");
    expect(endpointOverridden(endpoint, undefined)).toBe(null);
  });
});

describe("limits form", () => {
  const form = limitsFormFrom({ max_rounds: 10, max_result_bytes: 32 * 1024, request_timeout_secs: 120, command_timeout_secs: 30 });

  it("shows the result size in KB and saves it in bytes", () => {
    expect(form.max_result_kb).toBe("32");
    expect(validateLimits({ ...form, max_result_kb: "1.5" }).limits?.max_result_bytes).toBe(1536);
    expect(validateLimits(form)).toEqual({ problems: {}, limits: { max_rounds: 10, max_result_bytes: 32768, request_timeout_secs: 120, command_timeout_secs: 30 } });
  });

  it("refuses what the backend would, field by field", () => {
    const { problems, limits } = validateLimits({ max_rounds: "0", max_result_kb: "abc", request_timeout_secs: "2", command_timeout_secs: "121" });
    expect(limits).toBeNull();
    expect(problems).toEqual({
      max_rounds: { key: "cfgBetween", vars: { min: 1, max: 100 } },
      max_result_kb: { key: "cfgNotANumber" },
      request_timeout_secs: { key: "cfgBetween", vars: { min: 5, max: 3600 } },
      command_timeout_secs: { key: "cfgBetween", vars: { min: 1, max: 120 } },
    });
    expect(validateLimits({ ...form, max_rounds: "2.5" }).problems.max_rounds?.key).toBe("cfgNotAWholeNumber");
    expect(validateLimits({ ...form, command_timeout_secs: "120" }).limits?.command_timeout_secs).toBe(120);
    expect(validateLimits({ ...form, command_timeout_secs: "1" }).problems).toEqual({});
  });
});

describe("env lines", () => {
  it("read NAME=value lines, skipping blanks and comments, keeping = in values", () => {
    expect(parseEnvLines("DEBUG=1\n\n# a comment\n  TOKEN = ${MY_TOKEN}\nURL=http://x/?a=b\r\nEMPTY=")).toEqual({
      env: { DEBUG: "1", TOKEN: "${MY_TOKEN}", URL: "http://x/?a=b", EMPTY: "" },
      problem: null,
    });
  });

  it("name the line of the first mistake", () => {
    expect(parseEnvLines("A=1\nnot a pair").problem).toEqual({ key: "cfgEnvNoEquals", vars: { line: 2 } });
    expect(parseEnvLines("1ABC=x").problem).toEqual({ key: "cfgEnvBadName", vars: { line: 1, name: "1ABC" } });
    expect(parseEnvLines("=x").problem?.key).toBe("cfgEnvBadName");
    expect(parseEnvLines("A=1\nB=2\nA=3").problem).toEqual({ key: "cfgEnvDuplicate", vars: { line: 3, name: "A" } });
  });

  it("round-trip through the form", () => {
    const env = { DEBUG: "1", TOKEN: "a=b" };
    expect(parseEnvLines(formatEnvLines(env)).env).toEqual(env);
    expect(parseArgLines("-y\n @scope/server \n\n.")).toEqual(["-y", "@scope/server", "."]);
  });
});

describe("MCP form", () => {
  const fs: McpServerConfig = { name: "fs", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."], url: null, env: { DEBUG: "1" }, cwd: null, approval: "allow", tools: { write_file: "ask" }, disabled: false, timeout_secs: 60, tool_timeouts_secs: { index_all: 7200 } };

  it("round-trips a server", () => {
    expect(validateMcp(mcpFormFrom(fs), [])).toEqual({ problems: {}, server: fs });
    const web: McpServerConfig = { ...fs, name: "web", command: null, args: [], url: "https://example.com/mcp", env: {}, tools: {}, disabled: true, timeout_secs: 30, tool_timeouts_secs: {} };
    expect(mcpFormFrom(web).transport).toBe("url");
    expect(validateMcp(mcpFormFrom(web), ["fs"]).server).toEqual(web);
  });

  it("sends only the chosen transport's fields", () => {
    const form = { ...mcpFormFrom(fs), transport: "url" as const, url: "http://localhost:3000/mcp" };
    expect(validateMcp(form, []).server).toMatchObject({ command: null, args: [], env: {}, cwd: null, url: "http://localhost:3000/mcp" });
  });

  it("reports a missing name or program, a taken name, bad env lines, a bad time limit and tool rules", () => {
    expect(validateMcp(EMPTY_MCP_FORM, []).problems).toEqual({ name: { key: "cfgNameRequired" }, command: { key: "cfgCommandRequired" } });
    const form = mcpFormFrom(fs);
    expect(validateMcp(form, ["fs"]).problems.name?.key).toBe("cfgMcpNameTaken");
    expect(validateMcp({ ...form, env: "oops" }, []).problems.env?.key).toBe("cfgEnvNoEquals");
    expect(validateMcp({ ...form, timeout_secs: "0" }, []).problems.timeout_secs?.key).toBe("cfgBetween");
    expect(validateMcp({ ...form, transport: "url", url: "example.com" }, []).problems.url?.key).toBe("cfgUrlInvalid");
    expect(validateMcp({ ...form, tools: [{ tool: "", approval: "never" }] }, []).problems.tools?.key).toBe("cfgToolNameRequired");
    expect(validateMcp({ ...form, tools: [{ tool: "a", approval: "never" }, { tool: " a ", approval: "ask" }] }, []).problems.tools).toEqual({ key: "cfgToolDuplicate", vars: { tool: "a" } });
  });

  it("takes a time limit per tool, up to a week, and reports a bad one", () => {
    const form = mcpFormFrom(fs);
    expect(form.toolTimeouts).toEqual([{ tool: "index_all", secs: "7200" }]);
    const long = { ...form, toolTimeouts: [{ tool: " research ", secs: "86400" }] };
    expect(validateMcp(long, []).server?.tool_timeouts_secs).toEqual({ research: 86400 });
    expect(validateMcp({ ...form, toolTimeouts: [{ tool: "", secs: "5" }] }, []).problems.toolTimeouts?.key).toBe("cfgToolTimeoutNameRequired");
    expect(validateMcp({ ...form, toolTimeouts: [{ tool: "a", secs: "0" }] }, []).problems.toolTimeouts).toEqual({ key: "cfgBetween", vars: { min: 1, max: 604800 } });
    expect(validateMcp({ ...form, toolTimeouts: [{ tool: "a", secs: "5" }, { tool: "a", secs: "6" }] }, []).problems.toolTimeouts?.key).toBe("cfgToolTimeoutDuplicate");
  });

  it("pairs each configured server with its live state", () => {
    const rows = mergeMcp([fs, { ...fs, name: "db" }], [{ name: "db", state: "failed", tools: 0, error: "gone" }, { name: "old", state: "running", tools: 3 }]);
    expect(rows.map((r) => [r.config.name, r.live?.state])).toEqual([
      ["fs", undefined],
      ["db", "failed"],
    ]);
  });
});

describe("strings", () => {
  it("exist in Chinese for every English key, with the same placeholders", () => {
    for (const [key, text] of Object.entries(settingsEn)) {
      const zh = settingsZh[key as keyof typeof settingsEn];
      expect(zh, key).toBeTruthy();
      const names = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      expect(names(zh), key).toEqual(names(text));
    }
  });
});

describe("ProvidersSection", () => {
  it("says when questions go to the model Tooltrail runs itself", () => {
    const local = { ...endpoint, base_url: "http://localhost:11434/v1", model: "gemma", local_model: "gemma" };
    inEnglish(<ProvidersSection settings={appSettings({ endpoint: local, providers: [] })} onChanged={() => Promise.resolve()} />);
    expect(screen.getByTestId("cfg-endpoint-local")).toHaveTextContent("Questions go to the model Tooltrail runs on this computer, gemma (Settings → Models).");
    expect(screen.queryByText(/No provider is in use/)).toBeNull();
    expect(screen.queryByText("http://localhost:11434/v1")).toBeNull();
  });

  it("adds a provider from a preset with a key, and the key is gone from the page afterwards", async () => {
    const save = vi.spyOn(api, "saveProvider").mockResolvedValue({ ...openai, id: "openai-2", name: "OpenAI 2" });
    const onChanged = vi.fn(() => Promise.resolve());
    inEnglish(<ProvidersSection settings={appSettings()} onChanged={onChanged} />);
    expect(screen.getByText("key in keychain")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: /OpenRouter/ }));
    const form = screen.getByRole("form", { name: "New provider" });
    expect(within(form).getByLabelText("Name")).toHaveValue("OpenRouter");
    expect(within(form).getByLabelText("Base URL")).toHaveValue("https://openrouter.ai/api/v1");
    const key = within(form).getByLabelText("API key");
    expect(key).toHaveAttribute("type", "password");
    expect(key).toHaveAttribute("placeholder", "Needed for this endpoint");
    await userEvent.type(key, "sk-or-secret");
    await userEvent.click(within(form).getByRole("button", { name: "Save and use" }));
    expect(save).toHaveBeenCalledWith({ id: null, name: "OpenRouter", base_url: "https://openrouter.ai/api/v1", model: null, api_key: "sk-or-secret", tool_mode: null }, true);
    await waitFor(() => expect(onChanged).toHaveBeenCalled());
    expect(screen.queryByRole("form")).toBeNull();
    expect(document.body.innerHTML).not.toContain("sk-or-secret");
  });

  it("says a key is stored without showing it, and Remove key sends an empty key", async () => {
    const save = vi.spyOn(api, "saveProvider").mockResolvedValue({ ...openai, key_stored: false });
    inEnglish(<ProvidersSection settings={appSettings()} onChanged={() => Promise.resolve()} />);
    await userEvent.click(screen.getByRole("button", { name: "Edit OpenAI" }));
    const key = screen.getByLabelText("API key");
    expect(key).toHaveValue("");
    expect(key).toHaveAttribute("placeholder", "Stored in the keychain — leave empty to keep");
    await userEvent.click(screen.getByRole("button", { name: "Remove key" }));
    expect(key).toBeDisabled();
    // Tested without the key that is about to go.
    const test = vi.spyOn(api, "testConnection").mockResolvedValue({ ok: true, models: [], message: null });
    await userEvent.click(screen.getByRole("button", { name: "Test connection" }));
    expect(test).toHaveBeenCalledWith(expect.objectContaining({ id: null, api_key: null }));
    await userEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(save).toHaveBeenCalledWith(expect.objectContaining({ id: "openai", api_key: "" }), false);
  });

  it("shows the test's progress, then the models to pick from, or the exact failure", async () => {
    let finish: (value: { ok: boolean; models: string[]; message: string | null }) => void = () => {};
    const test = vi.spyOn(api, "testConnection").mockImplementation(() => new Promise((resolve) => (finish = resolve)));
    inEnglish(<ProvidersSection settings={appSettings()} onChanged={() => Promise.resolve()} />);
    await userEvent.click(screen.getByRole("button", { name: "Edit Local Ollama" }));
    await userEvent.click(screen.getByRole("button", { name: "Test connection" }));
    expect(test).toHaveBeenCalledWith(expect.objectContaining({ id: "local", base_url: "http://localhost:11434/v1", api_key: null }));
    expect(screen.getByRole("button", { name: /Testing/ })).toBeDisabled();
    await act(async () => finish({ ok: true, models: ["llama3.1:8b", "qwen2.5-coder:7b"], message: null }));
    expect(screen.getByText("Connected: 2 models listed.")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "llama3.1:8b" }));
    expect(screen.getByLabelText("Model (optional)")).toHaveValue("llama3.1:8b");

    test.mockResolvedValue({ ok: false, models: [], message: "Could not connect: connection refused." });
    await userEvent.click(screen.getByRole("button", { name: "Test connection" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Connection failed: Could not connect: connection refused.");
  });

  it("does not send a form with problems", async () => {
    const save = vi.spyOn(api, "saveProvider");
    inEnglish(<ProvidersSection settings={appSettings()} onChanged={() => Promise.resolve()} />);
    await userEvent.click(screen.getByRole("button", { name: /Other/ }));
    await userEvent.type(screen.getByLabelText("Base URL"), "localhost:1234");
    await userEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(save).not.toHaveBeenCalled();
    expect(screen.getByText("Give it a name.")).toBeInTheDocument();
    expect(screen.getByText("The address must start with http:// or https://.")).toBeInTheDocument();
  });

  it("warns when keys cannot be saved and when the environment overrides the active provider", () => {
    inEnglish(
      <ProvidersSection
        settings={appSettings({ keychain: { available: false, message: "No Secret Service is running.", no_service: false }, endpoint: { ...endpoint, base_url: "http://gpu-box:8000/v1" } })}
        onChanged={() => Promise.resolve()}
      />,
    );
    expect(screen.getByTestId("cfg-keychain")).toHaveTextContent("API keys cannot be saved. No Secret Service is running.");
    expect(screen.getByTestId("cfg-env-override")).toHaveTextContent("TOOLTRAIL_BASE_URL overrides the active provider Local Ollama");
  });

  it("says, when no keychain runs at all, that keys cannot be stored, how to fix it and what works meanwhile", () => {
    const settings = appSettings({
      keychain: { available: false, message: "API keys cannot be stored, because no keychain is running.", no_service: true },
      endpoint: { ...endpoint, key_problem: "The API key of provider \"OpenAI\" could not be read, so none is sent: API keys cannot be stored." },
    });
    const { unmount } = inEnglish(<ProvidersSection settings={settings} onChanged={() => Promise.resolve()} />);
    const line = screen.getByTestId("cfg-keychain");
    expect(line).toHaveTextContent(/^API keys cannot be stored: no keychain is running on this computer/);
    expect(line).toHaveTextContent("install gnome-keyring");
    expect(line).toHaveTextContent("TOOLTRAIL_API_KEY");
    expect(line).not.toHaveTextContent(/D-?Bus/);
    // Said once, not again as the active provider's key problem.
    expect(screen.queryByTestId("cfg-key-problem")).not.toBeInTheDocument();
    unmount();
    inChinese(<ProvidersSection settings={settings} onChanged={() => Promise.resolve()} />);
    expect(screen.getByTestId("cfg-keychain")).toHaveTextContent("无法保存 API 密钥");
    expect(screen.getByTestId("cfg-keychain")).toHaveTextContent("TOOLTRAIL_API_KEY");
  });

  it("saves the tool calling mode with the provider and shows a mode other than auto in the list", async () => {
    const save = vi.spyOn(api, "saveProvider").mockResolvedValue({ ...local, tool_mode: "prompt" });
    inEnglish(<ProvidersSection settings={appSettings({ providers: [local, { ...openai, tool_mode: "native" }] })} onChanged={() => Promise.resolve()} />);
    // Only a provider with a mode of its own has a badge.
    expect(document.querySelector('[data-provider="OpenAI"]')).toHaveTextContent("native tools");
    expect(document.querySelector('[data-provider="Local Ollama"]')).not.toHaveTextContent(/native tools|prompt mode/);

    await userEvent.click(screen.getByRole("button", { name: "Edit Local Ollama" }));
    const select = screen.getByLabelText("Tool calling");
    expect(select).toHaveValue("auto");
    expect(within(select).getAllByRole("option").map((o) => o.textContent)).toEqual(["Auto (default)", "Native function calling", "Prompt mode, for models without function calling"]);
    expect(select).toHaveAccessibleDescription(/prompt mode when the server does not support tools/);
    await userEvent.selectOptions(select, "prompt");
    expect(select).toHaveAccessibleDescription(/<tool_use> blocks/);
    await userEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(save).toHaveBeenCalledWith({ id: "local", name: "Local Ollama", base_url: "http://localhost:11434/v1", model: "qwen2.5-coder:7b", api_key: null, tool_mode: "prompt" }, false);

    // Back to auto: the provider goes back to the default.
    await userEvent.click(screen.getByRole("button", { name: "Edit OpenAI" }));
    expect(screen.getByLabelText("Tool calling")).toHaveValue("native");
    await userEvent.selectOptions(screen.getByLabelText("Tool calling"), "auto");
    await userEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(save).toHaveBeenLastCalledWith(expect.objectContaining({ id: "openai", tool_mode: null }), false);
  });

  it("lists the models found to need prompt mode, and Forget removes one", async () => {
    const learned = [
      { base_url: "http://localhost:11434/v1", model: "gemma3:270m", mode: "prompt" as const },
      { base_url: "http://gpu-box:8000/v1", model: "phi-2", mode: "prompt" as const },
    ];
    let stored = learned;
    const forget = vi.spyOn(api, "forgetToolMode").mockImplementation((baseUrl, model) => {
      stored = stored.filter((entry) => !(entry.base_url === baseUrl && entry.model === model));
      return Promise.resolve();
    });
    // As the settings screen does: a change reloads the settings.
    function Reloading() {
      const [settings, setSettings] = useState(appSettings({ learned_tool_modes: learned }));
      return <ProvidersSection settings={settings} onChanged={() => Promise.resolve(setSettings(appSettings({ learned_tool_modes: stored })))} />;
    }
    inEnglish(<Reloading />);
    const list = screen.getByRole("list", { name: "Found to need prompt mode" });
    expect(screen.getByText(/The server refused native tool calls for these models/)).toBeInTheDocument();
    expect(within(list).getAllByRole("listitem").map((item) => item.textContent)).toEqual(["gemma3:270mhttp://localhost:11434/v1Forget", "phi-2http://gpu-box:8000/v1Forget"]);

    await userEvent.click(within(list).getByRole("button", { name: "Forget gemma3:270m at http://localhost:11434/v1" }));
    expect(forget).toHaveBeenCalledWith("http://localhost:11434/v1", "gemma3:270m");
    expect(await screen.findByText("Forgot gemma3:270m: the next question tries native tools again.")).toBeInTheDocument();
    expect(within(list).getAllByRole("listitem")).toHaveLength(1);
    expect(within(list).queryByText("gemma3:270m")).toBeNull();

    // A refusal is shown, and the entry stays.
    forget.mockRejectedValue({ code: "settings", message: "tool-modes.json could not be written: read-only file system." });
    await userEvent.click(within(list).getByRole("button", { name: "Forget phi-2 at http://gpu-box:8000/v1" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("phi-2 was not forgotten: tool-modes.json could not be written: read-only file system.");
    expect(within(list).getByText("phi-2")).toBeInTheDocument();

    // Once nothing is left, the list and its explanation go.
    forget.mockImplementation((baseUrl, model) => {
      stored = stored.filter((entry) => !(entry.base_url === baseUrl && entry.model === model));
      return Promise.resolve();
    });
    await userEvent.click(within(list).getByRole("button", { name: "Forget phi-2 at http://gpu-box:8000/v1" }));
    await waitFor(() => expect(screen.queryByRole("list", { name: "Found to need prompt mode" })).toBeNull());
    expect(screen.queryByText(/The server refused native tool calls/)).toBeNull();
    expect(screen.getByText("Forgot phi-2: the next question tries native tools again.")).toBeInTheDocument();
  });

  it("shows no list of learned modes when nothing was learned", () => {
    inEnglish(<ProvidersSection settings={appSettings()} onChanged={() => Promise.resolve()} />);
    expect(screen.queryByText("Found to need prompt mode")).toBeNull();
  });

  it("deletes only after a confirmation", async () => {
    const remove = vi.spyOn(api, "deleteProvider").mockResolvedValue();
    inEnglish(<ProvidersSection settings={appSettings()} onChanged={() => Promise.resolve()} />);
    await userEvent.click(screen.getByRole("button", { name: "Delete OpenAI" }));
    expect(remove).not.toHaveBeenCalled();
    await userEvent.click(within(screen.getByRole("group", { name: "Delete OpenAI and its key?" })).getByRole("button", { name: "Delete" }));
    expect(remove).toHaveBeenCalledWith("openai");
  });
});

describe("LimitsSection", () => {
  it("explains a bad value and saves good ones in bytes", async () => {
    const save = vi.spyOn(api, "saveLimits").mockImplementation((limits) => Promise.resolve(limits));
    const onSaved = vi.fn();
    inEnglish(<LimitsSection limits={appSettings().limits} onSaved={onSaved} />);
    const timeout = screen.getByLabelText("Command time limit");
    await userEvent.clear(timeout);
    await userEvent.type(timeout, "500");
    expect(screen.getByText("Must be between 1 and 120.")).toBeInTheDocument();
    expect(timeout).toHaveAttribute("aria-invalid", "true");
    expect(screen.getByRole("button", { name: "Save" })).toBeDisabled();
    await userEvent.clear(timeout);
    await userEvent.type(timeout, "90");
    const size = screen.getByLabelText("Largest tool result");
    await userEvent.clear(size);
    await userEvent.type(size, "64");
    await userEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(save).toHaveBeenCalledWith({ max_rounds: 10, max_result_bytes: 65536, request_timeout_secs: 120, command_timeout_secs: 90 });
    expect(await screen.findByText("Saved.")).toBeInTheDocument();
    expect(onSaved).toHaveBeenCalled();
  });

  it("shows the backend's refusal", async () => {
    vi.spyOn(api, "saveLimits").mockRejectedValue({ code: "settings", message: "config.toml could not be written." });
    inEnglish(<LimitsSection limits={appSettings().limits} onSaved={() => {}} />);
    await userEvent.type(screen.getByLabelText("Tool rounds per question"), "0");
    await userEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Not saved: config.toml could not be written.");
  });
});

describe("ToolsSection", () => {
  it("switches a tool off", async () => {
    const set = vi.spyOn(api, "setToolEnabled").mockResolvedValue();
    const onToggled = vi.fn();
    inEnglish(<ToolsSection tools={appSettings().tools} onToggled={onToggled} />);
    const bash = screen.getByRole("switch", { name: "execute_bash" });
    expect(bash).toBeChecked();
    expect(bash).toHaveAccessibleDescription("Run a bash command.");
    await userEvent.click(bash);
    expect(set).toHaveBeenCalledWith("execute_bash", false);
    await waitFor(() => expect(onToggled).toHaveBeenCalledWith("execute_bash", false));
  });

  it("describes the built-in tools in Chinese, and others in the backend's words", () => {
    render(
      <I18nProvider initial="zh">
        <ToolsSection tools={[...appSettings().tools, { name: "future_tool", description: "Does something new.", enabled: false, off_by_default: false }]} onToggled={() => {}} />
      </I18nProvider>,
    );
    expect(screen.getByRole("switch", { name: "read_file" })).toHaveAccessibleDescription("读取工作区中的文本文件。");
    expect(screen.getByRole("switch", { name: "future_tool" })).toHaveAccessibleDescription("Does something new.");
    expect(screen.getByRole("switch", { name: "future_tool" })).not.toBeChecked();
  });
});

describe("RulesSection", () => {
  it("shows why the backend refused a rule", async () => {
    vi.spyOn(api, "listRules").mockResolvedValue([]);
    vi.spyOn(api, "addRule").mockRejectedValue({ code: "bad_rule", message: "`python3` runs other programs or code, so it cannot be always allowed." });
    inEnglish(<RulesSection />);
    await screen.findByText("No rules for this folder yet.");
    await userEvent.type(screen.getByLabelText("Command's first words"), "python3 -c x");
    await userEvent.click(screen.getByRole("button", { name: "Add" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Not added: `python3` runs other programs or code");
  });
});

describe("McpSection", () => {
  it("refuses changes while mcp.json is broken and says why", async () => {
    const broken: McpConfigView = { path: "/c/mcp.json", servers: [], problem: "mcp.json: expected `,` at line 3." };
    vi.spyOn(api, "mcpConfig").mockResolvedValue(broken);
    vi.spyOn(api, "mcpServers").mockResolvedValue({ servers: [] });
    vi.spyOn(api, "onMcpChanged").mockResolvedValue(() => {});
    inEnglish(<McpSection onChanged={() => {}} />);
    expect(await screen.findByTestId("cfg-mcp-problem")).toHaveTextContent("expected `,` at line 3");
    expect(screen.getByRole("button", { name: /Add a server/ })).toBeDisabled();
  });

  it("shows a server's environment and stderr as mcp.json writes them, variables unexpanded", async () => {
    const keys: McpServerConfig = { name: "keys", command: "node", args: ["server.js"], url: null, env: { API_KEY: "${API_KEY}" }, cwd: null, approval: "ask", tools: {}, disabled: false, timeout_secs: 60, tool_timeouts_secs: {} };
    vi.spyOn(api, "mcpConfig").mockResolvedValue({ path: "/c/mcp.json", servers: [keys], problem: null });
    // The backend scrubs the server's own secrets out of its stderr before the window sees it.
    vi.spyOn(api, "mcpServers").mockResolvedValue({ servers: [{ name: "keys", state: "failed", tools: 0, error: "the server exited", stderr: ["my key is ${API_KEY}"] }] });
    vi.spyOn(api, "onMcpChanged").mockResolvedValue(() => {});
    inEnglish(<McpSection onChanged={() => {}} />);
    expect(await screen.findByText("node server.js")).toBeInTheDocument();
    expect(screen.getByText("my key is ${API_KEY}")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Edit keys" }));
    expect(screen.getByLabelText("Environment")).toHaveValue("API_KEY=${API_KEY}");
  });

  it("saves a new server from the form and reports the change", async () => {
    vi.spyOn(api, "mcpConfig").mockResolvedValue({ path: "/c/mcp.json", servers: [], problem: null });
    vi.spyOn(api, "mcpServers").mockResolvedValue({ servers: [] });
    vi.spyOn(api, "onMcpChanged").mockResolvedValue(() => {});
    const save = vi.spyOn(api, "saveMcpServer").mockResolvedValue();
    const onChanged = vi.fn();
    inEnglish(<McpSection onChanged={onChanged} />);
    await userEvent.click(await screen.findByRole("button", { name: /Add a server/ }));
    await userEvent.type(screen.getByLabelText("Name"), "fs");
    await userEvent.type(screen.getByLabelText("Program"), "npx");
    await userEvent.type(screen.getByLabelText("Arguments"), "-y{Enter}@modelcontextprotocol/server-filesystem");
    await userEvent.type(screen.getByLabelText("Environment"), "DEBUG=1");
    await userEvent.click(screen.getByRole("button", { name: /Add a tool rule/ }));
    await userEvent.type(screen.getByLabelText("Tool name 1"), "write_file");
    await userEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(save).toHaveBeenCalledWith(null, {
      name: "fs",
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem"],
      url: null,
      env: { DEBUG: "1" },
      cwd: null,
      approval: "ask",
      tools: { write_file: "never" },
      disabled: false,
      timeout_secs: 60,
      tool_timeouts_secs: {},
    });
    await waitFor(() => expect(onChanged).toHaveBeenCalled());
  });
});

import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, type AppSettings, type DayTokens, type ProviderView } from "../../api";
import { I18nProvider, type Lang } from "../../i18n";
import { ProvidersSection } from "../settings/ProvidersSection";
import { EMPTY_PROVIDER_FORM, providerInput, validateProvider } from "../settings/forms";
import { formatUsd, priceDays, priceFor } from "./tokens";
import { TokensPerDay } from "./TokensPerDay";

const inLang = (lang: Lang, ui: React.ReactNode) => render(<I18nProvider initial={lang}>{ui}</I18nProvider>);

afterEach(() => vi.restoreAllMocks());

const openai: ProviderView = { id: "openai", name: "OpenAI", base_url: "https://api.openai.com/v1", model: "gpt-4o-mini", key_stored: true, active: false, tool_mode: null, price_input_per_mtok: 0.15, price_output_per_mtok: 0.6 };
const local: ProviderView = { id: "local", name: "Local Ollama", base_url: "http://localhost:11434/v1", model: null, key_stored: false, active: true, tool_mode: null };

/** Midnight of 2026-03-02 in the local time zone of the test. */
const DAY1 = new Date(2026, 2, 2).getTime();
const DAY2 = new Date(2026, 2, 3).getTime();
const day = (day_start_ms: number, model: string, prompt: number, completion: number): DayTokens => ({ day_start_ms, model, prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, requests: 1 });

describe("prices", () => {
  it("come from the provider set to the model, else from the active provider without a model", () => {
    expect(priceFor("gpt-4o-mini", [openai, local])).toEqual({ input: 0.15, output: 0.6 });
    expect(priceFor("qwen3", [openai, local])).toBeNull();
    const pricedLocal = { ...local, price_input_per_mtok: 0.01 };
    expect(priceFor("qwen3", [openai, pricedLocal])).toEqual({ input: 0.01, output: 0 });
  });

  it("turn tokens into dollars", () => {
    const [priced] = priceDays([day(DAY1, "gpt-4o-mini", 2_000_000, 500_000)], [openai]);
    expect(priced!.cost).toBeCloseTo(0.6, 10);
    expect(formatUsd(0.6, "en")).toBe("$0.60");
    expect(formatUsd(0.00042, "en")).toBe("$0.00042");
    expect(formatUsd(1234.5, "en")).toBe("$1,234.50");
  });

  it("are typed in the provider form: empty means none, anything but a price is refused", () => {
    const form = { ...EMPTY_PROVIDER_FORM, name: "OpenAI", base_url: "https://api.openai.com/v1", price_input: "0.15", price_output: "" };
    expect(providerInput(form)).toMatchObject({ price_input_per_mtok: 0.15 });
    expect(providerInput(form)).not.toHaveProperty("price_output_per_mtok");
    expect(validateProvider({ ...form, price_output: "-1" }, []).price_output).toEqual({ key: "cfgPriceInvalid" });
    expect(validateProvider({ ...form, price_output: "cheap" }, []).price_output).toEqual({ key: "cfgPriceInvalid" });
    expect(validateProvider(form, [])).toEqual({});
  });
});

describe("TokensPerDay", () => {
  it("lists tokens per day and model with their cost where a price is set", async () => {
    const ask = vi.spyOn(api, "historyTokens").mockResolvedValue([day(DAY1, "gpt-4o-mini", 1_200_000, 300_000), day(DAY1, "qwen3", 5000, 800), day(DAY2, "gpt-4o-mini", 400_000, 100_000)]);
    vi.spyOn(api, "getSettings").mockResolvedValue({ providers: [openai, local] } as AppSettings);
    inLang("en", <TokensPerDay allWorkspaces={false} since={null} />);
    const table = await screen.findByTestId("tokens-table");
    expect(ask).toHaveBeenCalledWith({ all_workspaces: false, since: null, until: null, utc_offset_minutes: -new Date().getTimezoneOffset() });
    const rows = [...table.querySelectorAll("tbody tr")].map((row) => [...row.children].map((cell) => cell.textContent));
    await screen.findAllByText("$0.36");
    expect(rows.map((row) => row.slice(1))).toEqual([
      ["gpt-4o-mini", "1,200,000", "300,000", "1,500,000", "$0.36"],
      ["qwen3", "5,000", "800", "5,800", "No price set"],
      ["gpt-4o-mini", "400,000", "100,000", "500,000", "$0.12"],
    ]);
    expect(rows[0]![0]).toContain("2026");
    expect([...table.querySelectorAll("tfoot td")].map((cell) => cell.textContent)).toEqual(["1,605,000", "400,800", "2,005,800", "$0.48"]);
  });

  it("has no cost column when no provider has a price, and speaks Chinese", async () => {
    vi.spyOn(api, "historyTokens").mockResolvedValue([day(DAY1, "qwen3", 5000, 800)]);
    vi.spyOn(api, "getSettings").mockResolvedValue({ providers: [local] } as AppSettings);
    inLang("zh", <TokensPerDay allWorkspaces since={DAY1} />);
    const table = await screen.findByTestId("tokens-table");
    expect(within(table).queryByText("费用")).toBeNull();
    expect(within(table).getByText("模型")).toBeInTheDocument();
  });

  it("says when no tokens were recorded", async () => {
    vi.spyOn(api, "historyTokens").mockResolvedValue([]);
    vi.spyOn(api, "getSettings").mockResolvedValue({ providers: [] } as unknown as AppSettings);
    inLang("en", <TokensPerDay allWorkspaces={false} since={null} />);
    expect(await screen.findByTestId("tokens-empty")).toHaveTextContent("No token counts recorded in this period.");
  });
});

describe("ProvidersSection prices", () => {
  it("saves the prices typed for a provider", async () => {
    const save = vi.spyOn(api, "saveProvider").mockResolvedValue(openai);
    const settings = { providers: [openai], limits: { max_rounds: 10, max_result_bytes: 32768, request_timeout_secs: 120, command_timeout_secs: 30 }, tools: [], config_path: "/c", endpoint: { base_url: openai.base_url, model: openai.model, api_key_set: true }, keychain: { available: true, message: null, no_service: false }, learned_tool_modes: [] } as unknown as AppSettings;
    inLang("en", <ProvidersSection settings={settings} onChanged={vi.fn()} />);
    await userEvent.click(screen.getByRole("button", { name: /Edit/ }));
    const input = screen.getByLabelText("Price of prompt tokens (USD per million)");
    expect(input).toHaveValue("0.15");
    await userEvent.clear(input);
    await userEvent.type(input, "0.2");
    await userEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(save).toHaveBeenCalledWith(expect.objectContaining({ price_input_per_mtok: 0.2, price_output_per_mtok: 0.6 }), expect.anything());
  });
});

// Tokens per day as the stats screen shows them, and what they cost where the provider has
// prices in Settings → Providers.
import type { DayTokens, ProviderView } from "../../api";

export interface Price {
  /** US dollars per million prompt tokens. */
  input: number;
  /** US dollars per million answer tokens. */
  output: number;
}

/**
 * The price of `model`'s tokens: from the provider set to that model, else from the active
 * provider when it names no model (it then asks the endpoint's first model, whatever its
 * name). A provider with neither price set has none.
 */
export function priceFor(model: string, providers: readonly ProviderView[]): Price | null {
  const priced = (p: ProviderView) => p.price_input_per_mtok != null || p.price_output_per_mtok != null;
  const provider = providers.find((p) => p.model === model && priced(p)) ?? providers.find((p) => p.active && p.model === null && priced(p));
  if (!provider) return null;
  return { input: provider.price_input_per_mtok ?? 0, output: provider.price_output_per_mtok ?? 0 };
}

/** What a day's tokens cost, in US dollars. */
export function costOf(day: DayTokens, price: Price): number {
  return (day.prompt_tokens * price.input + day.completion_tokens * price.output) / 1_000_000;
}

export interface PricedDay extends DayTokens {
  /** null: no price for its model. */
  cost: number | null;
}

export function priceDays(days: readonly DayTokens[], providers: readonly ProviderView[]): PricedDay[] {
  return days.map((day) => {
    const price = priceFor(day.model, providers);
    return { ...day, cost: price ? costOf(day, price) : null };
  });
}

/** $0.0042, $1.27, $1,234.50: small costs keep two significant digits. */
export function formatUsd(dollars: number, lang: string): string {
  const locale = lang === "zh" ? "zh-CN" : "en-US";
  const digits = dollars === 0 || dollars >= 1 ? 2 : Math.min(6, Math.max(2, 1 - Math.floor(Math.log10(dollars))));
  return new Intl.NumberFormat(locale, { style: "currency", currency: "USD", minimumFractionDigits: digits, maximumFractionDigits: digits }).format(dollars);
}

/** The local date a day starts on, as the user's language writes it. */
export function formatDay(dayStartMs: number, lang: string): string {
  return new Date(dayStartMs).toLocaleDateString(lang === "zh" ? "zh-CN" : "en-US", { year: "numeric", month: "short", day: "numeric", weekday: "short" });
}

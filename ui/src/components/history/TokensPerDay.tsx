// The stats screen's tokens per day and model, with their cost where Settings has prices.
import { useEffect, useState } from "react";
import { api, type DayTokens, type ProviderView } from "../../api";
import { useI18n } from "../../i18n";
import { formatCount } from "./query";
import { NumHeader, StatsLoad } from "./StatsTableParts";
import { formatDay, formatUsd, priceDays, type PricedDay } from "./tokens";
import { useKeyedLoad } from "./useKeyedLoad";

interface Props {
  allWorkspaces: boolean;
  since: number | null;
}

export function TokensPerDay({ allWorkspaces, since }: Props) {
  const { t } = useI18n();
  const [providers, setProviders] = useState<readonly ProviderView[]>([]);
  const key = JSON.stringify([allWorkspaces, since]);

  useEffect(() => {
    api.getSettings().then((settings) => setProviders(settings.providers), () => {});
  }, []);

  const current = useKeyedLoad(key, () =>
    // Days as the user's calendar has them.
    api.historyTokens({ all_workspaces: allWorkspaces, since, until: null, utc_offset_minutes: -new Date().getTimezoneOffset() }),
  );
  const days = current?.value ? priceDays(current.value, providers) : [];

  return (
    <section className="stats-tokens" aria-label={t("statsTokensTitle")}>
      <h2>{t("statsTokensTitle")}</h2>
      <StatsLoad
        current={current}
        loaded={() =>
          days.length === 0 ? (
            <p className="muted" data-testid="tokens-empty">
              {t("statsTokensEmpty")}
            </p>
          ) : (
            <TokensTable days={days} />
          )
        }
      />
    </section>
  );
}

/** The days and models loaded, with a total line, and the cost where any day has a price. */
function TokensTable({ days }: { days: PricedDay[] }) {
  const { t, lang } = useI18n();
  const n = (count: number) => formatCount(count, lang);
  const priced = days.some((day) => day.cost !== null);
  const sum = (pick: (day: DayTokens) => number) => days.reduce((total, day) => total + pick(day), 0);
  const totalCost = days.reduce((total, day) => total + (day.cost ?? 0), 0);
  return (
    <table className="stats-table" aria-label={t("statsTokensTableLabel")} data-testid="tokens-table">
      <thead>
        <tr>
          <th scope="col">{t("statsColDay")}</th>
          <th scope="col">{t("statsColModel")}</th>
          <NumHeader>{t("statsColPrompt")}</NumHeader>
          <NumHeader>{t("statsColCompletion")}</NumHeader>
          <NumHeader>{t("statsColTokens")}</NumHeader>
          {priced && <NumHeader hint={t("statsCostHint")}>{t("statsColCost")}</NumHeader>}
        </tr>
      </thead>
      <tbody>
        {days.map((day) => (
          <tr key={`${day.day_start_ms}:${day.model}`}>
            <th scope="row">{formatDay(day.day_start_ms, lang)}</th>
            <td className="hist-mono">{day.model}</td>
            <td className="num">{n(day.prompt_tokens)}</td>
            <td className="num">{n(day.completion_tokens)}</td>
            <td className="num">{n(day.total_tokens)}</td>
            {priced && <td className="num">{day.cost === null ? <span className="muted">{t("statsCostUnknown")}</span> : formatUsd(day.cost, lang)}</td>}
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row" colSpan={2}>
            {t("statsTokensTotal")}
          </th>
          <td className="num">{n(sum((day) => day.prompt_tokens))}</td>
          <td className="num">{n(sum((day) => day.completion_tokens))}</td>
          <td className="num">{n(sum((day) => day.total_tokens))}</td>
          {priced && <td className="num">{formatUsd(totalCost, lang)}</td>}
        </tr>
      </tfoot>
    </table>
  );
}

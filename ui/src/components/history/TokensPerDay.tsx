// The stats screen's tokens per day and model, with their cost where Settings has prices.
import { useEffect, useState } from "react";
import { api, type DayTokens, type ProviderView } from "../../api";
import { useI18n } from "../../i18n";
import { formatCount } from "./query";
import { formatDay, formatUsd, priceDays } from "./tokens";
import { useKeyedLoad } from "./useKeyedLoad";

interface Props {
  allWorkspaces: boolean;
  since: number | null;
}

export function TokensPerDay({ allWorkspaces, since }: Props) {
  const { t, lang } = useI18n();
  const [providers, setProviders] = useState<readonly ProviderView[]>([]);
  const key = JSON.stringify([allWorkspaces, since]);

  useEffect(() => {
    api.getSettings().then((settings) => setProviders(settings.providers), () => {});
  }, []);

  const current = useKeyedLoad(key, () =>
    // Days as the user's calendar has them.
    api.historyTokens({ all_workspaces: allWorkspaces, since, until: null, utc_offset_minutes: -new Date().getTimezoneOffset() }),
  );
  const n = (count: number) => formatCount(count, lang);
  const days = current?.value ? priceDays(current.value, providers) : [];
  const priced = days.some((day) => day.cost !== null);
  const sum = (pick: (day: DayTokens) => number) => days.reduce((total, day) => total + pick(day), 0);
  const totalCost = days.reduce((total, day) => total + (day.cost ?? 0), 0);

  return (
    <section className="stats-tokens" aria-label={t("statsTokensTitle")}>
      <h2>{t("statsTokensTitle")}</h2>
      {current === null ? (
        <p className="muted">{t("histLoading")}</p>
      ) : current.error !== null ? (
        <p className="turn-error" role="alert">
          {t("statsLoadFailed", { message: current.error })}
        </p>
      ) : days.length === 0 ? (
        <p className="muted" data-testid="tokens-empty">
          {t("statsTokensEmpty")}
        </p>
      ) : (
        <table className="stats-table" aria-label={t("statsTokensTableLabel")} data-testid="tokens-table">
          <thead>
            <tr>
              <th scope="col">{t("statsColDay")}</th>
              <th scope="col">{t("statsColModel")}</th>
              <th scope="col" className="num">
                {t("statsColPrompt")}
              </th>
              <th scope="col" className="num">
                {t("statsColCompletion")}
              </th>
              <th scope="col" className="num">
                {t("statsColTokens")}
              </th>
              {priced && (
                <th scope="col" className="num" title={t("statsCostHint")}>
                  {t("statsColCost")}
                </th>
              )}
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
      )}
    </section>
  );
}

// Calls per tool, success rate, average and p95 duration.
import { useState } from "react";
import { api, type Stats, type WorkspaceInfo } from "../../api";
import { formatDuration } from "../../format";
import { useI18n, type Translate } from "../../i18n";
import { failures, formatCount, formatRate, STATS_RANGES, statsQuery, successRate, weightedAverage, type StatsRange } from "./query";
import { NumHeader, StatsLoad } from "./StatsTableParts";
import { TokensPerDay } from "./TokensPerDay";
import { useKeyedLoad } from "./useKeyedLoad";

interface Props {
  workspace: WorkspaceInfo;
}

const RANGE_LABELS: Record<StatsRange, "statsDay" | "statsWeek" | "statsMonth" | "statsAllTime"> = {
  day: "statsDay",
  week: "statsWeek",
  month: "statsMonth",
  all: "statsAllTime",
};

export function StatsView({ workspace }: Props) {
  const { t, lang } = useI18n();
  const [allWorkspaces, setAllWorkspaces] = useState(false);
  const [range, setRange] = useState<StatsRange>("all");
  const key = JSON.stringify([workspace.path, allWorkspaces, range]);
  // "Last 7 days" up to when the period was picked, for the tokens as for the calls.
  const [rangeStart, setRangeStart] = useState(() => Date.now());

  // "Last 7 days" means up to now, whenever the period was picked.
  const current = useKeyedLoad(key, (): Promise<Stats> => api.historyStats(statsQuery(allWorkspaces, range, Date.now())));
  const stats = current?.value ?? null;

  return (
    <main className="page stats-page" aria-label={t("navStats")}>
      <header className="hist-head">
        <h1>{t("navStats")}</h1>
        <span className="muted hist-scope" title={workspace.path}>
          {allWorkspaces ? t("histEveryFolder") : t("histThisFolder", { folder: workspace.name })}
        </span>
        <label className="hist-toggle">
          <input type="checkbox" checked={allWorkspaces} onChange={(event) => setAllWorkspaces(event.target.checked)} />
          {t("histAllFolders")}
        </label>
      </header>
      <div className="hist-segmented" role="radiogroup" aria-label={t("statsPeriod")}>
        {STATS_RANGES.map((option) => (
          <button key={option} type="button" role="radio" aria-checked={range === option} className={range === option ? "active" : ""} onClick={() => {
              setRange(option);
              setRangeStart(Date.now());
            }}>
            {t(RANGE_LABELS[option])}
          </button>
        ))}
      </div>
      <StatsLoad
        current={current}
        loaded={() =>
          !stats || stats.total === 0 ? (
            <p className="muted stats-empty" data-testid="stats-empty">
              {t("statsEmpty")}
            </p>
          ) : (
            <StatsTable t={t} lang={lang} stats={stats} />
          )
        }
      />
      <TokensPerDay allWorkspaces={allWorkspaces} since={statsQuery(allWorkspaces, range, rangeStart).since ?? null} />
    </main>
  );
}

function StatsTable({ t, lang, stats }: { t: Translate; lang: string; stats: Stats }) {
  const n = (count: number) => formatCount(count, lang);
  const rate = successRate(stats.statuses);
  const average = weightedAverage(stats.tools);
  return (
    <>
      <p className="stats-summary" data-testid="stats-summary">
        {rate === null
          ? t("statsSummaryNoRate", { calls: n(stats.total) })
          : t("statsSummary", { calls: n(stats.total), rate: formatRate(rate), errors: n(failures(stats.statuses)), denied: n(stats.statuses.denied) })}
        {stats.statuses.running > 0 && <span className="muted"> · {t("statsRunning", { count: n(stats.statuses.running) })}</span>}
      </p>
      <table className="stats-table" aria-label={t("statsTableLabel")} data-testid="stats-table">
        <thead>
          <tr>
            <th scope="col">{t("statsColTool")}</th>
            <NumHeader>{t("statsColCalls")}</NumHeader>
            <NumHeader hint={t("statsSuccessHint")}>{t("statsColSuccess")}</NumHeader>
            <NumHeader hint={t("statsErrorsHint")}>{t("statsColErrors")}</NumHeader>
            <NumHeader>{t("statsColDenied")}</NumHeader>
            <NumHeader>{t("statsColAvg")}</NumHeader>
            <NumHeader hint={t("statsP95Hint")}>{t("statsColP95")}</NumHeader>
          </tr>
        </thead>
        <tbody>
          {stats.tools.map((tool) => {
            const toolRate = successRate(tool.statuses);
            return (
              <tr key={tool.tool} data-tool={tool.tool}>
                <th scope="row" className="hist-mono">
                  {tool.tool}
                </th>
                <td className="num">{n(tool.calls)}</td>
                <td className="num">
                  <RateCell rate={toolRate} />
                </td>
                <td className={`num${failures(tool.statuses) > 0 ? " error-text" : ""}`}>{n(failures(tool.statuses))}</td>
                <td className={`num${tool.statuses.denied > 0 ? " denied-text" : ""}`}>{n(tool.statuses.denied)}</td>
                <td className="num">{tool.avg_ms === null ? "—" : formatDuration(tool.avg_ms)}</td>
                <td className="num">{tool.p95_ms === null ? "—" : formatDuration(tool.p95_ms)}</td>
              </tr>
            );
          })}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">{t("statsTotal")}</th>
            <td className="num">{n(stats.total)}</td>
            <td className="num">
              <RateCell rate={rate} />
            </td>
            <td className="num">{n(failures(stats.statuses))}</td>
            <td className="num">{n(stats.statuses.denied)}</td>
            <td className="num">{average === null ? "—" : formatDuration(average)}</td>
            <td className="num">—</td>
          </tr>
        </tfoot>
      </table>
    </>
  );
}

function RateCell({ rate }: { rate: number | null }) {
  return (
    <span className="rate">
      <span className="rate-bar" aria-hidden="true">
        <span style={{ width: `${Math.round((rate ?? 0) * 100)}%` }} />
      </span>
      <span className="rate-text">{formatRate(rate)}</span>
    </span>
  );
}

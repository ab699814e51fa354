// Every recorded tool call of the open folder (or all folders), filtered, counted and exported.
// The list reads the store a page at a time (keyset pages, newest first) as the user scrolls, and
// only the rows in view exist in the page, so a hundred thousand calls scroll like a hundred.
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { api, CALL_STATUSES, errorMessage, type CallStatus, type ExportFormat, type HistoryRow, type Stats, type WorkspaceInfo } from "../../api";
import { useI18n } from "../../i18n";
import { stopListening } from "../../listening";
import { ListLoadFailed } from "../ListLoadFailed";
import { ModelsTried } from "../replay/ModelsTried";
import { ReplayEntry, type ReplayOpen } from "../replay/ReplayEntry";
import { SearchField } from "../SearchField";
import { CallDetail } from "./CallDetail";
import { HistoryList } from "./HistoryList";
import { countsQuery, formatCount, hasFilters, type HistoryFilters, historyQuery, matchingCount, NO_FILTERS, PAGE_SIZE, pageQuery, SEARCH_DELAY_MS } from "./query";

interface Props {
  workspace: WorkspaceInfo;
  /** Opens a conversation in the chat with the call selected. */
  onOpenCall: (conversationId: string, callId: string) => void;
}

/** Tools shown as chips; the rest are in the tool list. */
const TOOL_CHIPS = 10;

interface ListState {
  /** The query these rows answer; while it differs from the current one, a new list is loading. */
  key: string;
  items: HistoryRow[];
  next: string | null;
  error: string | null;
}

interface CountsState {
  key: string;
  stats: Stats | null;
  error: string | null;
}

type ExportState = { kind: "idle" } | { kind: "busy" } | { kind: "done"; text: string } | { kind: "failed"; text: string };

export function HistoryView({ workspace, onOpenCall }: Props) {
  const { t, lang } = useI18n();
  const [filters, setFilters] = useState<HistoryFilters>(NO_FILTERS);
  const [searchInput, setSearchInput] = useState("");
  const [reload, setReload] = useState(0);
  const [list, setList] = useState<ListState>({ key: "", items: [], next: null, error: null });
  const [counts, setCounts] = useState<CountsState>({ key: "", stats: null, error: null });
  const [opened, setOpened] = useState<HistoryRow | null>(null);
  const [exported, setExported] = useState<ExportState>({ kind: "idle" });
  const [replay, setReplay] = useState<ReplayOpen | null>(null);
  const [lastCount, setLastCount] = useState(10);
  const [replayed, setReplayed] = useState(0);
  const closeReplay = useCallback(() => setReplay(null), []);
  const onReplayed = useCallback(() => {
    setReplayed((n) => n + 1);
    setReload((n) => n + 1);
  }, []);
  const generation = useRef(0);
  const pending = useRef<string | null>(null);

  // A task of an earlier run picked up and ended (MCP Tasks) changed its call: read again.
  useEffect(() => stopListening(api.onTasksPickedUp(() => setReload((n) => n + 1))), []);

  // Typing searches a moment after the last key, not on every key.
  useEffect(() => {
    const timer = setTimeout(() => setFilters((old) => (old.search === searchInput ? old : { ...old, search: searchInput })), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [searchInput]);

  const listKey = JSON.stringify([workspace.path, historyQuery(filters), reload]);
  const countsKey = JSON.stringify([workspace.path, countsQuery(filters), reload]);
  const loading = list.key !== listKey;

  // A new query: its first page.
  useEffect(() => {
    const gen = ++generation.current;
    pending.current = null;
    const [, query] = JSON.parse(listKey) as [string, ReturnType<typeof historyQuery>];
    api.historyCalls({ ...query, limit: PAGE_SIZE, before: null }).then(
      (page) => {
        if (gen !== generation.current) return;
        setList({ key: listKey, items: page.items, next: page.next, error: null });
      },
      (error: unknown) => {
        if (gen !== generation.current) return;
        setList({ key: listKey, items: [], next: null, error: errorMessage(error) });
      },
    );
  }, [listKey]);

  useEffect(() => {
    let gone = false;
    const [, query] = JSON.parse(countsKey) as [string, ReturnType<typeof countsQuery>];
    api.historyStats(query).then(
      (stats) => !gone && setCounts({ key: countsKey, stats, error: null }),
      (error: unknown) => !gone && setCounts({ key: countsKey, stats: null, error: errorMessage(error) }),
    );
    return () => {
      gone = true;
    };
  }, [countsKey]);

  // The next page after the rows loaded; the list asks as it nears their end.
  const loadMore = useCallback(() => {
    const before = list.next;
    if (!before || list.error !== null || list.key !== listKey || pending.current === before) return;
    pending.current = before;
    const gen = generation.current;
    api.historyCalls(pageQuery(filters, before)).then(
      (page) => {
        if (gen !== generation.current) return;
        pending.current = null;
        setList((old) => (old.next === before ? { ...old, items: old.items.concat(page.items), next: page.next } : old));
      },
      (error: unknown) => {
        if (gen !== generation.current) return;
        pending.current = null;
        setList((old) => (old.next === before ? { ...old, error: errorMessage(error) } : old));
      },
    );
  }, [list, listKey, filters]);
  const retryMore = useCallback(() => setList((old) => ({ ...old, error: null })), []);

  const setFilter = useCallback((change: Partial<HistoryFilters>) => setFilters((old) => ({ ...old, ...change })), []);
  const clearFilters = () => {
    setSearchInput("");
    setFilters((old) => ({ ...NO_FILTERS, allWorkspaces: old.allWorkspaces }));
  };
  const close = useCallback(() => setOpened(null), []);

  const runExport = (format: ExportFormat) => {
    setExported({ kind: "busy" });
    // What the box says now, even if the list has not caught up with the last key yet.
    api.exportHistory(historyQuery({ ...filters, search: searchInput }), format).then(
      (result) => {
        if (result === null) setExported({ kind: "idle" });
        else setExported({ kind: "done", text: result.count === 1 ? t("histExportedOne", { path: result.path }) : t("histExported", { count: result.count, path: result.path }) });
      },
      (error: unknown) => setExported({ kind: "failed", text: t("histExportFailed", { message: errorMessage(error) }) }),
    );
  };

  const stats = counts.key === countsKey ? counts.stats : null;
  const tools = useMemo(() => {
    const seen = stats?.tools.map((entry) => entry.tool) ?? [];
    return filters.tool && !seen.includes(filters.tool) ? [...seen, filters.tool] : seen;
  }, [stats, filters.tool]);
  const known = matchingCount(filters, stats);
  const filtered = hasFilters({ ...filters, search: searchInput });

  let countText: string;
  if (loading) countText = t("histLoading");
  else if (known !== null && list.error === null) countText = known === 1 ? t("histCallsOne") : t("histCalls", { count: formatCount(known, lang) });
  else if (list.next !== null) countText = t("histShown", { count: formatCount(list.items.length, lang) });
  else countText = list.items.length === 1 ? t("histCallsOne") : t("histCalls", { count: formatCount(list.items.length, lang) });

  return (
    <main className="page history-page" aria-label={t("navHistory")}>
      <header className="hist-head">
        <h1>{t("navHistory")}</h1>
        <span className="muted hist-scope" title={workspace.path}>
          {filters.allWorkspaces ? t("histEveryFolder") : t("histThisFolder", { folder: workspace.name })}
        </span>
        <label className="hist-toggle">
          <input type="checkbox" checked={filters.allWorkspaces} onChange={(event) => setFilter({ allWorkspaces: event.target.checked })} />
          {t("histAllFolders")}
        </label>
      </header>

      <div className="history-filters">
        <SearchField className="history-search" label={t("histSearch")} placeholder={t("histSearchPlaceholder")} value={searchInput} onChange={setSearchInput} />
        <label className="hist-field">
          <span>{t("histTool")}</span>
          <select value={filters.tool ?? ""} onChange={(event) => setFilter({ tool: event.target.value || null })}>
            <option value="">{t("histAnyTool")}</option>
            {tools.map((tool) => (
              <option key={tool} value={tool}>
                {tool}
              </option>
            ))}
          </select>
        </label>
        <label className="hist-field">
          <span>{t("histStatus")}</span>
          <select value={filters.status ?? ""} onChange={(event) => setFilter({ status: (event.target.value || null) as CallStatus | null })}>
            <option value="">{t("histAnyStatus")}</option>
            {CALL_STATUSES.map((status) => (
              <option key={status} value={status}>
                {t(`phase_${status}`)}
              </option>
            ))}
          </select>
        </label>
        <label className="hist-field">
          <span>{t("histFrom")}</span>
          <input type="date" value={filters.from} max={filters.to || undefined} onChange={(event) => setFilter({ from: event.target.value })} />
        </label>
        <label className="hist-field">
          <span>{t("histTo")}</span>
          <input type="date" value={filters.to} min={filters.from || undefined} onChange={(event) => setFilter({ to: event.target.value })} />
        </label>
        <button type="button" className="small" onClick={clearFilters} disabled={!filtered}>
          {t("histClear")}
        </button>
      </div>

      <div className="history-counts" data-testid="history-counts">
        {counts.error && counts.key === countsKey ? (
          <span className="error-text small-text">{t("histCountsFailed", { message: counts.error })}</span>
        ) : (
          stats && <CountChips stats={stats} filters={filters} onFilter={setFilter} />
        )}
      </div>

      <div className="history-bar">
        <span className="muted" data-testid="history-count" aria-live="polite">
          {countText}
        </span>
        <span className="history-export" role="group" aria-label={t("histExport")} title={t("histExportTitle")}>
          <span className="muted small-text">{t("histExport")}</span>
          <button type="button" className="small" disabled={exported.kind === "busy"} onClick={() => runExport("jsonl")}>
            {t("histExportJsonl")}
          </button>
          <button type="button" className="small" disabled={exported.kind === "busy"} onClick={() => runExport("markdown")}>
            {t("histExportMarkdown")}
          </button>
        </span>
        {exported.kind !== "idle" && (
          <span className={`history-export-note small-text${exported.kind === "failed" ? " error-text" : ""}`} role="status" data-testid="export-note">
            {exported.kind === "busy" ? t("histExporting") : exported.text}
          </span>
        )}
      </div>

      <div className="history-replay-bar" role="group" aria-label={t("replayLast")}>
        <label className="hist-field">
          <span>{t("replayLastCount")}</span>
          <input type="number" min={1} max={100} value={lastCount} className="replay-count" onChange={(event) => setLastCount(Math.max(1, Math.min(100, Number(event.target.value) || 1)))} />
        </label>
        <button
          type="button"
          className="small"
          data-testid="replay-last"
          onClick={() => setReplay({ kind: "pick", pick: { kind: "last", count: lastCount }, what: t("replayWhatLast", { n: lastCount, folder: workspace.name }) })}
        >
          {t("replayLast")}
        </button>
      </div>

      <div className="history-body">
        <div className="history-list-wrap">
          {!loading && list.error !== null && list.items.length === 0 ? (
            <ListLoadFailed message={t("histLoadFailed", { message: list.error })} onRetry={() => setReload((n) => n + 1)} />
          ) : !loading && list.items.length === 0 ? (
            <p className="history-message muted" data-testid="history-empty">
              {filtered ? t("histEmpty") : t("histNothingYet")}
            </p>
          ) : null}
          {loading && <p className="history-message muted">{t("histLoading")}</p>}
          {/* A new query is a new list: at the top, its focus on the first row. */}
          <HistoryList
            key={list.key}
            items={loading ? EMPTY : list.items}
            more={!loading && list.next !== null}
            moreError={!loading && list.items.length > 0 ? list.error : null}
            openedId={opened?.id ?? null}
            showFolder={filters.allWorkspaces}
            label={t("histListLabel")}
            onOpen={setOpened}
            onLoadMore={loadMore}
            onRetryMore={retryMore}
          />
        </div>
        {opened && <CallDetail key={opened.id} row={opened} onClose={close} onOpenCall={onOpenCall} onReplay={setReplay} />}
      </div>
      <ModelsTried reload={replayed} />
      {replay && <ReplayEntry open={replay} onClose={closeReplay} onReplayed={onReplayed} />}
    </main>
  );
}

const EMPTY: HistoryRow[] = [];

/** The calls counted by status and by tool, each count a chip that filters by it (again: clears). */
function CountChips({ stats, filters, onFilter }: { stats: Stats; filters: HistoryFilters; onFilter: (change: Partial<HistoryFilters>) => void }) {
  const { t, lang } = useI18n();
  return (
    <>
      <div className="hist-chip-row" role="group" aria-label={t("histByStatus")}>
        <span className="hist-chip-label">{t("histByStatus")}</span>
        {CALL_STATUSES.filter((status) => stats.statuses[status] > 0 || filters.status === status).map((status) => (
          <CountChip
            key={status}
            className={`hist-chip chip-${status}`}
            pressed={filters.status === status}
            label={<span>{t(`phase_${status}`)}</span>}
            count={formatCount(stats.statuses[status], lang)}
            onClick={() => onFilter({ status: filters.status === status ? null : status })}
          />
        ))}
      </div>
      <div className="hist-chip-row" role="group" aria-label={t("histByTool")}>
        <span className="hist-chip-label">{t("histByTool")}</span>
        {stats.tools.slice(0, TOOL_CHIPS).map((entry) => (
          <CountChip
            key={entry.tool}
            className="hist-chip chip-tool"
            pressed={filters.tool === entry.tool}
            label={<span className="hist-mono">{entry.tool}</span>}
            count={formatCount(entry.calls, lang)}
            onClick={() => onFilter({ tool: filters.tool === entry.tool ? null : entry.tool })}
          />
        ))}
      </div>
    </>
  );
}

/** One count, pressed while the list is filtered by it. */
function CountChip({ className, pressed, label, count, onClick }: { className: string; pressed: boolean; label: ReactNode; count: string; onClick: () => void }) {
  const { t } = useI18n();
  return (
    <button type="button" className={className} aria-pressed={pressed} title={t("histChipTitle")} onClick={onClick}>
      {label}
      <span className="hist-chip-count">{count}</span>
    </button>
  );
}

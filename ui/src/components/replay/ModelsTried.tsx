// The models tried on the open folder's questions, ranked, with the table as Markdown (copied)
// and as JSON (saved).
import { useEffect, useState } from "react";
import { api, errorMessage, type ReplayTableView } from "../../api";
import { formatDuration } from "../../format";
import { useI18n } from "../../i18n";
import { useCopy } from "../useCopy";
import { percent } from "./compare";

type Save = { kind: "idle" } | { kind: "busy" } | { kind: "done"; path: string } | { kind: "failed"; message: string };

/** `reload` changes when a replay has ended. */
export function ModelsTried({ reload }: { reload: number }) {
  const { t } = useI18n();
  const [table, setTable] = useState<{ view: ReplayTableView | null; error: string | null } | null>(null);
  const [save, setSave] = useState<Save>({ kind: "idle" });
  const { copied, copy } = useCopy();

  useEffect(() => {
    let gone = false;
    api.replayTable().then(
      (view) => !gone && setTable({ view, error: null }),
      (error: unknown) => !gone && setTable({ view: null, error: errorMessage(error) }),
    );
    return () => {
      gone = true;
    };
  }, [reload]);

  const saveJson = () => {
    setSave({ kind: "busy" });
    api.saveReplayTable().then(
      (path) => setSave(path === null ? { kind: "idle" } : { kind: "done", path }),
      (error: unknown) => setSave({ kind: "failed", message: errorMessage(error) }),
    );
  };

  const rows = table?.view?.rows ?? [];
  return (
    <section className="models-tried" aria-labelledby="models-tried-title" data-testid="models-tried">
      <div className="models-tried-head">
        <h2 id="models-tried-title">{t("replayTableTitle")}</h2>
        {rows.length > 0 && table?.view && (
          <>
            <button type="button" className="small" onClick={() => void copy(table.view?.markdown ?? "")} data-testid="replay-copy-markdown">
              {copied ? t("copied") : t("replayCopyMarkdown")}
            </button>
            <button type="button" className="small" disabled={save.kind === "busy"} onClick={saveJson} data-testid="replay-save-json">
              {t("replaySaveJson")}
            </button>
          </>
        )}
        {save.kind === "done" && (
          <span className="small-text" role="status">
            {t("replaySaved", { path: save.path })}
          </span>
        )}
        {save.kind === "failed" && (
          <span className="small-text error-text" role="status">
            {t("replaySaveFailed", { message: save.message })}
          </span>
        )}
      </div>
      {table === null ? (
        <p className="muted">{t("histLoading")}</p>
      ) : table.error !== null ? (
        <p className="error-text">{t("replayTableFailed", { message: table.error })}</p>
      ) : rows.length === 0 ? (
        <p className="muted" data-testid="models-tried-empty">
          {t("replayTableEmpty")}
        </p>
      ) : (
        <div className="models-tried-scroll">
          <table className="stats-table models-tried-table">
            <caption className="sr-only">{t("replayTableTitle")}</caption>
            <thead>
              <tr>
                <th scope="col">{t("replayModel")}</th>
                <th scope="col">{t("replayReplays")}</th>
                <th scope="col">{t("replayCallsAgreement")}</th>
                <th scope="col">{t("replaySameCallsShare")}</th>
                <th scope="col">{t("replaySameAnswer")}</th>
                <th scope="col">{t("replayMedianTime")}</th>
                <th scope="col">{t("replayTokensIn")}</th>
                <th scope="col">{t("replayTokensOut")}</th>
                <th scope="col">{t("replayNotRun")}</th>
                <th scope="col">{t("replayErrors")}</th>
                <th scope="col">{t("replayLoopsCut")}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.model} data-testid="models-tried-row">
                  <th scope="row" className="hist-mono">
                    {row.model}
                  </th>
                  <td>{row.replays}</td>
                  <td>{percent(row.calls_agreement)}</td>
                  <td>{percent(row.same_calls)}</td>
                  <td>{percent(row.answer_same)}</td>
                  <td>{row.median_ms === null ? t("replayNone") : formatDuration(row.median_ms)}</td>
                  <td>{row.tokens_in}</td>
                  <td>{row.tokens_out}</td>
                  <td>{row.calls_not_run}</td>
                  <td>{row.errors}</td>
                  <td>{row.loops_cut}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

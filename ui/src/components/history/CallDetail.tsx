// One recorded call in full: where the tool came from, what it was given and returned, how it
// ended, and what let it run or refused it, with the rule (revocable) when a rule decided.
import { useEffect, useMemo, useState } from "react";
import { api, errorMessage, type HistoryRow, type ReplayComparison, type RuleView, type ToolCallDetail } from "../../api";
import { formatDuration } from "../../format";
import { useI18n } from "../../i18n";
import { ArgumentsSection, ErrorSection, ResultText } from "../CallParts";
import { MediaStrip, StructuredSection, mediaOf } from "../CallMedia";
import { CopyButton } from "../CopyButton";
import { CopyTraceId } from "../CopyTraceId";
import { StatusIcon } from "../Status";
import type { ReplayOpen } from "../replay/ReplayEntry";
import { useEscape } from "../useEscape";
import { decisionText, formatFull } from "./query";

interface Props {
  row: HistoryRow;
  onClose: () => void;
  onOpenCall: (conversationId: string, callId: string) => void;
  /** Opens "Replay with…" for this call's question or conversation, or the replay's comparison. */
  onReplay?: (open: ReplayOpen) => void;
}

/** An Esc already taken, typed in a field, or meant for a replay's dialog on top, is not the panel's. */
function leftToAField(event: KeyboardEvent): boolean {
  if (document.querySelector("[data-overlay]") !== null) return true;
  return event.defaultPrevented || (event.target instanceof Element && event.target.closest("input, textarea, select") !== null);
}

interface Loaded {
  detail: ToolCallDetail | null;
  error: string | null;
}

type Revoke = { kind: "idle" } | { kind: "busy" } | { kind: "failed"; message: string };

export function CallDetail({ row, onClose, onOpenCall, onReplay }: Props) {
  const { t, lang } = useI18n();
  // The panel is keyed by the row, so this state is always the row's.
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [rule, setRule] = useState<RuleView | null>(null);
  const [revoke, setRevoke] = useState<Revoke>({ kind: "idle" });
  // The comparison when this call's turn is a replay (null: a question of the person's own).
  const [replayOf, setReplayOf] = useState<ReplayComparison | null>(null);

  useEffect(() => {
    if (!onReplay) return;
    let gone = false;
    api.replayComparison(row.turn_id).then(
      (comparison) => !gone && setReplayOf(comparison),
      () => {},
    );
    return () => {
      gone = true;
    };
  }, [row.turn_id, onReplay]);

  useEffect(() => {
    let gone = false;
    api.toolCall(row.id).then(
      (detail) => {
        if (gone) return;
        setLoaded({ detail, error: null });
        setRule(detail.rule);
      },
      (error: unknown) => !gone && setLoaded({ detail: null, error: errorMessage(error) }),
    );
    return () => {
      gone = true;
    };
  }, [row.id]);

  // Esc closes the panel, unless a field has the key. It is taken before the window's own Esc
  // (which stops a running turn): on this screen, Esc means the panel.
  useEscape(onClose, leftToAField);

  const detail = loaded?.detail ?? null;
  const decision = decisionText(t, row.approval, rule);
  const argumentsText = typeof row.arguments === "string" ? row.arguments : JSON.stringify(row.arguments, null, 2);
  const result = detail?.result ?? "";
  const media = useMemo(() => mediaOf(detail?.data), [detail?.data]);

  const revokeRule = (target: RuleView) => {
    setRevoke({ kind: "busy" });
    api.revokeRule(target.id).then(
      (revoked) => {
        setRule(revoked);
        setRevoke({ kind: "idle" });
      },
      (error: unknown) => setRevoke({ kind: "failed", message: errorMessage(error) }),
    );
  };

  let duration: string;
  if (row.duration_ms !== null) duration = formatDuration(row.duration_ms);
  else duration = row.status === "running" ? t("detailStillRunning") : t("detailNoDuration");

  return (
    <aside className="call-detail" aria-label={t("detailTitle")} data-testid="call-detail">
      <header className="call-detail-head">
        <StatusIcon phase={row.status} />
        <h2 className="hist-mono">{row.tool}</h2>
        <button type="button" className="small" onClick={onClose} aria-label={t("detailClose")} title={t("detailClose")}>
          ✕
        </button>
      </header>
      <div className="call-detail-body">
        <button type="button" className="primary open-call" onClick={() => onOpenCall(row.conversation_id, row.call_id)}>
          {t("detailOpen")}
        </button>
        <CopyTraceId turnId={row.turn_id} />
        {onReplay && <div className="detail-replay" role="group" aria-label={t("replayDialogTitle")}>
          {replayOf ? (
            <>
              <span className="small-text">{t("replayThisIsReplay")}</span>
              <button type="button" className="small" data-testid="replay-open-comparison" onClick={() => onReplay({ kind: "compare", comparison: replayOf })}>
                {t("replayOpenComparison")}
              </button>
            </>
          ) : (
            <>
              <button type="button" className="small" data-testid="replay-question" onClick={() => onReplay({ kind: "pick", pick: { kind: "turns", turns: [row.turn_id] }, what: t("replayWhatQuestion") })}>
                {t("replayQuestion")}
              </button>
              <button
                type="button"
                className="small"
                data-testid="replay-conversation"
                onClick={() => onReplay({ kind: "pick", pick: { kind: "conversation", id: row.conversation_id }, what: t("replayWhatConversation") })}
              >
                {t("replayConversation")}
              </button>
            </>
          )}
        </div>}
        <dl className="detail-facts">
          <dt>{t("detailSource")}</dt>
          <dd>{row.source.kind === "mcp" ? t("detailMcp", { server: row.source.server }) : t("detailBuiltin")}</dd>
          {row.view_of ? (
            <>
              <dt>{t("detailViewOf")}</dt>
              <dd className="hist-mono">{row.view_of}</dd>
            </>
          ) : row.view ? (
            <>
              <dt>{t("detailView")}</dt>
              <dd className="hist-mono">{row.view.resource_uri}</dd>
            </>
          ) : null}
          <dt>{t("detailStatus")}</dt>
          <dd className={`status-text status-${row.status}`}>{t(`phase_${row.status}`)}</dd>
          <dt>{t("detailDescription")}</dt>
          <dd className="detail-description" data-testid="detail-description">
            {row.description || <span className="muted">{t("detailNoDescription")}</span>}
          </dd>
          <dt>{t("detailStarted")}</dt>
          <dd>
            <time dateTime={new Date(row.started_ms).toISOString()} title={new Date(row.started_ms).toISOString()}>
              {formatFull(row.started_ms, lang)}
            </time>
          </dd>
          <dt>{t("detailDuration")}</dt>
          <dd>{duration}</dd>
          <dt>{t("detailRound")}</dt>
          <dd>{row.round}</dd>
          {row.workspace && (
            <>
              <dt>{t("detailFolder")}</dt>
              <dd className="detail-path" title={row.workspace}>
                {row.workspace}
              </dd>
            </>
          )}
        </dl>

        <section className={`detail-decision ${decision.allowed ? "allowed" : "refused"}`} data-testid="decision">
          <div className="section-head">
            <span>{t("detailDecision")}</span>
          </div>
          <p className="decision-text">{decision.text}</p>
          {decision.note && <p className="decision-note small-text">{decision.note}</p>}
          {rule && rule.revoked_ms === null && (
            <button type="button" className="small danger" disabled={revoke.kind === "busy"} onClick={() => revokeRule(rule)}>
              {revoke.kind === "busy" ? t("detailRevoking") : t("detailRevoke")}
            </button>
          )}
          {rule && rule.revoked_ms !== null && (
            <p className="decision-note small-text" data-testid="rule-revoked">
              {t("detailRevoked", { time: formatFull(rule.revoked_ms, lang) })}
            </p>
          )}
          {revoke.kind === "failed" && <p className="error-text small-text">{t("detailRevokeFailed", { message: revoke.message })}</p>}
        </section>

        <ArgumentsSection text={argumentsText} />
        {row.error && <ErrorSection error={row.error} />}

        <section className="card-section" data-testid="detail-result">
          <div className="section-head">
            <span>{t("result")}</span>
            {detail && result !== "" && <CopyButton text={result} label={t("result")} />}
          </div>
          {loaded === null ? (
            <p className="muted small-text">{t("detailResultLoading")}</p>
          ) : loaded.error !== null ? (
            <p className="error-text small-text">{t("detailResultFailed", { message: loaded.error })}</p>
          ) : result === "" ? (
            <p className="muted small-text">{t("detailResultEmpty")}</p>
          ) : (
            <ResultText result={result} />
          )}
          {row.truncated_for_model && <div className="card-note">{t("truncatedForModel")}</div>}
          <MediaStrip items={media} tool={row.tool} />
        </section>
        <StructuredSection data={detail?.data} />
      </div>
    </aside>
  );
}

// A replay beside the question it asked again: the figures of both, what changed since, and
// the two call sequences aligned call by call, as a list or on a waterfall, the first call
// where they part marked.
import { useId } from "react";
import type { ComparedCall, ReplayComparison, TurnFigures } from "../../api";
import { formatDuration } from "../../format";
import { useI18n } from "../../i18n";
import { AlignedRows } from "./AlignedRows";
import { callLine, comparedLines, percent } from "./compare";
import { ReplayWaterfall } from "./ReplayWaterfall";
import { useReplayView } from "./replayView";

interface Props {
  comparison: ReplayComparison;
  /** From the live run only: the replay's first streamed token. */
  firstTokenMs?: number | null;
  changedSince?: string[];
  /** Why the replay ended in an error, when it did. */
  error?: string | null;
}

export function ReplayComparisonView({ comparison, firstTokenMs, changedSince = [], error }: Props) {
  const { t } = useI18n();
  const [view, setView] = useReplayView();
  const switchLabel = useId();
  const lines = comparedLines(comparison);
  const { original, replay } = comparison;
  const divergence = comparison.first_divergence;
  const duration = (ms: number | null) => (ms === null ? t("replayNone") : formatDuration(ms));
  const figures: { label: string; original: string; replay: string }[] = [
    { label: t("replayModel"), original: original.model || t("replayNone"), replay: replay.model || t("replayNone") },
    { label: t("replayTime"), original: duration(original.total_ms), replay: duration(replay.total_ms) },
    {
      label: t("replayFirstReply"),
      original: duration(original.first_reply_ms),
      replay: firstTokenMs != null ? t("replayFirstToken", { reply: duration(replay.first_reply_ms), token: formatDuration(firstTokenMs) }) : duration(replay.first_reply_ms),
    },
    { label: t("replayTokensIn"), original: String(original.tokens_in), replay: String(replay.tokens_in) },
    { label: t("replayTokensOut"), original: String(original.tokens_out), replay: String(replay.tokens_out) },
    { label: t("replayCalls"), original: String(original.calls.length), replay: String(replay.calls.length) },
    { label: t("replayErrors"), original: String(original.errors), replay: String(replay.errors) },
    { label: t("replayLoopsCut"), original: String(original.loops_cut), replay: String(replay.loops_cut) },
  ];
  return (
    <section className="replay-compare" aria-label={t("replayCompareLabel", { model: replay.model })} data-testid="replay-compare">
      <p className="replay-verdict" data-testid="replay-verdict">
        {divergence === null ? t("replaySameCalls") : t("replayPartsAt", { n: divergence })}
        {" · "}
        {comparison.answer_same ? t("replayAnswerSame") : t("replayAnswerDiffers")}
      </p>
      {error && <p className="error-text small-text" role="alert">{t("replayEndedInError", { message: error })}</p>}
      {changedSince.length > 0 && (
        <div className="replay-changed" data-testid="replay-changed">
          <p className="replay-subhead">{t("replayChangedSince")}</p>
          <ul>
            {changedSince.map((text) => (
              <li key={text}>{text}</li>
            ))}
          </ul>
        </div>
      )}
      <table className="replay-figures">
        <caption className="sr-only">{t("replayFiguresCaption")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("replayFigure")}</th>
            <th scope="col">{t("replayOriginal")}</th>
            <th scope="col">{t("replayReplay")}</th>
          </tr>
        </thead>
        <tbody>
          {figures.map((row) => (
            <tr key={row.label}>
              <th scope="row">{row.label}</th>
              <td>{row.original}</td>
              <td>{row.replay}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <dl className="replay-agreement" data-testid="replay-agreement">
        <dt>{t("replayCallsAgreement")}</dt>
        <dd>{percent(comparison.calls_agreement)}</dd>
        <dt>{t("replayToolsAgreement")}</dt>
        <dd>{percent(comparison.tools_agreement)}</dd>
        <dt>{t("replayNotRun")}</dt>
        <dd data-testid="replay-not-run">{comparison.calls_not_run}</dd>
        <dt>{t("replayFromRecordCount")}</dt>
        <dd>{comparison.calls_from_record}</dd>
        <dt>{t("replaySameAnswer")}</dt>
        <dd>{comparison.answer_same ? t("replayYes") : t("replayNo")}</dd>
      </dl>
      <div className="replay-rows-head">
        <span id={switchLabel}>{t("replayViewLabel")}</span>
        <span className="replay-view-switch" role="group" aria-labelledby={switchLabel}>
          {(["list", "waterfall"] as const).map((option) => (
            <button key={option} type="button" aria-pressed={view === option} data-testid={`replay-view-${option}`} onClick={() => setView(option)}>
              {t(option === "list" ? "timelineList" : "timelineWaterfall")}
            </button>
          ))}
        </span>
      </div>
      {view === "waterfall" ? (
        <ReplayWaterfall comparison={comparison} lines={lines} />
      ) : (
        <table className="replay-rows" data-testid="replay-rows">
          <caption className="sr-only">{t("replayRowsCaption")}</caption>
          <thead>
            <tr>
              <th scope="col" className="replay-pos">
                #
              </th>
              <th scope="col">{t("replayOriginalModel", { model: original.model })}</th>
              <th scope="col">{t("replayReplayModel", { model: replay.model })}</th>
            </tr>
          </thead>
          <AlignedRows lines={lines} rowTestId="replay-row" cell={(call) => <CallCell call={call} />} />
        </table>
      )}
      <div className="replay-answers">
        <Answer label={t("replayOriginalAnswer")} figures={original} />
        <Answer label={t("replayReplayAnswer")} figures={replay} />
      </div>
    </section>
  );
}

function CallCell({ call }: { call: ComparedCall | null }) {
  const { t } = useI18n();
  if (call === null) {
    return (
      <td className="replay-blank" data-testid="replay-blank">
        <span className="sr-only">{t("replayNoCall")}</span>
      </td>
    );
  }
  return (
    <td className="replay-call">
      <span className="hist-mono replay-tool">{call.tool}</span> <span className="replay-args">{callLine(call)}</span>
      {call.not_run && <span className="replay-mark replay-mark-not-run">{t("replayMarkNotRun")}</span>}
      {call.from_record && <span className="replay-mark replay-mark-record">{t("replayMarkFromRecord")}</span>}
      {!call.not_run && !call.from_record && call.status !== "success" && <span className="replay-mark">{t(`phase_${call.status}`)}</span>}
    </td>
  );
}

function Answer({ label, figures }: { label: string; figures: TurnFigures }) {
  const { t } = useI18n();
  return (
    <div className="replay-answer">
      <p className="replay-subhead">{label}</p>
      <p>{figures.answer || <span className="muted">{t("replayNoAnswer")}</span>}</p>
    </div>
  );
}

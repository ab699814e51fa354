// The replay's comparison on a time axis: the same aligned rows as the list (same order, the
// same row marked where the two part, the same blanks), each side's call drawn as a bar on its
// own turn's axis, from the question (0) to the turn's end, so two turns of different lengths
// each fill their column. A call not run or answered from the record took no time: a thin
// marker with its label.
import type { ComparedCall, ReplayComparison, TurnFigures } from "../../api";
import { formatDuration } from "../../format";
import { useI18n } from "../../i18n";
import { axisTicks } from "../../state/waterfall";
import { AlignedRows } from "./AlignedRows";
import { axisMs, callLine, type ComparedLine, placeCall } from "./compare";

export function ReplayWaterfall({ comparison, lines }: { comparison: ReplayComparison; lines: ComparedLine[] }) {
  const { t } = useI18n();
  const { original, replay } = comparison;
  const axes = { original: axisMs(original), replay: axisMs(replay) };
  return (
    <table className="replay-rows replay-wf" data-testid="replay-waterfall">
      <caption className="sr-only">{t("replayWaterfallCaption")}</caption>
      <thead>
        <tr>
          <th scope="col" className="replay-pos">
            #
          </th>
          <th scope="col">
            {t("replayOriginalModel", { model: original.model })}
            <Axis figures={original} axis={axes.original} />
          </th>
          <th scope="col">
            {t("replayReplayModel", { model: replay.model })}
            <Axis figures={replay} axis={axes.replay} />
          </th>
        </tr>
      </thead>
      <AlignedRows
        lines={lines}
        rowTestId="replay-wf-row"
        cell={(call, side) => <BarCell call={call} axis={axes[side]} />}
      />
    </table>
  );
}

/** 0 at the left, a few ticks, and the turn's total at the right end. */
function Axis({ figures, axis }: { figures: TurnFigures; axis: number }) {
  const { t } = useI18n();
  const total = figures.total_ms === null ? formatDuration(axis) : t("wfTurnTotal", { duration: formatDuration(figures.total_ms) });
  return (
    <span className="replay-axis" data-testid="replay-axis">
      <span aria-hidden="true">
        <span className="replay-axis-tick replay-axis-zero">0</span>
        {/* The total sits at the right end; ticks near it would run into it. */}
        {axisTicks({ startMs: 0, endMs: axis })
          .filter((at) => at / axis < 0.75)
          .map((at) => (
            <span key={at} className="replay-axis-tick" style={{ left: `${(at / axis) * 100}%` }}>
              {formatDuration(at)}
            </span>
          ))}
      </span>
      <span className="replay-axis-total">{total}</span>
    </span>
  );
}

function BarCell({ call, axis }: { call: ComparedCall | null; axis: number }) {
  const { t } = useI18n();
  if (call === null) {
    return (
      <td className="replay-blank" data-testid="replay-blank">
        <span className="sr-only">{t("replayNoCall")}</span>
      </td>
    );
  }
  const place = placeCall(call, axis);
  const mark = call.not_run ? t("replayMarkNotRun") : call.from_record ? t("replayMarkFromRecord") : null;
  const status = t(`phase_${call.status}`);
  // What the bar says beside it: how long (and how it ended, when not well), or the marker's label.
  const text = mark ?? (call.status === "success" ? formatDuration(call.duration_ms) : `${formatDuration(call.duration_ms)} · ${status}`);
  const label =
    mark === null
      ? t("replayBarLabel", { tool: call.tool, status, duration: formatDuration(call.duration_ms), start: formatDuration(place.startMs), end: formatDuration(place.endMs) })
      : t("replayMarkerLabel", { tool: call.tool, mark, at: formatDuration(place.endMs) });
  // Past two thirds of the axis the text goes before the bar, so it stays inside the column.
  const textAt = place.left + place.width > 66 ? { right: `${100 - place.left}%` } : { left: `${place.left + place.width}%` };
  return (
    <td className="replay-call replay-wf-cell">
      <span className="replay-wf-label" title={`${call.tool} ${callLine(call)}`}>
        <span className="hist-mono replay-tool">{call.tool}</span> <span className="replay-args">{callLine(call)}</span>
      </span>
      <span className="replay-track" role="img" aria-label={label} data-testid="replay-track">
        {place.kind === "bar" ? (
          <span className={`replay-bar replay-status-${call.status}`} data-testid="replay-bar" style={{ left: `${place.left}%`, width: `${place.width}%` }} />
        ) : (
          <span className={`replay-marker ${call.not_run ? "replay-marker-not-run" : "replay-marker-record"}`} data-testid="replay-marker" style={{ left: `${place.left}%` }} />
        )}
        <span className={`replay-bar-text${"right" in textAt ? " before" : ""}`} style={textAt}>
          {text}
        </span>
      </span>
    </td>
  );
}

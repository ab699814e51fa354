// One tool call on the timeline: tool, short arguments, state, time, and below them what the
// tool does and when the call started; expands to everything.
import { memo, useMemo } from "react";
import type { ApprovalRecord } from "../bindings";
import { summarizeArguments } from "../format";
import { useI18n, type Translate } from "../i18n";
import { argumentsText, type CallView } from "../state/chat";
import { ArgumentsSection, ErrorSection, ResultText } from "./CallParts";
import { MediaStrip, StructuredSection, mediaOf } from "./CallMedia";
import { CopyButton } from "./CopyButton";
import { CopyTraceId } from "./CopyTraceId";
import { CallNeedsSignIn, serverNeedingSignIn } from "./McpSignIn";
import { formatClock, formatFull } from "./history/query";
import { CallTime, StatusIcon } from "./Status";
import { TaskState } from "./TaskState";
import { ViewCard } from "./views/ViewCard";

interface Props {
  call: CallView;
  expanded: boolean;
  selected: boolean;
  onToggle: (callId: string) => void;
  onShowInChat: (callId: string) => void;
  /** For a call a view made: the tool of the call whose view it is. */
  viewParentTool?: string;
}

function approvalText(t: Translate, approval: ApprovalRecord): string {
  const kind = approval.by.kind;
  if (approval.allowed) return t(`approvedBy_${kind}`);
  if (kind === "user" || kind === "policy" || kind === "setting" || kind === "replay") return t(`deniedBy_${kind}`) + (approval.reason ? ` — ${approval.reason}` : "");
  return t("phase_denied");
}

export const TimelineCard = memo(function TimelineCard({ call, expanded, selected, onToggle, onShowInChat, viewParentTool }: Props) {
  const { t, lang } = useI18n();
  const summary = summarizeArguments(call.arguments, call.argumentsText);
  const result = call.result ?? "";
  const media = useMemo(() => mediaOf(call.data), [call.data]);
  const signInServer = serverNeedingSignIn(call.error?.message);
  return (
    <article
      className={`timeline-card phase-${call.phase}${selected ? " selected" : ""}${expanded ? " expanded" : ""}${call.viewOf ? " view-call" : ""}`}
      data-call-id={call.callId}
      aria-label={`${call.tool} ${t(`phase_${call.phase}`)}`}
    >
      {call.viewOf && <div className="card-called-by muted">{t("viewCalledBy", { tool: viewParentTool ?? "…" })}</div>}
      <button type="button" className="card-head" onClick={() => onToggle(call.callId)} aria-expanded={expanded}>
        <StatusIcon phase={call.phase} />
        <span className="card-tool">{call.tool || "…"}</span>
        <span className="card-args" title={summary}>
          {summary}
        </span>
        <span className="card-state">{t(`phase_${call.phase}`)}</span>
        <CallTime call={call} />
        {(call.description || call.startedMs !== undefined) && (
          <span className="card-sub">
            <span className="card-desc" title={call.description}>
              {call.description}
            </span>
            {call.startedMs !== undefined && (
              <time className="card-start" dateTime={new Date(call.startedMs).toISOString()} title={t("startedAt", { time: formatFull(call.startedMs, lang) })}>
                {formatClock(call.startedMs, lang)}
              </time>
            )}
          </span>
        )}
      </button>
      {call.task && <TaskState task={call.task} />}
      <MediaStrip items={media} tool={call.tool} />
      {/* A view shows under the call that opened it; the calls it makes show none of their own. */}
      {call.view && !call.viewOf && <ViewCard call={call} />}
      {signInServer && <CallNeedsSignIn server={signInServer} />}
      {expanded && (
        <div className="card-body">
          <div className="card-meta">
            <span>{t("round", { round: call.round })}</span>
            {call.server && <span>{t("fromMcpServer", { server: call.server })}</span>}
            {call.approval && <span>{approvalText(t, call.approval)}</span>}
            <button type="button" className="link-button" onClick={() => onShowInChat(call.callId)}>
              {t("showInChat")}
            </button>
            <CopyTraceId turnId={call.turnId} />
          </div>
          <ArgumentsSection text={argumentsText(call)} />
          {call.error && <ErrorSection error={call.error} />}
          {call.result !== undefined && (
            <div className="card-section">
              <div className="section-head">
                <span>{t("result")}</span>
                <CopyButton text={result} label={t("result")} />
              </div>
              <ResultText result={result} />
              {call.truncatedForModel && <div className="card-note">{t("truncatedForModel")}</div>}
            </div>
          )}
          <StructuredSection data={call.data} />
        </div>
      )}
    </article>
  );
});

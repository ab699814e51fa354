// The inline card for an MCP server's request to use the user's model while its tool runs: the
// system prompt and messages it would send and the token limit, with Allow and Deny. Nothing
// reaches the model before Allow. Once answered it shows the model's answer and its tokens, or
// why nothing ran.
import { useState } from "react";
import { api } from "../api";
import { useI18n } from "../i18n";
import type { ServerRequestView } from "../state/chat";

type Sampling = Extract<ServerRequestView, { kind: "sampling" }>;

interface Props {
  request: Sampling;
  /** The call still runs, so the server still waits for the answer. */
  live: boolean;
}

export function SamplingCard({ request, live }: Props) {
  const { t } = useI18n();
  const [sent, setSent] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const answered = request.answer;
  const waiting = live && !answered;

  const answer = (allow: boolean) => {
    setSent(true);
    setFailure(null);
    api.answerSampling(request.requestId, allow).catch((error: unknown) => {
      setSent(false);
      setFailure(error instanceof Error ? error.message : String((error as { message?: string })?.message ?? error));
    });
  };

  const title = t("samplingLabel", { server: request.server });
  return (
    <section className="server-request-card sampling-card" aria-label={title} data-request-id={request.requestId}>
      <header className="approval-title">{title}</header>
      <div className="muted">{t("samplingLimit", { tokens: request.maxTokens })}</div>
      <dl className="sampling-messages">
        {request.systemPrompt !== undefined && (
          <div className="sampling-message">
            <dt>{t("samplingSystem")}</dt>
            <dd>{request.systemPrompt}</dd>
          </div>
        )}
        {request.messages.map((message, i) => (
          <div key={i} className="sampling-message">
            <dt>{message.role === "assistant" ? t("samplingRoleAssistant") : t("samplingRoleUser")}</dt>
            <dd>{message.text}</dd>
          </div>
        ))}
      </dl>
      {waiting && (
        <div className="approval-actions">
          <button type="button" className="primary" disabled={sent} onClick={() => answer(true)}>
            {t("samplingAllow")}
          </button>
          <button type="button" disabled={sent} onClick={() => answer(false)}>
            {t("samplingDeny")}
          </button>
        </div>
      )}
      {failure && (
        <div className="approval-failure" role="alert">
          {failure}
        </div>
      )}
      {answered?.approved && answered.text !== undefined && (
        <div className="server-request-outcome">
          <div>
            {answered.usage ? t("samplingAnswered", { tokens: answered.usage.total_tokens }) : t("samplingAnsweredNoUsage")}
          </div>
          <blockquote className="sampling-answer">{answered.text}</blockquote>
        </div>
      )}
      {answered && !answered.approved && <div className="server-request-outcome">{t("samplingRefused", { reason: answered.reason ?? "" })}</div>}
      {!answered && !live && <div className="server-request-outcome">{t("elicitationClosed")}</div>}
      {waiting && sent && <div className="approval-sent">{t("serverRequestSent")}</div>}
    </section>
  );
}

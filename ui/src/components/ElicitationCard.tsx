// The inline card for an MCP server's request for input while its tool runs: a form built from
// the server's schema (text, numbers, yes/no, choices; the required ones marked) with Send,
// Decline and Cancel, or a page to open, shown with its whole address and opened only when the
// user clicks. Once answered (or when the call is over) it says what was answered.
import { useState } from "react";
import { api, type FormField, type JsonValue } from "../api";
import { useI18n, type Translate } from "../i18n";
import type { ServerRequestView } from "../state/chat";

type Elicitation = Extract<ServerRequestView, { kind: "elicitation" }>;

interface Props {
  request: Elicitation;
  /** The call still runs, so the server still waits for the answer. */
  live: boolean;
}

type Values = Record<string, JsonValue>;

function initialValues(fields: FormField[]): Values {
  const values: Values = {};
  for (const field of fields) {
    if (field.default !== undefined) values[field.name] = field.default;
    else if (field.kind.type === "boolean") values[field.name] = false;
  }
  return values;
}

/** The values to send: empty text and empty choices left out, numbers as numbers. */
function content(fields: FormField[], values: Values): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (value === undefined || value === null || value === "") continue;
    if (Array.isArray(value) && value.length === 0) continue;
    if (field.kind.type === "number" && typeof value === "string") {
      const number = Number(value);
      out[field.name] = Number.isNaN(number) ? value : number;
    } else {
      out[field.name] = value;
    }
  }
  return out;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String((error as { message?: string })?.message ?? error);
}

/** The control for one field of the form, as its kind asks: a yes/no, a number, choices or text. */
function FieldInput({ field, id, value, disabled, onChange }: { field: FormField; id: string; value: JsonValue | undefined; disabled: boolean; onChange: (value: JsonValue) => void }) {
  const { t } = useI18n();
  const described = field.description ? `${id}-about` : undefined;
  switch (field.kind.type) {
    case "boolean":
      return (
        <select id={id} disabled={disabled} aria-describedby={described} value={value === true ? "yes" : "no"} onChange={(e) => onChange(e.target.value === "yes")}>
          <option value="yes">{t("elicitationYes")}</option>
          <option value="no">{t("elicitationNo")}</option>
        </select>
      );
    case "number":
      return (
        <input
          id={id}
          type="number"
          disabled={disabled}
          aria-describedby={described}
          required={field.required}
          step={field.kind.integer ? 1 : "any"}
          {...(field.kind.minimum !== undefined ? { min: field.kind.minimum } : {})}
          {...(field.kind.maximum !== undefined ? { max: field.kind.maximum } : {})}
          value={typeof value === "number" || typeof value === "string" ? String(value) : ""}
          onChange={(e) => onChange(e.target.value)}
        />
      );
    case "choice":
      if (field.kind.multiple) {
        const chosen = Array.isArray(value) ? value : [];
        return (
          <div className="elicitation-options" role="group" aria-labelledby={`${id}-label`} aria-describedby={described}>
            {field.kind.options.map((option) => (
              <label key={option.value}>
                <input
                  type="checkbox"
                  disabled={disabled}
                  checked={chosen.includes(option.value)}
                  onChange={(e) => onChange(e.target.checked ? [...chosen, option.value] : chosen.filter((v) => v !== option.value))}
                />{" "}
                {option.label}
              </label>
            ))}
          </div>
        );
      }
      return (
        <select id={id} disabled={disabled} aria-describedby={described} required={field.required} value={typeof value === "string" ? value : ""} onChange={(e) => onChange(e.target.value)}>
          <option value="">{t("elicitationChoose")}</option>
          {field.kind.options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      );
    case "text": {
      const format = field.kind.format;
      const type = format === "email" ? "email" : format === "uri" ? "url" : format === "date" ? "date" : "text";
      return (
        <input
          id={id}
          type={type}
          disabled={disabled}
          aria-describedby={described}
          required={field.required}
          value={typeof value === "string" ? value : ""}
          onChange={(e) => onChange(e.target.value)}
        />
      );
    }
  }
}

/** What became of the request once it is no longer waiting: the answer sent, or why none was. */
function outcomeOf(t: Translate, request: Elicitation, live: boolean): string | null {
  const answered = request.answer;
  if (answered) {
    return answered.reason
      ? t("elicitationNotAnswered", { reason: answered.reason })
      : answered.action === "accept"
        ? t("elicitationAccepted", { server: request.server })
        : answered.action === "decline"
          ? t("elicitationDeclined")
          : t("elicitationCancelled");
  }
  return live ? null : t("elicitationClosed");
}

/** Decline and Cancel, the two answers that send nothing, after each way of saying yes. */
function DeclineAndCancel({ disabled, onSend }: { disabled: boolean; onSend: (action: "decline" | "cancel") => void }) {
  const { t } = useI18n();
  return (
    <>
      <button type="button" disabled={disabled} onClick={() => onSend("decline")}>
        {t("elicitationDecline")}
      </button>
      <button type="button" disabled={disabled} onClick={() => onSend("cancel")}>
        {t("elicitationCancel")}
      </button>
    </>
  );
}

export function ElicitationCard({ request, live }: Props) {
  const { t } = useI18n();
  const fields = request.request.mode === "form" ? request.request.fields : [];
  // A form answered before (a stored conversation) shows what was sent.
  const [values, setValues] = useState<Values>(() => {
    const given = request.answer?.content;
    const sentValues = given && typeof given === "object" && !Array.isArray(given) ? (given as Values) : {};
    return { ...initialValues(fields), ...sentValues };
  });
  const [sent, setSent] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const idBase = `elicit-${request.requestId}`;

  const send = (action: "accept" | "decline" | "cancel") => {
    setSent(true);
    setFailure(null);
    const values_ = action === "accept" && request.request.mode === "form" ? content(fields, values) : null;
    api.answerElicitation(request.requestId, action, values_).catch((error: unknown) => {
      setSent(false);
      setFailure(errorText(error));
    });
  };

  const title =
    request.request.mode === "url" ? t("elicitationUrlLabel", { server: request.server }) : t("elicitationLabel", { server: request.server });
  const answered = request.answer;
  const waiting = live && !answered;

  const outcome = outcomeOf(t, request, live);

  const set = (name: string, value: JsonValue) => setValues((current) => ({ ...current, [name]: value }));
  const disabled = !waiting || sent;

  return (
    <section className="server-request-card elicitation-card" aria-label={title} data-request-id={request.requestId}>
      <header className="approval-title">{title}</header>
      <p className="question-text">{request.message}</p>
      {request.request.mode === "url" ? (
        <>
          <code className="elicitation-url">{request.request.url}</code>
          {waiting && <div className="muted">{t("elicitationUrlNote")}</div>}
          {waiting && (
            <div className="approval-actions">
              <button
                type="button"
                disabled={sent}
                onClick={() => {
                  api.openElicitationUrl(request.requestId).catch((error: unknown) => setFailure(errorText(error)));
                }}
              >
                {t("elicitationOpen")}
              </button>
              <button type="button" className="primary" disabled={sent} onClick={() => send("accept")}>
                {t("elicitationDone")}
              </button>
              <DeclineAndCancel disabled={sent} onSend={send} />
            </div>
          )}
        </>
      ) : (
        <form
          className="elicitation-form"
          onSubmit={(event) => {
            event.preventDefault();
            send("accept");
          }}
        >
          {request.request.fields.map((field) => {
            const id = `${idBase}-${field.name}`;
            return (
              <div className="elicitation-field" key={field.name}>
                <label id={`${id}-label`} htmlFor={field.kind.type === "choice" && field.kind.multiple ? undefined : id}>
                  {field.title}
                  {field.required && (
                    <span className="elicitation-required" title={t("elicitationRequired")}>
                      {" "}
                      * <span className="sr-only">{t("elicitationRequired")}</span>
                    </span>
                  )}
                </label>
                <FieldInput field={field} id={id} value={values[field.name]} disabled={disabled} onChange={(value) => set(field.name, value)} />
                {field.description && (
                  <div className="muted elicitation-about" id={`${id}-about`}>
                    {field.description}
                  </div>
                )}
              </div>
            );
          })}
          {waiting && (
            <div className="approval-actions">
              <button type="submit" className="primary" disabled={sent}>
                {t("elicitationAccept")}
              </button>
              <DeclineAndCancel disabled={sent} onSend={send} />
            </div>
          )}
        </form>
      )}
      {failure && (
        <div className="approval-failure" role="alert">
          {failure}
        </div>
      )}
      {outcome ? <div className="server-request-outcome">{outcome}</div> : sent && <div className="approval-sent">{t("serverRequestSent")}</div>}
    </section>
  );
}

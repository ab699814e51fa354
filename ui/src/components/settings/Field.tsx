// A labelled form control with its hint and its problem, wired for screen readers, and the
// lines a settings form answers with.
import { useId, type ReactNode } from "react";
import { useI18n } from "../../i18n";
import type { Problem } from "./forms";

export interface ControlProps {
  id: string;
  "aria-describedby"?: string;
  "aria-invalid"?: boolean;
}

interface Props {
  label: ReactNode;
  hint?: ReactNode;
  problem?: Problem | null;
  className?: string;
  children: (control: ControlProps) => ReactNode;
}

export function Field({ label, hint, problem, className, children }: Props) {
  const { t } = useI18n();
  const id = useId();
  const hintId = `${id}-hint`;
  const problemId = `${id}-problem`;
  const describedBy = [problem ? problemId : null, hint ? hintId : null].filter(Boolean).join(" ") || undefined;
  return (
    <div className={`cfg-field${className ? ` ${className}` : ""}`}>
      <label htmlFor={id} className="cfg-label">
        {label}
      </label>
      {children({ id, "aria-describedby": describedBy, "aria-invalid": problem ? true : undefined })}
      {problem && (
        <span id={problemId} className="cfg-problem">
          {t(problem.key, problem.vars)}
        </span>
      )}
      {hint && (
        <span id={hintId} className="cfg-hint">
          {hint}
        </span>
      )}
    </div>
  );
}

/** A Yes/No question in place of a button, for what cannot be undone. */
export function ConfirmInline({ question, confirmLabel, onConfirm, onCancel, busy }: { question: string; confirmLabel: string; onConfirm: () => void; onCancel: () => void; busy?: boolean }) {
  const { t } = useI18n();
  return (
    <span
      className="cfg-confirm"
      role="group"
      aria-label={question}
      onKeyDown={(event) => {
        if (event.key === "Escape") {
          event.stopPropagation();
          onCancel();
        }
      }}
    >
      <span className="cfg-confirm-question">{question}</span>
      <button type="button" className="danger small" onClick={onConfirm} disabled={busy}>
        {confirmLabel}
      </button>
      {/* The safe answer takes the focus. */}
      <button type="button" className="small" onClick={onCancel} disabled={busy} autoFocus>
        {t("cancel")}
      </button>
    </span>
  );
}

/** An on/off switch with its label beside it. */
export function Switch({
  checked,
  onChange,
  className,
  testId,
  children,
}: {
  checked: boolean;
  onChange: (checked: boolean) => void;
  className?: string;
  testId?: string;
  children: ReactNode;
}) {
  return (
    <label className={`cfg-switch-row${className ? ` ${className}` : ""}`}>
      <input type="checkbox" role="switch" className="cfg-switch" checked={checked} data-testid={testId} onChange={(event) => onChange(event.target.checked)} />
      {children}
    </label>
  );
}

/** What went wrong, read out at once; nothing while there is nothing. */
export function Failure({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p className="turn-error" role="alert">
      {message}
    </p>
  );
}

/** A form that did not save, and why. */
export function NotSaved({ error }: { error: string | null }) {
  const { t } = useI18n();
  return <Failure message={error && t("cfgNotSaved", { message: error })} />;
}

/** What an action just did, read out when the reader is free. */
export function Notice({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <p className="cfg-saved" role="status">
      {message}
    </p>
  );
}

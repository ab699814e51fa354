// A labelled form control with its hint and its problem, wired for screen readers.
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

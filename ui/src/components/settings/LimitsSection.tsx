// How far a question may go: tool rounds, result size and time limits.
import { useState } from "react";
import { api, type Limits } from "../../api";
import { useI18n } from "../../i18n";
import type { MessageKey } from "../../i18n/en";
import { Field, NotSaved } from "./Field";
import { hasProblems, LIMIT_RANGES, limitsFormFrom, validateLimits, type LimitsForm } from "./forms";
import { useSave } from "./useSave";

interface Props {
  limits: Limits;
  onSaved: (limits: Limits) => void;
}

const FIELDS: { field: keyof LimitsForm; label: MessageKey; hint: MessageKey; unit: MessageKey; step: string }[] = [
  { field: "max_rounds", label: "cfgMaxRounds", hint: "cfgMaxRoundsHint", unit: "cfgUnitRounds", step: "1" },
  { field: "max_result_kb", label: "cfgMaxResult", hint: "cfgMaxResultHint", unit: "cfgUnitKb", step: "any" },
  { field: "request_timeout_secs", label: "cfgRequestTimeout", hint: "cfgRequestTimeoutHint", unit: "cfgUnitSeconds", step: "1" },
  { field: "command_timeout_secs", label: "cfgCommandTimeout", hint: "cfgCommandTimeoutHint", unit: "cfgUnitSeconds", step: "1" },
];

export function LimitsSection({ limits, onSaved }: Props) {
  const { t } = useI18n();
  const [form, setForm] = useState<LimitsForm>(() => limitsFormFrom(limits));
  const { saving, saved, error, saveWith, changed } = useSave();
  const { problems, limits: valid } = validateLimits(form);
  const unchanged =
    valid !== null &&
    valid.max_rounds === limits.max_rounds &&
    valid.max_result_bytes === limits.max_result_bytes &&
    valid.request_timeout_secs === limits.request_timeout_secs &&
    valid.command_timeout_secs === limits.command_timeout_secs;

  const save = () => {
    if (!valid) return;
    saveWith(
      () => api.saveLimits(valid),
      (stored) => {
        setForm(limitsFormFrom(stored));
        onSaved(stored);
      },
    );
  };

  return (
    <form
      className="cfg-form cfg-form-plain"
      aria-label={t("cfgLimits")}
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        save();
      }}
    >
      <div className="cfg-grid">
        {FIELDS.map(({ field, label, hint, unit, step }) => {
          const [min, max] = LIMIT_RANGES[field];
          return (
          <Field key={field} label={t(label)} hint={t(hint, { min, max })} problem={problems[field]}>
            {(control) => (
              <div className="cfg-unit-row">
                <input
                  {...control}
                  type="number"
                  inputMode={step === "any" ? "decimal" : "numeric"}
                  min={min}
                  max={max}
                  step={step}
                  value={form[field]}
                  onChange={(event) => {
                    setForm((old) => ({ ...old, [field]: event.target.value }));
                    changed();
                  }}
                />
                <span className="muted">{t(unit)}</span>
              </div>
            )}
          </Field>
          );
        })}
      </div>
      <NotSaved error={error} />
      <div className="cfg-actions">
        <button type="submit" className="primary" disabled={saving || hasProblems(problems) || unchanged}>
          {t("cfgSave")}
        </button>
        {saved && (
          <span className="cfg-saved" role="status">
            {t("cfgLimitsSaved")}
          </span>
        )}
      </div>
    </form>
  );
}

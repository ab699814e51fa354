// The open folder's standing approval rules: commands that always run, or never do.
import { useState } from "react";
import { api, errorMessage, type RuleView } from "../../api";
import { useI18n } from "../../i18n";
import { Failure, Field, Notice } from "./Field";
import { useReload } from "./useReload";

type Kind = RuleView["kind"];

export function RulesSection() {
  const { t, lang } = useI18n();
  const { value: rules, loadError, reload } = useReload(api.listRules);
  const [kind, setKind] = useState<Kind>("allow");
  const [command, setCommand] = useState("");
  const [submitted, setSubmitted] = useState(false);
  const [adding, setAdding] = useState(false);
  const [addError, setAddError] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<string | null>(null);
  const [revokeError, setRevokeError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);


  const when = (ms: number) => new Date(ms).toLocaleString(lang === "zh" ? "zh-CN" : "en", { dateStyle: "medium", timeStyle: "short" });
  const empty = command.trim() === "";

  const add = () => {
    setSubmitted(true);
    setNotice(null);
    if (empty) return;
    setAdding(true);
    setAddError(null);
    api.addRule(kind, command.trim()).then(
      async (rule) => {
        setAdding(false);
        setCommand("");
        setSubmitted(false);
        setNotice(t(rule.kind === "allow" ? "cfgRuleAddedAllow" : "cfgRuleAddedDeny", { command: rule.command }));
        await reload();
      },
      (failure: unknown) => {
        setAdding(false);
        setAddError(errorMessage(failure));
      },
    );
  };

  const revoke = (rule: RuleView) => {
    setRevoking(rule.id);
    setRevokeError(null);
    setNotice(null);
    api.revokeRule(rule.id).then(
      async () => {
        setRevoking(null);
        setNotice(t("cfgRuleRevoked", { command: rule.command }));
        await reload();
      },
      (failure: unknown) => {
        setRevoking(null);
        setRevokeError(errorMessage(failure));
      },
    );
  };

  const standing = (rules ?? []).filter((rule) => rule.revoked_ms === null);
  return (
    <>
      {loadError && <p className="turn-error">{t("cfgLoadFailed", { message: loadError })}</p>}
      {rules === null && !loadError && <p className="muted">{t("cfgLoading")}</p>}
      {rules !== null && standing.length === 0 && <p className="muted">{t("cfgNoRules")}</p>}
      {standing.length > 0 && (
        <ul className="cfg-list" aria-label={t("cfgRules")}>
          {standing.map((rule) => (
            <li key={rule.id} className="cfg-item" data-rule={rule.command}>
              <div className="cfg-item-main">
                <div className="cfg-item-title">
                  <span className={`cfg-badge ${rule.kind === "allow" ? "cfg-badge-ok" : "cfg-badge-err"}`}>{rule.kind === "allow" ? t("cfgAllow") : t("cfgDeny")}</span>
                  <code className="cfg-mono cfg-command">{rule.command}</code>
                </div>
                <span className="muted small-text">{t("cfgRuleAdded", { when: when(rule.created_ms) })}</span>
              </div>
              <div className="cfg-item-actions">
                <button type="button" className="small" disabled={revoking !== null} onClick={() => revoke(rule)} aria-label={t("cfgRevokeNamed", { command: rule.command })}>
                  {t("cfgRevoke")}
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      <Failure message={revokeError} />
      <Notice message={notice} />
      <form
        className="cfg-form cfg-rule-form"
        aria-label={t("cfgAddRule")}
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          add();
        }}
      >
        <h3>{t("cfgAddRule")}</h3>
        <div className="cfg-rule-row">
          <Field label={t("cfgRuleKind")}>
            {(control) => (
              <select {...control} value={kind} onChange={(event) => setKind(event.target.value as Kind)}>
                <option value="allow">{t("cfgAllowAlways")}</option>
                <option value="deny">{t("cfgDenyAlways")}</option>
              </select>
            )}
          </Field>
          <Field label={t("cfgRuleCommand")} hint={t("cfgRuleCommandHint")} problem={submitted && empty ? { key: "cfgRuleCommandRequired" } : null} className="cfg-grow">
            {(control) => (
              <input
                {...control}
                className="cfg-mono"
                value={command}
                placeholder="cargo test"
                spellCheck={false}
                autoComplete="off"
                onChange={(event) => {
                  setCommand(event.target.value);
                  setAddError(null);
                }}
              />
            )}
          </Field>
          <button type="submit" className="primary cfg-rule-add" disabled={adding}>
            {t("cfgAdd")}
          </button>
        </div>
        {addError && (
          <p className="turn-error" role="alert">
            {t("cfgRuleRefused", { message: addError })}
          </p>
        )}
      </form>
    </>
  );
}

// The endpoints and models auto mode found to refuse native tools: questions to them use prompt
// mode from the start. Each can be forgotten, so the next question tries native tools again.
import { useId, useState } from "react";
import { api, errorMessage, type LearnedToolMode } from "../../api";
import { useI18n } from "../../i18n";
import { Failure, Notice } from "./Field";

interface Props {
  learned: LearnedToolMode[];
  /** Reloads the settings after an entry was forgotten. */
  onChanged: () => Promise<void>;
}

const key = (entry: LearnedToolMode) => `${entry.base_url}\n${entry.model}`;

export function LearnedToolModes({ learned, onChanged }: Props) {
  const { t } = useI18n();
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const titleId = useId();

  const forget = (entry: LearnedToolMode) => {
    setBusy(key(entry));
    setError(null);
    setNotice(null);
    api.forgetToolMode(entry.base_url, entry.model).then(
      async () => {
        setBusy(null);
        setNotice(t("cfgForgotten", { model: entry.model }));
        await onChanged();
      },
      (failure: unknown) => {
        setBusy(null);
        setError(t("cfgNotForgotten", { model: entry.model, message: errorMessage(failure) }));
      },
    );
  };

  return (
    <>
      {learned.length > 0 && (
        <>
          <h3 id={titleId}>{t("cfgLearnedTitle")}</h3>
          <p className="muted small-text">{t("cfgLearnedIntro")}</p>
          <ul className="cfg-list" aria-labelledby={titleId} data-testid="cfg-learned">
            {learned.map((entry) => (
              <li key={key(entry)} className="cfg-item" data-learned={entry.model}>
                <div className="cfg-item-main">
                  <div className="cfg-item-title">
                    <strong className="cfg-mono">{entry.model}</strong>
                  </div>
                  <code className="cfg-mono muted">{entry.base_url}</code>
                </div>
                <div className="cfg-item-actions">
                  <button
                    type="button"
                    className="small"
                    disabled={busy !== null}
                    aria-busy={busy === key(entry)}
                    onClick={() => forget(entry)}
                    aria-label={t("cfgForgetNamed", { model: entry.model, url: entry.base_url })}
                  >
                    {t("cfgForget")}
                  </button>
                </div>
              </li>
            ))}
          </ul>
        </>
      )}
      <Failure message={error} />
      <Notice message={notice} />
    </>
  );
}

// "Replay with…": the provider and model to ask the recorded questions again with, and
// whether every matching call is answered from the record. Enter runs, Esc closes.
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { api, errorMessage, type ModelView, type ProviderView, type ReplayWith } from "../../api";
import { useI18n } from "../../i18n";
import { useEscape } from "../useEscape";

const LOCAL = "local";

interface Props {
  /** What is replayed, as a sentence ("The question “…”"). */
  what: string;
  onRun: (with_: ReplayWith) => void;
  onClose: () => void;
}

interface Choices {
  providers: ProviderView[];
  installed: ModelView[];
  localModel: string | null;
  error: string | null;
}

export function ReplayDialog({ what, onRun, onClose }: Props) {
  const { t } = useI18n();
  const [choices, setChoices] = useState<Choices | null>(null);
  const [provider, setProvider] = useState("");
  const [model, setModel] = useState("");
  const [fromRecord, setFromRecord] = useState(false);
  const first = useRef<HTMLSelectElement>(null);
  const titleId = useId();
  useEscape(onClose);

  useEffect(() => {
    let gone = false;
    Promise.all([api.getSettings(), api.listModels().catch(() => null)]).then(
      ([settings, models]) => {
        if (gone) return;
        const next: Choices = { providers: settings.providers, installed: models?.installed.filter((m) => !m.missing) ?? [], localModel: models?.local_model ?? null, error: null };
        setChoices(next);
        const chosen = settings.providers.find((p) => p.active) ?? settings.providers[0];
        setProvider(chosen ? chosen.id : LOCAL);
        setModel(chosen ? chosen.model ?? "" : next.localModel ?? next.installed[0]?.name ?? "");
      },
      (error: unknown) => !gone && setChoices({ providers: [], installed: [], localModel: null, error: errorMessage(error) }),
    );
    return () => {
      gone = true;
    };
  }, []);

  useEffect(() => {
    if (choices) first.current?.focus();
  }, [choices]);

  const pick = (id: string) => {
    setProvider(id);
    if (!choices) return;
    if (id === LOCAL) setModel(choices.localModel ?? choices.installed[0]?.name ?? "");
    else setModel(choices.providers.find((p) => p.id === id)?.model ?? "");
  };

  const ready = choices !== null && choices.error === null && provider !== "" && (provider !== LOCAL || model.trim() !== "");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (ready) onRun({ provider, model: model.trim() || null, from_record: fromRecord });
  };

  const localNames = choices?.installed.map((m) => m.name) ?? [];
  return (
    <div className="replay-backdrop" data-overlay="replay">
      <div className="replay-dialog" role="dialog" aria-modal="true" aria-labelledby={titleId} data-testid="replay-dialog">
      <form className="replay-form" onSubmit={submit}>
        <h2 id={titleId}>{t("replayDialogTitle")}</h2>
        <p className="muted replay-what">{what}</p>
        {choices === null ? (
          <p className="muted">{t("replayLoadingChoices")}</p>
        ) : choices.error !== null ? (
          <p className="error-text" role="alert">
            {t("replayChoicesFailed", { message: choices.error })}
          </p>
        ) : (
          <>
            <label className="replay-field">
              <span>{t("replayProvider")}</span>
              <select ref={first} value={provider} onChange={(event) => pick(event.target.value)} data-testid="replay-provider">
                {choices.providers.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name || p.id}
                  </option>
                ))}
                <option value={LOCAL}>{t("replayLocal")}</option>
              </select>
            </label>
            <label className="replay-field">
              <span>{t("replayModelField")}</span>
              {provider === LOCAL && localNames.length > 0 ? (
                <select value={model} onChange={(event) => setModel(event.target.value)} data-testid="replay-model">
                  {localNames.map((name) => (
                    <option key={name} value={name}>
                      {name}
                    </option>
                  ))}
                </select>
              ) : (
                <input type="text" value={model} placeholder={t("replayModelDefault")} onChange={(event) => setModel(event.target.value)} data-testid="replay-model" />
              )}
            </label>
            {provider === LOCAL && localNames.length === 0 && <p className="muted small-text">{t("replayNoLocalModels")}</p>}
            <label className="replay-check">
              <input type="checkbox" checked={fromRecord} onChange={(event) => setFromRecord(event.target.checked)} data-testid="replay-from-record" />
              {t("replayFromRecord")}
            </label>
            <p className="muted small-text">{t("replaySafe")}</p>
          </>
        )}
        <div className="replay-actions">
          <button type="button" onClick={onClose}>
            {t("replayCancel")}
          </button>
          <button type="submit" className="primary" disabled={!ready} data-testid="replay-run">
            {t("replayRun")}
          </button>
        </div>
        <p className="muted small-text">{t("replayKeys")}</p>
      </form>
      </div>
    </div>
  );
}

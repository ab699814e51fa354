// Settings → Models: the models Tooltrail runs itself. What is installed (size, context, chat
// template, the one in use), downloads from the catalogue or the hub, imports, removal after a
// yes, Use, and the model running now with Stop — what `tooltrail models` and `models ps` show.
import "../models/models.css";
import { useEffect, useRef, useState } from "react";
import { api, errorMessage, type ModelView, type RuntimeView } from "../../api";
import { useDownloads } from "../../downloads";
import { useI18n } from "../../i18n";
import { CatalogueEntryMain } from "../models/CatalogueEntry";
import { DownloadCards } from "../models/DownloadCard";
import { formatBytes, formatStopsIn, formatTokens } from "../models/format";
import { ConfirmInline, Failure, Field, Notice } from "./Field";
import { useReload } from "./useReload";

interface Props {
  /** Where questions go changed. */
  onChanged: () => void;
}

export function ModelsSection({ onChanged }: Props) {
  const { t } = useI18n();
  const downloads = useDownloads();
  // Loaded again when a download finishes: the new model is on disk.
  const { value: view, loadError, reload } = useReload(api.listModels, downloads.finished);
  const [busy, setBusy] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [reference, setReference] = useState("");
  const [referenceProblem, setReferenceProblem] = useState(false);
  /** Why the reference typed was refused; shown under its field, where the user is looking. */
  const [referenceRefused, setReferenceRefused] = useState<string | null>(null);
  const refusedRef = useRef<HTMLParagraphElement>(null);
  // The sentence appears under the field, which may sit at the bottom edge of the view.
  useEffect(() => {
    if (referenceRefused) refusedRef.current?.scrollIntoView({ block: "nearest" });
  }, [referenceRefused]);


  const act = (key: string, run: () => Promise<string | null>, changesWhere = false) => {
    setBusy(key);
    setProblem(null);
    setNotice(null);
    run().then(
      async (done) => {
        setBusy(null);
        setConfirm(null);
        if (done) setNotice(done);
        await reload();
        if (changesWhere) onChanged();
      },
      (failure: unknown) => {
        setBusy(null);
        setProblem(errorMessage(failure));
      },
    );
  };
  const start = (ref: string) => {
    setProblem(null);
    downloads.start(ref, false).catch((failure: unknown) => setProblem(errorMessage(failure)));
  };
  const downloading = new Set(downloads.items.filter((item) => item.phase !== "done" && item.phase !== "failed" && item.phase !== "cancelled").map((item) => item.name));

  if (loadError) {
    return (
      <p className="turn-error" role="alert">
        {t("cfgLoadFailed", { message: loadError })}
      </p>
    );
  }
  if (!view) return <p className="muted">{t("cfgLoading")}</p>;
  return (
    <>
      {view.server_problem && (
        <p className="cfg-warning small-text" data-testid="mdl-server-problem">
          {t("mdlServerProblem", { problem: view.server_problem })}
        </p>
      )}
      <RuntimeRow runtime={view.runtime} busy={busy === "stop"} onStop={() => act("stop", async () => {
        const stopped = await api.stopRuntime();
        return stopped ? t("mdlStopped", { name: stopped }) : null;
      })} />

      <h3>{t("mdlInstalledTitle")}</h3>
      {view.installed.length === 0 ? (
        <p className="muted">{t("mdlNoneInstalled")}</p>
      ) : (
        <ul className="cfg-list" aria-label={t("mdlInstalledTitle")} data-testid="mdl-installed">
          {view.installed.map((model) => (
            <InstalledRow
              key={model.name}
              model={model}
              inUse={view.local_active && model.chosen}
              busy={busy !== null}
              confirming={confirm === model.name}
              onUse={() => act(model.name, async () => (await api.useModel(model.name), t("mdlUsedNow", { name: model.name })), true)}
              onAskRemove={() => setConfirm(model.name)}
              onCancelRemove={() => setConfirm(null)}
              onRemove={() => act(model.name, async () => (await api.removeModel(model.name), t("mdlRemoved", { name: model.name })), model.chosen)}
            />
          ))}
        </ul>
      )}
      <p className="muted small-text">{t("mdlFolder", { dir: view.dir })}</p>
      <Notice message={notice} />
      <Failure message={problem} />

      <DownloadCards />
      {view.unfinished.filter((pull) => !downloading.has(pull.name)).length > 0 && (
        <>
          <h3>{t("mdlUnfinished")}</h3>
          <ul className="cfg-list" data-testid="mdl-unfinished">
            {view.unfinished
              .filter((pull) => !downloading.has(pull.name))
              .map((pull) => (
                <li key={pull.name} className="cfg-item">
                  <span className="cfg-item-main">{t("mdlUnfinishedRow", { name: pull.name, have: formatBytes(pull.have), total: pull.total === null ? "?" : formatBytes(pull.total) })}</span>
                  <span className="cfg-item-actions">
                    {/* A catalogue model is pulled again by its name; a hub file by its hf.co/… reference above. */}
                    {view.catalogue.some((entry) => entry.name === pull.name) && (
                      <button type="button" className="small" onClick={() => start(pull.name)} aria-label={t("mdlCarryOnNamed", { name: pull.name })}>
                        {t("mdlCarryOn")}
                      </button>
                    )}
                    <button type="button" className="small danger" disabled={busy !== null} onClick={() => act(pull.name, async () => (await api.removeModel(pull.name), null))} aria-label={t("mdlDiscardNamed", { name: pull.name })}>
                      {t("mdlDiscard")}
                    </button>
                  </span>
                </li>
              ))}
          </ul>
        </>
      )}

      <h3>{t("mdlCatalogue")}</h3>
      {!view.runtime_supported && (
        <p className="cfg-warning small-text" data-testid="mdl-runtime-unsupported">
          {t("mdlRuntimeUnsupported")}
        </p>
      )}
      <ul className="cfg-list" aria-label={t("mdlCatalogue")} data-testid="mdl-catalogue">
        {view.catalogue.map((entry) => (
          <li key={entry.name} className="cfg-item" data-model={entry.name}>
            <CatalogueEntryMain entry={entry} licence />
            {!entry.installed && (
              <div className="cfg-item-actions">
                <button type="button" className="small" disabled={downloading.has(entry.name)} onClick={() => start(entry.name)} aria-label={t("mdlDownloadNamed", { name: entry.title })}>
                  {t("mdlDownload")}
                </button>
              </div>
            )}
          </li>
        ))}
      </ul>

      <form
        className="cfg-form cfg-form-plain"
        aria-label={t("mdlDownloadForm")}
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          if (!reference.trim()) {
            setReferenceProblem(true);
            return;
          }
          setReferenceProblem(false);
          setReferenceRefused(null);
          setProblem(null);
          // The text stays in the field until it is taken, so a refused one can be corrected.
          downloads.start(reference.trim(), false).then(
            () => setReference(""),
            (failure: unknown) => setReferenceRefused(errorMessage(failure)),
          );
        }}
      >
        <Field label={t("mdlReference")} hint={t("mdlReferenceHint")} problem={referenceProblem ? { key: "mdlReferenceRequired" } : null}>
          {(control) => (
            <div className="cfg-key-row">
              <input {...control} className="cfg-mono" value={reference} placeholder="hf.co/OWNER/REPO/FILE.gguf" onChange={(event) => setReference(event.target.value)} autoComplete="off" spellCheck={false} />
              <button type="submit">{t("mdlDownload")}</button>
            </div>
          )}
        </Field>
        {referenceRefused && (
          <p ref={refusedRef} className="turn-error" role="alert" data-testid="mdl-reference-refused">
            {referenceRefused}
          </p>
        )}
      </form>
      <div>
        <button
          type="button"
          disabled={busy !== null}
          onClick={() =>
            act("import", async () => {
              const imported = await api.importModel(null, false);
              return imported ? t("mdlImported", { name: imported.model.name }) : null;
            })
          }
        >
          {t("mdlImport")}
        </button>
      </div>
    </>
  );
}

function InstalledRow({ model, inUse, busy, confirming, onUse, onAskRemove, onCancelRemove, onRemove }: { model: ModelView; inUse: boolean; busy: boolean; confirming: boolean; onUse: () => void; onAskRemove: () => void; onCancelRemove: () => void; onRemove: () => void }) {
  const { t } = useI18n();
  const facts = [formatBytes(model.size_bytes), model.parameters, model.quantization, model.context_length !== null ? t("mdlContext", { tokens: formatTokens(model.context_length) }) : null].filter(Boolean).join(" · ");
  return (
    <li className={`cfg-item${inUse ? " cfg-item-active" : ""}`} data-model={model.name}>
      <div className="cfg-item-main">
        <div className="cfg-item-title">
          <strong className="cfg-mono">{model.name}</strong>
          {inUse && <span className="cfg-badge cfg-badge-accent">{t("mdlInUse")}</span>}
          {!inUse && model.chosen && <span className="cfg-badge cfg-badge-muted">{t("mdlChosen")}</span>}
          {model.missing && <span className="cfg-badge cfg-badge-err">{t("mdlMissing")}</span>}
        </div>
        <span className="small-text">{facts}</span>
        <span className="muted small-text">
          {model.has_chat_template ? t("mdlTemplateYes") : t("mdlTemplateNo")} · {model.source}
        </span>
      </div>
      <div className="cfg-item-actions">
        {confirming ? (
          <ConfirmInline question={t("mdlRemoveQuestion", { name: model.name, size: formatBytes(model.size_bytes) })} confirmLabel={t("mdlRemove")} busy={busy} onConfirm={onRemove} onCancel={onCancelRemove} />
        ) : (
          <>
            {!inUse && !model.missing && (
              <button type="button" className="small" disabled={busy} onClick={onUse} aria-label={t("mdlUseNamed", { name: model.name })}>
                {t("mdlUse")}
              </button>
            )}
            <button type="button" className="small danger" disabled={busy} onClick={onAskRemove} aria-label={t("mdlRemoveNamed", { name: model.name })}>
              {t("mdlRemove")}
            </button>
          </>
        )}
      </div>
    </li>
  );
}

function RuntimeRow({ runtime, busy, onStop }: { runtime: RuntimeView | null; busy: boolean; onStop: () => void }) {
  const { t } = useI18n();
  return (
    <div className="cfg-endpoint" data-testid="mdl-runtime">
      <strong>{t("mdlRuntime")}</strong>
      {runtime ? (
        <div className="cfg-key-row">
          <span className="cfg-item-main small-text">
            {t("mdlRuntimeRow", { model: runtime.model, pid: runtime.pid, port: runtime.port, context: formatTokens(runtime.context_size) })}
            {runtime.memory_bytes !== null && ` · ${t("mdlRuntimeMemory", { memory: `${Math.ceil(runtime.memory_bytes / (1024 * 1024))} MiB` })}`}
            {" · "}
            {runtime.in_use ? t("mdlRuntimeInUse") : runtime.stops_in_secs === 0 ? t("mdlRuntimeStopping") : t("mdlRuntimeStops", { time: formatStopsIn(runtime.stops_in_secs ?? 0, t) })}
          </span>
          <button type="button" className="small danger" disabled={busy} onClick={onStop} aria-label={t("mdlStopNamed", { name: runtime.model })}>
            {t("mdlStop")}
          </button>
        </div>
      ) : (
        <span className="muted small-text">{t("mdlRuntimeNone")}</span>
      )}
    </div>
  );
}

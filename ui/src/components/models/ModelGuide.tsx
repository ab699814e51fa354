// The first-run guide: shown instead of an error when no model answers. Three ways to a first
// answer, each a click or two: (a) a model server already running on this computer, with what
// each of its models can do; (b) a cloud provider with a key; (c) a model Tooltrail downloads
// (or imports) and runs itself. Each choice is written to config.toml by the backend, the same
// way the command line writes it, and the guide then says where questions go.
import "./models.css";
import { useCallback, useEffect, useId, useState } from "react";
import { api, errorMessage, type CatalogueModel, type ConnectionTest, type FoundServer, type GuideView, type Support } from "../../api";
import { useDownloads } from "../../downloads";
import { useI18n } from "../../i18n";
import type { MessageKey } from "../../i18n/en";
import { PROVIDER_PRESETS } from "../settings/presets";
import { CatalogueEntryMain } from "./CatalogueEntry";
import { DownloadCards } from "./DownloadCard";
import { windowText } from "./format";

interface Props {
  /** The check the caller already ran, if any; the guide runs its own otherwise. */
  initial?: GuideView | null;
  /** Where to go once questions have somewhere to go. */
  onDone: () => void;
  doneLabel: MessageKey;
  /** Where questions go changed. */
  onChanged: () => void;
  /** The guide is the whole page, so its title is the page's level-one heading. */
  ownPage?: boolean;
}

/** The level of each way's title: one below the guide's own. */
type WayHeading = "h2" | "h3";

const CLOUD = PROVIDER_PRESETS.filter((preset) => preset.needsKey);

export function ModelGuide({ initial, onDone, doneLabel, onChanged, ownPage = false }: Props) {
  const { t } = useI18n();
  const [guide, setGuide] = useState<GuideView | null>(initial ?? null);
  const [checking, setChecking] = useState(!initial);
  const [chosen, setChosen] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { finished } = useDownloads();

  // Sets state only when the answer comes, so effects may call it.
  const load = useCallback(() => {
    api.modelGuide().then(
      (view) => {
        setGuide(view);
        setChecking(false);
      },
      (failure: unknown) => {
        setError(errorMessage(failure));
        setChecking(false);
      },
    );
  }, []);
  const check = useCallback(() => {
    setChecking(true);
    load();
  }, [load]);
  useEffect(() => {
    if (!initial) load();
  }, [initial, load]);
  // A download that ended may have made a model the one questions go to.
  useEffect(() => {
    if (finished > 0) load();
  }, [finished, load]);

  const chose = useCallback(
    (sentence: string) => {
      setChosen(sentence);
      setError(null);
      onChanged();
      load();
    },
    [onChanged, load],
  );

  const ready = guide?.ready === true;
  const Title = ownPage ? "h1" : "h2";
  const Way = ownPage ? "h2" : "h3";
  return (
    <div className="guide" data-testid="model-guide" aria-busy={checking}>
      <Title className="guide-title">{t("guideTitle")}</Title>
      {ready ? (
        <div className="guide-ready" role="status" data-testid="guide-ready">
          <p>{chosen ?? (guide.local ? t("guideReadyLocal", { name: guide.endpoint.model ?? "" }) : t("guideReady", { name: guide.endpoint.model ?? guide.endpoint.base_url }))}</p>
          <button type="button" className="primary" onClick={onDone}>
            {t(doneLabel)}
          </button>
        </div>
      ) : (
        <>
          <p>{guide && !guide.local ? t("guideIntro", { url: guide.endpoint.base_url }) : t("guideIntroNoUrl")}</p>
          {chosen && (
            <p role="status" data-testid="guide-chosen">
              {chosen}
            </p>
          )}
          {guide?.problem && <p className="muted small-text" data-testid="guide-problem">{t("guideProblem", { problem: guide.problem })}</p>}
        </>
      )}
      {error && (
        <p className="turn-error" role="alert">
          {error}
        </p>
      )}
      <Servers guide={guide} checking={checking} onLookAgain={check} onChosen={chose} onError={setError} Heading={Way} />
      <Cloud onChosen={chose} Heading={Way} />
      <Local onChosen={chose} Heading={Way} />
    </div>
  );
}

function supportText(support: Support, t: (key: MessageKey) => string): string {
  switch (support) {
    case "yes":
      return t("guideYes");
    case "no":
      return t("guideNo");
    case "unknown":
      return t("guideUnknown");
  }
}

function Servers({ guide, checking, onLookAgain, onChosen, onError, Heading }: { guide: GuideView | null; checking: boolean; onLookAgain: () => void; onChosen: (sentence: string) => void; onError: (message: string) => void; Heading: WayHeading }) {
  const { t } = useI18n();
  const titleId = useId();
  return (
    <section className="guide-way" aria-labelledby={titleId} data-testid="guide-servers">
      <div className="guide-way-head">
        <Heading id={titleId}>{t("guideServersTitle")}</Heading>
        <button type="button" className="small" onClick={onLookAgain} disabled={checking}>
          {t("guideLookAgain")}
        </button>
      </div>
      {checking && !guide ? (
        <p className="muted">
          <span className="spinner cfg-inline-spinner" aria-hidden="true" /> {t("guideChecking")}
        </p>
      ) : guide && guide.servers.length > 0 ? (
        <>
          <p className="muted small-text">{t("guideServersFound", { ms: guide.looked_ms })}</p>
          {guide.servers.map((server) => (
            <ServerCard key={server.base_url} server={server} onChosen={onChosen} onError={onError} />
          ))}
        </>
      ) : (
        <p className="muted">{t("guideServersNone", { ms: guide?.looked_ms ?? 0 })}</p>
      )}
    </section>
  );
}

function serverName(server: FoundServer, t: (key: MessageKey) => string): string {
  switch (server.kind) {
    case "ollama":
      return "Ollama";
    case "lm_studio":
      return "LM Studio";
    case "llama_cpp":
      return "llama.cpp server";
    case "vllm":
      return "vLLM";
    case "jan":
      return "Jan";
    case "openai_compatible":
      return t("guideKindOpenAi");
  }
}

function ServerCard({ server, onChosen, onError }: { server: FoundServer; onChosen: (sentence: string) => void; onError: (message: string) => void }) {
  const { t } = useI18n();
  const name = serverName(server, t);
  const suggested = server.models.find((model) => model.tools === "yes") ?? server.models[0];
  const [picked, setPicked] = useState<string | null>(suggested?.id ?? null);
  const [busy, setBusy] = useState(false);
  const group = useId();
  const use = () => {
    setBusy(true);
    api.useServer(server.base_url, picked).then(
      (used) => {
        setBusy(false);
        onChosen(t("guideUsed", { name: used.model ? `${used.model} (${used.name})` : used.name }));
      },
      (failure: unknown) => {
        setBusy(false);
        onError(errorMessage(failure));
      },
    );
  };
  return (
    <div className="guide-server" data-server={server.base_url}>
      <div className="guide-server-head">
        <strong>{name}</strong> <code className="cfg-mono">{server.base_url}</code>
      </div>
      {server.needs_api_key && <p className="muted small-text">{t("guideServerNeedsKey")}</p>}
      {!server.needs_api_key && server.models.length === 0 && <p className="muted small-text">{t("guideServerNoModels")}</p>}
      {server.models.length > 0 && (
        <table className="guide-models">
          <caption className="visually-hidden">{t("guideServerModels", { server: name })}</caption>
          <thead>
            <tr>
              <th scope="col">{t("guideModel")}</th>
              <th scope="col">{t("guideTools")}</th>
              <th scope="col">{t("guideVision")}</th>
              <th scope="col">{t("guideContext")}</th>
            </tr>
          </thead>
          <tbody>
            {server.models.map((model) => (
              <tr key={model.id}>
                <td>
                  <label className="guide-pick">
                    <input type="radio" name={group} value={model.id} checked={picked === model.id} onChange={() => setPicked(model.id)} />
                    <span className="cfg-mono">{model.id}</span>
                  </label>
                </td>
                <td className={`support-${model.tools}`}>{supportText(model.tools, t)}</td>
                <td>{supportText(model.vision, t)}</td>
                <td>{windowText(model, t)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div>
        <button type="button" className="primary" disabled={busy} onClick={use} aria-label={t("guideUseNamed", { model: picked ?? "", server: name })}>
          {t("guideUse")}
        </button>
      </div>
    </div>
  );
}

function Cloud({ onChosen, Heading }: { onChosen: (sentence: string) => void; Heading: WayHeading }) {
  const { t } = useI18n();
  const titleId = useId();
  const providerId = useId();
  const keyId = useId();
  const modelId = useId();
  const listId = useId();
  const [presetId, setPresetId] = useState(CLOUD[0]?.id ?? "openai");
  const [key, setKey] = useState("");
  const [model, setModel] = useState("");
  const [test, setTest] = useState<{ running: boolean; result: ConnectionTest | null }>({ running: false, result: null });
  const [problem, setProblem] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const preset = CLOUD.find((p) => p.id === presetId) ?? CLOUD[0]!;
  const input = () => ({ id: null, name: preset.name, base_url: preset.base_url, model: model.trim() || null, api_key: key.trim() || null, tool_mode: null });

  const runTest = () => {
    if (!key.trim()) {
      setProblem(t("guideKeyMissing"));
      return;
    }
    setProblem(null);
    setTest({ running: true, result: null });
    api.testConnection(input()).then(
      (result) => setTest({ running: false, result }),
      (failure: unknown) => setTest({ running: false, result: { ok: false, models: [], message: errorMessage(failure) } }),
    );
  };
  const save = () => {
    if (!key.trim()) {
      setProblem(t("guideKeyMissing"));
      return;
    }
    setSaving(true);
    setProblem(null);
    api.saveProvider(input(), true).then(
      (saved) => {
        setSaving(false);
        setKey("");
        onChosen(t("guideUsed", { name: saved.model ? `${saved.model} (${saved.name})` : saved.name }));
      },
      (failure: unknown) => {
        setSaving(false);
        setProblem(errorMessage(failure));
      },
    );
  };
  return (
    <section className="guide-way" aria-labelledby={titleId} data-testid="guide-cloud">
      <Heading id={titleId}>{t("guideCloudTitle")}</Heading>
      <p className="muted small-text">{t("guideCloudIntro")}</p>
      <div className="guide-cloud-row">
        <div className="cfg-field">
          <label className="cfg-label" htmlFor={providerId}>
            {t("guideProvider")}
          </label>
          <select id={providerId} value={presetId} onChange={(event) => {
            setPresetId(event.target.value as typeof presetId);
            setTest({ running: false, result: null });
          }}>
            {CLOUD.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
        <div className="cfg-field guide-key">
          <label className="cfg-label" htmlFor={keyId}>
            {t("guideApiKey", { name: preset.name })}
          </label>
          <input id={keyId} type="password" value={key} autoComplete="new-password" spellCheck={false} onChange={(event) => setKey(event.target.value)} />
        </div>
        <div className="cfg-field">
          <label className="cfg-label" htmlFor={modelId}>
            {t("cfgModelOptional")}
          </label>
          <input id={modelId} className="cfg-mono" list={listId} value={model} autoComplete="off" spellCheck={false} onChange={(event) => setModel(event.target.value)} />
          <datalist id={listId}>
            {(test.result?.models ?? []).map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
        </div>
      </div>
      <div className="cfg-actions">
        <button type="button" onClick={runTest} disabled={test.running} aria-busy={test.running}>
          {test.running ? t("cfgTesting") : t("guideTest")}
        </button>
        <button type="button" className="primary" onClick={save} disabled={saving}>
          {t("guideUseCloud")}
        </button>
      </div>
      <div aria-live="polite" data-testid="guide-cloud-result">
        {problem && <p className="cfg-problem" role="alert">{problem}</p>}
        {!test.running && test.result?.ok && <p className="cfg-ok">{test.result.models.length === 1 ? t("cfgConnectedOne") : t("cfgConnected", { count: test.result.models.length })}</p>}
        {!test.running && test.result && !test.result.ok && <p className="cfg-problem" role="alert">{t("cfgTestFailed", { message: test.result.message ?? "" })}</p>}
      </div>
    </section>
  );
}

function Local({ onChosen, Heading }: { onChosen: (sentence: string) => void; Heading: WayHeading }) {
  const { t } = useI18n();
  const titleId = useId();
  const downloads = useDownloads();
  const [catalogue, setCatalogue] = useState<CatalogueModel[]>([]);
  const [serverProblem, setServerProblem] = useState<string | null>(null);
  // Until the backend says otherwise; where it cannot run models (Windows, for now), no
  // download of a gigabyte or two is offered that could not be used.
  const [supported, setSupported] = useState(true);
  const [problem, setProblem] = useState<string | null>(null);
  const [importing, setImporting] = useState(false);
  useEffect(() => {
    api.listModels().then(
      (view) => {
        setCatalogue(view.catalogue);
        setServerProblem(view.server_problem);
        setSupported(view.runtime_supported !== false);
      },
      (failure: unknown) => setProblem(errorMessage(failure)),
    );
  }, [downloads.finished]);
  const running = new Set(downloads.items.filter((item) => item.phase !== "done" && item.phase !== "failed" && item.phase !== "cancelled").map((item) => item.name));
  const download = (name: string) => {
    setProblem(null);
    downloads.start(name, true).catch((failure: unknown) => setProblem(errorMessage(failure)));
  };
  const importFile = () => {
    setProblem(null);
    setImporting(true);
    api.importModel(null, true).then(
      (imported) => {
        setImporting(false);
        if (imported) onChosen(t("guideImported", { name: imported.model.name }));
      },
      (failure: unknown) => {
        setImporting(false);
        setProblem(errorMessage(failure));
      },
    );
  };
  if (!supported) {
    return (
      <section className="guide-way" aria-labelledby={titleId} data-testid="guide-local">
        <Heading id={titleId}>{t("guideLocalTitle")}</Heading>
        <p className="cfg-warning small-text" data-testid="guide-local-unsupported">
          {t("guideLocalUnsupported")}
        </p>
      </section>
    );
  }
  return (
    <section className="guide-way" aria-labelledby={titleId} data-testid="guide-local">
      <Heading id={titleId}>{t("guideLocalTitle")}</Heading>
      <p className="muted small-text">{t("guideLocalIntro")}</p>
      {serverProblem && <p className="cfg-warning small-text">{t("guideNoServer", { problem: serverProblem })}</p>}
      <DownloadCards />
      <ul className="guide-catalogue">
        {catalogue.map((entry) => (
          <li key={entry.name} className="cfg-item" data-model={entry.name}>
            <CatalogueEntryMain entry={entry} />
            <div className="cfg-item-actions">
              {entry.installed ? (
                <button type="button" className="small" onClick={() => api.useModel(entry.name).then((used) => onChosen(t("guideUsed", { name: used.name })), (failure: unknown) => setProblem(errorMessage(failure)))} aria-label={t("mdlUseNamed", { name: entry.title })}>
                  {t("mdlUse")}
                </button>
              ) : (
                <button type="button" className="small" disabled={running.has(entry.name)} onClick={() => download(entry.name)} aria-label={t("mdlDownloadUseNamed", { name: entry.title })}>
                  {t("mdlDownloadUse")}
                </button>
              )}
            </div>
          </li>
        ))}
      </ul>
      <div>
        <button type="button" onClick={importFile} disabled={importing} aria-busy={importing}>
          {importing ? t("guideImporting") : t("guideImport")}
        </button>
      </div>
      {problem && (
        <p className="turn-error" role="alert">
          {problem}
        </p>
      )}
    </section>
  );
}

// Where questions go: the saved providers, the one in use, and a form to add or edit one.
// A stored API key is never shown; the form only says whether there is one.
import { useId, useState } from "react";
import { api, errorMessage, type AppSettings, type ConnectionTest, type ProviderView, type ToolMode } from "../../api";
import { useI18n } from "../../i18n";
import type { MessageKey } from "../../i18n/en";
import { ConfirmInline, Failure, Field, Notice, NotSaved } from "./Field";
import {
  applyPreset,
  chosenToolMode,
  EMPTY_PROVIDER_FORM,
  endpointOverridden,
  hasProblems,
  providerFormFrom,
  providerInput,
  TOOL_MODES,
  validateProvider,
  type ProviderForm,
} from "./forms";
import { LearnedToolModes } from "./LearnedToolModes";
import { PROVIDER_PRESETS } from "./presets";

interface Props {
  settings: AppSettings;
  /** Reloads the settings after a provider was saved, used or deleted. */
  onChanged: () => Promise<void>;
}

/** How many listed models are offered as buttons; the rest are in the model field's list. */
const MODEL_BUTTONS = 12;

/**
 * Each tool mode's name in the select, what it does (the hint below it) and its badge in the list:
 * the default, auto, goes without one.
 */
const TOOL_MODE_TEXT: Record<ToolMode, { label: MessageKey; hint: MessageKey; badge: MessageKey | null }> = {
  auto: { label: "cfgToolModeAuto", hint: "cfgToolModeAutoHint", badge: null },
  native: { label: "cfgToolModeNative", hint: "cfgToolModeNativeHint", badge: "cfgToolModeBadgeNative" },
  prompt: { label: "cfgToolModePrompt", hint: "cfgToolModePromptHint", badge: "cfgToolModeBadgePrompt" },
};

function ToolModeBadge({ mode }: { mode: ToolMode | null }) {
  const { t } = useI18n();
  const badge = mode && TOOL_MODE_TEXT[mode].badge;
  return badge ? <span className="cfg-badge cfg-badge-muted">{t(badge)}</span> : null;
}

type TestState = { running: true } | { running: false; result: ConnectionTest | null; error: string | null };
const NOT_TESTED: TestState = { running: false, result: null, error: null };

export function ProvidersSection({ settings, onChanged }: Props) {
  const { t } = useI18n();
  const [form, setForm] = useState<ProviderForm | null>(null);
  const [submitted, setSubmitted] = useState(false);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string | null>(null);
  const [test, setTest] = useState<TestState>(NOT_TESTED);
  const [models, setModels] = useState<string[]>([]);
  const [confirmDelete, setConfirmDelete] = useState<string | null>(null);
  const [busyId, setBusyId] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const modelListId = useId();

  const { providers, keychain } = settings;
  const active = providers.find((p) => p.active);
  const editing = form?.id ? providers.find((p) => p.id === form.id) : undefined;
  const problems = form ? validateProvider(form, providers) : {};
  const keyUnavailable = !keychain.available;

  const openForm = (next: ProviderForm) => {
    setForm(next);
    setSubmitted(false);
    setSaveError(null);
    setTest(NOT_TESTED);
    setModels([]);
    setNotice(null);
  };
  const closeForm = () => {
    setForm(null);
    setTest(NOT_TESTED);
    setModels([]);
    setSaveError(null);
  };
  const update = (change: Partial<ProviderForm>) => {
    setForm((old) => (old ? { ...old, ...change } : old));
    // Another address or key may answer differently.
    if ("base_url" in change || "api_key" in change || "removeKey" in change) setTest(NOT_TESTED);
  };

  const choosePreset = (presetId: string) => {
    const preset = PROVIDER_PRESETS.find((p) => p.id === presetId);
    if (!preset) return;
    const base = form && !form.id ? form : EMPTY_PROVIDER_FORM;
    openForm(applyPreset(base, preset, providers.map((p) => p.name)));
  };

  const runTest = () => {
    if (!form) return;
    setSubmitted(true);
    if (problems.base_url) return;
    setTest({ running: true });
    // With the key marked for removal, the endpoint is tried without one, not with the stored key.
    const input = form.removeKey ? { ...providerInput(form), id: null, api_key: null } : providerInput(form);
    api.testConnection(input).then(
      (result) => {
        setTest({ running: false, result, error: null });
        if (result.ok) setModels(result.models);
      },
      (error: unknown) => setTest({ running: false, result: null, error: errorMessage(error) }),
    );
  };

  const save = (activate: boolean) => {
    if (!form) return;
    setSubmitted(true);
    if (hasProblems(problems)) return;
    setSaving(true);
    setSaveError(null);
    api.saveProvider(providerInput(form), activate).then(
      async (saved) => {
        setSaving(false);
        closeForm();
        setNotice(t(activate ? "cfgProviderSavedUsed" : "cfgProviderSaved", { name: saved.name }));
        await onChanged();
      },
      (error: unknown) => {
        setSaving(false);
        setSaveError(errorMessage(error));
      },
    );
  };

  const act = (id: string, run: () => Promise<void>, done: string) => {
    setBusyId(id);
    setActionError(null);
    setNotice(null);
    run().then(
      async () => {
        setBusyId(null);
        setConfirmDelete(null);
        setNotice(done);
        await onChanged();
      },
      (error: unknown) => {
        setBusyId(null);
        setActionError(errorMessage(error));
      },
    );
  };
  const activate = (provider: ProviderView) => act(provider.id, () => api.activateProvider(provider.id), t("cfgProviderUsed", { name: provider.name }));
  const remove = (provider: ProviderView) => {
    if (form?.id === provider.id) closeForm();
    act(provider.id, () => api.deleteProvider(provider.id), t("cfgProviderDeleted", { name: provider.name }));
  };

  const keyPlaceholder = (): string => {
    if (keyUnavailable) return t("cfgKeyUnavailablePlaceholder");
    if (form?.removeKey) return t("cfgKeyWillBeRemoved");
    if (editing?.key_stored) return t("cfgKeyStoredPlaceholder");
    if (form?.needsKey === false) return t("cfgKeyNotNeededPlaceholder");
    if (form?.needsKey === true) return t("cfgKeyNeededPlaceholder");
    return t("cfgKeyNonePlaceholder");
  };

  return (
    <>
      <EndpointNow settings={settings} active={active} />

      {keyUnavailable && <KeychainWarning keychain={keychain} />}

      {providers.length === 0 ? (
        <p className="muted">{t("cfgNoProviders")}</p>
      ) : (
        <ul className="cfg-list" aria-label={t("cfgProviders")}>
          {providers.map((provider) => (
            <ProviderItem
              key={provider.id}
              provider={provider}
              confirming={confirmDelete === provider.id}
              busyId={busyId}
              onUse={() => activate(provider)}
              onEdit={() => openForm(providerFormFrom(provider))}
              onAskDelete={() => setConfirmDelete(provider.id)}
              onDelete={() => remove(provider)}
              onCancelDelete={() => setConfirmDelete(null)}
            />
          ))}
        </ul>
      )}
      <Failure message={actionError} />
      <Notice message={notice} />

      <LearnedToolModes learned={settings.learned_tool_modes} onChanged={onChanged} />

      <Presets onPreset={choosePreset} onCustom={() => openForm(EMPTY_PROVIDER_FORM)} />

      {form && (
        <form
          className="cfg-form"
          aria-label={form.id ? t("cfgEditProvider", { name: editing?.name ?? form.name }) : t("cfgNewProvider")}
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            save(false);
          }}
          onKeyDown={(event) => {
            if (event.key === "Escape") {
              event.stopPropagation();
              closeForm();
            }
          }}
        >
          <h3>{form.id ? t("cfgEditProvider", { name: editing?.name ?? form.name }) : t("cfgNewProvider")}</h3>
          <div className="cfg-grid">
            <Field label={t("cfgName")} problem={submitted || form.name ? problems.name : null}>
              {(control) => <input {...control} value={form.name} onChange={(e) => update({ name: e.target.value })} autoComplete="off" autoFocus />}
            </Field>
            <Field label={t("cfgBaseUrl")} hint={t("cfgBaseUrlHint")} problem={submitted ? problems.base_url : null}>
              {(control) => <input {...control} type="url" className="cfg-mono" value={form.base_url} placeholder="http://localhost:11434/v1" onChange={(e) => update({ base_url: e.target.value })} autoComplete="off" spellCheck={false} />}
            </Field>
            <Field label={t("cfgModelOptional")} hint={models.length > 0 ? t("cfgModelHintListed", { count: models.length }) : t("cfgModelHint")}>
              {(control) => (
                <>
                  <input {...control} className="cfg-mono" list={modelListId} value={form.model} onChange={(e) => update({ model: e.target.value })} autoComplete="off" spellCheck={false} />
                  <datalist id={modelListId}>
                    {models.map((model) => (
                      <option key={model} value={model} />
                    ))}
                  </datalist>
                </>
              )}
            </Field>
            <Field
              label={t("cfgApiKey")}
              hint={keyUnavailable ? t("cfgKeyUnavailableHint") : editing?.key_stored ? t("cfgKeyStoredHint") : t("cfgKeyHint")}
            >
              {(control) => (
                <div className="cfg-key-row">
                  <input
                    {...control}
                    type="password"
                    value={form.api_key}
                    placeholder={keyPlaceholder()}
                    disabled={keyUnavailable || form.removeKey}
                    onChange={(e) => update({ api_key: e.target.value })}
                    autoComplete="new-password"
                    spellCheck={false}
                    data-testid="cfg-api-key"
                  />
                  {editing?.key_stored &&
                    (form.removeKey ? (
                      <button type="button" className="small" onClick={() => update({ removeKey: false })}>
                        {t("cfgKeepKey")}
                      </button>
                    ) : (
                      <button type="button" className="small danger" onClick={() => update({ removeKey: true, api_key: "" })}>
                        {t("cfgRemoveKey")}
                      </button>
                    ))}
                </div>
              )}
            </Field>
            <Field label={t("cfgToolMode")} hint={t(TOOL_MODE_TEXT[form.tool_mode ?? "auto"].hint)}>
              {(control) => (
                <select {...control} value={form.tool_mode ?? "auto"} onChange={(e) => update({ tool_mode: chosenToolMode(e.target.value as ToolMode) })}>
                  {TOOL_MODES.map((mode) => (
                    <option key={mode} value={mode}>
                      {t(TOOL_MODE_TEXT[mode].label)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label={t("providerVision")} hint={t("providerVisionHint")}>
              {(control) => (
                <select
                  {...control}
                  value={form.vision === null ? "auto" : form.vision ? "yes" : "no"}
                  onChange={(e) => update({ vision: e.target.value === "auto" ? null : e.target.value === "yes" })}
                >
                  <option value="auto">{t("providerVisionAuto")}</option>
                  <option value="yes">{t("providerVisionOn")}</option>
                  <option value="no">{t("providerVisionOff")}</option>
                </select>
              )}
            </Field>
            <Field label={t("cfgPriceInput")} hint={t("cfgPriceHint")} problem={problems.price_input ?? null}>
              {(control) => <input {...control} inputMode="decimal" className="cfg-mono cfg-price" value={form.price_input} onChange={(e) => update({ price_input: e.target.value })} autoComplete="off" placeholder="0.15" />}
            </Field>
            <Field label={t("cfgPriceOutput")} problem={problems.price_output ?? null}>
              {(control) => <input {...control} inputMode="decimal" className="cfg-mono cfg-price" value={form.price_output} onChange={(e) => update({ price_output: e.target.value })} autoComplete="off" placeholder="0.60" />}
            </Field>
          </div>

          <div className="cfg-test">
            <button type="button" onClick={runTest} disabled={test.running} aria-busy={test.running}>
              {test.running ? (
                <>
                  <span className="spinner cfg-inline-spinner" aria-hidden="true" /> {t("cfgTesting")}
                </>
              ) : (
                t("cfgTestConnection")
              )}
            </button>
            <TestResult test={test} chosen={form.model} onChoose={(model) => update({ model })} />
          </div>

          <NotSaved error={saveError} />
          <div className="cfg-actions">
            <button type="submit" className="primary" disabled={saving}>
              {t("cfgSave")}
            </button>
            {!editing?.active && (
              <button type="button" disabled={saving} onClick={() => save(true)}>
                {t("cfgSaveAndUse")}
              </button>
            )}
            <button type="button" disabled={saving} onClick={closeForm}>
              {t("cancel")}
            </button>
          </div>
        </form>
      )}
    </>
  );
}

/** One saved provider: its address, model and key, with Use, Edit and Delete (after a yes). */
function ProviderItem({
  provider,
  confirming,
  busyId,
  onUse,
  onEdit,
  onAskDelete,
  onDelete,
  onCancelDelete,
}: {
  provider: ProviderView;
  confirming: boolean;
  /** The provider an action is under way for: every Use and Delete waits for it. */
  busyId: string | null;
  onUse: () => void;
  onEdit: () => void;
  onAskDelete: () => void;
  onDelete: () => void;
  onCancelDelete: () => void;
}) {
  const { t } = useI18n();
  return (
    <li className={`cfg-item${provider.active ? " cfg-item-active" : ""}`} data-provider={provider.name}>
      <div className="cfg-item-main">
        <div className="cfg-item-title">
          <strong>{provider.name}</strong>
          {provider.active && <span className="cfg-badge cfg-badge-accent">{t("cfgInUse")}</span>}
          {provider.key_stored && <span className="cfg-badge cfg-badge-ok">{t("cfgKeyInKeychain")}</span>}
          <ToolModeBadge mode={provider.tool_mode} />
        </div>
        <code className="cfg-mono">{provider.base_url}</code>
        <span className="muted small-text">{provider.model ? t("endpointModel", { model: provider.model }) : t("endpointFirstModel")}</span>
      </div>
      <div className="cfg-item-actions">
        {confirming ? (
          <ConfirmInline
            question={t("cfgDeleteProviderQuestion", { name: provider.name })}
            confirmLabel={t("cfgDelete")}
            busy={busyId === provider.id}
            onConfirm={onDelete}
            onCancel={onCancelDelete}
          />
        ) : (
          <>
            {!provider.active && (
              <button type="button" className="small" disabled={busyId !== null} onClick={onUse} aria-label={t("cfgUseNamed", { name: provider.name })}>
                {t("cfgUse")}
              </button>
            )}
            <button type="button" className="small" onClick={onEdit} aria-label={t("cfgEditNamed", { name: provider.name })}>
              {t("cfgEdit")}
            </button>
            <button type="button" className="small danger" disabled={busyId !== null} onClick={onAskDelete} aria-label={t("cfgDeleteNamed", { name: provider.name })}>
              {t("cfgDelete")}
            </button>
          </>
        )}
      </div>
    </li>
  );
}

/** Where questions go now, and why that may not be the provider in use. */
function EndpointNow({ settings, active }: { settings: AppSettings; active: ProviderView | undefined }) {
  const { t } = useI18n();
  const { endpoint, keychain } = settings;
  const overridden = endpointOverridden(endpoint, active);
  return (
    <div className="cfg-endpoint" data-testid="cfg-endpoint">
      {endpoint.local_model !== undefined ? (
        <div data-testid="cfg-endpoint-local">
          <span className="muted">{t("cfgEndpointNow")}</span> {t("cfgEndpointLocal", { model: endpoint.local_model })}
        </div>
      ) : (
        <>
          <div>
            <span className="muted">{t("cfgEndpointNow")}</span> <code>{endpoint.base_url}</code>
          </div>
          <div className="muted small-text">
            {endpoint.model ? t("endpointModel", { model: endpoint.model }) : t("endpointFirstModel")} · {endpoint.api_key_set ? t("endpointKeySet") : t("endpointKeyUnset")}
          </div>
        </>
      )}
      {overridden && (
        <p className="cfg-warning" data-testid="cfg-env-override">
          {overridden === "address"
            ? t("cfgEnvOverride", { name: active?.name ?? "" })
            : t("cfgEnvOverrideModel", { name: active?.name ?? "", model: endpoint.model ?? "" })}
        </p>
      )}
      {!active && endpoint.local_model === undefined && <p className="muted small-text">{t("cfgNoActive")}</p>}
      {endpoint.problem && <p className="turn-error small-text">{t("endpointProblem", { problem: endpoint.problem })}</p>}
      {endpoint.key_problem && !keychain.no_service && <p className="turn-error small-text" data-testid="cfg-key-problem">{endpoint.key_problem}</p>}
      <p className="muted small-text">{t("cfgSavedIn", { path: settings.config_path })}</p>
    </div>
  );
}

/** Keys cannot be kept: no Secret Service here, or the keychain refused. */
function KeychainWarning({ keychain }: { keychain: AppSettings["keychain"] }) {
  const { t } = useI18n();
  return (
    <p className="cfg-warning" role="status" data-testid="cfg-keychain">
      {keychain.no_service ? (
        t("cfgKeychainNoService")
      ) : (
        <>
          <strong>{t("cfgKeychainUnavailable")}</strong> {keychain.message}
        </>
      )}
    </p>
  );
}

/** The kinds of provider to start a new one from, and a blank one. */
function Presets({ onPreset, onCustom }: { onPreset: (presetId: string) => void; onCustom: () => void }) {
  const { t } = useI18n();
  return (
    <div className="cfg-presets" role="group" aria-label={t("cfgAddProvider")}>
      <span className="cfg-label">{t("cfgAddFrom")}</span>
      <div className="cfg-preset-buttons">
        {PROVIDER_PRESETS.map((preset) => (
          <button key={preset.id} type="button" className="cfg-preset" data-preset={preset.id} onClick={() => onPreset(preset.id)}>
            <span>{preset.name}</span>
            <span className="muted small-text">{preset.needsKey ? t("cfgPresetKey") : t("cfgPresetNoKey")}</span>
          </button>
        ))}
        <button type="button" className="cfg-preset" onClick={onCustom}>
          <span>{t("cfgCustom")}</span>
          <span className="muted small-text">{t("cfgCustomHint")}</span>
        </button>
      </div>
    </div>
  );
}

/** What the connection test found: the models listed (to pick one), or why it failed. */
function TestResult({ test, chosen, onChoose }: { test: TestState; chosen: string; onChoose: (model: string) => void }) {
  const { t } = useI18n();
  return (
    <div className="cfg-test-result" aria-live="polite" data-testid="cfg-test-result">
      {!test.running && test.result?.ok && (
        <>
          <span className="cfg-ok">{test.result.models.length === 1 ? t("cfgConnectedOne") : t("cfgConnected", { count: test.result.models.length })}</span>
          {test.result.models.length > 0 && (
            <ul className="cfg-models" aria-label={t("cfgModelsListed")}>
              {test.result.models.slice(0, MODEL_BUTTONS).map((model) => (
                <li key={model}>
                  <button type="button" className={`small cfg-mono${chosen === model ? " cfg-chosen" : ""}`} aria-pressed={chosen === model} onClick={() => onChoose(model)}>
                    {model}
                  </button>
                </li>
              ))}
              {test.result.models.length > MODEL_BUTTONS && <li className="muted small-text">{t("cfgMoreModels", { count: test.result.models.length - MODEL_BUTTONS })}</li>}
            </ul>
          )}
        </>
      )}
      {!test.running && test.result && !test.result.ok && (
        <span className="cfg-problem" role="alert">
          {t("cfgTestFailed", { message: test.result.message ?? "" })}
        </span>
      )}
      {!test.running && test.error && (
        <span className="cfg-problem" role="alert">
          {t("cfgTestFailed", { message: test.error })}
        </span>
      )}
    </div>
  );
}

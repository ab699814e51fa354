// Settings → Telemetry: the collector OpenTelemetry traces go to, its headers (kept in the
// keychain, never shown again), whether content goes with the spans, and a test trace.
import { useEffect, useState } from "react";
import { api, errorMessage, type TelemetryView } from "../../api";
import { useI18n } from "../../i18n";
import { Switch } from "./Field";
import { useSave } from "./useSave";

const PROTOCOLS = ["http/protobuf", "http/json", "grpc"];

function TelemetryForm({ view, onSaved }: { view: TelemetryView; onSaved: (view: TelemetryView) => void }) {
  const { t } = useI18n();
  const [endpoint, setEndpoint] = useState(view.endpoint);
  const [protocol, setProtocol] = useState(view.protocol);
  const [content, setContent] = useState(view.capture_content);
  const [turnedOff, setTurnedOff] = useState(view.turned_off);
  const [headers, setHeaders] = useState("");
  const [removeHeaders, setRemoveHeaders] = useState(false);
  const { saving, saved, error, saveWith, changed } = useSave();
  const [test, setTest] = useState<{ state: "sending" } | { state: "sent"; traceId: string } | { state: "failed"; message: string } | null>(null);

  const save = () => {
    const form = {
      turned_off: turnedOff,
      endpoint,
      protocol,
      capture_content: content,
      headers: removeHeaders ? "" : headers.trim() ? headers.trim() : undefined,
    };
    saveWith(
      () => api.saveTelemetry(form),
      (now) => {
        setHeaders("");
        setRemoveHeaders(false);
        onSaved(now);
      },
    );
  };

  /** A change to one field: what was saved is no longer what the form shows. */
  const edit =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      changed();
    };

  const sendTest = () => {
    setTest({ state: "sending" });
    api.sendTestTrace().then(
      (traceId) => setTest({ state: "sent", traceId }),
      (failure: unknown) => setTest({ state: "failed", message: errorMessage(failure) }),
    );
  };

  return (
    <form
      className="cfg-form cfg-form-plain"
      aria-label={t("cfgTelemetry")}
      data-testid="cfg-telemetry"
      onSubmit={(event) => {
        event.preventDefault();
        save();
      }}
    >
      <p className="muted small-text" data-testid="cfg-telemetry-status">
        {view.sending_to ? t("cfgTelemetrySendingTo", { endpoint: view.sending_to }) : t("cfgTelemetryNotSending")}
      </p>
      {view.environment.length > 0 && <p className="muted small-text">{t("cfgTelemetryEnvironment", { names: view.environment.join(", ") })}</p>}
      {view.problem && <p className="turn-error">{view.problem}</p>}
      <label className="cfg-field">
        <span className="cfg-label">{t("cfgTelemetryEndpoint")}</span>
        <input
          type="url"
          spellCheck={false}
          value={endpoint}
          placeholder="http://localhost:4318"
          data-testid="cfg-telemetry-endpoint"
          onChange={(event) => edit(setEndpoint)(event.target.value)}
        />
        <span className="cfg-hint">{t("cfgTelemetryEndpointHint")}</span>
      </label>
      <label className="cfg-field">
        <span className="cfg-label">{t("cfgTelemetryProtocol")}</span>
        <select value={protocol} onChange={(event) => edit(setProtocol)(event.target.value)}>
          {PROTOCOLS.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <label className="cfg-field">
        <span className="cfg-label">{t("cfgTelemetryHeaders")}</span>
        <input
          type="password"
          spellCheck={false}
          autoComplete="off"
          value={headers}
          placeholder={view.headers_stored ? "••••••••" : "authorization=Bearer%20KEY"}
          data-testid="cfg-telemetry-headers"
          onChange={(event) => edit(setHeaders)(event.target.value)}
        />
        <span className="cfg-hint">{view.headers_stored ? t("cfgTelemetryHeadersStored") : t("cfgTelemetryHeadersHint")}</span>
      </label>
      {view.headers_stored && (
        <Switch checked={removeHeaders} onChange={edit(setRemoveHeaders)}>
          {t("cfgTelemetryRemoveHeaders")}
        </Switch>
      )}
      <Switch checked={content} testId="cfg-telemetry-content" onChange={edit(setContent)}>
        <span>
          {t("cfgTelemetryContent")}
          <br />
          <span className="cfg-hint">{t("cfgTelemetryContentHint")}</span>
        </span>
      </Switch>
      <Switch checked={turnedOff} onChange={edit(setTurnedOff)}>
        {t("cfgTelemetryOff")}
      </Switch>
      {error && <p className="turn-error">{t("cfgNotSaved", { message: error })}</p>}
      {saved && !error && <p className="muted small-text">{t("cfgTelemetrySaved")}</p>}
      <div className="cfg-actions">
        <button type="submit" disabled={saving}>
          {t("cfgSave")}
        </button>
        <button type="button" disabled={!view.active || test?.state === "sending"} onClick={sendTest} data-testid="cfg-telemetry-test">
          {test?.state === "sending" ? t("cfgTelemetryTesting") : t("cfgTelemetryTest")}
        </button>
      </div>
      <p aria-live="polite" className="small-text" data-testid="cfg-telemetry-test-result">
        {test?.state === "sent" && t("cfgTelemetryTestSent", { traceId: test.traceId })}
        {test?.state === "failed" && <span className="turn-error">{t("cfgTelemetryTestFailed", { message: test.message })}</span>}
      </p>
    </form>
  );
}

export function TelemetrySection() {
  const { t } = useI18n();
  const [view, setView] = useState<TelemetryView | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.telemetrySettings().then(setView, (failure: unknown) => setError(errorMessage(failure)));
  }, []);
  if (error) return <p className="turn-error">{t("cfgLoadFailed", { message: error })}</p>;
  if (!view) return <p className="muted">{t("cfgLoading")}</p>;
  return <TelemetryForm view={view} onSaved={setView} />;
}

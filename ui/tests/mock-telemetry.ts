// Settings → Telemetry's commands for the browser specs: the [telemetry] table and the
// keychain's headers kept in the mock's config, and a collector that takes a test trace (or
// is down, with `telemetryDown`).
import type { TelemetryForm, TelemetryView } from "../src/bindings";

export interface TelemetryConfig {
  telemetry?: TelemetryView;
  /** Headers in the mocked keychain (the UI must never see them). */
  telemetryHeaders?: string | null;
  /** When set, the collector does not answer the test trace. */
  telemetryDown?: boolean;
}

const OFF: TelemetryView = {
  active: false,
  turned_off: false,
  endpoint: "",
  protocol: "http/protobuf",
  capture_content: false,
  headers_stored: false,
  sending_to: null,
  environment: [],
  problem: null,
};

function view(config: TelemetryConfig): TelemetryView {
  const now = config.telemetry ?? OFF;
  return { ...now, headers_stored: Boolean(config.telemetryHeaders) };
}

function save(config: TelemetryConfig, form: TelemetryForm): TelemetryView | Promise<never> {
  const endpoint = form.endpoint.trim();
  if (endpoint && !/^https?:\/\//.test(endpoint)) {
    return Promise.reject({ code: "settings", message: "The collector's address must start with http:// or https://." });
  }
  if (form.headers !== undefined) config.telemetryHeaders = form.headers === "" ? null : form.headers;
  const active = !form.turned_off && endpoint !== "";
  const base = endpoint.replace(/\/+$/, "");
  config.telemetry = {
    active,
    turned_off: form.turned_off,
    endpoint,
    protocol: form.protocol,
    capture_content: form.capture_content,
    headers_stored: Boolean(config.telemetryHeaders),
    sending_to: active ? (form.protocol === "grpc" ? base : `${base}/v1/traces`) : null,
    environment: [],
    problem: null,
  };
  return view(config);
}

/** The answer to `cmd`, or `undefined` when `cmd` is not one of these. */
export function telemetryCommand(cmd: string, args: Record<string, unknown>, config: TelemetryConfig): unknown {
  switch (cmd) {
    case "telemetry_settings":
      return view(config);
    case "save_telemetry":
      return save(config, args.form as TelemetryForm);
    case "send_test_trace":
      if (config.telemetryDown) {
        const to = view(config).sending_to ?? "";
        return new Promise((_, reject) => setTimeout(() => reject({ code: "telemetry", message: `Traces could not be sent to ${to}: the collector did not answer.` }), 300));
      }
      return new Promise((resolve) => setTimeout(() => resolve("5f0c3a9e8d7b4c21a6e0f1b2c3d4e5f6"), 300));
    default:
      return undefined;
  }
}

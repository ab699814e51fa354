// The mocked first-run guide and models commands (see mock-backend.ts). A download is driven
// by the test: pull_model records it and emits its first step; the test sends the next ones
// with `window.__mock.emit("model-pull", …)`. State lives in the config object, so a test can
// read what was chosen from `window.__mock.config`.
import type { CatalogueModel, GuideView, ModelsView, ModelView, PullUpdate } from "../src/api";

export interface ModelsConfig {
  /** What model_guide answers; ready with a local Ollama when absent. */
  guide?: GuideView;
  /** What list_models answers; the built-in catalogue and nothing installed when absent. */
  modelsView?: ModelsView;
  /** The downloads running when the window loads. */
  running?: PullUpdate[];
  /** When set, pull_model fails with this error. */
  pullError?: { code: string; message: string } | null;
  /** What import_model "picks" in the native dialog; null as if the dialog was closed. */
  importPick?: string | null;
  /** Servers chosen with use_server, in order. */
  usedServers?: { baseUrl: string; model: string | null }[];
  /** Downloads cancelled, by name. */
  cancelled?: string[];
}

export const CATALOGUE: CatalogueModel[] = [
  { name: "qwen3-1.7b", title: "Qwen3 1.7B", description: "Small and quick; calls tools reliably for its size. The one to start with.", size_bytes: 1107409472, memory_gb: 2.6, context_length: 40960, licence: "Apache-2.0", installed: false },
  { name: "qwen3-4b", title: "Qwen3 4B", description: "Better answers and tool use than 1.7B, at about half the speed.", size_bytes: 2497281312, memory_gb: 4.3, context_length: 40960, licence: "Apache-2.0", installed: false },
  { name: "llama3.2-3b", title: "Llama 3.2 3B Instruct", description: "Meta's small instruction model; a long context.", size_bytes: 2019377696, memory_gb: 3.5, context_length: 131072, licence: "Llama 3.2 Community License", installed: false },
];

function defaultModels(): ModelsView {
  return { dir: "/home/me/.local/share/tooltrail/models", local_model: null, local_active: false, installed: [], unfinished: [], catalogue: structuredClone(CATALOGUE), runtime: null, server_problem: null, runtime_supported: true };
}

function defaultGuide(): GuideView {
  return {
    ready: true,
    problem: null,
    local: false,
    endpoint: { base_url: "http://localhost:11434/v1", model: "qwen2.5-coder:7b", api_key_set: false, config_path: "/home/me/.config/tooltrail/config.toml", problem: null, key_problem: null },
    servers: [],
    looked_ms: 3,
  };
}

type Emit = (event: string, payload: unknown) => void;

function installedView(name: string, chosen: boolean): ModelView {
  return { name, size_bytes: 253_000_000, parameters: "270M", quantization: "Q4_K_M", context_length: 32768, has_chat_template: false, source: `copied from /home/me/Downloads/${name}.gguf`, missing: false, chosen };
}

/** Questions go to `name` now: the local provider, ready. */
function chooseLocal(config: ModelsConfig, name: string) {
  const models = (config.modelsView ??= defaultModels());
  models.local_model = name;
  models.local_active = true;
  for (const model of models.installed) model.chosen = model.name === name;
  const guide = (config.guide ??= defaultGuide());
  guide.ready = true;
  guide.local = true;
  guide.problem = null;
  guide.endpoint = { ...guide.endpoint, model: name };
}

/** Answers `cmd` if it is one of these commands; `undefined` otherwise. */
export function modelsCommand(cmd: string, args: Record<string, unknown>, config: ModelsConfig, emit: Emit): unknown {
  switch (cmd) {
    case "model_guide":
      return structuredClone(config.guide ?? defaultGuide());
    case "use_server": {
      const baseUrl = String(args.baseUrl);
      const model = (args.model as string | null) ?? null;
      (config.usedServers ??= []).push({ baseUrl, model });
      const guide = (config.guide ??= defaultGuide());
      const server = guide.servers.find((s) => s.base_url === baseUrl);
      const name = server?.kind === "ollama" ? "Ollama" : server?.kind === "llama_cpp" ? "llama.cpp server" : baseUrl;
      guide.ready = true;
      guide.problem = null;
      guide.local = false;
      guide.endpoint = { ...guide.endpoint, base_url: baseUrl, model };
      return { name, base_url: baseUrl, model };
    }
    case "list_models":
      return structuredClone(config.modelsView ?? defaultModels());
    case "pull_model": {
      if (config.pullError) return Promise.reject(config.pullError);
      const reference = String(args.reference);
      const name = reference.startsWith("hf.co/") ? reference.split("/").pop()!.replace(/\.gguf$/i, "").toLowerCase() : reference;
      const update: PullUpdate = { name, reference, phase: "checking" };
      (config.running ??= []).push(update);
      setTimeout(() => emit("model-pull", update), 0);
      return name;
    }
    case "cancel_pull": {
      const name = String(args.name);
      (config.cancelled ??= []).push(name);
      const update: PullUpdate = { name, reference: name, phase: "cancelled", have: 412_000_000, total: 1_107_409_472 };
      config.running = (config.running ?? []).filter((u) => u.name !== name);
      const models = (config.modelsView ??= defaultModels());
      models.unfinished = [...models.unfinished.filter((u) => u.name !== name), { name, have: 412_000_000, total: 1_107_409_472 }];
      setTimeout(() => emit("model-pull", update), 0);
      return true;
    }
    case "downloads":
      return structuredClone(config.running ?? []);
    case "import_model": {
      const path = (args.path as string | null) ?? config.importPick ?? null;
      if (!path) return null;
      const name = path.split("/").pop()!.replace(/\.gguf$/i, "").toLowerCase();
      const models = (config.modelsView ??= defaultModels());
      const useAfter = Boolean(args.useAfter);
      models.installed = [...models.installed, installedView(name, false)];
      if (useAfter) chooseLocal(config, name);
      return { model: installedView(name, useAfter), used: useAfter };
    }
    case "remove_model": {
      const name = String(args.name);
      const models = (config.modelsView ??= defaultModels());
      models.installed = models.installed.filter((m) => m.name !== name);
      models.unfinished = models.unfinished.filter((u) => u.name !== name);
      for (const entry of models.catalogue) if (entry.name === name) entry.installed = false;
      return null;
    }
    case "use_model": {
      const name = String(args.name);
      chooseLocal(config, name);
      return installedView(name, true);
    }
    case "stop_runtime": {
      const models = (config.modelsView ??= defaultModels());
      const stopped = models.runtime?.model ?? null;
      models.runtime = null;
      return stopped;
    }
    default:
      return undefined;
  }
}

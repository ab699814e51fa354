// Well-known OpenAI-compatible endpoints a new provider can start from.

export interface ProviderPreset {
  /** Stable id, for tests and keys. */
  id: "ollama" | "lmstudio" | "llamacpp" | "openai" | "openrouter" | "deepseek";
  name: string;
  base_url: string;
  /** Whether the endpoint wants an API key. */
  needsKey: boolean;
}

export const PROVIDER_PRESETS: readonly ProviderPreset[] = [
  { id: "ollama", name: "Ollama", base_url: "http://localhost:11434/v1", needsKey: false },
  { id: "lmstudio", name: "LM Studio", base_url: "http://localhost:1234/v1", needsKey: false },
  { id: "llamacpp", name: "llama.cpp server", base_url: "http://localhost:8080/v1", needsKey: false },
  { id: "openai", name: "OpenAI", base_url: "https://api.openai.com/v1", needsKey: true },
  { id: "openrouter", name: "OpenRouter", base_url: "https://openrouter.ai/api/v1", needsKey: true },
  { id: "deepseek", name: "DeepSeek", base_url: "https://api.deepseek.com/v1", needsKey: true },
];

// The mocked snippet commands (see mock-backend.ts): they answer from `config.snippets`, the
// open folder's snippets, and delete from it, so a test can read the state back.
import type { Snippet, SnippetSummary } from "../src/api";

export interface SnippetsConfig {
  /** The open folder's snippets. */
  snippets?: Snippet[];
  /** When set, list_snippets fails with it. */
  snippetsError?: { code: string; message: string } | null;
}

function reject(code: string, message: string): Promise<never> {
  return Promise.reject({ code, message });
}

function summary(snippet: Snippet): SnippetSummary {
  return {
    name: snippet.name,
    language: snippet.language,
    description: snippet.description,
    bytes: new TextEncoder().encode(snippet.content).length,
    updated_ms: snippet.updated_ms,
  };
}

/** Like the store: by name, or those holding every word of the query (prefixes with `*`). */
function list(query: string | null, config: SnippetsConfig) {
  if (config.snippetsError) return Promise.reject(config.snippetsError);
  const all = [...(config.snippets ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  const text = (query ?? "").trim();
  if (text === "") return all.map(summary);
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+\*?/gu) ?? [];
  if (words.length === 0) return reject("bad_input", "The search has no words to look for.");
  return all
    .filter((snippet) => {
      const haystack = [snippet.name, snippet.language ?? "", snippet.description ?? "", snippet.content].join(" ").toLowerCase();
      return words.every((word) => (word.endsWith("*") ? haystack.includes(word.slice(0, -1)) : new RegExp(`(^|[^\\p{L}\\p{N}_])${word}($|[^\\p{L}\\p{N}_])`, "u").test(haystack)));
    })
    .map(summary);
}

function find(name: string, config: SnippetsConfig) {
  const found = (config.snippets ?? []).find((snippet) => snippet.name === name);
  return found ?? reject("not_found", `No snippet named "${name}" is saved for this folder.`);
}

function remove(name: string, config: SnippetsConfig) {
  const before = config.snippets ?? [];
  if (!before.some((snippet) => snippet.name === name)) return reject("not_found", `No snippet named "${name}" is saved for this folder.`);
  config.snippets = before.filter((snippet) => snippet.name !== name);
  return null;
}

/** The answer to `cmd`, or `undefined` when `cmd` is not one of these (`null` is an answer). */
export function snippetsCommand(cmd: string, args: Record<string, unknown>, config: SnippetsConfig): unknown {
  switch (cmd) {
    case "list_snippets":
      return list((args.query as string | null | undefined) ?? null, config);
    case "get_snippet":
      return find(String(args.name), config);
    case "delete_snippet":
      return remove(String(args.name), config);
    default:
      return undefined;
  }
}

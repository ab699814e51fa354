// The arguments a model is still writing, as a view can read them: the JSON text so far closed
// where it stands (an open string ended, open objects and lists closed), the last member cut
// when it is not whole yet. For `ui/notifications/tool-input-partial`; the view gets the whole
// input when the call starts.
import type { JsonValue } from "../bindings";

/** How many shorter prefixes are tried before the text is given up on until more comes. */
const TRIES = 32;

/** The text closed where it stands, or null when it cannot be (a key half written). */
function closed(text: string): string {
  const open: string[] = [];
  let inString = false;
  let escaped = false;
  for (const char of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (char === "\\") escaped = true;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === "{") open.push("}");
    else if (char === "[") open.push("]");
    else if (char === "}" || char === "]") open.pop();
  }
  let end = text;
  if (inString) end = (escaped ? end.slice(0, -1) : end) + '"';
  return end + open.reverse().join("");
}

/** The arguments so far as an object, or undefined while nothing of them can be read. */
export function partialArguments(text: string): Record<string, JsonValue> | undefined {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith("{")) return undefined;
  let prefix = trimmed.trimEnd();
  for (let tries = 0; tries < TRIES && prefix.length > 0; tries++) {
    try {
      const value: unknown = JSON.parse(closed(prefix.replace(/[,:\s]+$/, "")));
      if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, JsonValue>;
      return undefined;
    } catch {
      // Cut back to before the last member separator, or to the opening brace.
      const cut = Math.max(prefix.lastIndexOf(",", prefix.length - 2), 0);
      prefix = cut > 0 ? prefix.slice(0, cut) : prefix.length > 1 ? "{" : "";
    }
  }
  return undefined;
}

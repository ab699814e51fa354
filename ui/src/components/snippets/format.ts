// How the Snippets screen writes a snippet's content and size.

/**
 * The content as one fenced Markdown code block in `language`, so it is highlighted like code
 * in an answer. The fence is longer than any run of backticks inside, so the content can never
 * close it; a language the highlighter cannot name (spaces, braces) is left off.
 */
export function fencedCode(content: string, language: string | null): string {
  const longest = Math.max(0, ...Array.from(content.matchAll(/`+/g), (run) => run[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  const info = language && /^[\w+#.-]+$/.test(language) ? language.toLowerCase() : "";
  return `${fence}${info}\n${content}\n${fence}`;
}

/** 512 B, 1.5 KB, 64 KB: in the window's language's digits. */
export function formatBytes(bytes: number, lang: string): string {
  const locale = lang === "zh" ? "zh-CN" : "en-US";
  if (bytes < 1024) return `${bytes.toLocaleString(locale)} B`;
  const kb = bytes / 1024;
  return `${kb.toLocaleString(locale, { maximumFractionDigits: kb < 10 ? 1 : 0 })} KB`;
}

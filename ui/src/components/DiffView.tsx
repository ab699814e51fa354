// A file change as the approval card shows it: a unified diff with the line numbers of both
// sides, added and removed lines marked, and the code coloured by the file's language.
import { memo, type ReactNode } from "react";
import { common, createLowlight } from "lowlight";
import type { DiffLine, FileChange } from "../bindings";
import { useI18n } from "../i18n";

const lowlight = createLowlight(common);

/** highlight.js names for file extensions the common set knows. */
const LANGUAGES: Record<string, string> = {
  rs: "rust", go: "go", py: "python", ts: "typescript", tsx: "typescript", js: "javascript", jsx: "javascript",
  mjs: "javascript", java: "java", c: "c", h: "c", cc: "cpp", cpp: "cpp", hpp: "cpp", cs: "csharp", rb: "ruby",
  php: "php", kt: "kotlin", swift: "swift", json: "json", toml: "ini", ini: "ini", yaml: "yaml", yml: "yaml",
  md: "markdown", sh: "bash", bash: "bash", css: "css", scss: "scss", html: "xml", xml: "xml", sql: "sql",
};

export function languageOf(path: string): string | undefined {
  const ext = path.split(".").pop()?.toLowerCase() ?? "";
  const name = LANGUAGES[ext];
  return name && lowlight.registered(name) ? name : undefined;
}

type Hast = { type: string; value?: string; tagName?: string; properties?: { className?: string[] }; children?: Hast[] };

/** The highlighted tree as React nodes: spans with highlight.js's classes, and text. */
function render(node: Hast, key: number): ReactNode {
  if (node.type === "text") return node.value;
  const children = node.children?.map(render);
  if (node.type === "element") {
    return (
      <span key={key} className={node.properties?.className?.join(" ")}>
        {children}
      </span>
    );
  }
  return children;
}

function Code({ text, language }: { text: string; language: string | undefined }) {
  if (!language || text.length > 2000) return <>{text}</>;
  return <>{render(lowlight.highlight(language, text) as unknown as Hast, 0)}</>;
}

const MARK: Record<DiffLine["kind"], string> = { context: " ", added: "+", removed: "−" };

export const DiffView = memo(function DiffView({ change }: { change: FileChange }) {
  const { t } = useI18n();
  const language = languageOf(change.path);
  return (
    <figure className="diff" aria-label={t(change.existed ? "diffLabel" : "diffNewFile", { path: change.path })}>
      <figcaption className="diff-head">
        <span className="diff-path">{t(change.existed ? "diffLabel" : "diffNewFile", { path: change.path })}</span>
        <span className="diff-counts">
          <span className="diff-added">+{change.added}</span> <span className="diff-removed">−{change.removed}</span>
        </span>
      </figcaption>
      {change.hunks.length === 0 ? (
        <div className="diff-none muted">{t("diffNoChange")}</div>
      ) : (
        <table className="diff-table">
          {change.hunks.map((hunk, h) => (
            <tbody key={h}>
              {change.existed && (
                <tr className="diff-hunk">
                  <td colSpan={4}>{`@@ -${hunk.old_start},${hunk.old_lines} +${hunk.new_start},${hunk.new_lines} @@`}</td>
                </tr>
              )}
              {hunk.lines.map((line, i) => (
                <tr key={i} className={`diff-line diff-${line.kind}`}>
                  <td className="diff-num">{line.old_line ?? ""}</td>
                  <td className="diff-num">{line.new_line ?? ""}</td>
                  <td className="diff-mark" aria-hidden="true">{MARK[line.kind]}</td>
                  <td className="diff-code">
                    <Code text={line.text} language={language} />
                  </td>
                </tr>
              ))}
            </tbody>
          ))}
        </table>
      )}
      {change.truncated && <div className="diff-cut muted">{t("diffCut", { added: change.added, removed: change.removed })}</div>}
    </figure>
  );
});

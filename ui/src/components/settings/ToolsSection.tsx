// The built-in tools, each with a switch: a tool that is off is not offered to the model.
import { useState } from "react";
import { api, errorMessage, type ToolToggle } from "../../api";
import { useI18n } from "../../i18n";
import type { MessageKey } from "../../i18n/en";
import { Failure } from "./Field";

interface Props {
  tools: ToolToggle[];
  onToggled: (name: string, enabled: boolean) => void;
}

/** Translations of the built-in tools' descriptions, for languages other than English. */
const ABOUT: Record<string, MessageKey> = {
  list_dir: "cfgToolAboutListDir",
  read_file: "cfgToolAboutReadFile",
  search_files: "cfgToolAboutSearchFiles",
  search_text: "cfgToolAboutSearchText",
  count_lines: "cfgToolAboutCountLines",
  execute_bash: "cfgToolAboutExecuteBash",
};

export function ToolsSection({ tools, onToggled }: Props) {
  const { t, lang } = useI18n();
  const [pending, setPending] = useState<ReadonlySet<string>>(() => new Set());
  const [error, setError] = useState<string | null>(null);

  const toggle = (tool: ToolToggle, enabled: boolean) => {
    setError(null);
    setPending((old) => new Set(old).add(tool.name));
    const done = () =>
      setPending((old) => {
        const next = new Set(old);
        next.delete(tool.name);
        return next;
      });
    api.setToolEnabled(tool.name, enabled).then(
      () => {
        done();
        onToggled(tool.name, enabled);
      },
      (failure: unknown) => {
        done();
        setError(t("cfgToolNotChanged", { tool: tool.name, message: errorMessage(failure) }));
      },
    );
  };

  return (
    <>
      <ul className="cfg-list cfg-tools">
        {tools.map((tool) => {
          const descriptionId = `cfg-tool-${tool.name}`;
          const about = lang === "en" ? undefined : ABOUT[tool.name];
          return (
            <li key={tool.name} className="cfg-item">
              <div className="cfg-item-main">
                <label className="cfg-switch-row">
                  <input
                    type="checkbox"
                    role="switch"
                    className="cfg-switch"
                    checked={tool.enabled}
                    disabled={pending.has(tool.name)}
                    aria-describedby={descriptionId}
                    onChange={(event) => toggle(tool, event.target.checked)}
                  />
                  <span className="cfg-mono cfg-tool-name">{tool.name}</span>
                  <span className={`small-text ${tool.enabled ? "cfg-ok" : "muted"}`} aria-hidden="true">{tool.enabled ? t("cfgOn") : t("cfgOff")}</span>
                </label>
                <p id={descriptionId} className="muted small-text cfg-description">
                  {about ? t(about) : tool.description}
                  {tool.off_by_default && (
                    <>
                      {" "}
                      <strong>{t("toolOffByDefault")}</strong>
                    </>
                  )}
                  {tool.tokens !== undefined && <> {t("cfgToolTokens", { tokens: tool.tokens })}</>}
                </p>
              </div>
            </li>
          );
        })}
      </ul>
      <Failure message={error} />
    </>
  );
}

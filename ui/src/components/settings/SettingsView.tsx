// Providers, models, limits, tools, sandbox, approval rules, MCP servers, telemetry and updates,
// as stacked sections with a list of links to each beside them.
import { useCallback, useRef, useState, type ReactNode } from "react";
import { api, type Limits, type WorkspaceInfo } from "../../api";
import { useI18n } from "../../i18n";
import type { MessageKey } from "../../i18n/en";
import { LimitsSection } from "./LimitsSection";
import { McpSection } from "./McpSection";
import { ModelsSection } from "./ModelsSection";
import { ProvidersSection } from "./ProvidersSection";
import { RulesSection } from "./RulesSection";
import { SandboxSection } from "./SandboxSection";
import { TelemetrySection } from "./TelemetrySection";
import { ToolsSection } from "./ToolsSection";
import { UpdatesSection } from "./UpdatesSection";
import { useReload } from "./useReload";

interface Props {
  workspace: WorkspaceInfo;
  /** Something that changes where questions go, or which MCP servers run, was saved. */
  onChanged: () => void;
}

type SectionId = "providers" | "models" | "limits" | "tools" | "sandbox" | "rules" | "mcp" | "telemetry" | "updates";
const SECTIONS: { id: SectionId; title: MessageKey; intro: MessageKey }[] = [
  { id: "providers", title: "cfgProviders", intro: "cfgProvidersIntro" },
  { id: "models", title: "cfgModels", intro: "cfgModelsIntro" },
  { id: "limits", title: "cfgLimits", intro: "cfgLimitsIntro" },
  { id: "tools", title: "cfgTools", intro: "cfgToolsIntro" },
  { id: "sandbox", title: "cfgSandbox", intro: "cfgSandboxIntro" },
  { id: "rules", title: "cfgRules", intro: "cfgRulesIntro" },
  { id: "mcp", title: "cfgMcp", intro: "cfgMcpIntro" },
  { id: "telemetry", title: "cfgTelemetry", intro: "cfgTelemetryIntro" },
  { id: "updates", title: "cfgUpdates", intro: "cfgUpdatesIntro" },
];

export function SettingsView({ workspace, onChanged }: Props) {
  const { t } = useI18n();
  const { value: settings, setValue: setSettings, loadError, reload } = useReload(api.getSettings);
  const [current, setCurrent] = useState<SectionId>("providers");
  const headings = useRef<Partial<Record<SectionId, HTMLHeadingElement | null>>>({});


  const providersChanged = useCallback(async () => {
    await reload();
    onChanged();
  }, [reload, onChanged]);
  // A model used here changes where questions go: the providers' "questions go to" line too.
  const providersChangedQuietly = useCallback(() => {
    void providersChanged();
  }, [providersChanged]);
  const limitsSaved = useCallback((limits: Limits) => setSettings((old) => (old ? { ...old, limits } : old)), [setSettings]);
  const toolToggled = useCallback(
    (name: string, enabled: boolean) => setSettings((old) => (old ? { ...old, tools: old.tools.map((tool) => (tool.name === name ? { ...tool, enabled } : tool)) } : old)),
    [setSettings],
  );

  // The section read now: the last whose heading is in the top third. While a jump scrolls,
  // the jump's target stays marked.
  const jumpedAt = useRef(-Infinity);
  const followScroll = (event: React.UIEvent<HTMLElement>) => {
    if (event.timeStamp - jumpedAt.current < 1000) return;
    const box = event.currentTarget.getBoundingClientRect();
    let seen: SectionId = "providers";
    for (const section of SECTIONS) {
      const top = headings.current[section.id]?.getBoundingClientRect().top;
      if (top !== undefined && top - box.top <= box.height / 3) seen = section.id;
    }
    setCurrent(seen);
  };

  /** `at`: the click's time stamp. */
  const jump = (id: SectionId, at: number) => {
    jumpedAt.current = at;
    setCurrent(id);
    const heading = headings.current[id];
    heading?.scrollIntoView({ block: "start", behavior: "smooth" });
    heading?.focus({ preventScroll: true });
  };

  const body = (id: SectionId): ReactNode => {
    switch (id) {
      case "providers":
        return settings && <ProvidersSection settings={settings} onChanged={providersChanged} />;
      case "models":
        return <ModelsSection onChanged={providersChangedQuietly} />;
      case "limits":
        return settings && <LimitsSection limits={settings.limits} onSaved={limitsSaved} />;
      case "tools":
        return settings && <ToolsSection tools={settings.tools} onToggled={toolToggled} />;
      case "sandbox":
        return <SandboxSection />;
      case "rules":
        return <RulesSection />;
      case "mcp":
        return <McpSection onChanged={onChanged} />;
      case "telemetry":
        return <TelemetrySection />;
      case "updates":
        return <UpdatesSection />;
    }
  };
  const needsSettings = (id: SectionId) => id === "providers" || id === "limits" || id === "tools";

  return (
    <main className="page cfg-page" aria-label={t("settingsTitle")} onScroll={followScroll}>
      <h1>{t("settingsTitle")}</h1>
      <div className="cfg-layout">
        <nav className="cfg-nav" aria-label={t("cfgSections")}>
          <ul>
            {SECTIONS.map((section) => (
              <li key={section.id}>
                <button type="button" className={`cfg-nav-item${current === section.id ? " active" : ""}`} aria-current={current === section.id ? "true" : undefined} onClick={(event) => jump(section.id, event.timeStamp)}>
                  {t(section.title)}
                </button>
              </li>
            ))}
          </ul>
        </nav>
        <div className="cfg-sections">
          {loadError && (
            <p className="turn-error" role="alert">
              {t("cfgLoadFailed", { message: loadError })}
            </p>
          )}
          {SECTIONS.map((section) => (
            <section key={section.id} className="cfg-section" id={`cfg-${section.id}`} aria-labelledby={`cfg-${section.id}-title`} data-testid={`cfg-section-${section.id}`}>
              <h2
                id={`cfg-${section.id}-title`}
                tabIndex={-1}
                ref={(element) => {
                  headings.current[section.id] = element;
                }}
              >
                {t(section.title)}
              </h2>
              <p className="muted small-text cfg-intro">{t(section.intro, { folder: workspace.name })}</p>
              {needsSettings(section.id) && !settings && !loadError ? <p className="muted">{t("cfgLoading")}</p> : body(section.id)}
            </section>
          ))}
        </div>
      </div>
    </main>
  );
}

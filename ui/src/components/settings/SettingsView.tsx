// Providers, limits, tools, sandbox, approval rules and MCP servers.
import type { WorkspaceInfo } from "../../api";
import { useI18n } from "../../i18n";

interface Props {
  workspace: WorkspaceInfo;
  /** Something that changes where questions go, or which MCP servers run, was saved. */
  onChanged: () => void;
}

export function SettingsView({ workspace }: Props) {
  const { t } = useI18n();
  return (
    <main className="page" aria-label={t("settingsTitle")}>
      <h1>{t("settingsTitle")}</h1>
      <p className="muted">{workspace.path}</p>
    </main>
  );
}

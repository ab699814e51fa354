// Calls per tool, success rate, average and p95 duration.
import type { WorkspaceInfo } from "../../api";
import { useI18n } from "../../i18n";

interface Props {
  workspace: WorkspaceInfo;
}

export function StatsView({ workspace }: Props) {
  const { t } = useI18n();
  return (
    <main className="page" aria-label={t("navStats")}>
      <h1>{t("navStats")}</h1>
      <p className="muted">{workspace.path}</p>
    </main>
  );
}

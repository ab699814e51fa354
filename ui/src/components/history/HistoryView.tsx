// Every recorded tool call of the open folder (or all folders), filtered, counted and exported.
import type { WorkspaceInfo } from "../../api";
import { useI18n } from "../../i18n";

interface Props {
  workspace: WorkspaceInfo;
  /** Opens a conversation in the chat with the call selected. */
  onOpenCall: (conversationId: string, callId: string) => void;
}

export function HistoryView({ workspace }: Props) {
  const { t } = useI18n();
  return (
    <main className="page" aria-label={t("navHistory")}>
      <h1>{t("navHistory")}</h1>
      <p className="muted">{workspace.path}</p>
    </main>
  );
}

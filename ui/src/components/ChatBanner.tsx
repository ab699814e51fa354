// Above the chat: the files changed since the last question (their paths on hover), and why a
// folder or a conversation did not open.
import { useI18n } from "../i18n";

/** How many changed paths the hover lists. */
const PATHS_SHOWN = 30;

export function ChatBanner({ changedPaths, openError }: { changedPaths: string[]; openError: string | null }) {
  const { t } = useI18n();
  const changedCount = changedPaths.length;
  if (changedCount === 0 && !openError) return null;
  return (
    <div className="chat-banner">
      {changedCount > 0 && (
        <span className="files-changed" title={changedPaths.slice(0, PATHS_SHOWN).join("\n")} data-testid="files-changed">
          {changedCount === 1 ? t("filesChangedOne") : t("filesChanged", { count: changedCount })}
        </span>
      )}
      {openError && <span className="turn-error">{openError}</span>}
    </div>
  );
}

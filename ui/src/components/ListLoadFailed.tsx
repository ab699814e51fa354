// What a list screen (the history, the snippets) shows in place of its rows when they did not
// load: why, and a button to try again.
import { useI18n } from "../i18n";

export function ListLoadFailed({ message, onRetry }: { message: string; onRetry: () => void }) {
  const { t } = useI18n();
  return (
    <div className="history-message turn-error" role="alert">
      <span>{message}</span>
      <button type="button" onClick={onRetry}>
        {t("histRetry")}
      </button>
    </div>
  );
}

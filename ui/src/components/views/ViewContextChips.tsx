// The views' latest context for the model, as chips among the question's attachments: each
// goes with the next question unless the user removes it.
import { useI18n } from "../../i18n";
import { removeViewContext, useViewContexts } from "../../views/modelContext";

export function ViewContextChips() {
  const { t } = useI18n();
  const contexts = useViewContexts();
  if (contexts.length === 0) return null;
  return (
    <ul className="attach-chips" aria-label={t("attachmentsLabel")} data-testid="view-contexts">
      {contexts.map((context) => {
        const name = t("viewContextName", { tool: context.tool });
        return (
          <li key={context.viewId} className="attach-chip" title={t("viewContextTitle", { tool: context.tool, server: context.server })}>
            <span className="attach-server">{context.server}:</span>
            <span className="attach-name">{name}</span>
            <span className="attach-size">{t("attachmentChars", { count: String([...context.text].length) })}</span>
            <button type="button" className="attach-remove" aria-label={t("attachmentRemove", { name })} onClick={() => removeViewContext(context.viewId)}>
              ×
            </button>
          </li>
        );
      })}
    </ul>
  );
}

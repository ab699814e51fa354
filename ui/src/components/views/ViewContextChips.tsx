// The views' latest context for the model, shown in full above the question it goes with: the
// user reads what a view would add to their message before it is sent, and removes it if they
// want. It goes with the next question unless removed, and goes away when its view closes.
import { useI18n } from "../../i18n";
import { removeViewContext, useViewContexts } from "../../views/modelContext";

export function ViewContextChips() {
  const { t } = useI18n();
  const contexts = useViewContexts();
  if (contexts.length === 0) return null;
  return (
    <ul className="view-contexts" aria-label={t("viewContextsLabel")} data-testid="view-contexts" style={{ listStyle: "none", margin: 0, padding: 0 }}>
      {contexts.map((context) => {
        const ask = t("viewContextAsk", { tool: context.tool, server: context.server, count: String([...context.text].length) });
        return (
          <li key={context.viewId} className="view-bar view-context" title={t("viewContextTitle", { tool: context.tool, server: context.server })}>
            <span className="view-bar-text">{ask}</span>
            <pre className="view-bar-message" tabIndex={0} aria-label={t("viewContextText", { tool: context.tool })} data-testid="view-context-text">
              {context.text}
            </pre>
            <span className="view-bar-actions">
              <button type="button" aria-label={t("viewContextRemoveLabel", { tool: context.tool })} onClick={() => removeViewContext(context.viewId)}>
                {t("viewContextRemove")}
              </button>
            </span>
          </li>
        );
      })}
    </ul>
  );
}

// Above the composer when a folder is open and no model answers: says so before a question
// fails, with the backend's reason, and opens the guide to choosing one. The composer stays
// usable; the notice goes once a check finds a model that answers.
import type { GuideView } from "../api";
import { useI18n } from "../i18n";

interface Props {
  /** The latest check of whether a question could be answered; null until it answers. */
  guide: GuideView | null;
  folder: string;
  checking: boolean;
  onChoose: () => void;
  onCheckAgain: () => void;
}

export function NoModelNotice({ guide, folder, checking, onChoose, onCheckAgain }: Props) {
  const { t } = useI18n();
  const show = guide !== null && !guide.ready;
  // The status region stays in place, so a notice that appears in it is announced.
  return (
    <div className={show ? "no-model" : "no-model-none"} data-testid={show ? "no-model" : undefined}>
      <div role="status" className="no-model-text">
        {show && (
          <>
            <p className="no-model-title">{t("noModelTitle")}</p>
            <p>{t("noModelBody", { folder })}</p>
            {guide.problem && <p data-testid="no-model-problem">{t("guideProblem", { problem: guide.problem })}</p>}
          </>
        )}
      </div>
      {show && (
        <div className="no-model-actions">
          <button type="button" className="primary" onClick={onChoose}>
            {t("guideOpen")}
          </button>
          {/* Not disabled while it checks: a disabled button would drop the keyboard's focus. */}
          <button type="button" onClick={checking ? undefined : onCheckAgain} aria-disabled={checking} aria-busy={checking}>
            {checking ? t("noModelChecking") : t("noModelCheckAgain")}
          </button>
        </div>
      )}
    </div>
  );
}

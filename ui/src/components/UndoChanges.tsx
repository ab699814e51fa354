// "Undo these changes" under a turn that wrote files: puts them back as they were before the
// turn. A file someone changed since stops it, with the sentence saying which, and an
// "Undo anyway" to overwrite that change.
import { useState } from "react";
import { errorMessage } from "../api";
import type { TurnChanges, UndoReport } from "../bindings";
import { useI18n } from "../i18n";

interface Props {
  changes: TurnChanges;
  onUndo: (turnId: string, force: boolean) => Promise<UndoReport>;
}

export function UndoChanges({ changes, onUndo }: Props) {
  const { t } = useI18n();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<{ message: string; changedSince: boolean } | null>(null);
  const [done, setDone] = useState<number | null>(null);

  const undo = (force: boolean) => {
    setBusy(true);
    setFailure(null);
    onUndo(changes.turn_id, force)
      .then((report) => setDone(report.restored.length + report.removed.length))
      .catch((error: unknown) => {
        const code = (error as { code?: string })?.code;
        setFailure({ message: errorMessage(error), changedSince: code === "changed_since" });
      })
      .finally(() => setBusy(false));
  };

  if (changes.undone) {
    return (
      <div className="turn-undo muted" data-testid="turn-undo">
        {done === null ? t("undoneAlready") : done === 1 ? t("undoDoneOne") : t("undoDone", { count: done })}
      </div>
    );
  }
  return (
    <div className="turn-undo" data-testid="turn-undo">
      <button type="button" disabled={busy} title={t("undoChangesTitle", { paths: changes.paths.join(", ") })} onClick={() => undo(false)}>
        {t("undoChanges")}
      </button>
      {failure && (
        <span className="turn-error" role="alert">
          {t("undoFailed", { message: failure.message })}
        </span>
      )}
      {failure?.changedSince && (
        <button type="button" className="danger" disabled={busy} onClick={() => undo(true)}>
          {t("undoAnyway")}
        </button>
      )}
    </div>
  );
}

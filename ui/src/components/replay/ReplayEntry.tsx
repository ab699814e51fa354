// What History opens for a replay: the dialog, then the run; or a recorded replay beside its
// original.
import { useCallback, useState } from "react";
import type { ReplayComparison, ReplayPick, ReplayWith } from "../../api";
import { useI18n } from "../../i18n";
import { useEscape } from "../useEscape";
import { ReplayComparisonView } from "./ReplayComparisonView";
import { ReplayDialog } from "./ReplayDialog";
import { ReplayRun } from "./ReplayRun";

export type ReplayOpen = { kind: "pick"; pick: ReplayPick; what: string } | { kind: "compare"; comparison: ReplayComparison };

interface Props {
  open: ReplayOpen;
  onClose: () => void;
  onReplayed: () => void;
}

export function ReplayEntry({ open, onClose, onReplayed }: Props) {
  const [running, setRunning] = useState<ReplayWith | null>(null);
  if (open.kind === "compare") return <RecordedComparison comparison={open.comparison} onClose={onClose} />;
  if (running === null) return <ReplayDialog what={open.what} onRun={setRunning} onClose={onClose} />;
  return <ReplayRun pick={open.pick} with_={running} what={open.what} onClose={onClose} onReplayed={onReplayed} />;
}

function RecordedComparison({ comparison, onClose }: { comparison: ReplayComparison; onClose: () => void }) {
  const { t } = useI18n();
  const close = useCallback(() => onClose(), [onClose]);
  useEscape(close);
  return (
    <div className="replay-backdrop" data-overlay="replay">
      <div className="replay-run" role="dialog" aria-modal="true" aria-labelledby="replay-recorded-title" data-testid="replay-recorded">
        <header className="replay-run-head">
          <h2 id="replay-recorded-title">{t("replayCompareTitle")}</h2>
          <span className="muted replay-what">{t("replayOfQuestion", { question: comparison.original.question })}</span>
          <button type="button" onClick={close} autoFocus data-testid="replay-close">
            {t("replayClose")}
          </button>
        </header>
        <div className="replay-run-body replay-run-single">
          <div className="replay-results">
            <ReplayComparisonView comparison={comparison} />
          </div>
        </div>
      </div>
    </div>
  );
}

// Beside the composer: how much of the model's context window the conversation's latest
// request took (a bar that turns amber, then red, as it fills), the tokens the whole
// conversation has used, and the project instructions (AGENTS.md, ...) every request carries,
// or, when it carries none, the folder's files that were left out and why. All follow the
// live turn.
import { useEffect, useState } from "react";
import { api, type InstructionsLeftOut } from "../api";
import { useI18n } from "../i18n";
import type { TurnView } from "../state/chat";
import { leftOutSentence } from "../state/instructions";
import { conversationUsage, latestContext, meterLevel, share } from "../state/tokens";
import { formatCount, formatRate } from "./history/query";

export function ContextMeter({ turns }: { turns: readonly TurnView[] }) {
  const { t, lang } = useI18n();
  const context = latestContext(turns);
  const usage = conversationUsage(turns);
  // The system prompt of the conversation's first turn carries them into every request.
  const instructions = turns.find((turn) => turn.instructions)?.instructions;
  const leftOut = useLeftOut(!instructions, turns.length);
  const n = (count: number) => formatCount(count, lang);
  return (
    <div className="context-meter-row">
      {usage.total_tokens > 0 && (
        <span
          className="conversation-tokens muted"
          data-testid="conversation-tokens"
          title={t("turnTokensTitle", { prompt: n(usage.prompt_tokens), completion: n(usage.completion_tokens), total: n(usage.total_tokens) })}
        >
          {t("conversationTokens", { tokens: n(usage.total_tokens) })}
        </span>
      )}
      {instructions && (
        <span
          className="meter-instructions muted"
          data-testid="meter-instructions"
          title={t(instructions.truncated ? "meterInstructionsCutTitle" : "meterInstructionsTitle", { file: instructions.file })}
        >
          {t(instructions.truncated ? "meterInstructionsCut" : "meterInstructions", { file: instructions.file })}
        </span>
      )}
      {!instructions && leftOut[0] && (
        <span
          className="meter-instructions meter-left-out"
          data-testid="meter-instructions-left-out"
          title={leftOut.map((entry) => leftOutSentence(t, entry)).join(" ")}
        >
          {t("meterLeftOut", { file: leftOut[0].file })}
        </span>
      )}
      {context ? (
        <span
          className={`context-meter level-${meterLevel(context)}`}
          data-testid="context-meter"
          role="meter"
          aria-label={t("contextMeter")}
          aria-valuemin={0}
          aria-valuemax={context.windowTokens}
          aria-valuenow={context.usedTokens}
          title={t("contextMeterTitle", { used: n(context.usedTokens), window: n(context.windowTokens), percent: formatRate(share(context)) })}
        >
          <span className="context-bar" aria-hidden="true">
            <span style={{ width: `${share(context) * 100}%` }} />
          </span>
          <span className="context-text">{t("contextMeterValue", { used: n(context.usedTokens), window: n(context.windowTokens) })}</span>
        </span>
      ) : null}
    </div>
  );
}

/**
 * The open folder's files of instructions left out, asked for when the conversation carries
 * none, and again as each question starts (the engine looks anew for each). Nothing when
 * they are turned off for the folder, or when the folder could not be asked.
 */
function useLeftOut(wanted: boolean, turnCount: number): InstructionsLeftOut[] {
  const [leftOut, setLeftOut] = useState<InstructionsLeftOut[]>([]);
  useEffect(() => {
    if (!wanted) return;
    let live = true;
    api.projectInstructions().then(
      (view) => live && setLeftOut(view.on ? view.left_out : []),
      // The meter says only what it knows; the welcome line shows the error.
      () => live && setLeftOut([]),
    );
    return () => {
      live = false;
    };
  }, [wanted, turnCount]);
  return wanted ? leftOut : [];
}

// Beside the composer: how much of the model's context window the conversation's latest
// request took (a bar that turns amber, then red, as it fills), the tokens the whole
// conversation has used, and the project instructions (AGENTS.md, ...) every request carries.
// All follow the live turn.
import { useI18n } from "../i18n";
import type { TurnView } from "../state/chat";
import { conversationUsage, latestContext, meterLevel, share } from "../state/tokens";
import { formatCount, formatRate } from "./history/query";

export function ContextMeter({ turns }: { turns: readonly TurnView[] }) {
  const { t, lang } = useI18n();
  const context = latestContext(turns);
  const usage = conversationUsage(turns);
  // The system prompt of the conversation's first turn carries them into every request.
  const instructions = turns.find((turn) => turn.instructions)?.instructions;
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

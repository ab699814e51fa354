// Token figures of a conversation: how full the model's context window was at the latest
// request, and the tokens the server reported per question and in all.
import type { Usage } from "../bindings";
import type { TurnView } from "./chat";

export interface ContextUse {
  usedTokens: number;
  windowTokens: number;
}

/** The context window use of the conversation's latest request to the model. */
export function latestContext(turns: readonly TurnView[]): ContextUse | undefined {
  for (let i = turns.length - 1; i >= 0; i--) {
    const context = turns[i]?.context;
    if (context) return context;
  }
  return undefined;
}

/** The tokens of every question of the conversation together. */
export function conversationUsage(turns: readonly TurnView[]): Usage {
  const total: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  for (const turn of turns) {
    total.prompt_tokens += turn.usage.prompt_tokens;
    total.completion_tokens += turn.usage.completion_tokens;
    total.total_tokens += turn.usage.total_tokens;
  }
  return total;
}

/** How full a window is, as the meter colours it: room left, getting full, nearly full. */
export type MeterLevel = "ok" | "high" | "full";

/** The share at which the meter warns: past it, tool results start to be cut to fit. */
export const HIGH_SHARE = 0.6;
/** The share at which the meter turns red: little room is left for results and the answer. */
export const FULL_SHARE = 0.85;

export function meterLevel(use: ContextUse): MeterLevel {
  const share = use.windowTokens > 0 ? use.usedTokens / use.windowTokens : 1;
  if (share >= FULL_SHARE) return "full";
  if (share >= HIGH_SHARE) return "high";
  return "ok";
}

/** The share of the window used, 0 to 1. */
export function share(use: ContextUse): number {
  return use.windowTokens > 0 ? Math.min(1, Math.max(0, use.usedTokens / use.windowTokens)) : 1;
}

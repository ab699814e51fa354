// Which project instructions (AGENTS.md and the like) a conversation follows, read from its
// system prompt: the engine writes them there under one fixed head (SECTION_HEAD in
// crates/host/src/instructions.rs), so the record itself says what every request carried. And
// the files the engine left out (a link out of the folder, a pipe), as the open folder's view
// reports them.

import type { InstructionsLeftOut, LeftOutReason } from "../bindings";
import type { Translate } from "../i18n";
import type { MessageKey } from "../i18n/en";

const HEAD = "The project's instructions for agents, from ";
const TAIL = " (follow them where they apply to the question):";

export interface InstructionsUse {
  /** The file, relative to the folder. */
  file: string;
  /** Cut to fit the model's context window. */
  truncated: boolean;
}

/** The project instructions in a system prompt, if it holds some. */
export function instructionsIn(systemPrompt: string): InstructionsUse | undefined {
  const start = systemPrompt.indexOf(HEAD);
  if (start < 0) return undefined;
  const from = start + HEAD.length;
  const end = systemPrompt.indexOf(TAIL, from);
  if (end < 0) return undefined;
  const file = systemPrompt.slice(from, end);
  return { file, truncated: systemPrompt.includes(`[the rest of ${file} is left out for room]`) };
}

/** The i18n key of each reason a file of instructions is left out (crates/protocol's LeftOutReason). */
const REASON_KEYS: Record<LeftOutReason, MessageKey> = {
  link_outside: "instructionsLeftOutLinkOutside",
  not_a_file: "instructionsLeftOutNotAFile",
  unreadable: "instructionsLeftOutUnreadable",
};

/** "AGENTS.md was left out: it is a link to a file outside the folder." */
export function leftOutSentence(t: Translate, leftOut: InstructionsLeftOut): string {
  return t("instructionsLeftOut", { file: leftOut.file, reason: t(REASON_KEYS[leftOut.reason]) });
}

// The mocked history, stats and conversation-management commands (see mock-backend.ts).

/** The start state of these commands; tests set it through `window.__mockConfig`. */
export interface HistoryConfig {
  /** Recorded calls, newest first (HistoryRow objects). */
  history?: unknown[];
}

/** The answer to `cmd`, or `undefined` when `cmd` is not one of these. */
export function historyCommand(cmd: string, args: Record<string, unknown>, config: HistoryConfig): unknown {
  switch (cmd) {
    case "history_calls":
      return { items: config.history ?? [], next: null, args };
    default:
      return undefined;
  }
}

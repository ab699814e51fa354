// The mocked settings, rules and MCP-configuration commands (see mock-backend.ts).

/** The start state of these commands; tests set it through `window.__mockConfig`. */
export interface SettingsConfig {
  /** An AppSettings object. */
  settings?: unknown;
}

/** The answer to `cmd`, or `undefined` when `cmd` is not one of these. */
export function settingsCommand(cmd: string, args: Record<string, unknown>, config: SettingsConfig): unknown {
  switch (cmd) {
    case "get_settings":
      return config.settings ?? null;
    default:
      void args;
      return undefined;
  }
}

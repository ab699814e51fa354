// Updates' commands for the browser specs: what the start-up check and Check now find, the
// `[updates] check` setting kept in the mock's config, and an install whose steps the spec sends
// down the install's channel and ends as it likes (a tampered signature, say).
import type { UpdateInfo, UpdateProgress, UpdateSettings } from "../src/bindings";

export interface UpdatesConfig {
  /** What the start-up check found; none by default. */
  update?: UpdateInfo | null;
  /** What Check now finds; the start-up one by default. */
  updateNow?: UpdateInfo | null;
  updateSettings?: UpdateSettings;
}

interface Install {
  channel: { id: number };
  next: number;
  reject: (error: unknown) => void;
}

const installs: Install[] = [];

function settings(config: UpdatesConfig): UpdateSettings {
  return config.updateSettings ?? { check_at_start: true, current_version: "0.1.0" };
}

/** The answer to `cmd`, or `undefined` when `cmd` is not one of these. */
export function updatesCommand(cmd: string, args: Record<string, unknown>, config: UpdatesConfig): unknown {
  switch (cmd) {
    case "update_settings":
      return settings(config);
    case "save_update_check":
      config.updateSettings = { ...settings(config), check_at_start: Boolean(args.checkAtStart) };
      return config.updateSettings;
    case "check_for_update":
      if (args.atStart) return settings(config).check_at_start ? (config.update ?? null) : null;
      return config.updateNow !== undefined ? config.updateNow : (config.update ?? null);
    case "install_update":
      // The real one restarts the app once installed, so it never answers; it can only fail.
      return new Promise((_, reject) => installs.push({ channel: args.progress as { id: number }, next: 0, reject }));
    default:
      return undefined;
  }
}

/** The latest install, as the backend drives it: its steps, then its end. */
export function updateInstall(runCallback: (id: number, data: unknown) => void) {
  const latest = () => {
    const install = installs.at(-1);
    if (!install) throw new Error("nothing is installing");
    return install;
  };
  return {
    started: () => installs.length,
    step: (message: UpdateProgress) => {
      const install = latest();
      runCallback(install.channel.id, { index: install.next++, message });
    },
    fail: (message: string, code = "signature") => latest().reject({ code, message }),
  };
}

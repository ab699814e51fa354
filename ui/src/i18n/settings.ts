// Strings of the settings screen, in both languages.
export const settingsEn = {
  settingsTitle: "Settings",
} as const;

export const settingsZh: Record<keyof typeof settingsEn, string> = {
  settingsTitle: "设置",
};

// Strings of the history, stats and conversation-management screens, in both languages.
export const historyEn = {
  navChat: "Chat",
  navHistory: "History",
  navStats: "Stats",
  navSettings: "Settings",
} as const;

export const historyZh: Record<keyof typeof historyEn, string> = {
  navChat: "对话",
  navHistory: "历史",
  navStats: "统计",
  navSettings: "设置",
};

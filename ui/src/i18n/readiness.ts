// Strings of what stands between a question and its answer, in both languages: no model
// answers (said above the composer before a question fails), the local model starting for a
// question, and the server reading a long prompt before its first token.
export const readinessEn = {
  noModelTitle: "No model answers questions yet.",
  noModelBody: "A question about {folder} would fail until you choose one.",
  noModelCheckAgain: "Check again",
  noModelChecking: "Checking…",
  localModelStarting: "Starting the local model ({model})…",
  localModelWarming: "Preparing the model ({model})…",
  waitSeconds: "{seconds} s",
  promptReading: "Reading the prompt: {processed} of {total} tokens · {time}",
  promptReadingCached: "Reading the prompt: {processed} of {total} tokens ({cached} from cache) · {time}",
  promptReadLabel: "Prompt read",
};

export const readinessZh: Record<keyof typeof readinessEn, string> = {
  noModelTitle: "还没有可以回答问题的模型。",
  noModelBody: "选择模型之前，关于 {folder} 的提问都会失败。",
  noModelCheckAgain: "重新检查",
  noModelChecking: "正在检查…",
  localModelStarting: "正在启动本地模型（{model}）…",
  localModelWarming: "正在准备模型（{model}）…",
  waitSeconds: "{seconds} 秒",
  promptReading: "正在读取提示：{total} 个词元中已读 {processed} 个 · {time}",
  promptReadingCached: "正在读取提示：{total} 个词元中已读 {processed} 个（{cached} 个来自缓存）· {time}",
  promptReadLabel: "提示读取进度",
};

// Strings of the context meter, the token counts, the waterfall and the token and cost figures
// of the stats screen, in both languages.
export const usageEn = {
  // Context meter and token counts
  contextMeter: "Context window",
  contextMeterValue: "{used} / {window} tokens",
  contextMeterTitle: "The latest request to the model took {used} of its {window}-token context window ({percent}).",
  turnTokens: "{tokens} tokens",
  turnTokensTitle: "Prompt {prompt} · answer {completion} · total {total} tokens, as the server reported them for this question.",
  conversationTokens: "{tokens} tokens in this conversation",
  answerTruncated: "The answer of round {round} was cut short: the model reached its token limit or the end of its context window.",

  // Waterfall
  timelineList: "List",
  timelineWaterfall: "Waterfall",
  timelineViewLabel: "Timeline view",
  wfModelRow: "model · round {round}",
  wfThinking: "waiting for the first token",
  wfStreaming: "streaming",
  wfWait: "waiting for approval",
  wfRun: "running (coloured by how it ended)",
  wfStart: "Start: +{start}",
  wfDuration: "Duration: {duration}",
  wfWaited: "Waited for approval: {wait}",
  wfTurnTotal: "{duration} in all",
  wfLegend: "Legend",

  // Stats: tokens per day and cost
  statsTokensTitle: "Tokens per day",
  statsTokensEmpty: "No token counts recorded in this period.",
  statsColDay: "Day",
  statsColModel: "Model",
  statsTokensTotal: "In all",
  statsColPrompt: "Prompt",
  statsColCompletion: "Answer",
  statsColTokens: "Total",
  statsColCost: "Cost",
  statsCostHint: "From the prices per million tokens set for the provider in Settings → Providers.",
  statsCostUnknown: "No price set",
  statsTokensTableLabel: "Tokens per day",

  // Settings → Providers: prices
  cfgPriceInput: "Price of prompt tokens (USD per million)",
  cfgPriceOutput: "Price of answer tokens (USD per million)",
  cfgPriceHint: "Optional. The Stats screen turns this provider's tokens into a cost with it.",
  cfgPriceInvalid: "Enter a number of dollars, 0 or more.",
};

export const usageZh: Record<keyof typeof usageEn, string> = {
  contextMeter: "上下文窗口",
  contextMeterValue: "{used} / {window} 词元",
  contextMeterTitle: "最近一次向模型发出的请求占用了 {window} 词元上下文窗口中的 {used}（{percent}）。",
  turnTokens: "{tokens} 词元",
  turnTokensTitle: "提示 {prompt} · 回答 {completion} · 共 {total} 词元（服务器为这个问题报告的数字）。",
  conversationTokens: "本对话共 {tokens} 词元",
  answerTruncated: "第 {round} 轮的回答被截断：模型达到了词元上限或上下文窗口的末尾。",

  timelineList: "列表",
  timelineWaterfall: "瀑布图",
  timelineViewLabel: "时间线视图",
  wfModelRow: "模型 · 第 {round} 轮",
  wfThinking: "等待第一个词元",
  wfStreaming: "流式输出",
  wfWait: "等待批准",
  wfRun: "运行（颜色表示结果）",
  wfStart: "开始：+{start}",
  wfDuration: "时长：{duration}",
  wfWaited: "等待批准：{wait}",
  wfTurnTotal: "共 {duration}",
  wfLegend: "图例",

  statsTokensTitle: "每日词元",
  statsTokensEmpty: "这段时间没有记录词元数。",
  statsColDay: "日期",
  statsColModel: "模型",
  statsTokensTotal: "总计",
  statsColPrompt: "提示",
  statsColCompletion: "回答",
  statsColTokens: "合计",
  statsColCost: "费用",
  statsCostHint: "按设置 → 提供方中为该提供方设定的每百万词元价格计算。",
  statsCostUnknown: "未设价格",
  statsTokensTableLabel: "每日词元",

  cfgPriceInput: "提示词元价格（美元/百万）",
  cfgPriceOutput: "回答词元价格（美元/百万）",
  cfgPriceHint: "可选。统计页面据此把该提供方的词元换算成费用。",
  cfgPriceInvalid: "请输入不小于 0 的美元金额。",
};

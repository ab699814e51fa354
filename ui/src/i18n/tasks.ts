// Strings of a call an MCP server runs as a task (MCP Tasks), shown on its timeline card, in both
// languages.
export const tasksEn = {
  taskLabel: "Task: {state}",
  taskState_working: "working",
  taskState_input_required: "needs your answer",
  taskState_completed: "done",
  taskState_failed: "failed",
  taskState_cancelled: "cancelled",
  taskIdTitle: "The task's id at the MCP server {server}",
};

export const tasksZh: Record<keyof typeof tasksEn, string> = {
  taskLabel: "任务：{state}",
  taskState_working: "进行中",
  taskState_input_required: "等待你的回答",
  taskState_completed: "已完成",
  taskState_failed: "失败",
  taskState_cancelled: "已取消",
  taskIdTitle: "该任务在 MCP 服务器 {server} 上的编号",
};

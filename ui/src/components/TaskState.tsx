// Where the MCP server's task for a call stands (MCP Tasks): working, waiting for the user's
// answer, done, failed or cancelled, with the server's own words and the task's id.
import type { TaskProgress } from "../bindings";
import { useI18n } from "../i18n";

export function TaskState({ task }: { task: TaskProgress }) {
  const { t } = useI18n();
  const state = t(`taskState_${task.status}`);
  return (
    <div className={`card-task task-${task.status}`} role="status" aria-label={t("taskLabel", { state })}>
      <span className="task-dot" aria-hidden="true" />
      <span className="task-label">{t("taskLabel", { state })}</span>
      {task.message && <span className="task-message">{task.message}</span>}
      <span className="task-id" title={t("taskIdTitle", { server: task.server })}>
        {task.task_id}
      </span>
    </div>
  );
}

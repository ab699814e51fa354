import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { EventBody, TaskStatus } from "../bindings";
import { StreamBuilder } from "../fixtures/stream";
import { I18nProvider } from "../i18n";
import { applyEvents, emptyChat } from "../state/chat";
import { TimelineCard } from "./TimelineCard";

const TOOL = "everything__simulate-research-query";

/** A call the server runs as a task, reported in `states`, and finished when `end` is given. */
function taskCall(states: [TaskStatus, string?][], end?: "success" | "cancelled") {
  const b = new StreamBuilder().start("t", "q");
  b.callDelta(1, 0, "c1", TOOL, { topic: "tides" }).started(1, "c1", TOOL, { topic: "tides" });
  states.forEach(([status, message], i) =>
    b.tick(5).push({
      type: "tool_call_progress",
      call_id: "c1",
      tool: TOOL,
      progress: i + 1,
      ...(message ? { message } : {}),
      task: { server: "everything", tool: "simulate-research-query", task_id: "d0c5-task", status, ...(message ? { message } : {}) },
    } as EventBody),
  );
  if (end) {
    b.tick(5).push({
      type: "tool_call_finished",
      round: 1,
      call_id: "c1",
      tool: TOOL,
      source: { kind: "mcp", server: "everything" },
      description: "",
      arguments: { topic: "tides" },
      status: end,
      duration_ms: 20,
      ...(end === "success" ? { result: "# Research Report: tides" } : { error: { code: "cancelled", message: "the call was stopped" } }),
      approval: { allowed: true, by: { kind: "policy" } },
      truncated_for_model: false,
    } as EventBody);
  }
  return applyEvents(emptyChat, b.events).calls.c1!;
}

const card = (lang: "en" | "zh", states: [TaskStatus, string?][], end?: "success" | "cancelled") =>
  render(
    <I18nProvider initial={lang}>
      <TimelineCard call={taskCall(states, end)} expanded={false} selected={false} onToggle={() => {}} onShowInChat={() => {}} />
    </I18nProvider>,
  );

afterEach(cleanup);

describe("a call the MCP server runs as a task", () => {
  it("shows the task working with the server's words and its id", () => {
    card("en", [["working", "Gathering sources..."], ["working", "Analyzing content..."]]);
    const task = screen.getByRole("status", { name: "Task: working" });
    expect(task.textContent).toContain("Analyzing content...");
    expect(task.textContent).toContain("d0c5-task");
    expect(task.className).toContain("task-working");
  });

  it("says when the task waits for the user's answer, in Chinese too", () => {
    card("zh", [["working"], ["input_required", "Requesting clarification..."]]);
    expect(screen.getByRole("status", { name: "任务：等待你的回答" }).textContent).toContain("Requesting clarification...");
  });

  it("keeps how the task ended once the call is over", () => {
    card("en", [["working"], ["completed"]], "success");
    expect(screen.getByRole("status", { name: "Task: done" })).toBeTruthy();
    cleanup();
    card("en", [["working"], ["cancelled"]], "cancelled");
    expect(screen.getByRole("status", { name: "Task: cancelled" })).toBeTruthy();
  });

  it("shows no task on a call that is not one", () => {
    card("en", []);
    expect(screen.queryByRole("status")).toBeNull();
  });
});

import { act, fireEvent, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { api, type ConversationSummary, type HistoryRow, type RuleView, type Stats, type StatusCounts } from "../../api";
import { I18nProvider, translate } from "../../i18n";
import { CallDetail } from "./CallDetail";
import { Conversations, messageSearchText } from "./Conversations";
import {
  countsQuery,
  dayEnd,
  dayStart,
  decisionText,
  failures,
  formatCount,
  formatRate,
  hasFilters,
  historyQuery,
  matchingCount,
  NO_FILTERS,
  pageQuery,
  statsQuery,
  successRate,
  weightedAverage,
} from "./query";
import { StatsView } from "./StatsView";

const t = (key: Parameters<typeof translate>[1], vars?: Record<string, string | number>) => translate("en", key, vars);
const zh = (key: Parameters<typeof translate>[1], vars?: Record<string, string | number>) => translate("zh", key, vars);
const inEnglish = (ui: React.ReactNode) => render(<I18nProvider initial="en">{ui}</I18nProvider>);

afterEach(() => {
  vi.restoreAllMocks();
});

function counts(partial: Partial<StatusCounts>): StatusCounts {
  return { running: 0, success: 0, error: 0, denied: 0, cancelled: 0, timeout: 0, ...partial };
}

const denyPush: RuleView = { id: "rule_1", workspace: "/home/me/demo", kind: "deny", tool: "execute_bash", prefix: ["git", "push"], command: "git push", created_ms: 1, revoked_ms: null };

function row(partial: Partial<HistoryRow> = {}): HistoryRow {
  return {
    id: "tc_1",
    conversation_id: "conv_1",
    turn_id: "turn_1",
    workspace: "/home/me/demo",
    call_id: "call_1",
    round: 1,
    tool: "execute_bash",
    source: { kind: "builtin" },
    description: "",
    arguments: { command: "git push origin main" },
    started_ms: new Date(2024, 4, 3, 14, 5, 9).getTime(),
    duration_ms: 4,
    status: "denied",
    result_preview: "",
    result_size: 0,
    truncated_for_model: false,
    approval: { allowed: false, by: { kind: "rule", id: "rule_1" } },
    ...partial,
  };
}

describe("the history query", () => {
  it("turns the filters into the store's query: days in local time, the last day included", () => {
    const query = historyQuery({ allWorkspaces: true, tool: "read_file", status: "error", from: "2024-05-03", to: "2024-05-04", search: "  main.rs   fn*  " });
    expect(query).toEqual({
      all_workspaces: true,
      tool: "read_file",
      status: "error",
      since: new Date(2024, 4, 3).getTime(),
      until: new Date(2024, 4, 5).getTime(),
      search: "main.rs fn*",
    });
    expect(pageQuery(NO_FILTERS, "t1.2", 200)).toMatchObject({ all_workspaces: false, tool: null, status: null, since: null, until: null, search: null, limit: 200, before: "t1.2" });
  });

  it("sends no search for text without words, and ignores half-typed dates", () => {
    expect(historyQuery({ ...NO_FILTERS, search: " -- ( " }).search).toBeNull();
    expect(historyQuery({ ...NO_FILTERS, search: "读取 文件" }).search).toBe("读取 文件");
    expect(dayStart("2024-5-3")).toBeNull();
    expect(dayEnd("")).toBeNull();
    expect(hasFilters({ ...NO_FILTERS, allWorkspaces: true, search: "  " })).toBe(false);
    expect(hasFilters({ ...NO_FILTERS, to: "2024-01-01" })).toBe(true);
  });

  it("counts with the same folders and days, but every tool and status", () => {
    expect(countsQuery({ allWorkspaces: false, tool: "x", status: "success", from: "2024-01-31", to: "", search: "y" })).toEqual({ all_workspaces: false, since: new Date(2024, 0, 31).getTime(), until: null });
  });

  it("knows how many calls match from the counts, except for a text search", () => {
    const stats: Stats = {
      total: 10,
      statuses: counts({ success: 7, error: 3 }),
      tools: [
        { tool: "read_file", calls: 6, statuses: counts({ success: 5, error: 1 }), avg_ms: 3, p95_ms: 9 },
        { tool: "execute_bash", calls: 4, statuses: counts({ success: 2, error: 2 }), avg_ms: 300, p95_ms: 900 },
      ],
    };
    expect(matchingCount(NO_FILTERS, stats)).toBe(10);
    expect(matchingCount({ ...NO_FILTERS, status: "error" }, stats)).toBe(3);
    expect(matchingCount({ ...NO_FILTERS, tool: "execute_bash" }, stats)).toBe(4);
    expect(matchingCount({ ...NO_FILTERS, tool: "execute_bash", status: "error" }, stats)).toBe(2);
    expect(matchingCount({ ...NO_FILTERS, tool: "gone" }, stats)).toBe(0);
    expect(matchingCount({ ...NO_FILTERS, search: "main" }, stats)).toBeNull();
    expect(matchingCount(NO_FILTERS, null)).toBeNull();
  });
});

describe("figures", () => {
  it("rates success over the calls that finished, not the running ones", () => {
    expect(successRate(counts({ success: 3, error: 1, running: 6 }))).toBe(0.75);
    expect(successRate(counts({ success: 1, denied: 1, cancelled: 1, timeout: 1 }))).toBe(0.25);
    expect(successRate(counts({ running: 2 }))).toBeNull();
    expect(failures(counts({ error: 2, timeout: 1, denied: 5 }))).toBe(3);
  });

  it("never rounds a failure away or a success to nothing", () => {
    expect(formatRate(0.75)).toBe("75%");
    expect(formatRate(1)).toBe("100%");
    expect(formatRate(0.9996)).toBe("99.9%");
    expect(formatRate(0.001)).toBe("<1%");
    expect(formatRate(0)).toBe("0%");
    expect(formatRate(null)).toBe("—");
  });

  it("groups the digits of big counts", () => {
    expect(formatCount(90_000, "en")).toBe("90,000");
    expect(formatCount(7, "zh")).toBe("7");
  });

  it("weights each tool's average by its finished calls", () => {
    expect(weightedAverage([
      { avg_ms: 10, statuses: counts({ success: 3 }) },
      { avg_ms: 50, statuses: counts({ success: 1, running: 9 }) },
      { avg_ms: null, statuses: counts({ running: 1 }) },
    ])).toBe(20);
    expect(weightedAverage([])).toBeNull();
  });

  it("measures periods back from now", () => {
    expect(statsQuery(true, "week", 1_000_000_000)).toEqual({ all_workspaces: true, since: 1_000_000_000 - 7 * 86_400_000, until: null });
    expect(statsQuery(false, "all", 5).since).toBeNull();
  });
});

describe("the decision", () => {
  it("says who let a call run", () => {
    expect(decisionText(t, { allowed: true, by: { kind: "policy" } }).text).toBe("Read-only: no approval needed");
    expect(decisionText(t, { allowed: true, by: { kind: "user" }, reason: "it writes to a file (redirection)" })).toEqual({ allowed: true, text: "Allowed by you", note: "Why it asked: it writes to a file (redirection)" });
    expect(decisionText(t, { allowed: true, by: { kind: "conversation" } }).text).toBe("Allowed for this conversation");
    expect(decisionText(t, { allowed: true, by: { kind: "setting" }, reason: "mcp.json allows fs" }).text).toBe("Allowed by a setting: mcp.json allows fs");
    expect(decisionText(t, { allowed: true, by: { kind: "rule", id: "r" } }, { ...denyPush, kind: "allow", command: "cargo test" }).text).toBe("Allowed by rule: allow cargo test");
  });

  it("says who refused it, and what the model was told", () => {
    expect(decisionText(t, { allowed: false, by: { kind: "rule", id: "rule_1" } }, denyPush)).toEqual({ allowed: false, text: "Refused by rule: deny git push", note: null });
    expect(decisionText(t, { allowed: false, by: { kind: "rule", id: "rule_1" } }).text).toBe("Refused by a rule");
    expect(decisionText(t, { allowed: false, by: { kind: "user" }, reason: "not now" })).toEqual({ allowed: false, text: "Refused by you", note: "Reason given to the model: not now" });
    expect(decisionText(t, { allowed: false, by: { kind: "policy" }, reason: "it deletes files" }).text).toBe("Refused by the command policy: it deletes files");
    expect(decisionText(t, { allowed: false, by: { kind: "setting" } }).text).toBe("Refused by a setting");
  });

  it("is said in Chinese too, the rule's kind included", () => {
    expect(decisionText(zh, { allowed: false, by: { kind: "rule", id: "rule_1" } }, denyPush).text).toBe("被规则拒绝：拒绝 git push");
    expect(decisionText(zh, { allowed: true, by: { kind: "policy" } }).text).toBe("只读：无需批准");
  });
});

describe("CallDetail", () => {
  it("shows the rule that refused the call and revokes it", async () => {
    vi.spyOn(api, "toolCall").mockResolvedValue({ ...row(), result: "", rule: denyPush });
    const revoke = vi.spyOn(api, "revokeRule").mockResolvedValue({ ...denyPush, revoked_ms: Date.now() });
    const onOpenCall = vi.fn();
    inEnglish(<CallDetail row={row()} onClose={() => {}} onOpenCall={onOpenCall} />);
    const decision = screen.getByTestId("decision");
    // Before the detail arrives the rule is unknown; then it is named.
    expect(decision).toHaveTextContent("Refused by a rule");
    expect(await within(decision).findByText("Refused by rule: deny git push")).toBeInTheDocument();
    await userEvent.click(within(decision).getByRole("button", { name: "Revoke this rule" }));
    expect(revoke).toHaveBeenCalledWith("rule_1");
    expect(await within(decision).findByTestId("rule-revoked")).toHaveTextContent(/This rule was revoked on/);
    expect(within(decision).queryByRole("button", { name: "Revoke this rule" })).toBeNull();
    await userEvent.click(screen.getByRole("button", { name: "Open in conversation" }));
    expect(onOpenCall).toHaveBeenCalledWith("conv_1", "call_1");
  });

  it("shows the full result, the error and where the tool came from", async () => {
    const failed = row({ status: "error", tool: "fs__read_text_file", source: { kind: "mcp", server: "fs" }, approval: { allowed: true, by: { kind: "setting" }, reason: "mcp.json: approval allow" }, error: { code: "not_found", message: "no such file" }, result_preview: "x" });
    vi.spyOn(api, "toolCall").mockResolvedValue({ ...failed, result: "the whole result", rule: null });
    const onClose = vi.fn();
    inEnglish(<CallDetail row={failed} onClose={onClose} onOpenCall={() => {}} />);
    expect(await screen.findByText("the whole result")).toBeInTheDocument();
    expect(screen.getByText("MCP server fs")).toBeInTheDocument();
    expect(screen.getByText("[not_found] no such file")).toBeInTheDocument();
    expect(screen.getByTestId("decision")).toHaveTextContent("Allowed by a setting: mcp.json: approval allow");
    expect(screen.queryByRole("button", { name: "Revoke this rule" })).toBeNull();
    fireEvent.keyDown(window, { key: "Escape" });
    expect(onClose).toHaveBeenCalled();
  });

  it("shows what the tool does and the start time, with the exact timestamp on hover", async () => {
    const stopped = row({ status: "cancelled", description: "Counts lines in files.", error: { code: "cancelled", message: "Tooltrail stopped before this call finished." } });
    vi.spyOn(api, "toolCall").mockResolvedValue({ ...stopped, result: "", rule: null });
    inEnglish(<CallDetail row={stopped} onClose={() => {}} onOpenCall={() => {}} />);
    expect(screen.getByTestId("detail-description")).toHaveTextContent("Counts lines in files.");
    const time = screen.getByText(/^3 May 2024,? 14:05:09$/);
    expect(time).toHaveAttribute("title", new Date(stopped.started_ms).toISOString());
    await screen.findByText("(no output)");
  });

  it("names a call's view, and the call whose view made a call", async () => {
    const opened = row({ tool: "basic__get-time", source: { kind: "mcp", server: "basic" }, view: { resource_uri: "ui://get-time/mcp-app.html" } });
    vi.spyOn(api, "toolCall").mockResolvedValue({ ...opened, result: "", rule: null });
    const { unmount } = inEnglish(<CallDetail row={opened} onClose={() => {}} onOpenCall={() => {}} />);
    expect(screen.getByText("Its view")).toBeInTheDocument();
    expect(screen.getByText("ui://get-time/mcp-app.html")).toBeInTheDocument();
    await screen.findByTestId("decision");
    unmount();
    const made = { ...opened, id: "tc_2", view_of: "tc_1" };
    vi.spyOn(api, "toolCall").mockResolvedValue({ ...made, result: "", rule: null });
    inEnglish(<CallDetail row={made} onClose={() => {}} onOpenCall={() => {}} />);
    expect(screen.getByText("Called by the view of")).toBeInTheDocument();
    expect(screen.getByText("tc_1")).toBeInTheDocument();
    expect(screen.queryByText("Its view")).toBeNull();
    await screen.findByTestId("decision");
  });

  it("says when an old record kept no description", async () => {
    vi.spyOn(api, "toolCall").mockResolvedValue({ ...row(), result: "", rule: null });
    inEnglish(<CallDetail row={row()} onClose={() => {}} onOpenCall={() => {}} />);
    expect(screen.getByTestId("detail-description")).toHaveTextContent("Not recorded");
    await screen.findByTestId("decision");
  });

  it("says so when the result cannot be loaded", async () => {
    vi.spyOn(api, "toolCall").mockRejectedValue({ code: "not_found", message: "No tool call has the id tc_1." });
    inEnglish(<CallDetail row={row()} onClose={() => {}} onOpenCall={() => {}} />);
    expect(await screen.findByText("The result could not be loaded: No tool call has the id tc_1.")).toBeInTheDocument();
  });
});

describe("StatsView", () => {
  // The tokens per day ask too; tokens.test.tsx tests them.
  beforeEach(() => {
    vi.spyOn(api, "historyTokens").mockResolvedValue([]);
    vi.spyOn(api, "getSettings").mockRejectedValue(new Error("no settings here"));
  });

  it("shows calls, success rate, errors, denied and durations per tool, with totals", async () => {
    const stats: Stats = {
      total: 14,
      statuses: counts({ success: 9, error: 2, timeout: 1, denied: 1, running: 1 }),
      tools: [
        { tool: "read_file", calls: 10, statuses: counts({ success: 8, error: 2 }), avg_ms: 12, p95_ms: 40 },
        { tool: "execute_bash", calls: 4, statuses: counts({ success: 1, timeout: 1, denied: 1, running: 1 }), avg_ms: 1500, p95_ms: 30_000 },
      ],
    };
    const ask = vi.spyOn(api, "historyStats").mockResolvedValue(stats);
    inEnglish(<StatsView workspace={{ path: "/home/me/demo", name: "demo", watched: true }} />);
    const table = await screen.findByTestId("stats-table");
    expect(ask).toHaveBeenCalledWith({ all_workspaces: false, since: null, until: null });
    const cells = (tool: string) => [...table.querySelectorAll(`tr[data-tool="${tool}"] td`)].map((cell) => cell.textContent);
    expect(cells("read_file")).toEqual(["10", "80%", "2", "0", "12 ms", "40 ms"]);
    expect(cells("execute_bash")).toEqual(["4", "33%", "1", "1", "1.5 s", "30 s"]);
    const total = [...table.querySelectorAll("tfoot td")].map((cell) => cell.textContent);
    // 9 of 13 finished; the average weights read_file's 10 finished calls and bash's 3.
    expect(total).toEqual(["14", "69%", "3", "1", "355 ms", "—"]);
    expect(screen.getByTestId("stats-summary")).toHaveTextContent("14 calls · 69% succeeded · 3 errors · 1 denied · 1 still running");

    ask.mockResolvedValue({ total: 0, statuses: counts({}), tools: [] });
    await userEvent.click(screen.getByRole("checkbox", { name: "All folders" }));
    await userEvent.click(screen.getByRole("radio", { name: "Last 24 hours" }));
    expect(await screen.findByTestId("stats-empty")).toHaveTextContent("No calls in this period.");
    const last = ask.mock.calls.at(-1)![0];
    expect(last.all_workspaces).toBe(true);
    expect(Date.now() - (last.since ?? 0)).toBeGreaterThanOrEqual(86_400_000);
    expect(Date.now() - (last.since ?? 0)).toBeLessThan(86_400_000 + 60_000);
  });

  it("says why the figures are missing", async () => {
    vi.spyOn(api, "historyStats").mockRejectedValue({ code: "history", message: "The database is locked." });
    inEnglish(<StatsView workspace={{ path: "/home/me/demo", name: "demo", watched: true }} />);
    expect(await screen.findByRole("alert")).toHaveTextContent("The figures could not be loaded: The database is locked.");
  });
});

describe("Conversations", () => {
  const list: ConversationSummary[] = [
    { id: "c1", title: "What does this project do?", workspace: "/w", updated_ms: 3, turns: 2, running: false },
    { id: "c2", title: "Flaky tests", workspace: "/w", updated_ms: 2, turns: 1, running: false },
  ];
  const inItem = (id: string) => within(document.querySelector<HTMLElement>(`[data-conversation-id="${id}"]`)!);
  const draw = (props: Partial<Parameters<typeof Conversations>[0]> = {}) => {
    const handlers = { onOpenConversation: vi.fn(), onNewConversation: vi.fn(), onConversationsChanged: vi.fn() };
    inEnglish(<Conversations conversations={list} activeConversation="c1" {...handlers} {...props} />);
    return handlers;
  };

  it("renames with F2 and Enter, and Esc cancels without saving", async () => {
    const rename = vi.spyOn(api, "renameConversation").mockResolvedValue();
    const { onConversationsChanged } = draw();
    const item = screen.getByRole("button", { name: /^Flaky tests/ });
    item.focus();
    await userEvent.keyboard("{F2}");
    const box = screen.getByRole("textbox", { name: "New title" });
    expect(box).toHaveValue("Flaky tests");
    await userEvent.clear(box);
    await userEvent.type(box, "Why the tests fail{Enter}");
    expect(rename).toHaveBeenCalledWith("c2", "Why the tests fail");
    await vi.waitFor(() => expect(onConversationsChanged).toHaveBeenCalledTimes(1));
    expect(screen.queryByRole("textbox", { name: "New title" })).toBeNull();

    await userEvent.click(inItem("c1").getByRole("button", { name: "Rename (F2)" }));
    await userEvent.type(screen.getByRole("textbox", { name: "New title" }), "Something else{Escape}");
    expect(screen.queryByRole("textbox", { name: "New title" })).toBeNull();
    expect(rename).toHaveBeenCalledTimes(1);
  });

  it("shows why a rename failed", async () => {
    vi.spyOn(api, "renameConversation").mockRejectedValue({ code: "not_found", message: "No conversation has the id c2." });
    draw();
    await userEvent.click(inItem("c2").getByRole("button", { name: "Rename (F2)" }));
    await userEvent.type(screen.getByRole("textbox", { name: "New title" }), " again{Enter}");
    expect(await screen.findByText("Could not rename: No conversation has the id c2.")).toBeInTheDocument();
  });

  it("deletes after a confirmation, and starts anew when the open one goes", async () => {
    const remove = vi.spyOn(api, "deleteConversation").mockResolvedValue();
    const { onNewConversation, onConversationsChanged } = draw();
    await userEvent.click(inItem("c2").getByRole("button", { name: "Delete" }));
    await userEvent.click(screen.getByRole("button", { name: "Keep" }));
    expect(remove).not.toHaveBeenCalled();
    await userEvent.click(inItem("c2").getByRole("button", { name: "Delete" }));
    const confirm = screen.getByRole("group", { name: "Delete “Flaky tests”?" });
    await userEvent.click(within(confirm).getByRole("button", { name: "Delete" }));
    expect(remove).toHaveBeenCalledWith("c2");
    await vi.waitFor(() => expect(onConversationsChanged).toHaveBeenCalled());
    expect(onNewConversation).not.toHaveBeenCalled();

    await userEvent.click(inItem("c1").getByRole("button", { name: "Delete" }));
    await userEvent.click(within(screen.getByRole("group", { name: /Delete “What does/ })).getByRole("button", { name: "Delete" }));
    await vi.waitFor(() => expect(onNewConversation).toHaveBeenCalledTimes(1));
  });

  it("filters titles at once and finds messages from two characters, after a pause", async () => {
    const search = vi.spyOn(api, "searchMessages").mockResolvedValue([
      { conversation_id: "c2", conversation_title: "Flaky tests", position: 3, time_ms: 1, role: "assistant", snippet: "…the project uses go test…" },
    ]);
    const { onOpenConversation } = draw();
    const box = screen.getByRole("searchbox", { name: "Filter or search conversations" });
    vi.useFakeTimers();
    try {
      fireEvent.change(box, { target: { value: "p" } });
      expect(screen.queryByRole("button", { name: /^Flaky tests/ })).toBeNull();
      expect(screen.getByRole("button", { name: /^What does this project do\?/ })).toBeInTheDocument();
      expect(screen.queryByTestId("message-hits")).toBeNull();
      fireEvent.change(box, { target: { value: "pr" } });
      fireEvent.change(box, { target: { value: "proj" } });
      expect(search).not.toHaveBeenCalled();
      await act(async () => {
        await vi.advanceTimersByTimeAsync(300);
      });
      expect(search).toHaveBeenCalledTimes(1);
      expect(search).toHaveBeenCalledWith("proj");
    } finally {
      vi.useRealTimers();
    }
    const hit = await screen.findByRole("button", { name: /in: Flaky tests/ });
    expect(hit).toHaveTextContent("…the project uses go test…");
    await userEvent.click(hit);
    expect(onOpenConversation).toHaveBeenCalledWith("c2");
  });

  it("searches messages only for words of two characters or more", () => {
    expect(messageSearchText("a")).toBeNull();
    expect(messageSearchText(" ab ")).toBe("ab");
    expect(messageSearchText("--")).toBeNull();
    expect(messageSearchText("测试")).toBe("测试");
  });
});

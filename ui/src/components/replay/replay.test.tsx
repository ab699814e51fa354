import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ComparedCall, ReplayComparison, TurnFigures } from "../../api";
import { I18nProvider, type Lang } from "../../i18n";
import { comparedLines } from "./compare";
import { ReplayComparisonView } from "./ReplayComparisonView";

const inLang = (lang: Lang, ui: React.ReactNode) => render(<I18nProvider initial={lang}>{ui}</I18nProvider>);

function call(tool: string, path: string, marks: Partial<ComparedCall> = {}): ComparedCall {
  return { call_id: `c_${tool}_${path}`, tool, arguments: { path }, status: "success", from_record: false, not_run: false, ended_ms: 100, duration_ms: 40, ...marks };
}

function turn(model: string, calls: ComparedCall[], answer: string): TurnFigures {
  return {
    turn_id: `turn_${model}`,
    conversation_id: "conv",
    model,
    workspace: "/w",
    question: "What is in src?",
    answer,
    end: "completed",
    total_ms: 1200,
    first_reply_ms: 300,
    tokens_in: 100,
    tokens_out: 20,
    errors: 0,
    loops_cut: 0,
    calls,
    replay_of: null,
  };
}

/** The original lists, reads a.rs and runs a command; the replay lists, reads b.rs (parting at call 2) and stops. */
function comparison(): ReplayComparison {
  const original = turn("big", [call("list_dir", "src"), call("read_file", "src/a.rs"), call("execute_bash", "cargo test")], "It holds a.rs.");
  const replay = { ...turn("small", [call("list_dir", "src"), call("read_file", "src/b.rs"), call("execute_bash", "ls", { status: "denied", not_run: true })], "It holds b.rs."), replay_of: "turn_big" };
  return {
    original,
    replay,
    first_divergence: 2,
    calls_agreement: 0.33,
    tools_agreement: 1,
    answer_same: false,
    calls_not_run: 1,
    calls_from_record: 0,
    rows: [
      { original: 0, replay: 0 },
      { original: 1, replay: null },
      { original: null, replay: 1 },
      { original: 2, replay: null },
      { original: null, replay: 2 },
    ],
  };
}

describe("a replay beside its original", () => {
  it("lays the calls out along the aligned rows, a side without a call left blank", () => {
    const lines = comparedLines(comparison());
    expect(lines.map((line) => [line.original?.arguments, line.replay?.arguments])).toEqual([
      [{ path: "src" }, { path: "src" }],
      [{ path: "src/a.rs" }, undefined],
      [undefined, { path: "src/b.rs" }],
      [{ path: "cargo test" }, undefined],
      [undefined, { path: "ls" }],
    ]);
    expect(lines.filter((line) => line.parts).map((line) => line.position)).toEqual([2]);
  });

  it("marks the row where the calls part, in words and in the row, and leaves blanks where a side has no call", () => {
    inLang("en", <ReplayComparisonView comparison={comparison()} changedSince={["src/a.rs changed since."]} />);
    expect(screen.getByTestId("replay-verdict").textContent).toBe("The calls part at call 2 · a different answer");
    const rows = screen.getAllByTestId("replay-row");
    expect(rows).toHaveLength(5);
    const parting = rows.filter((row) => row.dataset.parts === "true");
    expect(parting).toEqual([rows[1]]);
    const [second, fifth] = [rows[1]!, rows[4]!];
    expect(within(second).getByText("parts here")).toBeTruthy();
    // Row 2 has the original's read of a.rs and nothing on the replay's side.
    const [left, right] = [...second.querySelectorAll("td")];
    expect(left!.textContent).toContain("src/a.rs");
    expect(right!.classList.contains("replay-blank")).toBe(true);
    expect(within(right!).getByText("No call on this side")).toBeTruthy();
    // The replay's command was not run, and says so.
    expect(within(fifth).getByText("not run")).toBeTruthy();
    expect(screen.getByTestId("replay-not-run").textContent).toBe("1");
    expect(screen.getByTestId("replay-changed").textContent).toContain("src/a.rs changed since.");
  });

  it("says the calls never part when there is no divergence, with no row marked, in Chinese too", () => {
    const same = { ...comparison(), first_divergence: null, answer_same: true, rows: [{ original: 0, replay: 0 }] };
    inLang("zh", <ReplayComparisonView comparison={same} />);
    expect(screen.getByTestId("replay-verdict").textContent).toBe("调用始终一致 · 回答相同");
    expect(screen.getAllByTestId("replay-row").filter((row) => row.dataset.parts === "true")).toHaveLength(0);
    expect(screen.queryByText("在此分开")).toBeNull();
  });
});

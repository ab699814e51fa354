import { fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { ComparedCall, ReplayComparison, TurnFigures } from "../../api";
import { I18nProvider, type Lang } from "../../i18n";
import { axisMs, comparedLines, placeCall } from "./compare";
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

/** The same calls with times: the original took 1 s, the replay 400 ms and did not run its command. */
function timed(): ReplayComparison {
  const base = comparison();
  const at = (calls: ComparedCall[], times: [number, number][]) => calls.map((c, i) => ({ ...c, ended_ms: times[i]![0], duration_ms: times[i]![1] }));
  return {
    ...base,
    original: { ...base.original, total_ms: 1000, calls: at(base.original.calls, [[200, 100], [500, 250], [1000, 200]]) },
    replay: { ...base.replay, total_ms: 400, calls: at(base.replay.calls, [[100, 50], [300, 100], [320, 0]]) },
  };
}

/** A side's bar or marker in a waterfall row, as the style places it. */
function place(cell: Element) {
  const shape = cell.querySelector<HTMLElement>("[data-testid=replay-bar], [data-testid=replay-marker]");
  if (!shape) return null;
  return { kind: shape.dataset.testid === "replay-bar" ? "bar" : "marker", left: parseFloat(shape.style.left), width: shape.style.width ? parseFloat(shape.style.width) : 0 };
}

describe("a replay beside its original on a waterfall", () => {
  afterEach(() => localStorage.clear());

  it("places a call from when it ended and how long it ran, on its own turn's axis", () => {
    const { original, replay } = timed();
    expect(axisMs(original)).toBe(1000);
    expect(placeCall(original.calls[1]!, 1000)).toMatchObject({ kind: "bar", left: 25, width: 25, startMs: 250, endMs: 500 });
    expect(placeCall(replay.calls[1]!, axisMs(replay))).toMatchObject({ kind: "bar", left: 50, width: 25 });
    // Not run: no time taken, a marker where it happened.
    expect(placeCall(replay.calls[2]!, 400)).toMatchObject({ kind: "marker", left: 80, width: 0 });
    // A turn that never ended runs its axis to its last call; a call never spills past the axis or before 0.
    expect(axisMs({ ...original, total_ms: null })).toBe(1000);
    expect(axisMs({ ...original, total_ms: null, calls: [] })).toBe(1);
    expect(placeCall({ ...original.calls[0]!, ended_ms: 50, duration_ms: 80 }, 1000)).toMatchObject({ left: 0, width: 5 });
    expect(placeCall({ ...original.calls[0]!, ended_ms: 1500, duration_ms: 600 }, 1000)).toMatchObject({ left: 40, width: 60 });
  });

  it("keeps the list's rows, marker and blanks, and draws each side's bars on its own axis", () => {
    inLang("en", <ReplayComparisonView comparison={timed()} />);
    const list = screen.getByRole("button", { name: "List" });
    const waterfall = screen.getByRole("button", { name: "Waterfall" });
    expect(list.getAttribute("aria-pressed")).toBe("true");
    expect(screen.getByRole("group", { name: "Show the calls as" })).toBeTruthy();
    fireEvent.click(waterfall);
    expect(waterfall.getAttribute("aria-pressed")).toBe("true");
    expect(screen.queryByTestId("replay-rows")).toBeNull();

    const rows = screen.getAllByTestId("replay-wf-row");
    expect(rows).toHaveLength(5);
    expect(rows.filter((row) => row.dataset.parts === "true")).toEqual([rows[1]]);
    expect(within(rows[1]!).getByText("parts here")).toBeTruthy();
    // Per row: the original's place and the replay's, null where that side has no call.
    const places = rows.map((row) => [...row.querySelectorAll("td")].map((cell) => (cell.classList.contains("replay-blank") ? null : place(cell))));
    expect(places).toEqual([
      [{ kind: "bar", left: 10, width: 10 }, { kind: "bar", left: 12.5, width: 12.5 }],
      [{ kind: "bar", left: 25, width: 25 }, null],
      [null, { kind: "bar", left: 50, width: 25 }],
      [{ kind: "bar", left: 80, width: 20 }, null],
      [null, { kind: "marker", left: 80, width: 0 }],
    ]);
    expect(screen.getAllByTestId("replay-blank").map((cell) => cell.textContent)).toEqual(["No call on this side", "No call on this side", "No call on this side", "No call on this side"]);
    // Each axis ends with its own turn's total.
    expect(screen.getAllByTestId("replay-axis").map((axis) => axis.querySelector(".replay-axis-total")?.textContent)).toEqual(["1.0 s in all", "400 ms in all"]);
    // A screen reader hears each bar's tool and duration; the marker says the call was not run.
    const tracks = screen.getAllByTestId("replay-track");
    expect(tracks[2]!.getAttribute("aria-label")).toBe("read_file: Done, 250 ms, from 250 ms to 500 ms");
    expect(screen.getByRole("img", { name: "execute_bash: not run, at 320 ms" })).toBeTruthy();
    expect(within(rows[4]!).getByText("not run")).toBeTruthy();
  });

  it("remembers the waterfall for the next comparison, in Chinese too", () => {
    const first = inLang("zh", <ReplayComparisonView comparison={timed()} />);
    fireEvent.click(screen.getByRole("button", { name: "瀑布图" }));
    first.unmount();
    inLang("zh", <ReplayComparisonView comparison={timed()} />);
    expect(screen.getByRole("button", { name: "瀑布图" }).getAttribute("aria-pressed")).toBe("true");
    expect(screen.getAllByTestId("replay-wf-row")).toHaveLength(5);
    expect(screen.getByRole("img", { name: "execute_bash：未运行，于 320 ms" })).toBeTruthy();
    expect(screen.getAllByTestId("replay-axis").map((axis) => axis.querySelector(".replay-axis-total")?.textContent)).toEqual(["共 1.0 s", "共 400 ms"]);
  });
});

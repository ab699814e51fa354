import { describe, expect, it } from "vitest";
import { formatDuration, summarizeArguments } from "./format";

describe("summarizeArguments", () => {
  it("puts the main value first, then the others as key=value", () => {
    expect(summarizeArguments({ glob: "*.go", pattern: "func main" })).toBe("func main · glob=*.go");
    expect(summarizeArguments({ command: "ls -la", timeout: 5 })).toBe("ls -la · timeout=5");
  });
  it("falls back to the streamed text", () => {
    expect(summarizeArguments(undefined, '{"path":\n"a')).toBe('{"path": "a');
  });
  it("stays on one short line", () => {
    expect(summarizeArguments({ path: "x".repeat(300) }).length).toBe(120);
  });
});

describe("formatDuration", () => {
  it("reads naturally", () => {
    expect(formatDuration(12)).toBe("12 ms");
    expect(formatDuration(1234)).toBe("1.2 s");
    expect(formatDuration(42_000)).toBe("42 s");
    expect(formatDuration(125_000)).toBe("2 min 5 s");
    expect(formatDuration(3_900_000)).toBe("1 h 5 min");
  });
});

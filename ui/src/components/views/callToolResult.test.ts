// What a live call's view is told when the call ends: the server's own result, whole.
import { describe, expect, it } from "vitest";
import type { CallView } from "../../state/chat";
import { callToolResult } from "./ViewFrame";

const base: CallView = { callId: "call_1", turnId: "turn_1", round: 1, tool: "basic__get-time", argumentsText: "{}", phase: "success" };

describe("the result a view gets for its call", () => {
  it("is the MCP result the record kept, structured content and all", () => {
    const result = { content: [{ type: "text", text: "12:00" }], structuredContent: { time: "12:00" } };
    expect(callToolResult({ ...base, result: "12:00", data: { server: "basic", tool: "get-time", result } })).toEqual(result);
  });

  it("is the text, marked as an error, when the call failed or kept no MCP result", () => {
    expect(callToolResult({ ...base, phase: "error", result: "the server stopped" })).toEqual({
      content: [{ type: "text", text: "the server stopped" }],
      isError: true,
    });
    expect(callToolResult({ ...base, result: "12:00", data: { count: 3 } })).toEqual({ content: [{ type: "text", text: "12:00" }], isError: false });
  });
});

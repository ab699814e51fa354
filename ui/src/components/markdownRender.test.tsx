import { render } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { Markdown } from "./Markdown";

// How many highlighters rehype-highlight has made.
const made = vi.hoisted(() => ({ count: 0 }));
vi.mock("rehype-highlight", async (original) => {
  const real = (await original<typeof import("rehype-highlight")>()).default;
  return {
    default: (...args: Parameters<typeof real>) => {
      made.count++;
      return real(...args);
    },
  };
});

describe("Markdown while an answer streams", () => {
  it("highlights code with one highlighter for every render, not a new one per piece of text", () => {
    const answer = "Here:\n\n```go\nfunc main() {\n    return\n}\n```\n\nThat is all of it, said slowly.";
    const before = made.count;
    const { container, rerender } = render(<Markdown text={answer.slice(0, 30)} />);
    for (let end = 31; end <= answer.length; end += 3) rerender(<Markdown text={answer.slice(0, end)} />);
    rerender(<Markdown text={answer} />);
    expect(container.querySelector("code.hljs.language-go .hljs-keyword")).toHaveTextContent("func");
    expect(made.count - before).toBe(0);
  });
});

import { describe, expect, it } from "vitest";
import { splitBlocks } from "./markdown";

describe("splitBlocks", () => {
  it("splits at blank lines", () => {
    expect(splitBlocks("# Title\n\nOne\ntwo\n\n- a\n- b")).toEqual(["# Title", "One\ntwo", "- a\n- b"]);
  });

  it("keeps a fenced block whole, blank lines included", () => {
    const text = "Before\n\n```go\nfunc a() {}\n\nfunc b() {}\n```\n\nAfter";
    expect(splitBlocks(text)).toEqual(["Before", "```go\nfunc a() {}\n\nfunc b() {}\n```", "After"]);
  });

  it("keeps an unclosed fence open to the end while it streams", () => {
    expect(splitBlocks("Intro\n\n```\ncode\n\nmore")).toEqual(["Intro", "```\ncode\n\nmore"]);
  });

  it("only a matching fence closes", () => {
    expect(splitBlocks("~~~~\n```\n\nx\n~~~~\n\ny")).toEqual(["~~~~\n```\n\nx\n~~~~", "y"]);
  });

  it("earlier blocks never change when text is appended", () => {
    const full = "A para\n\n```\ncode\n```\n\nB para with more\n\n- list";
    for (let i = 1; i < full.length; i++) {
      const partial = splitBlocks(full.slice(0, i));
      const final = splitBlocks(full);
      for (let j = 0; j < partial.length - 1; j++) expect(partial[j]).toBe(final[j]);
    }
  });
});

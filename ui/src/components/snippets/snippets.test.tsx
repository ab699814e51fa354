import { act, fireEvent, render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, type Snippet, type SnippetSummary } from "../../api";
import { I18nProvider, type Lang } from "../../i18n";
import { fencedCode, formatBytes } from "./format";
import { SnippetsView } from "./SnippetsView";

const workspace = { path: "/home/me/demo", name: "demo", watched: true };

const BUILD: Snippet = { name: "build", language: "sh", description: "Release build", content: "cargo build --release", created_ms: 1, updated_ms: new Date(2024, 4, 3, 14, 5, 9).getTime() };
const RETRY: Snippet = { name: "retry", language: "rust", description: null, content: "fn retry() {\n    loop { backoff(); }\n}", created_ms: 1, updated_ms: 2 };

function summary(snippet: Snippet): SnippetSummary {
  return { name: snippet.name, language: snippet.language, description: snippet.description, bytes: snippet.content.length, updated_ms: snippet.updated_ms };
}

/** The store, mocked: the given snippets, searched by a word of their content. */
function mockStore(snippets: Snippet[]) {
  const saved = [...snippets];
  const list = vi.spyOn(api, "listSnippets").mockImplementation(async (query) =>
    saved.filter((snippet) => query === null || snippet.content.includes(query)).map(summary),
  );
  vi.spyOn(api, "getSnippet").mockImplementation(async (name) => {
    const found = saved.find((snippet) => snippet.name === name);
    if (!found) throw { code: "not_found", message: `No snippet named "${name}" is saved for this folder.` };
    return found;
  });
  const remove = vi.spyOn(api, "deleteSnippet").mockImplementation(async (name) => {
    saved.splice(
      saved.findIndex((snippet) => snippet.name === name),
      1,
    );
  });
  return { list, remove, saved };
}

const show = (lang: Lang = "en") =>
  render(
    <I18nProvider initial={lang}>
      <SnippetsView workspace={workspace} />
    </I18nProvider>,
  );

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe("the snippet's content", () => {
  it("is fenced so that no backticks inside can end it, in its language", () => {
    expect(fencedCode("a ``` b", "Rust")).toBe("````rust\na ``` b\n````");
    expect(fencedCode("x", null)).toBe("```\nx\n```");
    expect(fencedCode("x", "not a language {}")).toBe("```\nx\n```");
  });

  it("has its size in bytes or KB", () => {
    expect(formatBytes(512, "en")).toBe("512 B");
    expect(formatBytes(1536, "en")).toBe("1.5 KB");
    expect(formatBytes(65536, "zh")).toBe("64 KB");
  });
});

describe("SnippetsView", () => {
  it("lists the folder's snippets and shows the first with its content highlighted in its language", async () => {
    mockStore([BUILD, RETRY]);
    show();
    const list = await screen.findByRole("listbox", { name: "Snippets" });
    await within(list).findByText("retry");
    expect(screen.getByTestId("snippet-count")).toHaveTextContent("2 snippets");
    const detail = await screen.findByTestId("snippet-detail");
    expect(within(detail).getByRole("heading", { name: "build" })).toBeInTheDocument();
    expect(within(detail).getByText("Release build")).toBeInTheDocument();
    expect(detail.querySelector("code.language-sh")).toHaveTextContent("cargo build --release");

    await userEvent.click(within(list).getByText("retry"));
    expect(await screen.findByRole("heading", { name: "retry" })).toBeInTheDocument();
    expect(screen.getByTestId("snippet-detail").querySelector("code.language-rust .hljs-keyword")).toHaveTextContent("fn");
  });

  it("searches after the typing stops and says when nothing matches", async () => {
    const { list } = mockStore([BUILD, RETRY]);
    show();
    await screen.findByRole("heading", { name: "build" });
    await userEvent.type(screen.getByRole("searchbox", { name: "Search snippets" }), "backoff");
    await screen.findByRole("heading", { name: "retry" });
    expect(list).toHaveBeenLastCalledWith("backoff");
    expect(screen.getByTestId("snippet-count")).toHaveTextContent("1 snippet");

    await userEvent.clear(screen.getByRole("searchbox"));
    await userEvent.type(screen.getByRole("searchbox"), "nothing");
    expect(await screen.findByTestId("snippets-empty")).toHaveTextContent("No snippet matches “nothing”.");
    // Esc in the box clears it, and the whole list is back.
    fireEvent.keyDown(screen.getByRole("searchbox"), { key: "Escape" });
    expect(await screen.findByText("2 snippets")).toBeInTheDocument();
  });

  it("moves through the list with the arrow keys and deletes with Delete after a yes", async () => {
    const { remove, saved } = mockStore([BUILD, RETRY]);
    show();
    await screen.findByRole("heading", { name: "build" });
    fireEvent.keyDown(screen.getByRole("searchbox"), { key: "ArrowDown" });
    expect(screen.getByRole("option", { name: /build/ })).toHaveFocus();
    fireEvent.keyDown(screen.getByRole("listbox"), { key: "ArrowDown" });
    expect(screen.getByRole("option", { name: /retry/ })).toHaveFocus();
    expect(await screen.findByRole("heading", { name: "retry" })).toBeInTheDocument();

    // Delete asks first; Esc keeps it.
    fireEvent.keyDown(screen.getByRole("listbox"), { key: "Delete" });
    const ask = await screen.findByRole("alertdialog", { name: "Delete the snippet “retry”?" });
    expect(within(ask).getByRole("button", { name: "Keep" })).toHaveFocus();
    fireEvent.keyDown(within(ask).getByRole("button", { name: "Keep" }), { key: "Escape" });
    expect(screen.queryByRole("alertdialog")).toBeNull();
    expect(remove).not.toHaveBeenCalled();

    fireEvent.keyDown(screen.getByRole("listbox"), { key: "Delete" });
    await userEvent.click(within(await screen.findByRole("alertdialog")).getByRole("button", { name: "Delete" }));
    expect(remove).toHaveBeenCalledWith("retry");
    expect(saved.map((snippet) => snippet.name)).toEqual(["build"]);
    // The one before takes its place.
    expect(await screen.findByRole("heading", { name: "build" })).toBeInTheDocument();
    expect(await screen.findByText("1 snippet")).toBeInTheDocument();
  });

  it("says why a delete failed and keeps the snippet", async () => {
    mockStore([BUILD]);
    vi.spyOn(api, "deleteSnippet").mockRejectedValue({ code: "history", message: "The database is locked." });
    show();
    await screen.findByRole("heading", { name: "build" });
    await userEvent.click(screen.getByRole("button", { name: "Delete" }));
    await userEvent.click(within(screen.getByRole("alertdialog")).getByRole("button", { name: "Delete" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("The snippet could not be deleted: The database is locked.");
    expect(screen.getByRole("option", { name: /build/ })).toBeInTheDocument();
  });

  it("copies the content", async () => {
    mockStore([BUILD]);
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    show();
    await screen.findByRole("heading", { name: "build" });
    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: "Copy content" }));
    });
    expect(writeText).toHaveBeenCalledWith("cargo build --release");
  });

  it("says how snippets are made when the folder has none, in Chinese too", async () => {
    mockStore([]);
    show("zh");
    expect(await screen.findByTestId("snippets-empty")).toHaveTextContent("demo 还没有保存任何片段。");
    expect(screen.getByTestId("snippets-empty")).toHaveTextContent("tooltrail tool snippets");
    expect(screen.queryByTestId("snippet-detail")).toBeNull();
  });
});

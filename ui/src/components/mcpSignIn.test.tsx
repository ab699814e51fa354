import { cleanup, render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, type McpServerView } from "../api";
import { I18nProvider, type Lang } from "../i18n";
import { CallNeedsSignIn, McpSignIn, serverNeedingSignIn, signInAsked } from "./McpSignIn";

const inLang = (lang: Lang, ui: React.ReactNode) => render(<I18nProvider initial={lang}>{ui}</I18nProvider>);

const docs = (sign_in: McpServerView["sign_in"]): McpServerView => ({ name: "docs", state: "failed", tools: 0, sign_in });

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("signing in to an MCP server", () => {
  it("offers Sign in where it is needed, and starts it for that server", async () => {
    const signIn = vi.spyOn(api, "mcpSignIn").mockResolvedValue(undefined);
    inLang("en", <McpSignIn server={docs({ state: "needed" })} />);
    expect(screen.getByText("Needs sign-in")).toBeTruthy();
    await userEvent.click(screen.getByRole("button", { name: "Sign in" }));
    await waitFor(() => expect(signIn).toHaveBeenCalledWith("docs"));
  });

  it("shows the page while waiting, who signed in, and why it failed, in Chinese too", () => {
    const { unmount } = inLang("en", <McpSignIn server={docs({ state: "waiting", url: "http://127.0.0.1:9/authorize?x=1" })} />);
    expect(screen.getByText("Waiting for the browser…")).toBeTruthy();
    expect(screen.getByText("http://127.0.0.1:9/authorize?x=1")).toBeTruthy();
    unmount();
    const signedIn = inLang("zh", <McpSignIn server={docs({ state: "signed_in", identity: "ada@example.com" })} signOut />);
    expect(screen.getByText("已登录为 ada@example.com")).toBeTruthy();
    expect(screen.getByRole("button", { name: "退出登录" })).toBeTruthy();
    signedIn.unmount();
    inLang("en", <McpSignIn server={docs({ state: "failed", reason: "access was denied" })} />);
    expect(screen.getByText("Sign-in failed: access was denied")).toBeTruthy();
    expect(screen.getByRole("button", { name: "Sign in again" })).toBeTruthy();
  });

  it("says nothing for servers that do not sign in", () => {
    const { container } = inLang("en", <McpSignIn server={docs({ state: "not_needed" })} />);
    expect(container.textContent).toBe("");
    expect(signInAsked(docs(undefined))).toBe(false);
    expect(signInAsked(docs({ state: "needed" }))).toBe(true);
  });

  it("finds the server of a call that failed for want of sign-in, and offers the button on its card", async () => {
    expect(serverNeedingSignIn('the MCP server "docs" needs you to sign in: run `tooltrail mcp login docs`')).toBe("docs");
    expect(serverNeedingSignIn("file not found")).toBeNull();
    const signIn = vi.spyOn(api, "mcpSignIn").mockResolvedValue(undefined);
    inLang("en", <CallNeedsSignIn server="docs" />);
    expect(screen.getByText("docs needs you to sign in before its tools can run.")).toBeTruthy();
    await userEvent.click(screen.getByRole("button", { name: "Sign in" }));
    await waitFor(() => expect(signIn).toHaveBeenCalledWith("docs"));
  });
});

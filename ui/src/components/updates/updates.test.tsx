// The update notice at start and Settings → Updates, against Tauri's IPC mock: the commands and
// argument names the backend takes, and the install's steps sent down a real Channel.
import { act, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { afterEach, describe, expect, it } from "vitest";
import type { UpdateInfo, UpdateProgress, UpdateSettings } from "../../api";
import { I18nProvider, type Lang } from "../../i18n";
import { UpdatesSection } from "../settings/UpdatesSection";
import { UpdateNotice } from "./UpdateNotice";

const SIGNATURE = "The update's signature does not match Tooltrail's key, so it was not installed. Nothing was changed.";

const update: UpdateInfo = {
  version: "0.3.0",
  current_version: "0.2.1",
  notes: "- Faster **search** in History\n- Updates from Settings\n\n<img src=x onerror=\"window.__ran = true\"><script>window.__ran = true</script>",
  date: "2026-11-20T12:00:00Z",
};

interface Backend {
  /** What check_for_update answers, by `atStart`. */
  atStart?: UpdateInfo | null | Error;
  checkNow?: UpdateInfo | null | Error;
  settings?: UpdateSettings;
  saveFails?: boolean;
}

/** The commands as the backend answers them; every call is kept, and install_update waits for the test. */
function backend(given: Backend) {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  let settings: UpdateSettings = given.settings ?? { check_at_start: true, current_version: "0.2.1" };
  const installs: { channel: { id: number }; next: number; resolve: () => void; reject: (error: unknown) => void }[] = [];
  const answer = (value: UpdateInfo | null | Error | undefined) => (value instanceof Error ? Promise.reject({ code: "update", message: value.message }) : (value ?? null));
  mockIPC((cmd, payload) => {
    const args = (payload ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args });
    switch (cmd) {
      case "check_for_update":
        return answer(args.atStart ? given.atStart : given.checkNow);
      case "update_settings":
        return settings;
      case "save_update_check":
        if (given.saveFails) return Promise.reject({ code: "settings", message: "config.toml could not be written: the disk is full." });
        settings = { ...settings, check_at_start: Boolean(args.checkAtStart) };
        return settings;
      case "install_update":
        return new Promise<null>((resolve, reject) => installs.push({ channel: args.progress as { id: number }, next: 0, resolve: () => resolve(null), reject }));
      default:
        return Promise.reject({ code: "unknown", message: `unknown command ${cmd}` });
    }
  });
  const internals = () => (window as unknown as { __TAURI_INTERNALS__: { runCallback: (id: number, data: unknown) => void } }).__TAURI_INTERNALS__;
  return {
    calls: (cmd: string) => calls.filter((c) => c.cmd === cmd).map((c) => c.args),
    installs,
    /** Sends a step down the latest install's channel, as the backend does. */
    step: (message: UpdateProgress) => {
      const install = installs.at(-1);
      if (!install) throw new Error("nothing is installing");
      act(() => internals().runCallback(install.channel.id, { index: install.next++, message }));
    },
  };
}

afterEach(() => clearMocks());

const inLang = (lang: Lang, ui: React.ReactNode) => render(<I18nProvider initial={lang}>{ui}</I18nProvider>);

describe("the update notice at start", () => {
  it("offers the newer version with the one running, the date and the notes as Markdown, without running the notes' HTML", async () => {
    const mock = backend({ atStart: update });
    inLang("en", <UpdateNotice />);
    const notice = await screen.findByRole("region", { name: "Tooltrail 0.3.0 is available" });
    expect(mock.calls("check_for_update")).toEqual([{ atStart: true }]);
    expect(notice).toHaveTextContent("You have 0.2.1.");
    expect(notice).toHaveTextContent("Published November 20, 2026.");
    const notes = within(notice).getByRole("group", { name: "What's new" });
    // The Markdown renderer loads on first use.
    const items = await within(notes).findAllByRole("listitem");
    expect(items.map((item) => item.textContent)).toEqual(["Faster search in History", "Updates from Settings"]);
    expect(within(notes).getByText("search").tagName).toBe("STRONG");
    expect(notes.querySelector("img, script")).toBeNull();
    expect((window as unknown as { __ran?: boolean }).__ran).toBeUndefined();
    expect(within(notice).getByRole("button", { name: "Install and restart" })).toHaveClass("primary");
    // Announced without taking the focus.
    expect(screen.getByRole("status")).toHaveTextContent("Tooltrail 0.3.0 is available");
    expect(notice).not.toContainElement(document.activeElement as HTMLElement);
  });

  it("is in Chinese, the date written the Chinese way", async () => {
    backend({ atStart: { ...update, notes: null } });
    inLang("zh", <UpdateNotice />);
    const notice = await screen.findByRole("region", { name: "Tooltrail 0.3.0 已发布" });
    expect(notice).toHaveTextContent("你正在使用 0.2.1。");
    expect(notice).toHaveTextContent("发布于 2026年11月20日。");
    expect(notice).toHaveTextContent("此版本没有附带说明。");
    expect(within(notice).getByRole("button", { name: "安装并重启" })).toBeInTheDocument();
    expect(within(notice).getByRole("button", { name: "以后再说" })).toBeInTheDocument();
  });

  it("goes with Not now and does not install", async () => {
    const mock = backend({ atStart: update });
    inLang("en", <UpdateNotice />);
    const notice = await screen.findByRole("region", { name: "Tooltrail 0.3.0 is available" });
    await userEvent.click(within(notice).getByRole("button", { name: "Not now" }));
    expect(screen.queryByRole("region")).toBeNull();
    expect(mock.calls("install_update")).toEqual([]);
  });

  it("goes with Esc while the focus is in it, and leaves Esc alone when the focus is elsewhere", async () => {
    backend({ atStart: update });
    inLang(
      "en",
      <>
        <input aria-label="elsewhere" />
        <UpdateNotice />
      </>,
    );
    const notice = await screen.findByRole("region", { name: "Tooltrail 0.3.0 is available" });
    await userEvent.click(screen.getByRole("textbox", { name: "elsewhere" }));
    await userEvent.keyboard("{Escape}");
    expect(notice).toBeInTheDocument();
    within(notice).getByRole("button", { name: "Not now" }).focus();
    await userEvent.keyboard("{Escape}");
    expect(screen.queryByRole("region")).toBeNull();
  });

  it("shows nothing when the start-up check failed, or found nothing", async () => {
    const failing = backend({ atStart: new Error("Tooltrail could not reach the update server (dns error). Check the connection and try again.") });
    const { unmount } = inLang("en", <UpdateNotice />);
    await waitFor(() => expect(failing.calls("check_for_update")).toEqual([{ atStart: true }]));
    // Let the rejection settle before looking.
    await act(() => Promise.resolve());
    expect(screen.queryByRole("region")).toBeNull();
    expect(screen.queryByRole("alert")).toBeNull();
    expect(document.body).not.toHaveTextContent(/update server|could not/i);
    unmount();

    const none = backend({ atStart: null });
    inLang("en", <UpdateNotice />);
    await waitFor(() => expect(none.calls("check_for_update")).toEqual([{ atStart: true }]));
    await act(() => Promise.resolve());
    expect(screen.queryByRole("region")).toBeNull();
  });

  it("installs on the user's yes, telling each step the backend sends in order, and keeps Esc from closing it meanwhile", async () => {
    const mock = backend({ atStart: update });
    inLang("en", <UpdateNotice />);
    const notice = await screen.findByRole("region", { name: "Tooltrail 0.3.0 is available" });
    const install = within(notice).getByRole("button", { name: "Install and restart" });
    await userEvent.click(install);
    expect(mock.calls("install_update")).toHaveLength(1);
    const bar = within(notice).getByRole("progressbar", { name: "Installing Tooltrail 0.3.0" }) as HTMLProgressElement;
    const step = within(notice).getByTestId("update-step");
    expect(step).toHaveTextContent("Starting the download…");
    expect(install).toHaveTextContent("Installing…");
    expect(install).toHaveAttribute("aria-disabled", "true");
    expect(within(notice).queryByRole("button", { name: "Not now" })).toBeNull();

    const seen: string[] = [];
    const steps: UpdateProgress[] = [
      { kind: "downloading", downloaded: 3_100_000, total: 12_400_000 },
      { kind: "downloading", downloaded: 12_400_000, total: 12_400_000 },
      { kind: "verifying" },
      { kind: "installing" },
      { kind: "restarting" },
    ];
    const values: (number | null)[] = [];
    for (const message of steps) {
      mock.step(message);
      seen.push(step.textContent ?? "");
      values.push(bar.hasAttribute("value") ? bar.value : null);
    }
    expect(seen).toEqual(["Downloading… 3.1 MB of 12 MB", "Downloading… 12 MB of 12 MB", "Checking the signature…", "Installing…", "Restarting…"]);
    expect(values).toEqual([25, 100, null, null, null]);

    // A second press while it installs starts nothing; Esc does not hide an install under way.
    await userEvent.click(install);
    expect(mock.calls("install_update")).toHaveLength(1);
    install.focus();
    await userEvent.keyboard("{Escape}");
    expect(notice).toBeInTheDocument();
  });

  it("says the download's size when the server gives no total", async () => {
    const mock = backend({ atStart: update });
    inLang("en", <UpdateNotice />);
    await userEvent.click(await screen.findByRole("button", { name: "Install and restart" }));
    mock.step({ kind: "downloading", downloaded: 850_000, total: null });
    expect(screen.getByTestId("update-step")).toHaveTextContent("Downloading… 850 KB");
    expect(screen.getByRole("progressbar")).not.toHaveAttribute("value");
  });

  it("reads out the refusal of a wrong signature, and can try again or close", async () => {
    const mock = backend({ atStart: update });
    inLang("en", <UpdateNotice />);
    const notice = await screen.findByRole("region", { name: "Tooltrail 0.3.0 is available" });
    await userEvent.click(within(notice).getByRole("button", { name: "Install and restart" }));
    mock.step({ kind: "downloading", downloaded: 12_400_000, total: 12_400_000 });
    mock.step({ kind: "verifying" });
    await act(async () => mock.installs[0]?.reject({ code: "signature", message: SIGNATURE }));
    expect(within(notice).getByRole("alert")).toHaveTextContent(SIGNATURE);
    expect(within(notice).queryByRole("progressbar")).toBeNull();

    await userEvent.click(within(notice).getByRole("button", { name: "Try again" }));
    expect(mock.calls("install_update")).toHaveLength(2);
    expect(within(notice).queryByRole("alert")).toBeNull();
    await act(async () => mock.installs[1]?.reject({ code: "signature", message: SIGNATURE }));
    await userEvent.click(within(notice).getByRole("button", { name: "Close" }));
    expect(screen.queryByRole("region")).toBeNull();
  });

  it("says a refused signature in the window's language, and other failures as the backend says them", async () => {
    const mock = backend({ atStart: update });
    inLang("zh", <UpdateNotice />);
    const notice = await screen.findByRole("region", { name: "Tooltrail 0.3.0 已发布" });
    await userEvent.click(within(notice).getByRole("button", { name: "安装并重启" }));
    await act(async () => mock.installs[0]?.reject({ code: "signature", message: SIGNATURE }));
    expect(within(notice).getByRole("alert")).toHaveTextContent("更新的签名与 Tooltrail 的密钥不符，因此没有安装。没有任何改动。");

    await userEvent.click(within(notice).getByRole("button", { name: "重试" }));
    const unreachable = "Tooltrail could not reach the update server (connection refused). Check the connection and try again.";
    await act(async () => mock.installs[1]?.reject({ code: "unreachable", message: unreachable }));
    expect(within(notice).getByRole("alert")).toHaveTextContent(unreachable);
  });
});

describe("Settings → Updates", () => {
  it("shows the version and saves the start-up check at once", async () => {
    const mock = backend({});
    inLang("en", <UpdatesSection />);
    const toggle = await screen.findByRole("switch", { name: "Check for updates when Tooltrail starts" });
    expect(toggle).toBeChecked();
    expect(screen.getByTestId("cfg-updates-version")).toHaveTextContent("This is Tooltrail 0.2.1.");
    await userEvent.click(toggle);
    await waitFor(() => expect(mock.calls("save_update_check")).toEqual([{ checkAtStart: false }]));
    expect(toggle).not.toBeChecked();
    await userEvent.click(toggle);
    await waitFor(() => expect(mock.calls("save_update_check")).toEqual([{ checkAtStart: false }, { checkAtStart: true }]));
    expect(toggle).toBeChecked();
  });

  it("puts the switch back and says why when the setting could not be saved", async () => {
    backend({ saveFails: true });
    inLang("en", <UpdatesSection />);
    const toggle = await screen.findByRole("switch", { name: "Check for updates when Tooltrail starts" });
    await userEvent.click(toggle);
    expect(await screen.findByRole("alert")).toHaveTextContent("config.toml could not be written: the disk is full.");
    expect(toggle).toBeChecked();
  });

  it("Check now says the version is up to date", async () => {
    const mock = backend({ checkNow: null });
    inLang("en", <UpdatesSection />);
    await userEvent.click(await screen.findByRole("button", { name: "Check now" }));
    expect(await screen.findByText("Tooltrail 0.2.1 is up to date.")).toHaveAttribute("role", "status");
    expect(mock.calls("check_for_update")).toEqual([{ atStart: false }]);
  });

  it("Check now offers a newer version and installs it the same way", async () => {
    const mock = backend({ checkNow: update });
    inLang("en", <UpdatesSection />);
    await userEvent.click(await screen.findByRole("button", { name: "Check now" }));
    const offer = await screen.findByRole("region", { name: "Tooltrail 0.3.0 is available" });
    expect(within(offer).getByRole("heading", { name: "Tooltrail 0.3.0 is available" }).tagName).toBe("H3");
    await userEvent.click(within(offer).getByRole("button", { name: "Install and restart" }));
    mock.step({ kind: "verifying" });
    expect(within(offer).getByTestId("update-step")).toHaveTextContent("Checking the signature…");
    await act(async () => mock.installs[0]?.reject({ code: "signature", message: SIGNATURE }));
    expect(within(offer).getByRole("alert")).toHaveTextContent(SIGNATURE);
  });

  it("Check now says in a sentence when the server cannot be reached (Chinese)", async () => {
    backend({ checkNow: new Error("Tooltrail could not reach the update server (connection refused). Check the connection and try again.") });
    inLang("zh", <UpdatesSection />);
    await userEvent.click(await screen.findByRole("button", { name: "立即检查" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("无法检查新版本：Tooltrail could not reach the update server (connection refused). Check the connection and try again.");
  });
});

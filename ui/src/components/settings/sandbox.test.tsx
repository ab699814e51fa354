import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, type SandboxView } from "../../api";
import { I18nProvider } from "../../i18n";
import { SandboxSection } from "./SandboxSection";

afterEach(() => {
  vi.restoreAllMocks();
});

function view(partial: Partial<SandboxView> = {}): SandboxView {
  return {
    enforced: true,
    summary: "Sandbox: enforced (Landlock ABI 7 and seccomp)",
    details: ["platform: linux"],
    folders: [
      { path: "/home/me/demo", access: "write", kind: "workspace", reason: "workspace" },
      { path: "/home/me/.rustup", access: "read", kind: "toolchain", reason: "toolchain: rustup" },
      { path: "/usr", access: "read", kind: "system", reason: "system folder" },
    ],
    hidden: [{ path: "/home/me/.cargo/credentials.toml", what: "credentials" }],
    read_only_folders: [],
    network_commands: [],
    skipped: [],
    ...partial,
  };
}

describe("Settings → Sandbox", () => {
  it("lists what a command sees and why, folds the system folders away, and names the secrets left out", async () => {
    vi.spyOn(api, "sandboxStatus").mockResolvedValue(view());
    render(
      <I18nProvider initial="zh">
        <SandboxSection />
      </I18nProvider>,
    );
    const rows = await screen.findAllByTestId("cfg-sandbox-folder");
    expect(rows.map((row) => row.textContent)).toEqual([
      "可写/home/me/demo工作区",
      "只读/home/me/.rustup工具链：rustup",
      "只读/usr系统",
    ]);
    expect(screen.getByText("系统文件夹和设备（1）")).toBeTruthy();
    expect(within(screen.getByTestId("cfg-sandbox-hidden")).getByText("/home/me/.cargo/credentials.toml")).toBeTruthy();
  });

  it("saves the extra read-only folders and shows what commands see then, or the sentence that refused them", async () => {
    vi.spyOn(api, "sandboxStatus").mockResolvedValue(view());
    const save = vi.spyOn(api, "saveReadOnlyFolders").mockImplementation(async (folders) => {
      if (folders.some((folder) => !folder.startsWith("/") && !folder.startsWith("~"))) {
        throw { code: "settings", message: 'The read-only folder "notes" must be a full path or start with ~/.' };
      }
      return view({
        read_only_folders: folders,
        folders: [...view().folders, { path: "/home/me/notes", access: "read", kind: "extra", reason: "extra folder from config.toml" }],
      });
    });
    const user = userEvent.setup();
    render(
      <I18nProvider initial="en">
        <SandboxSection />
      </I18nProvider>,
    );
    const box = await screen.findByTestId("cfg-sandbox-extra");
    await user.type(box, "notes");
    await user.click(within(screen.getByRole("form", { name: "Extra read-only folders" })).getByRole("button", { name: "Save" }));
    expect(await screen.findByText('The read-only folder "notes" must be a full path or start with ~/.')).toBeTruthy();
    await user.clear(box);
    await user.type(box, "  ~/notes  {enter}");
    await user.click(within(screen.getByRole("form", { name: "Extra read-only folders" })).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(save).toHaveBeenLastCalledWith(["~/notes"]));
    const rows = await screen.findAllByTestId("cfg-sandbox-folder");
    expect(rows.some((row) => row.textContent === "read/home/me/notesExtra folder")).toBe(true);
    expect((screen.getByTestId("cfg-sandbox-extra") as HTMLTextAreaElement).value).toBe("~/notes");
    expect(screen.getByText("Saved. Commands see these folders from the next one on.")).toBeTruthy();
  });

  it("saves the commands that get the network, or shows the sentence that refused them", async () => {
    vi.spyOn(api, "sandboxStatus").mockResolvedValue(view());
    const save = vi.spyOn(api, "saveNetworkCommands").mockImplementation(async (commands) => {
      if (commands.some((command) => command.includes("&"))) {
        throw { code: "settings", message: 'The network rule "npm install && curl x" must be plain words of one command, without `&`.' };
      }
      return view({ network_commands: commands });
    });
    const user = userEvent.setup();
    render(
      <I18nProvider initial="en">
        <SandboxSection />
      </I18nProvider>,
    );
    const box = await screen.findByTestId("cfg-sandbox-network");
    const form = screen.getByRole("form", { name: "Commands that get the network" });
    await user.type(box, "npm install && curl x");
    await user.click(within(form).getByRole("button", { name: "Save" }));
    expect(await screen.findByText('The network rule "npm install && curl x" must be plain words of one command, without `&`.')).toBeTruthy();
    await user.clear(box);
    await user.type(box, "npm install{enter}  cargo fetch ");
    await user.click(within(form).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(save).toHaveBeenLastCalledWith(["npm install", "cargo fetch"]));
    expect(await screen.findByText("Saved. Applies from the next command on.")).toBeTruthy();
    expect((screen.getByTestId("cfg-sandbox-network") as HTMLTextAreaElement).value).toBe("npm install\ncargo fetch");
    expect((screen.getByTestId("cfg-sandbox-extra") as HTMLTextAreaElement).value).toBe("");
  });
});

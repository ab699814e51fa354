// The composer's `@` (attach a file of the folder or an MCP server's resource, shown as chips)
// and `/` (an MCP server's prompt, its arguments asked for in a small form with the server's
// completions, its messages put in the box) in the built UI (Chromium, the Rust side mocked):
// what send_message is given, a resource update on a chip, and axe-core (WCAG 2.2 A and AA and
// best practice) in English and Chinese, light and dark. Screenshots in target/screenshots/composer-*.png.
import assert from "node:assert/strict";
import { join } from "node:path";
import { axeViolations, launchBrowser, openApp, run, screenshots, test } from "./lib.mjs";

const workspace = { path: "/home/me/demo", name: "demo", watched: true };
const LIGHT_EN = { colorScheme: "light", locale: "en-US" };
const DARK_ZH = { colorScheme: "dark", locale: "zh-CN" };
const INSTRUCTIONS = "demo://resource/static/document/instructions.md";

const config = {
  workspace,
  files: ["README.md", "src/main.rs", "src/lib.rs", "docs/guide.md"],
  content: {
    resources: [
      { server: "everything", uri: INSTRUCTIONS, name: "instructions.md", mime_type: "text/markdown", template: false },
      { server: "everything", uri: "demo://resource/dynamic/text/{resourceId}", name: "Dynamic Text Resource", template: true },
    ],
    prompts: [
      { server: "everything", name: "simple-prompt", title: "Simple Prompt", description: "A prompt with no arguments", arguments: [] },
      {
        server: "everything",
        name: "completable-prompt",
        title: "Team Management",
        description: "First argument choice narrows values for second argument.",
        arguments: [
          { name: "department", description: "Choose the department.", required: true },
          { name: "name", description: "Choose a team member to lead the selected department.", required: true },
        ],
      },
    ],
    problems: [],
  },
  attachments: {
    "file:src/main.rs": { source: { kind: "file", path: "src/main.rs" }, name: "main.rs", content: { type: "text", text: "fn main() {}\n", truncated: false } },
    [`everything:${INSTRUCTIONS}`]: {
      source: { kind: "resource", server: "everything", uri: INSTRUCTIONS },
      name: "instructions.md",
      mime_type: "text/markdown",
      content: { type: "text", text: "# Instructions\n", truncated: false },
    },
  },
  promptMessages: {
    "completable-prompt": [{ role: "user", text: "Please promote Alice to the head of the Engineering team." }],
    "simple-prompt": [{ role: "user", text: "This is a simple prompt without arguments." }],
  },
  completions: { department: ["Engineering", "Sales", "Marketing", "Support"], name: ["Alice", "Bob", "Charlie"] },
};

const browser = await launchBrowser();
const shot = (page, name) => page.screenshot({ path: join(screenshots, `composer-${name}.png`) });
const calls = (page, cmd) => page.evaluate((cmd) => window.__mock.calls.filter((c) => c.cmd === cmd).map((c) => c.args), cmd);

/** Runs axe on the composer (the rest of the window has specs of its own). */
async function axe(page, what) {
  const found = await axeViolations(page, ".composer");
  assert.deepEqual(found, [], `axe found problems in ${what}:\n  ${found.join("\n  ")}`);
}

test("@ lists files and resources, chosen ones become chips, and send_message carries them", async () => {
  const { page, problems, context } = await openApp(browser, config, LIGHT_EN);
  const box = page.locator(".composer textarea");
  await box.click();
  await box.type("What is in @ma");
  const picker = page.getByTestId("composer-picker");
  await picker.getByRole("option", { name: /src\/main\.rs/ }).waitFor();
  // Files whose path has "ma" (main.rs), and no resource whose name has it.
  assert.deepEqual(await picker.getByRole("option").allInnerTexts(), ["src/main.rs"]);
  await box.press("Enter");
  await page.getByTestId("attachments").getByText("13 characters").waitFor();
  assert.equal(await box.inputValue(), "What is in ");

  await box.type("@instr");
  await picker.getByRole("option", { name: /instructions\.md/ }).waitFor();
  await shot(page, "at-picker-light-en");
  await axe(page, "the @ list (light, English)");
  await box.press("Enter");
  const chips = page.getByTestId("attachments");
  await chips.getByText("instructions.md").waitFor();
  await chips.getByText("15 characters").waitFor();

  // The server says the resource changed: the chip reads it again and says so.
  config.attachments[`everything:${INSTRUCTIONS}`].content.text = "# Instructions, longer now\n";
  await page.evaluate((c) => {
    window.__mock.config.attachments = c;
    window.__mock.emit("resource-updated", { server: "everything", uri: "demo://resource/static/document/instructions.md" });
  }, config.attachments);
  await chips.getByText("updated").waitFor();
  await chips.getByText("27 characters").waitFor();
  await shot(page, "chips-light-en");
  await axe(page, "the chips (light, English)");

  await box.type("the code and the instructions?");
  await box.press("Enter");
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "send_message"));
  const [sent] = await calls(page, "send_message");
  assert.equal(sent.text, "What is in the code and the instructions?");
  assert.deepEqual(sent.attachments, [
    { kind: "file", path: "src/main.rs" },
    { kind: "resource", server: "everything", uri: INSTRUCTIONS },
  ]);
  assert.equal(await chips.count(), 0, "the chips go with the question");
  assert.deepEqual(problems, []);
  await context.close();
});

test("/ lists prompts; the form asks for arguments with the server's completions and inserts the messages", async () => {
  const { page, problems, context } = await openApp(browser, config, DARK_ZH);
  const box = page.locator(".composer textarea");
  await box.click();
  await box.type("/comp");
  const picker = page.getByTestId("composer-picker");
  await picker.getByRole("option", { name: /\/completable-prompt/ }).waitFor();
  assert.deepEqual(await picker.getByRole("option").allInnerTexts(), ["/completable-prompt\neverything · First argument choice narrows values for second argument."]);
  await shot(page, "slash-picker-dark-zh");
  await axe(page, "the / list (dark, Chinese)");
  await box.press("Enter");

  const form = page.getByTestId("prompt-form");
  await form.waitFor();
  const insert = form.getByRole("button", { name: "插入" });
  assert.equal(await insert.isDisabled(), true, "both arguments are required");
  const department = form.getByRole("textbox", { name: /department/ });
  await department.type("E");
  const suggestions = form.getByRole("list", { name: /department/ });
  await suggestions.getByRole("button", { name: "Engineering" }).waitFor();
  await suggestions.getByRole("button", { name: "Engineering" }).click();
  assert.equal(await department.inputValue(), "Engineering");
  await form.getByRole("textbox", { name: /^name/ }).focus();
  await form.getByRole("list", { name: /name/ }).getByRole("button", { name: "Alice" }).waitFor();
  await shot(page, "prompt-form-dark-zh");
  await axe(page, "the prompt form (dark, Chinese)");
  // The second field's completions were asked for knowing the first one's value.
  const asked = await calls(page, "complete_prompt_argument");
  assert.deepEqual(asked.at(-1), { server: "everything", prompt: "completable-prompt", argument: "name", value: "", arguments: { department: "Engineering" } });
  await form.getByRole("list", { name: /name/ }).getByRole("button", { name: "Alice" }).click();
  await insert.click();
  await form.waitFor({ state: "detached" });
  assert.equal(await box.inputValue(), "Please promote Alice to the head of the Engineering team.");
  const [got] = await calls(page, "get_mcp_prompt");
  assert.deepEqual(got, { server: "everything", prompt: "completable-prompt", arguments: { department: "Engineering", name: "Alice" } });
  assert.deepEqual(problems, []);
  await context.close();
});

test("Esc closes the list, and a resource that cannot be read keeps the question from going", async () => {
  const { page, problems, context } = await openApp(browser, { ...config, attachments: {} }, { colorScheme: "dark", locale: "en-US" });
  const box = page.locator(".composer textarea");
  await box.click();
  await box.type("@gui");
  const picker = page.getByTestId("composer-picker");
  await picker.getByRole("option", { name: /docs\/guide\.md/ }).waitFor();
  await box.press("Escape");
  await picker.waitFor({ state: "detached" });
  await box.type("d");
  await picker.getByRole("option", { name: /docs\/guide\.md/ }).waitFor();
  await box.press("Enter");
  const chip = page.getByTestId("attachments").locator(".attach-chip.failed");
  await chip.getByText("Could not read file:docs/guide.md.").waitFor();
  await box.type("Hi");
  assert.equal(await page.getByRole("button", { name: "Send" }).isDisabled(), true);
  await axe(page, "a chip that failed (dark, English)");
  await page.getByRole("button", { name: "Remove guide.md" }).click();
  assert.equal(await page.getByRole("button", { name: "Send" }).isDisabled(), false);
  assert.deepEqual(problems, []);
  await context.close();
});

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);

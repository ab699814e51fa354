// Settings → Telemetry and "Copy trace id" in Chromium, with the Rust side mocked
// (ui/tests/mock-telemetry.ts keeps the [telemetry] table and the keychain's headers): the
// collector's address and headers saved (the headers never shown again), content off by
// default, a test trace taken or refused; a call's card and its History detail copy the
// question's trace id. Screenshots in both languages go to target/screenshots/.
import assert from "node:assert/strict";
import { join } from "node:path";
import { launchBrowser, openApp, run, screenshots, test } from "./lib.mjs";

const workspace = { path: "/home/me/demo", name: "demo", watched: true };
const browser = await launchBrowser();
const shot = (page, name) => page.screenshot({ path: join(screenshots, `${name}.png`) });
const calls = (page, cmd) => page.evaluate((cmd) => window.__mock.calls.filter((c) => c.cmd === cmd).map((c) => c.args), cmd);

const TURN = "turn_4bf92f3577b34da6a3ce929d0e0e4736";
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

async function openTelemetry(config, contextOptions) {
  const opened = await openApp(browser, { workspace, ...config }, contextOptions);
  await opened.page.getByRole("tab").first().waitFor();
  await opened.page.keyboard.press("Control+Comma");
  const section = opened.page.getByTestId("cfg-section-telemetry");
  await section.getByTestId("cfg-telemetry").waitFor();
  await section.scrollIntoViewIfNeeded();
  return { ...opened, section };
}

test("the collector and its headers are saved, the headers kept out of the page, and a test trace is sent", async () => {
  const { page, section, problems, context } = await openTelemetry({});
  assert.equal(await section.getByTestId("cfg-telemetry-status").innerText(), "No traces are sent.");
  assert.equal(await section.getByTestId("cfg-telemetry-test").isDisabled(), true);
  assert.equal(await section.getByTestId("cfg-telemetry-content").isChecked(), false);

  await section.getByTestId("cfg-telemetry-endpoint").fill("http://localhost:4318");
  const headers = section.getByTestId("cfg-telemetry-headers");
  assert.equal(await headers.getAttribute("type"), "password");
  await headers.fill("authorization=Bearer%20secret-key");
  await section.getByRole("button", { name: "Save" }).click();
  await section.getByText("Saved. The next question uses it.").waitFor();
  const [saved] = await calls(page, "save_telemetry");
  assert.deepEqual(saved.form, { turned_off: false, endpoint: "http://localhost:4318", protocol: "http/protobuf", capture_content: false, headers: "authorization=Bearer%20secret-key" });
  assert.equal(await section.getByTestId("cfg-telemetry-status").innerText(), "Traces go to http://localhost:4318/v1/traces.");
  assert.equal(await headers.inputValue(), "");
  assert.equal(await section.getByText("Headers are kept in the keychain. Type new ones to replace them.").count(), 1);
  assert.ok(!(await page.content()).includes("secret-key"), "the stored headers are not in the page");

  await section.getByTestId("cfg-telemetry-test").click();
  await section.getByText(`The collector took the test trace 5f0c3a9e8d7b4c21a6e0f1b2c3d4e5f6.`).waitFor();
  await shot(page, "settings-telemetry");

  // Saving again without typing headers keeps the stored ones.
  await section.getByTestId("cfg-telemetry-content").check();
  await section.getByRole("button", { name: "Save" }).click();
  await page.waitForFunction(() => window.__mock.calls.filter((c) => c.cmd === "save_telemetry").length === 2);
  const second = (await calls(page, "save_telemetry"))[1];
  assert.equal(second.form.headers, undefined);
  assert.equal(second.form.capture_content, true);
  assert.deepEqual(problems, []);
  await context.close();
});

test("a collector that is down says so in a sentence (Chinese)", async () => {
  const telemetry = { active: true, turned_off: false, endpoint: "http://collector:4318", protocol: "http/protobuf", capture_content: false, headers_stored: false, sending_to: "http://collector:4318/v1/traces", environment: ["OTEL_SERVICE_NAME"], problem: null };
  const { page, section, context } = await openTelemetry({ telemetry, telemetryDown: true }, { locale: "zh-CN" });
  await section.getByText("以下环境变量已设置，优先于本页：OTEL_SERVICE_NAME。").waitFor();
  await section.getByTestId("cfg-telemetry-test").click();
  await section.getByText("测试链路未被接收：Traces could not be sent to http://collector:4318/v1/traces: the collector did not answer.").waitFor();
  await shot(page, "settings-telemetry-zh");
  await context.close();
});

test("a call's card and its History detail copy the question's trace id", async () => {
  const { page, problems, context } = await openApp(browser, { workspace });
  await page.getByRole("tab").first().waitFor();
  await page.evaluate(() => {
    // The page is not a secure context, so record what the copy fallback selects instead.
    window.__copied = [];
    const exec = document.execCommand.bind(document);
    document.execCommand = (command, ...rest) => {
      if (command === "copy") window.__copied.push(document.activeElement?.value ?? "");
      return exec(command, ...rest);
    };
    if (navigator.clipboard) navigator.clipboard.writeText = async (text) => void window.__copied.push(text);
  });
  const box = page.getByRole("textbox", { name: /Ask about/ });
  await box.fill("What does this project do?");
  await box.press("Enter");
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "send_message"));
  await page.evaluate((turn) => {
    const events = window.__mock.stream.answeredTurn().events.map((event) => ({ ...event, turn_id: turn }));
    window.__mock.deliver(events);
  }, TURN);
  await page.locator('.timeline-card.phase-success[data-call-id="call_read"] .card-head').click();
  const card = page.locator('.timeline-card[data-call-id="call_read"]');
  const copy = card.getByTestId("copy-trace-id");
  assert.equal(await copy.innerText(), "Copy trace id");
  await copy.click();
  await card.getByText("Trace id copied").waitFor();
  assert.deepEqual(await page.evaluate(() => window.__copied), [TRACE]);
  await shot(page, "copy-trace-id");

  const row = { id: "tc_1", conversation_id: "conv_1", turn_id: TURN, workspace: workspace.path, call_id: "call_read", round: 1, tool: "read_file", source: { kind: "builtin" }, description: "Read a text file of the workspace.", arguments: { path: "README.md" }, started_ms: Date.now() - 60_000, duration_ms: 8, status: "success", result_preview: "# Demo", result_size: 6, truncated_for_model: false, approval: { allowed: true, by: { kind: "policy" } } };
  await page.evaluate((row) => {
    window.__mock.config.history = [row];
  }, row);
  await page.getByRole("tab", { name: /History/ }).click();
  await page.locator('.history-row[data-id="tc_1"]').click();
  const detail = page.getByTestId("call-detail");
  await detail.getByTestId("copy-trace-id").click();
  await detail.getByText("Trace id copied").waitFor();
  assert.deepEqual(await page.evaluate(() => window.__copied), [TRACE, TRACE]);
  await shot(page, "history-copy-trace-id");
  assert.deepEqual(problems, []);
  await context.close();
});

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);

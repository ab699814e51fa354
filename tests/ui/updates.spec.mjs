// Updates in Chromium with the Rust side mocked (ui/tests/mock-updates.ts answers the commands
// and lets the spec drive an install's channel): the start-up check's newer version offered in a
// card over the window with what is new, Install and restart showing its bar and steps, a
// tampered signature refused in a sentence; Not now and Esc; the card in a narrow window with
// long notes; Settings → Updates saving the start-up check and Check now. Every state is checked
// with axe-core (WCAG 2.2 A and AA and best practice) in the light and dark themes, in English
// and Chinese, and screenshotted to target/screenshots/updates-*.png.
import assert from "node:assert/strict";
import { join } from "node:path";
import { axeViolations, launchBrowser, LOOKS, openApp, run, screenshots, test } from "./lib.mjs";

const browser = await launchBrowser();
const workspace = { path: "/home/me/demo", name: "demo", watched: true };

const SIGNATURE = "The update's signature does not match Tooltrail's key, so it was not installed. Nothing was changed.";
// A refused signature (code `signature`) is said in the window's language.
const SIGNATURE_ZH = "更新的签名与 Tooltrail 的密钥不符，因此没有安装。没有任何改动。";
const update = {
  version: "0.2.0",
  current_version: "0.1.0",
  notes: "## Highlights\n\n- Updates install from the window, after your yes.\n- History searches **twice as fast**.\n- Settings → Updates can turn the start-up check off.\n\nSee `tooltrail --help` for the new flags.",
  date: "2026-11-20T12:00:00Z",
};

const shot = (page, name) => page.screenshot({ path: join(screenshots, `updates-${name}.png`) });
const calls = (page, cmd) => page.evaluate((cmd) => window.__mock.calls.filter((c) => c.cmd === cmd).map((c) => c.args), cmd);

/** Fails with every fault axe finds in the page as it is now. */
async function axe(page, what) {
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe found problems in ${what}:\n  ${found.join("\n  ")}`);
}

const text = (look) =>
  look.zh
    ? { title: `Tooltrail ${update.version} 已发布`, install: "安装并重启", installing: "正在安装…", downloading: "正在下载… 3.1 MB / 12 MB", verifying: "正在检查签名…", tryAgain: "重试", close: "关闭", published: "发布于 2026年11月20日。" }
    : { title: `Tooltrail ${update.version} is available`, install: "Install and restart", installing: "Installing…", downloading: "Downloading… 3.1 MB of 12 MB", verifying: "Checking the signature…", tryAgain: "Try again", close: "Close", published: "Published November 20, 2026." };

for (const look of LOOKS) {
  test(`the start-up notice offers the new version, installs with its steps and refuses a tampered signature (${look.file})`, async () => {
    const words = text(look);
    const { page, problems, context } = await openApp(browser, { workspace, update }, look.options);
    const notice = page.getByRole("region", { name: words.title });
    await notice.waitFor();
    assert.deepEqual(await calls(page, "check_for_update"), [{ atStart: true }]);
    assert.ok((await notice.innerText()).includes(words.published));
    // The Markdown renderer loads on first use.
    await notice.locator(".update-notes li").first().waitFor();
    assert.equal(await notice.locator(".update-notes li").count(), 3);
    assert.equal(await notice.locator(".update-notes strong").innerText(), "twice as fast");
    // Shown without taking the focus from the composer or the page.
    assert.equal(await notice.evaluate((element) => element.contains(document.activeElement)), false);
    await axe(page, `the update notice (${look.file})`);
    await shot(page, `notice-${look.file}`);

    await notice.getByRole("button", { name: words.install }).click();
    await page.waitForFunction(() => window.__mock.install.started() === 1);
    await page.evaluate(() => window.__mock.install.step({ kind: "downloading", downloaded: 3_100_000, total: 12_400_000 }));
    const bar = notice.getByRole("progressbar");
    await bar.waitFor();
    assert.equal(await bar.evaluate((element) => element.value), 25);
    await notice.getByText(words.downloading).waitFor();
    assert.equal(await notice.getByTestId("update-install").innerText(), words.installing);
    await axe(page, `the update installing (${look.file})`);
    await shot(page, `installing-${look.file}`);

    await page.evaluate(() => window.__mock.install.step({ kind: "verifying" }));
    await notice.getByText(words.verifying).waitFor();
    await page.evaluate((sentence) => window.__mock.install.fail(sentence), SIGNATURE);
    const alert = notice.getByRole("alert");
    await alert.waitFor();
    assert.equal(await alert.innerText(), look.zh ? SIGNATURE_ZH : SIGNATURE);
    assert.equal(await bar.count(), 0);
    await notice.getByRole("button", { name: words.tryAgain }).waitFor();
    await axe(page, `the refused update (${look.file})`);
    await shot(page, `refused-${look.file}`);

    await notice.getByRole("button", { name: words.close }).click();
    await notice.waitFor({ state: "detached" });
    assert.deepEqual(problems, []);
    await context.close();
  });
}

test("Not now hides the notice for the run, across opening a folder, and Esc in the notice hides it too", async () => {
  const { page, problems, context } = await openApp(browser, { update });
  // The start screen: no folder yet.
  const notice = page.getByRole("region", { name: "Tooltrail 0.2.0 is available" });
  await notice.waitFor();
  await page.getByRole("heading", { level: 1 }).first().waitFor();
  await axe(page, "the update notice over the start screen");
  await shot(page, "notice-start-screen");
  await notice.getByRole("button", { name: "Not now" }).click();
  await notice.waitFor({ state: "detached" });
  await page.evaluate((workspace) => {
    window.__mock.config.workspace = workspace;
  }, workspace);
  await page.getByRole("button", { name: "Open folder…" }).first().click();
  await page.getByRole("tab").first().waitFor();
  // The notice stayed mounted: the start-up check was asked for once, and Not now holds.
  assert.deepEqual(await calls(page, "check_for_update"), [{ atStart: true }]);
  assert.equal(await notice.count(), 0, "Not now holds after a folder is opened");
  await context.close();

  // Esc, with the focus in the card (Tab reaches it first).
  const again = await openApp(browser, { workspace, update });
  const card = again.page.getByRole("region", { name: "Tooltrail 0.2.0 is available" });
  await card.waitFor();
  await card.getByRole("button", { name: "Not now" }).focus();
  await again.page.keyboard.press("Escape");
  await card.waitFor({ state: "detached" });
  assert.deepEqual([...problems, ...again.problems], []);
  await again.context.close();
});

test("in a narrow, short window the card fits, long notes scroll inside it and the buttons stay in view", async () => {
  const long = { ...update, notes: Array.from({ length: 40 }, (_, i) => `- Change number ${i + 1}: a line of the release notes that wraps in a narrow window.`).join("\n") };
  const { page, problems, context } = await openApp(browser, { workspace, update: long }, { viewport: { width: 420, height: 520 } });
  const notice = page.getByRole("region", { name: "Tooltrail 0.2.0 is available" });
  await notice.waitFor();
  const box = await notice.boundingBox();
  assert.ok(box.x >= 0 && box.y >= 0 && box.x + box.width <= 420 && box.y + box.height <= 520, `the card fits the window: ${JSON.stringify(box)}`);
  for (const name of ["Install and restart", "Not now"]) {
    const button = await notice.getByRole("button", { name }).boundingBox();
    assert.ok(button.y + button.height <= box.y + box.height && button.x + button.width <= box.x + box.width, `${name} is in view`);
  }
  const notes = notice.getByTestId("update-notes");
  await notes.locator("li").first().waitFor();
  assert.ok(await notes.evaluate((element) => element.scrollHeight > element.clientHeight), "the notes scroll");
  await shot(page, "notice-narrow");
  assert.deepEqual(problems, []);
  await context.close();
});

for (const look of [LOOKS[0], LOOKS[3]]) {
  test(`Settings → Updates saves the start-up check and Check now answers (${look.file})`, async () => {
    const { page, problems, context } = await openApp(browser, { workspace, updateNow: null }, look.options);
    await page.getByRole("tab").first().waitFor();
    await page.keyboard.press("Control+Comma");
    const section = page.getByTestId("cfg-section-updates");
    await section.getByTestId("cfg-updates").waitFor();
    await section.scrollIntoViewIfNeeded();
    const toggle = section.getByRole("switch");
    assert.equal(await toggle.isChecked(), true);
    assert.equal(await section.getByTestId("cfg-updates-version").innerText(), look.zh ? "当前是 Tooltrail 0.1.0。" : "This is Tooltrail 0.1.0.");
    await toggle.click();
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "save_update_check"));
    assert.deepEqual(await calls(page, "save_update_check"), [{ checkAtStart: false }]);
    assert.equal(await toggle.isChecked(), false);

    await section.getByTestId("cfg-updates-check").click();
    await section.getByText(look.zh ? "Tooltrail 0.1.0 已是最新版本。" : "Tooltrail 0.1.0 is up to date.").waitFor();
    assert.deepEqual(await calls(page, "check_for_update"), [{ atStart: true }, { atStart: false }]);
    await axe(page, `Settings → Updates (${look.file})`);
    await section.screenshot({ path: join(screenshots, `updates-settings-${look.file}.png`) });

    // A newer version found now is offered in place, the same way as at start.
    await page.evaluate((update) => {
      window.__mock.config.updateNow = update;
    }, update);
    await section.getByTestId("cfg-updates-check").click();
    const offer = section.getByRole("region", { name: text(look).title });
    await offer.waitFor();
    await offer.getByRole("button", { name: text(look).install }).click();
    await page.waitForFunction(() => window.__mock.install.started() === 1);
    await page.evaluate(() => window.__mock.install.step({ kind: "downloading", downloaded: 3_100_000, total: 12_400_000 }));
    await offer.getByText(text(look).downloading).waitFor();
    await axe(page, `Settings → Updates with a newer version installing (${look.file})`);
    await section.screenshot({ path: join(screenshots, `updates-settings-found-${look.file}.png`) });
    assert.deepEqual(problems, []);
    await context.close();
  });
}

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);

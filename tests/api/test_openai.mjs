// The official `openai` npm package against `tooltrail serve`: server-side tools, manual mode,
// streaming, and the errors (tool_not_found, a path escape, 401, 413, 429).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BIN = process.env.TOOLTRAIL_BIN_DIR ?? join(ROOT, "target", "debug");
const TOKEN = "api-test-token";

const READ_FILE = { type: "function", function: { name: "read_file", description: "读取文件内容",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } } };
const WEATHER = { type: "function", function: { name: "get_weather", description: "The weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
const READ_README = { tool_calls: [{ name: "read_file", arguments: { path: "README.md" } }] };

function firstLine(child) {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", (line) => (line.startsWith("listening on ")
      ? resolve(line.slice("listening on ".length))
      : reject(new Error(`unexpected first line: ${line}`))));
    child.once("exit", (code) => reject(new Error(`exited with ${code}`)));
  });
}

/** Starts the scripted model and `tooltrail serve`, runs `body`, stops both. */
async function withStack(replies, serveArgs, body) {
  const dir = mkdtempSync(join(tmpdir(), "tooltrail-api-"));
  const workspace = join(dir, "ws");
  mkdirSync(workspace);
  writeFileSync(join(workspace, "README.md"), "# Demo\nA demo project.\n");
  writeFileSync(join(dir, "script.json"), JSON.stringify(replies));
  const record = join(dir, "requests.jsonl");
  const env = { ...process.env, TOOLTRAIL_CONFIG_DIR: join(dir, "config"), TOOLTRAIL_DATA_DIR: join(dir, "data") };
  for (const name of ["TOOLTRAIL_BASE_URL", "TOOLTRAIL_MODEL", "TOOLTRAIL_API_KEY", "TOOLTRAIL_SERVE_TOKEN"]) delete env[name];
  const model = spawn(join(BIN, "scripted-model"), ["--script", join(dir, "script.json"), "--record", record], { env });
  const children = [model];
  try {
    const modelUrl = await firstLine(model);
    const server = spawn(join(BIN, "tooltrail"), ["serve", "--port", "0", "--token", TOKEN, "-w", workspace,
      "--base-url", modelUrl, "--model", "scripted", ...serveArgs], { env });
    children.push(server);
    const baseURL = `${await firstLine(server)}/v1`;
    const requests = () => readFileSync(record, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
      .filter((r) => r.path.endsWith("/chat/completions"));
    await body({ baseURL, requests, client: (key = TOKEN) => new OpenAI({ baseURL, apiKey: key, maxRetries: 0 }) });
  } finally {
    for (const child of children) child.kill("SIGTERM");
    await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", resolve)))));
    rmSync(dir, { recursive: true, force: true });
  }
}

const toolResults = (request) => request.body.messages.filter((m) => m.role === "tool").map((m) => m.content);

test("a known tool runs on the server and the model sees its result", () =>
  withStack([READ_README, { text: "It is a demo project." }], [], async ({ client, requests }) => {
    const r = await client().chat.completions.create({ model: "scripted", tools: [READ_FILE],
      messages: [{ role: "user", content: "What is this?" }] });
    assert.equal(r.choices[0].message.content, "It is a demo project.");
    assert.equal(r.choices[0].finish_reason, "stop");
    assert.deepEqual([r.tool_execution.executed, r.tool_execution.tools_called], [true, ["read_file"]]);
    assert.match(toolResults(requests()[1])[0], /A demo project\./);
  }));

test("streaming gives content, tool_call, tool_result and done", () =>
  withStack([READ_README, { text: "It is a demo project." }], [], async ({ client }) => {
    const stream = await client().chat.completions.create({ model: "scripted", tools: [READ_FILE], stream: true,
      messages: [{ role: "user", content: "What is this?" }] });
    const kinds = [];
    let text = "";
    let finish = null;
    for await (const chunk of stream) {
      if (kinds.at(-1) !== chunk.type) kinds.push(chunk.type);
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? "";
        assert.equal(choice.delta.tool_calls, undefined);
        finish = choice.finish_reason ?? finish;
      }
    }
    assert.deepEqual(kinds, ["content", "tool_call", "tool_result", "content", "done"]);
    assert.deepEqual([text, finish], ["It is a demo project.", "stop"]);
  }));

test("a path outside the workspace is refused", () =>
  withStack([{ tool_calls: [{ name: "read_file", arguments: { path: "/etc/passwd" } }] }, { text: "I may not read that." }], [],
    async ({ client, requests }) => {
      const r = await client().chat.completions.create({ model: "scripted", tools: [READ_FILE],
        messages: [{ role: "user", content: "Show /etc/passwd" }] });
      assert.equal(r.choices[0].message.content, "I may not read that.");
      assert.match(toolResults(requests()[1])[0], /^error \[outside_workspace\]/);
    }));

for (const stream of [false, true]) {
  test(`manual mode round trip${stream ? ", streamed" : ""}`, () =>
    withStack([{ tool_calls: [{ name: "get_weather", arguments: { city: "Beijing" } }] }, { text: "It is sunny in Beijing." }], [],
      async ({ client, requests }) => {
        const c = client();
        const messages = [{ role: "user", content: "Weather in Beijing?" }];
        let calls;
        let finish;
        if (stream) {
          const byIndex = new Map();
          for await (const chunk of await c.chat.completions.create({ model: "scripted", tools: [WEATHER], messages, stream })) {
            for (const choice of chunk.choices) {
              for (const call of choice.delta.tool_calls ?? []) byIndex.set(call.index, call);
              finish = choice.finish_reason ?? finish;
            }
          }
          calls = [...byIndex.values()];
        } else {
          const first = await c.chat.completions.create({ model: "scripted", tools: [WEATHER], messages });
          finish = first.choices[0].finish_reason;
          calls = first.choices[0].message.tool_calls;
        }
        assert.equal(finish, "tool_calls");
        assert.deepEqual(calls.map((call) => [call.function.name, call.function.arguments]), [["get_weather", '{"city":"Beijing"}']]);
        messages.push({ role: "assistant", content: null, tool_calls: [{ id: calls[0].id, type: "function",
          function: { name: "get_weather", arguments: calls[0].function.arguments } }] });
        messages.push({ role: "tool", tool_call_id: calls[0].id, content: "sunny, 25°C" });
        const second = await c.chat.completions.create({ model: "scripted", tools: [WEATHER], messages });
        assert.equal(second.choices[0].message.content, "It is sunny in Beijing.");
        assert.deepEqual(toolResults(requests()[1]), ["sunny, 25°C"]);
      }));
}

test("tool_not_found", () =>
  withStack([], [], async ({ client }) => {
    await assert.rejects(client().chat.completions.create({ model: "scripted", tools: [READ_FILE],
      messages: [{ role: "user", content: "hi" }], tool_choice: { type: "function", function: { name: "unknown_tool" } } }),
    (error) => error instanceof OpenAI.BadRequestError && error.code === "tool_not_found");
  }));

test("a wrong token is 401", () =>
  withStack([], [], async ({ client }) => {
    await assert.rejects(client("wrong").chat.completions.create({ model: "scripted", messages: [{ role: "user", content: "hi" }] }),
      (error) => error instanceof OpenAI.AuthenticationError && error.code === "invalid_api_key");
  }));

test("a body over the limit is 413", () =>
  withStack([], [], async ({ client }) => {
    await assert.rejects(client().chat.completions.create({ model: "scripted",
      messages: [{ role: "user", content: "x".repeat(5 * 1024 * 1024) }] }),
    (error) => error.status === 413 && error.code === "request_too_large");
  }));

test("beyond max-concurrent is 429 with Retry-After", () =>
  withStack([{ text: "a slow answer", delay_ms: 400 }], ["--max-concurrent", "1"], async ({ client, requests }) => {
    const slow = client().chat.completions.create({ model: "scripted", messages: [{ role: "user", content: "slow" }] });
    const deadline = Date.now() + 10_000;
    while (requests().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await assert.rejects(client().chat.completions.create({ model: "scripted", messages: [{ role: "user", content: "hi" }] }),
      (error) => error instanceof OpenAI.RateLimitError && error.headers.get("retry-after") === "1");
    await slow;
  }));

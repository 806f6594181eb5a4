// Unit tests of the OpenClaw extension (index.js) with a fake plugin API and the fake sidecar.
// Run: node --test tests/e2e/extension_unit.test.mjs   (env PYTHON = a python3 interpreter)
// tests/e2e/test_extension_unit.py runs this under pytest.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, chmodSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterEach, test } from "node:test";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "..", "..");
const INDEX = join(REPO, "resolver", "hosts", "openclaw", "extension", "index.js");
const FAKE = join(HERE, "fake_sidecar.py");
const PYTHON = process.env.PYTHON || "python3";
const GLOBAL_KEY = Symbol.for("openclaw-tool-resolver.sidecar");

const extension = await import(INDEX);
const plugin = extension.default;

function wrapper(dir) {
  const path = join(dir, "fake-python");
  writeFileSync(path, `#!/bin/sh\nexec "${PYTHON}" "${FAKE}" "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A fresh scratch dir + fake sidecar env for one test. */
function setup(mode = "fixed", tools = ["read", "web_search"]) {
  const dir = mkdtempSync(join(tmpdir(), "ext-unit-"));
  const log = join(dir, "frames.jsonl");
  process.env.FAKE_SIDECAR_MODE = mode;
  process.env.FAKE_SIDECAR_TOOLS = JSON.stringify(tools);
  process.env.FAKE_SIDECAR_LOG = log;
  process.env.FAKE_SIDECAR_DELAY_MS = "0";
  const frames = () =>
    existsSync(log)
      ? readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
      : [];
  return { dir, python: wrapper(dir), frames };
}

function fakeApi(pluginConfig, { mode = "full", withLifecycle = true } = {}) {
  const hooks = {};
  const disposers = [];
  const logs = [];
  const log = (level) => (msg) => logs.push(`${level}: ${msg}`);
  const api = {
    id: "openclaw-tool-resolver",
    registrationMode: mode,
    pluginConfig,
    logger: { info: log("info"), warn: log("warn"), error: log("error"), debug: log("debug") },
    on(name, handler, opts) {
      hooks[name] = { handler, opts };
    },
    commands: [],
    registerCommand(def) {
      this.commands.push(def);
    },
  };
  if (withLifecycle) {
    api.lifecycle = {
      onDispose(fn) {
        disposers.push(fn);
        return () => {};
      },
    };
  }
  return { api, hooks, logs, dispose: async () => Promise.all(disposers.map((fn) => fn())) };
}

const EVENT = { prompt: "read notes.txt", messages: [{ role: "user", content: "hi" }] };
const CTX = { agentId: "main", sessionId: "s1", sessionKey: "agent:main:main", runId: "r1" };

async function waitFor(pred, ms = 5000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

afterEach(() => {
  const manager = globalThis[GLOBAL_KEY];
  manager?.killNow?.();
  delete globalThis[GLOBAL_KEY];
});

test("registers before_prompt_build with a hook timeout above the sidecar deadline", () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python, llmTimeoutMs: 2000 });
  plugin.register(a.api);
  assert.deepEqual(Object.keys(a.hooks).sort(), ["after_tool_call", "before_prompt_build", "llm_input"]);
  assert.equal(a.hooks.before_prompt_build.opts.timeoutMs, 2000 + 1500 + 500);
});

test("default deadline is llmTimeoutMs 4000 + 1500; sidecarTimeoutMs overrides it", () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  assert.equal(a.hooks.before_prompt_build.opts.timeoutMs, 4000 + 1500 + 500);
  const b = fakeApi({ pythonPath: s.python, sidecarTimeoutMs: 900 });
  plugin.register(b.api);
  assert.equal(b.hooks.before_prompt_build.opts.timeoutMs, 1400);
});

test("enabled:false registers nothing and starts nothing", async () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python, enabled: false });
  plugin.register(a.api);
  assert.deepEqual(a.hooks, {});
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(s.frames().length, 0);
});

test("many register() calls share one child; configure is its first frame", async () => {
  const s = setup();
  const apis = [1, 2, 3].map(() => fakeApi({ pythonPath: s.python }));
  for (const a of apis) plugin.register(a.api);
  const results = await Promise.all(apis.map((a) => a.hooks.before_prompt_build.handler(EVENT, CTX)));
  for (const r of results) assert.deepEqual(r, { toolsAllow: ["read", "web_search"] });
  const frames = s.frames();
  assert.equal(frames.filter((f) => f.event === "start").length, 1);
  assert.equal(frames[1].method, "configure");
  assert.equal(frames.filter((f) => f.method === "resolve").length, 3);
  const resolveFrame = frames.find((f) => f.method === "resolve");
  assert.equal(resolveFrame.params.event.prompt, "read notes.txt");
  assert.deepEqual(resolveFrame.params.ctx, CTX);
});

test("configure carries OpenClaw's mcp.servers (name, enabled; declaration order) from api.config", async () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python });
  a.api.config = {
    mcp: { servers: { github: { command: "gh-mcp" }, off: { command: "x", enabled: false }, bad: 5 } },
  };
  plugin.register(a.api);
  await a.hooks.before_prompt_build.handler(EVENT, CTX);
  const configure = s.frames().find((f) => f.method === "configure");
  assert.deepEqual(configure.params.host, {
    mcpServers: [
      { name: "github", enabled: true },
      { name: "off", enabled: false },
    ],
    toolSearch: null,
  });
  assert.deepEqual(extension.mcpServerList(undefined), []);
  assert.deepEqual(extension.mcpServerList({ mcp: { servers: [] } }), []);
  const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`s${i}`, {}]));
  assert.equal(extension.mcpServerList({ mcp: { servers: many } }).length, 64);
  const hostile = { get mcp() { throw new Error("boom"); } };
  assert.deepEqual(extension.mcpServerList(hostile), []);
});

test("configure carries OpenClaw's tools.toolSearch (false, true, or null when unset)", async () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python });
  a.api.config = { tools: { toolSearch: false } };
  plugin.register(a.api);
  await a.hooks.before_prompt_build.handler(EVENT, CTX);
  const configure = s.frames().find((f) => f.method === "configure");
  assert.equal(configure.params.host.toolSearch, false);
  assert.equal(extension.toolSearchSetting({ tools: { toolSearch: true } }), true);
  assert.equal(extension.toolSearchSetting({ tools: {} }), null);
  assert.equal(extension.toolSearchSetting({ tools: { toolSearch: "yes" } }), null);
  assert.equal(extension.toolSearchSetting(undefined), null);
  const hostile = { get tools() { throw new Error("boom"); } };
  assert.equal(extension.toolSearchSetting(hostile), null);
});

test("each resolve carries the live config's host view: surface key, MCP servers, Tool Search", async () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python });
  let live = { tools: { toolSearch: false }, mcp: { servers: { github: { env: { T: "t1" } } } } };
  a.api.config = { tools: {} }; // the registration snapshot: stale once the config hot-reloads
  a.api.runtime = { version: "2026.9.6", config: { current: () => live } };
  plugin.register(a.api);
  await a.hooks.before_prompt_build.handler(EVENT, CTX);
  live = { ...live, mcp: { servers: { github: { env: { T: "t2" } } } } }; // a rotated token
  await a.hooks.before_prompt_build.handler(EVENT, { ...CTX, runId: "r2" });
  live = { ...live, plugins: { entries: { jira: { enabled: true } } } }; // another plugin
  await a.hooks.before_prompt_build.handler(EVENT, { ...CTX, runId: "r3" });
  const hosts = s.frames().filter((f) => f.method === "resolve").map((f) => f.params.host);
  assert.equal(hosts.length, 3);
  assert.deepEqual(hosts[0].mcpServers, [{ name: "github", enabled: true }]);
  assert.equal(hosts[0].toolSearch, false);
  assert.match(hosts[0].surfaceKey, /^[0-9a-f]{32}$/);
  assert.equal(hosts[1].surfaceKey, hosts[0].surfaceKey, "a secret's value is never read");
  assert.notEqual(hosts[2].surfaceKey, hosts[1].surfaceKey, "a config change changes the key");
  assert.ok(!JSON.stringify(s.frames()).includes("t1"), "no config value reaches a frame");
});

test("surfaceKey: version-aware, skips meta, secrets unread, bounded, never throws", () => {
  const key = extension.surfaceKey;
  const base = { tools: { deny: ["exec"] }, agents: { list: [{ id: "main" }] } };
  assert.equal(key(base, "v1"), key({ tools: { deny: ["exec"] }, agents: base.agents }, "v1"));
  assert.notEqual(key(base, "v1"), key(base, "v2"));
  assert.notEqual(key(base, "v1"), key({ ...base, tools: { deny: ["read"] } }, "v1"));
  assert.equal(key(base, "v1"), key({ ...base, meta: { lastTouchedAt: "now" } }, "v1"));
  assert.equal(key({ gateway: { auth: { token: "a" } } }), key({ gateway: { auth: { token: "b" } } }));
  assert.equal(key(undefined), null);
  assert.equal(key({ get tools() { throw new Error("boom"); } }), null);
  const cycle = { tools: {} };
  cycle.tools.self = cycle;
  assert.equal(key(cycle), null);
  assert.equal(key({ big: "x".repeat(9 * 1024 * 1024) }), null);
  assert.match(key({ nested: { meta: 1 } }), /^[0-9a-f]{32}$/); // only the top-level meta skipped
  assert.notEqual(key({ nested: { meta: 1 } }), key({ nested: { meta: 2 } }));
  assert.equal(extension.hostView({ runtime: { config: { current() { throw new Error("x"); } } } }), undefined);
  assert.equal(extension.hostView({}), undefined);
});

test("resolve params carry only the last 50 messages and JSON-safe ctx fields", async () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  const messages = Array.from({ length: 70 }, (_, i) => ({ role: "user", content: `m${i}` }));
  const ctx = { ...CTX, hookInvocation: { assertActive() {} }, trace: { x: 1 }, modelId: "m" };
  await a.hooks.before_prompt_build.handler({ prompt: "p", messages }, ctx);
  const frame = s.frames().find((f) => f.method === "resolve");
  assert.equal(frame.params.event.messages.length, 50);
  assert.equal(frame.params.event.messages[0].content, "m20");
  assert.equal(frame.params.event.messageCount, 70);
  assert.deepEqual(frame.params.ctx, { ...CTX, modelId: "m" });
});

test("cut never leaves half of a surrogate pair", () => {
  const text = "ab😀cd";
  for (let n = 0; n <= text.length; n++) {
    const piece = extension.cut(text, n);
    assert.ok(piece.isWellFormed(), `cut at ${n} is well formed`);
    assert.ok(piece.length <= n);
  }
});

test("a resolve frame is bounded: prompt head + tail, message text, no tool payloads", async () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  const huge = "x".repeat(1_000_000);
  const prompt = `HEAD ${"😀".repeat(40_000)} ${huge} TAIL`;
  const messages = [
    ...Array.from({ length: 5 }, () => ({ role: "user", content: huge })),
    {
      role: "assistant",
      content: [
        { type: "text", text: huge },
        { type: "toolCall", id: "c1", name: "read", arguments: { path: huge } },
        { type: "image", data: huge },
      ],
      tool_calls: [{ id: "c2", type: "function", function: { name: "exec", arguments: huge } }],
    },
    { role: "toolResult", toolCallId: "c1", content: [{ type: "text", text: huge }] },
  ];
  assert.notEqual(await a.hooks.before_prompt_build.handler({ prompt, messages }, CTX), null);
  const frame = s.frames().find((f) => f.method === "resolve");
  const event = frame.params.event;
  assert.ok(event.prompt.length <= 64 * 1024 + 8, `prompt ${event.prompt.length} chars`);
  assert.ok(event.prompt.startsWith("HEAD ") && event.prompt.endsWith(" TAIL"));
  assert.ok(event.prompt.isWellFormed());
  assert.equal(event.messages.length, 7);
  for (const m of event.messages) assert.ok(JSON.stringify(m).length < 5000, m.role);
  const assistant = event.messages[5];
  assert.deepEqual(assistant.content[1], { type: "toolCall", id: "c1", name: "read" });
  assert.deepEqual(assistant.content[2], { type: "image" });
  assert.deepEqual(assistant.tool_calls, [{ id: "c2", type: "function", function: { name: "exec" } }]);
  assert.equal(event.messages[6].toolCallId, "c1");
});

test("a frame still too big after slimming loses its oldest messages first", () => {
  const big = (i) => ({ role: "user", content: `${i}:${"y".repeat(500_000)}` });
  const frame = { id: "1.1", method: "resolve", params: { event: { prompt: "p", messages: Array.from({ length: 20 }, (_, i) => big(i)) } } };
  const line = extension.encodeWithin(frame);
  assert.ok(line.length <= 4 * 1024 * 1024 + 1);
  const sent = JSON.parse(line).params.event.messages;
  assert.ok(sent.length > 0 && sent.length < 20);
  assert.ok(sent[sent.length - 1].content.startsWith("19:"), "the newest message is kept");
});

test("every frame the extension writes has a string id; a reply with a non-string id retires the child", async () => {
  const s = setup("wrong_id");
  const a = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  const started = Date.now();
  assert.equal(await a.hooks.before_prompt_build.handler(EVENT, CTX), undefined);
  assert.ok(Date.now() - started < 4000, "abstained at once, not at the deadline");
  for (const f of s.frames().filter((f) => f.event === "request")) {
    assert.equal(typeof f.id, "string");
  }
  assert.ok(a.logs.some((l) => l.includes("non-frame on stdout")), a.logs.join("\n"));
});

for (const [name, tools] of [
  ["a string", "read"],
  ["a non-string item", ["read", 3]],
  ["an empty name", ["read", ""]],
  ["an object", { read: true }],
]) {
  test(`a toolsAllow that is ${name} becomes undefined (abstain), never a malformed value`, async () => {
    const s = setup("bad_result", tools);
    const a = fakeApi({ pythonPath: s.python });
    plugin.register(a.api);
    assert.equal(await a.hooks.before_prompt_build.handler(EVENT, CTX), undefined);
  });
}

test("null toolsAllow abstains; [] is passed through (the sidecar's explicit choice)", async () => {
  let s = setup("fixed", null);
  let a = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  assert.equal(await a.hooks.before_prompt_build.handler(EVENT, CTX), undefined);
  globalThis[GLOBAL_KEY].killNow();
  delete globalThis[GLOBAL_KEY];
  s = setup("fixed", []);
  a = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  assert.deepEqual(await a.hooks.before_prompt_build.handler(EVENT, CTX), { toolsAllow: [] });
});

test("an error frame abstains", async () => {
  const s = setup("error");
  const a = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  assert.equal(await a.hooks.before_prompt_build.handler(EVENT, CTX), undefined);
});

test("a failed configure retires the child before it answers anything with defaults", async () => {
  const s = setup("configure_error");
  const a = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  // The fake answers configure with an error and the pipelined resolve with a decision.
  assert.equal(await a.hooks.before_prompt_build.handler(EVENT, CTX), undefined);
  assert.ok(a.logs.some((l) => l.includes("configure failed (invalid_config: llmTimeoutMs: bad)")));
});

test("a reply written just before the child exits is still delivered", async () => {
  const s = setup("exit_after_resolve");
  const a = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  assert.deepEqual(await a.hooks.before_prompt_build.handler(EVENT, CTX), {
    toolsAllow: ["read", "web_search"],
  });
});

test("a hung resolve abstains at the deadline, then a fresh child is started", async () => {
  const s = setup("hang");
  const a = fakeApi({ pythonPath: s.python, sidecarTimeoutMs: 400 });
  plugin.register(a.api);
  const t0 = Date.now();
  assert.equal(await a.hooks.before_prompt_build.handler(EVENT, CTX), undefined);
  const took = Date.now() - t0;
  assert.ok(took >= 390 && took < 1500, `took ${took} ms`);
  assert.ok(await waitFor(() => s.frames().filter((f) => f.event === "start").length >= 2));
  assert.ok(a.logs.some((l) => l.includes("resolve timed out after 400 ms")));
});

test("a crash at start abstains at once and backs off instead of respawning in a loop", async () => {
  const s = setup("crash");
  const a = fakeApi({ pythonPath: s.python, sidecarTimeoutMs: 5000 });
  plugin.register(a.api);
  const t0 = Date.now();
  for (let i = 0; i < 5; i++) {
    assert.equal(await a.hooks.before_prompt_build.handler(EVENT, CTX), undefined);
  }
  assert.ok(Date.now() - t0 < 3000, "crashes must not wait for the deadline");
  const starts = s.frames().filter((f) => f.event === "start").length;
  assert.ok(starts >= 2 && starts <= 4, `started ${starts} times`);
  assert.ok(a.logs.some((l) => l.includes("fake sidecar: crashing at start")));
});

test("garbage on stdout abstains at once", async () => {
  const s = setup("garbage");
  const a = fakeApi({ pythonPath: s.python, sidecarTimeoutMs: 10000 });
  plugin.register(a.api);
  const t0 = Date.now();
  assert.equal(await a.hooks.before_prompt_build.handler(EVENT, CTX), undefined);
  assert.ok(Date.now() - t0 < 3000);
});

test("a missing interpreter abstains", async () => {
  setup();
  const a = fakeApi({ pythonPath: "/nonexistent/python3" });
  plugin.register(a.api);
  assert.equal(await a.hooks.before_prompt_build.handler(EVENT, CTX), undefined);
});

test("observe_surface carries the words of each tool's parameter schema, never the schema", async () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  const parameters = {
    type: "object",
    properties: {
      subCommand: { type: "string", enum: ["history", "undo"], description: "Rollout subcommand" },
      secretToken: { type: "string", default: "sk-should-not-travel" },
    },
  };
  a.hooks.llm_input.handler(
    { runId: "r1", sessionId: "s1", prompt: "p", tools: [{ name: "kubectl_rollout", description: "d", parameters }] },
    CTX,
  );
  assert.ok(await waitFor(() => s.frames().some((f) => f.method === "observe_surface")));
  const [tool] = s.frames().find((f) => f.method === "observe_surface").params.tools;
  assert.equal(tool.parameters, "subCommand Rollout subcommand history undo secretToken");
  assert.ok(!JSON.stringify(tool).includes("sk-should-not-travel"), "defaults are not words");
  assert.equal(extension.schemaWords({ properties: { x: { enum: Array(100).fill("y".repeat(50)) } } }).length <= 1500, true);
});

test("llm_input and after_tool_call send fire-and-forget observations", async () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  const ret1 = a.hooks.llm_input.handler(
    {
      runId: "r1",
      sessionId: "s1",
      provider: "mock",
      model: "mock-model",
      prompt: "p",
      historyMessages: [],
      imagesCount: 0,
      tools: [{ name: "read", description: "Read a file", parameters: {}, execute() {} }, { bad: 1 }],
    },
    CTX,
  );
  const ret2 = a.hooks.after_tool_call.handler(
    { toolName: "read", params: { path: "x" }, runId: "r1", toolCallId: "c1", result: "secret", durationMs: 5 },
    { ...CTX, toolName: "read", toolCallId: "c1" },
  );
  assert.equal(ret1, undefined);
  assert.equal(ret2, undefined);
  assert.ok(await waitFor(() => s.frames().filter((f) => f.method?.startsWith("observe_")).length === 2));
  const surface = s.frames().find((f) => f.method === "observe_surface");
  assert.deepEqual(surface.params.tools, [{ name: "read", description: "Read a file" }]);
  const calls = s.frames().find((f) => f.method === "observe_tool_calls");
  assert.deepEqual(calls.params.calls, [{ name: "read", ok: true, toolCallId: "c1", durationMs: 5 }]);
  assert.ok(!JSON.stringify(calls).includes("secret"), "tool params/results are not forwarded");
});

test("dispose stops the child only when the last registration goes", async () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python });
  const b = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  plugin.register(b.api);
  await a.hooks.before_prompt_build.handler(EVENT, CTX);
  const manager = globalThis[GLOBAL_KEY];
  const first = manager.child.proc;
  await a.dispose();
  assert.equal(manager.child?.proc, first, "still in use by b");
  await b.dispose();
  assert.equal(manager.child, undefined);
  assert.ok(await waitFor(() => first.exitCode !== null || first.signalCode !== null));
  assert.ok(await waitFor(() => s.frames().some((f) => f.event === "eof")), "child saw stdin EOF");
});

test("a host without api.lifecycle still works", async () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python }, { withLifecycle: false });
  plugin.register(a.api);
  assert.deepEqual(await a.hooks.before_prompt_build.handler(EVENT, CTX), {
    toolsAllow: ["read", "web_search"],
  });
});

test("a changed config restarts the child with the new configure", async () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python, llmModel: "one" });
  plugin.register(a.api);
  await a.hooks.before_prompt_build.handler(EVENT, CTX);
  const b = fakeApi({ pythonPath: s.python, llmModel: "two" });
  plugin.register(b.api);
  await b.hooks.before_prompt_build.handler(EVENT, CTX);
  const configures = s.frames().filter((f) => f.method === "configure");
  assert.deepEqual(
    configures.map((f) => f.params.config.llmModel),
    ["one", "two"],
  );
});

test("cli-metadata and setup-only loads register nothing", () => {
  const s = setup();
  for (const mode of ["cli-metadata", "setup-only"]) {
    const a = fakeApi({ pythonPath: s.python }, { mode });
    plugin.register(a.api);
    assert.deepEqual(a.hooks, {});
  }
});

test("a one-shot process exits promptly while the sidecar is alive (child and pipes unref'd)", () => {
  const s = setup();
  const script = `
    const plugin = (await import(${JSON.stringify(INDEX)})).default;
    const hooks = {};
    plugin.register({ registrationMode: "full", pluginConfig: { pythonPath: ${JSON.stringify(s.python)} },
      logger: console, on: (n, h) => { hooks[n] = h; } });
    const r = await hooks.before_prompt_build({ prompt: "x", messages: [] }, {});
    console.log(JSON.stringify(r));
  `;
  const t0 = Date.now();
  const out = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: 20000,
    env: process.env,
  });
  const took = Date.now() - t0;
  assert.equal(out.status, 0, out.stderr);
  // logDecisions (default true) logs its info line through this logger (console) first.
  const last = out.stdout.trim().split("\n").at(-1);
  assert.equal(last, JSON.stringify({ toolsAllow: ["read", "web_search"] }));
  assert.ok(took < 5000, `exited after ${took} ms`);
});

test("logDecisions defaults to true (one info line per turn); false turns it off", () => {
  assert.equal(extension.normalizeConfig({}).logDecisions, true);
  assert.equal(extension.normalizeConfig({ logDecisions: false }).logDecisions, false);
});

test("/resolver refresh and /resolver clear send the sidecar's controls for the session", async () => {
  const s = setup();
  const a = fakeApi({ pythonPath: s.python });
  plugin.register(a.api);
  const [command] = a.api.commands;
  assert.equal(command.name, "resolver");
  assert.equal(command.acceptsArgs, true);
  const session = { sessionKey: "agent:main:main", sessionId: "s1", channel: "webchat" };
  const refreshed = await command.handler({ ...session, args: "refresh" });
  assert.match(refreshed.text, /next turn keeps the full tool surface/);
  const cleared = await command.handler({ ...session, args: "clear all" });
  assert.match(cleared.text, /cleared 1 reusable decision\(s\) \(all sessions\)/);
  const help = await command.handler({ ...session, args: "" });
  assert.match(help.text, /\/resolver refresh/);
  const orphan = await command.handler({ args: "refresh", channel: "cli" });
  assert.match(orphan.text, /no session/);
  const frames = s.frames().filter((f) => f.method === "refresh" || f.method === "clear_reuse");
  assert.deepEqual(
    frames.map((f) => [f.method, f.params]),
    [
      ["refresh", { ctx: { sessionId: "s1", sessionKey: "agent:main:main" } }],
      ["clear_reuse", { all: true }],
    ],
  );
});

// openclaw-tool-resolver: the OpenClaw side of the tool-surface resolver.
//
// One long-lived Python child (`<pythonPath> -m resolver.hosts.openclaw`) decides, once per
// turn, which tools the primary model needs. This file only moves frames: newline-delimited
// JSON over the child's stdio (docs/openclaw-protocol.md). No npm dependencies.
//
// Fail-open is the rule: a crash, a timeout, garbage on stdout, an error frame or a malformed
// answer makes the before_prompt_build hook return `undefined` (no narrowing). It never returns
// a malformed `toolsAllow` (OpenClaw turns one into `[]`, which strips every optional tool).

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { homedir, tmpdir } from "node:os";

const PLUGIN_ID = "openclaw-tool-resolver";
const PLUGIN_NAME = "Tool Resolver";
const PLUGIN_DESCRIPTION =
  "Sends the primary model only the tools a turn needs (before_prompt_build toolsAllow), " +
  "decided by a local Python sidecar; fails open.";

// Bump when the manager's shape or behaviour changes: a reloaded copy of this file with a
// different version retires the old manager instead of reusing its code.
const MANAGER_VERSION = 1;
const GLOBAL_KEY = Symbol.for("openclaw-tool-resolver.sidecar");

const SIDECAR_MODULE = "resolver.hosts.openclaw";
const DEFAULT_PYTHON = "python3";
const DEFAULT_LLM_TIMEOUT_MS = 4000;
const SIDECAR_MARGIN_MS = 1500; // sidecar deadline = llmTimeoutMs + this
const HOOK_MARGIN_MS = 500; // host hook timeout = sidecar deadline + this
const MAX_MESSAGES = 50; // most recent session messages passed to `resolve`
// What a `resolve` frame may carry (docs/openclaw-protocol.md, "Frame size"): the sidecar cuts
// further (resolver/_limits.py) but a frame must never be big enough to stall the pipe.
const MAX_PROMPT_CHARS = 64 * 1024; // first 48 Ki + last 16 Ki characters
const MAX_TEXT_CHARS = 4000; // per message text (what the sidecar reads of it)
const MAX_PARTS = 64; // content parts / tool calls per message
const MAX_ID_CHARS = 256;
const MAX_DESCRIPTION_CHARS = 8000; // per tool description in observe_surface
const MAX_PARAMETER_CHARS = 1500; // per tool: the words of its parameter schema
const MAX_TOOLS = 10000;
const MAX_MCP_SERVERS = 64; // mcp.servers entries sent to the sidecar (its MAX_SERVERS)
const MAX_FRAME_CHARS = 4 * 1024 * 1024; // oldest messages are dropped until a frame fits
const MAX_LINE_BYTES = 16 * 1024 * 1024;
const STDERR_TAIL_LINES = 20;
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 60_000;
const STOP_GRACE_MS = 1000;
const CONFIGURE_TIMEOUT_MS = 10_000;
const EXIT_DRAIN_MS = 100;
// The surface key: a fingerprint of OpenClaw's live config (docs/openclaw-protocol.md).
const KEY_SKIPPED = new Set(["meta", "wizard"]); // top-level parts rewritten by every write
const KEY_SECRET = /key|token|secret|passw|auth|credential|cookie|env|header/i; // values unread
const MAX_KEY_CHARS = 8 * 1024 * 1024; // a bigger config gets no key (the age rule applies)
const MAX_KEY_NAMES = 10_000; // remembered secret-name tests

// Context fields forwarded to the sidecar. Everything else in ctx (functions, trace objects,
// channel details, sender identities) stays in the host.
const CTX_FIELDS = [
  "runId",
  "jobId",
  "agentId",
  "sessionKey",
  "sessionId",
  "workspaceDir",
  "activeProjectKeys",
  "modelProviderId",
  "modelId",
  "messageProvider",
  "channel",
  "channelId",
  "accountId",
  "trigger",
  "contextTokenBudget",
];

function isPlainObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isToolsAllow(value) {
  return Array.isArray(value) && value.every((v) => typeof v === "string" && v.length > 0);
}

function positiveInt(value) {
  return typeof value === "number" && Number.isFinite(value) && value > 0
    ? Math.floor(value)
    : undefined;
}

/** Plugin config -> the few settings this file acts on (the sidecar reads the rest). */
export function normalizeConfig(raw) {
  const config = isPlainObject(raw) ? raw : {};
  const llmTimeoutMs = positiveInt(config.llmTimeoutMs) ?? DEFAULT_LLM_TIMEOUT_MS;
  const sidecarTimeoutMs = positiveInt(config.sidecarTimeoutMs) ?? llmTimeoutMs + SIDECAR_MARGIN_MS;
  return {
    raw: config,
    enabled: config.enabled !== false,
    logDecisions: config.logDecisions !== false, // default true: one short info line per turn
    pythonPath:
      typeof config.pythonPath === "string" && config.pythonPath.trim()
        ? config.pythonPath.trim()
        : DEFAULT_PYTHON,
    llmTimeoutMs,
    sidecarTimeoutMs,
    hookTimeoutMs: sidecarTimeoutMs + HOOK_MARGIN_MS,
  };
}

function pickCtx(ctx) {
  const out = {};
  if (!isPlainObject(ctx)) return out;
  for (const key of CTX_FIELDS) {
    const value = ctx[key];
    if (value === undefined || value === null) continue;
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      out[key] = value;
    } else if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
      out[key] = [...value];
    }
  }
  return out;
}

/** `text` cut to at most `limit` UTF-16 units, never in the middle of a surrogate pair. */
export function cut(text, limit) {
  if (typeof text !== "string") return "";
  if (text.length <= limit) return text;
  let end = limit;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1; // keep a pair whole: drop its first half
  return text.slice(0, end);
}

function cutPrompt(prompt) {
  if (prompt.length <= MAX_PROMPT_CHARS) return prompt;
  const tailChars = MAX_PROMPT_CHARS / 4;
  let tailStart = prompt.length - tailChars;
  const code = prompt.charCodeAt(tailStart);
  if (code >= 0xdc00 && code <= 0xdfff) tailStart += 1; // do not start on a pair's second half
  return `${cut(prompt, MAX_PROMPT_CHARS - tailChars)}\n[…]\n${prompt.slice(tailStart)}`;
}

function slimScalar(value, limit) {
  if (typeof value === "string") return cut(value, limit);
  if (typeof value === "number" || typeof value === "boolean") return value;
  return undefined;
}

function slimFields(raw, keys) {
  const out = {};
  for (const key of keys) {
    const value = slimScalar(raw[key], MAX_ID_CHARS);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

const PART_KEYS = ["type", "id", "name", "tool_use_id", "toolCallId"];
const CALL_KEYS = ["id", "type", "name"];

/**
 * Only what the sidecar reads of a message: role, ids, tool-call names, and text cut to
 * MAX_TEXT_CHARS. Tool arguments, tool results, images and anything else stay in the host.
 */
export function slimMessage(message) {
  if (!isPlainObject(message)) return undefined;
  const out = slimFields(message, ["role", "toolCallId", "tool_call_id", "name"]);
  const content = message.content;
  if (typeof content === "string") {
    out.content = cut(content, MAX_TEXT_CHARS);
  } else if (Array.isArray(content)) {
    let budget = MAX_TEXT_CHARS;
    out.content = [];
    for (const part of content.slice(0, MAX_PARTS)) {
      if (typeof part === "string") {
        out.content.push(cut(part, Math.max(0, budget)));
        budget -= part.length;
      } else if (isPlainObject(part)) {
        const slim = slimFields(part, PART_KEYS);
        if (typeof part.text === "string") {
          slim.text = cut(part.text, Math.max(0, budget));
          budget -= part.text.length;
        }
        out.content.push(slim);
      }
    }
  }
  const calls = message.tool_calls ?? message.toolCalls;
  if (Array.isArray(calls)) {
    out.tool_calls = calls.slice(0, MAX_PARTS).filter(isPlainObject).map((call) => {
      const slim = slimFields(call, CALL_KEYS);
      if (isPlainObject(call.function)) {
        const name = slimScalar(call.function.name, MAX_ID_CHARS);
        slim.function = name === undefined ? {} : { name };
      }
      return slim;
    });
  }
  return out;
}

export function pickEvent(event) {
  const ev = isPlainObject(event) ? event : {};
  const messages = Array.isArray(ev.messages) ? ev.messages : [];
  const out = {
    prompt: typeof ev.prompt === "string" ? cutPrompt(ev.prompt) : "",
    messages: messages
      .slice(-MAX_MESSAGES)
      .map(slimMessage)
      .filter((m) => m !== undefined),
    messageCount: messages.length,
  };
  if (typeof ev.currentUserMessage === "string") {
    out.currentUserMessage = cut(ev.currentUserMessage, MAX_TEXT_CHARS);
  }
  if (typeof ev.currentUserMessageId === "string") {
    out.currentUserMessageId = cut(ev.currentUserMessageId, MAX_ID_CHARS);
  }
  return out;
}

/** JSON.stringify that survives BigInt and cycles (dropping what it cannot encode). */
function encodeFrame(frame) {
  const seen = new WeakSet();
  return JSON.stringify(frame, (_key, value) => {
    if (typeof value === "bigint") return value.toString();
    if (typeof value === "function" || typeof value === "symbol") return undefined;
    if (typeof value === "object" && value !== null) {
      if (seen.has(value)) return undefined;
      seen.add(value);
    }
    return value;
  });
}

/**
 * The frame as one line of at most MAX_FRAME_CHARS: a `resolve` frame that is still too big
 * after slimming loses its oldest messages first (then all of them). Throws when even that
 * does not fit (the call then abstains).
 */
export function encodeWithin(frame) {
  let line = encodeFrame(frame);
  const event = frame?.params?.event;
  if (line.length > MAX_FRAME_CHARS && event && Array.isArray(event.messages)) {
    const messages = event.messages;
    let keep = messages.length;
    while (line.length > MAX_FRAME_CHARS && keep > 0) {
      keep = Math.floor(keep / 2);
      event.messages = messages.slice(messages.length - keep);
      line = encodeFrame(frame);
    }
  }
  if (line.length > MAX_FRAME_CHARS) throw new Error(`frame over ${MAX_FRAME_CHARS} characters`);
  return `${line}\n`;
}

/**
 * The words of a tool's parameter schema — property names, enum values, short property
 * descriptions — at most MAX_PARAMETER_CHARS (resolver/_text.py schema_text does the same in
 * Python). The sidecar's offline classifier matches them; the schema itself stays in the host.
 */
export function schemaWords(schema) {
  const parts = [];
  let size = 0;
  const add = (text) => {
    if (size >= MAX_PARAMETER_CHARS) return false;
    parts.push(text);
    size += text.length + 1;
    return true;
  };
  const walk = (node, depth) => {
    if (depth > 6 || size >= MAX_PARAMETER_CHARS || !isPlainObject(node)) return;
    if (isPlainObject(node.properties)) {
      for (const [name, sub] of Object.entries(node.properties).slice(0, 64)) {
        if (!add(name)) return;
        if (isPlainObject(sub)) {
          if (typeof sub.description === "string" && sub.description) add(cut(sub.description, 160));
          if (Array.isArray(sub.enum)) {
            add(
              sub.enum
                .slice(0, 32)
                .filter((v) => typeof v === "string" || typeof v === "number")
                .join(" "),
            );
          }
          walk(sub, depth + 1);
        }
      }
    }
    for (const key of ["items", "anyOf", "oneOf", "allOf"]) {
      const sub = node[key];
      for (const item of Array.isArray(sub) ? sub : [sub]) walk(item, depth + 1);
    }
  };
  try {
    walk(schema, 0);
  } catch {
    // a schema that cannot be walked contributes no words
  }
  return cut(parts.join(" "), MAX_PARAMETER_CHARS);
}

/**
 * OpenClaw's `mcp.servers` (from `api.config`, the host's whole config) as `{name, enabled}`
 * in declaration order, at most MAX_MCP_SERVERS. OpenClaw 2026.9.6's `llm_input` does not list
 * MCP tools, so the sidecar keeps the full surface while a server's tools are unknown (see
 * `resolver openclaw sync-mcp`). Never throws: a config it cannot read yields [].
 */
export function mcpServerList(hostConfig) {
  try {
    const servers = hostConfig?.mcp?.servers;
    if (!isPlainObject(servers)) return [];
    const out = [];
    for (const [name, entry] of Object.entries(servers)) {
      if (!isPlainObject(entry) || !name || name.length > 200) continue;
      out.push({ name, enabled: entry.enabled !== false });
      if (out.length >= MAX_MCP_SERVERS) break;
    }
    return out;
  } catch {
    return [];
  }
}

/**
 * OpenClaw's `tools.toolSearch` (from `api.config`): `false` (off), `true` (code mode), or
 * `null` when unset (on by default in 2026.9.x) or unreadable. With it on, `toolsAllow` bounds
 * Tool Search's catalog and the sidecar widens its answer (`searchCatalogSize`). Never throws.
 */
export function toolSearchSetting(hostConfig) {
  try {
    const value = hostConfig?.tools?.toolSearch;
    return typeof value === "boolean" ? value : null;
  } catch {
    return null;
  }
}

const secretNames = new Map(); // key name -> KEY_SECRET matches it (names repeat across turns)

function secretName(name) {
  let secret = secretNames.get(name);
  if (secret === undefined) {
    secret = KEY_SECRET.test(name);
    if (secretNames.size >= MAX_KEY_NAMES) secretNames.clear();
    secretNames.set(name, secret);
  }
  return secret;
}

/**
 * A fingerprint of the parts of OpenClaw's config that can change its tool surface (plugins,
 * tools, MCP servers, agents, channels...: everything but `meta`/`wizard`), plus the OpenClaw
 * version: the first 32 hex digits of a SHA-256 over the config's JSON. The values of
 * secret-like keys (`apiKey`, `token`, `env`, `headers`, ...) are replaced before they are
 * serialised, so a rotated credential changes nothing and no credential reaches the hash.
 * Key order counts (a reordered file costs one refresh). Null when the config cannot be
 * serialised (a cycle, too deep) or its JSON is over MAX_KEY_CHARS. Never throws.
 */
export function surfaceKey(hostConfig, version) {
  try {
    if (!isPlainObject(hostConfig)) return null;
    const json = JSON.stringify(hostConfig, function replace(name, value) {
      if (name === "") return value;
      if (this === hostConfig && KEY_SKIPPED.has(name)) return undefined;
      return secretName(name) ? "*" : value;
    });
    if (typeof json !== "string" || json.length > MAX_KEY_CHARS) return null;
    const head = `openclaw ${typeof version === "string" ? version : "?"}\n`;
    return createHash("sha256").update(head).update(json).digest("hex").slice(0, 32);
  } catch {
    return null;
  }
}

const hostViews = new WeakMap(); // config snapshot -> its host view (the snapshot is reused)

/**
 * What the sidecar needs to know of OpenClaw's live config this turn: the surface key, the MCP
 * servers and the Tool Search setting. `tools`, `mcp` and `agents` changes hot-apply without
 * registering plugins again, so this is read per turn (`api.runtime.config.current()`, the
 * registration snapshot when the host has no such call). Never throws.
 */
export function hostView(api) {
  try {
    let config;
    try {
      config = api?.runtime?.config?.current?.();
    } catch {
      config = undefined;
    }
    if (!isPlainObject(config)) config = api?.config;
    if (!isPlainObject(config)) return undefined;
    const cached = hostViews.get(config);
    if (cached) return cached;
    const view = {
      surfaceKey: surfaceKey(config, api?.runtime?.version),
      mcpServers: mcpServerList(config),
      toolSearch: toolSearchSetting(config),
    };
    hostViews.set(config, view);
    return view;
  } catch {
    return undefined;
  }
}

function describeTools(tools) {
  if (!Array.isArray(tools)) return undefined;
  const out = [];
  for (const tool of tools) {
    if (!isPlainObject(tool) && typeof tool !== "function") continue;
    const name = tool.name;
    if (typeof name !== "string" || !name) continue;
    const description = typeof tool.description === "string" ? tool.description : "";
    const entry = { name, description: cut(description, MAX_DESCRIPTION_CHARS) };
    const parameters = schemaWords(tool.parameters ?? tool.inputSchema);
    if (parameters) entry.parameters = parameters;
    out.push(entry);
    if (out.length >= MAX_TOOLS) break;
  }
  return out;
}

function fallbackLogger() {
  const write = (level) => (msg) => {
    try {
      process.stderr.write(`[${PLUGIN_ID}] ${level}: ${msg}\n`);
    } catch {
      // nothing left to do
    }
  };
  return { info: () => {}, debug: () => {}, warn: write("warn"), error: write("error") };
}

/**
 * Owns the one Python child of this Node process. Lives on globalThis because register()
 * runs several times per process (and a reloaded plugin copy evaluates this file again).
 */
class SidecarManager {
  constructor() {
    this.version = MANAGER_VERSION;
    this.settings = normalizeConfig({});
    this.configKey = undefined;
    this.logger = fallbackLogger();
    this.child = undefined; // {proc, gen, buf, stderrTail, expectedExit, startedAt}
    this.gen = 0;
    this.seq = 0;
    this.pending = new Map(); // id -> {child, method, finish, timer}
    this.refs = 0;
    this.failures = 0;
    this.nextSpawnAt = 0;
    this.exitHookInstalled = false;
    this.stopping = new Set(); // children told to stop that have not exited yet
  }

  // ---- configuration and lifetime -------------------------------------------------------

  /** Adopt the latest registration's config and logger; a changed config restarts the child. */
  acquire(settings, logger) {
    this.refs += 1;
    if (logger) this.logger = logger;
    const key = encodeFrame({
      config: settings.raw,
      mcpServers: settings.mcpServers ?? [],
      toolSearch: settings.toolSearch ?? null,
    });
    if (this.configKey !== undefined && key !== this.configKey && this.child) {
      this.logger.info?.(`[${PLUGIN_ID}] config changed; restarting the sidecar`);
      this.stopChild("config changed");
      this.failures = 0;
      this.nextSpawnAt = 0;
    }
    this.configKey = key;
    this.settings = settings;
    if (!this.exitHookInstalled) {
      this.exitHookInstalled = true;
      process.once("exit", () => this.killNow());
    }
  }

  release() {
    this.refs = Math.max(0, this.refs - 1);
    if (this.refs === 0) this.stopChild("plugin disposed");
  }

  /** Start the child now (if allowed) so the first turn does not pay for interpreter start-up. */
  warm() {
    this.ensureChild();
  }

  ensureChild() {
    if (this.child) return this.child;
    if (Date.now() < this.nextSpawnAt) return undefined;
    return this.spawnChild();
  }

  spawnChild() {
    const gen = ++this.gen;
    let proc;
    try {
      proc = spawn(this.settings.pythonPath, ["-m", SIDECAR_MODULE], {
        cwd: safeCwd(),
        env: { ...process.env, PYTHONUNBUFFERED: "1", PYTHONIOENCODING: "utf-8" },
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true,
      });
    } catch (err) {
      this.noteFailure(`spawn failed: ${errText(err)}`);
      return undefined;
    }
    const child = { proc, gen, buf: "", stderrTail: [], expectedExit: false, startedAt: Date.now() };
    this.child = child;

    // A one-shot CLI must be able to exit while the sidecar idles: nothing of ours keeps the
    // event loop alive except the deadline timer of a pending `resolve`.
    proc.unref();
    for (const stream of [proc.stdin, proc.stdout, proc.stderr]) {
      stream?.on("error", () => {}); // EPIPE and friends surface through "exit"
      stream?.unref?.();
    }
    proc.stdout.setEncoding("utf8");
    proc.stderr.setEncoding("utf8");
    proc.stdout.on("data", (chunk) => this.onStdout(child, chunk));
    proc.stderr.on("data", (chunk) => this.onStderr(child, chunk));
    proc.on("error", (err) => this.onExit(child, `error: ${errText(err)}`));
    proc.on("exit", (code, signal) =>
      this.onExit(child, signal ? `signal ${signal}` : `exit code ${code}`),
    );

    // configure is always the first frame; later frames may be pipelined behind it. A failed
    // configure is handled in onLine, before any frame that follows it on the same child.
    const host = {
      mcpServers: this.settings.mcpServers ?? [],
      toolSearch: this.settings.toolSearch ?? null,
    };
    this.send(child, "configure", { config: this.settings.raw, host }, {
      // Off the hot path (a resolve pipelined behind it has its own deadline), and often sent
      // while the host is busy starting up: be lenient.
      timeoutMs: Math.max(this.settings.sidecarTimeoutMs, CONFIGURE_TIMEOUT_MS),
      background: true,
    });
    return child;
  }

  /**
   * Stop the current child politely: stdin EOF first (the child flushes and exits), SIGTERM
   * after a grace, SIGKILL after another. Timers are unref'd: a one-shot CLI does not wait.
   */
  stopChild(reason) {
    const child = this.child;
    if (!child) return;
    child.expectedExit = true;
    this.child = undefined;
    this.failPending(child, reason);
    this.stopping.add(child);
    child.proc.once("exit", () => this.stopping.delete(child));
    try {
      child.proc.stdin?.end();
    } catch {
      // already closed
    }
    const alive = () => child.proc.exitCode === null && child.proc.signalCode === null;
    const term = setTimeout(() => {
      if (alive()) signal(child, "SIGTERM");
      const kill = setTimeout(() => {
        if (alive()) signal(child, "SIGKILL");
      }, STOP_GRACE_MS);
      kill.unref?.();
    }, STOP_GRACE_MS);
    term.unref?.();
  }

  /** Kill a misbehaving child at once, count a failure and back off before the next spawn. */
  retire(child, reason) {
    if (this.child === child) this.child = undefined;
    child.expectedExit = true;
    child.retired = true;
    this.failPending(child, reason);
    signal(child, "SIGKILL");
    this.noteFailure(reason, child);
  }

  /** Process exit: no time for grace. SIGTERM lets a well-behaved child flush and go. */
  killNow() {
    const children = [...this.stopping];
    if (this.child) children.push(this.child);
    this.child = undefined;
    this.stopping.clear();
    for (const child of children) {
      child.expectedExit = true;
      signal(child, "SIGTERM");
    }
  }

  noteFailure(reason, child) {
    this.failures += 1;
    const delay =
      this.failures <= 1 ? 0 : Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (this.failures - 2));
    this.nextSpawnAt = Date.now() + delay;
    const tail = child?.stderrTail?.length ? `; stderr tail: ${child.stderrTail.join(" | ")}` : "";
    this.logger.warn?.(
      `[${PLUGIN_ID}] sidecar failure #${this.failures} (${reason}); turns keep the full tool surface` +
        (delay ? `; next start in ${delay} ms` : "") +
        tail,
    );
  }

  // ---- child events ---------------------------------------------------------------------

  onExit(child, how) {
    if (child.exited) return;
    child.exited = true;
    if (this.child === child) this.child = undefined; // no new calls go to it
    // Replies (and the stderr tail) the child wrote before exiting may still sit in the pipes:
    // settle once they are drained ("close"), or shortly after exit if a grandchild keeps a
    // pipe open.
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      this.failPending(child, `sidecar ${how}`);
      if (!child.expectedExit) this.noteFailure(`sidecar ${how}`, child);
    };
    child.proc.once("close", settle);
    const timer = setTimeout(settle, EXIT_DRAIN_MS);
    timer.unref?.();
  }

  onStderr(child, chunk) {
    const lines = String(chunk).split("\n").filter((l) => l.trim());
    for (const line of lines) {
      child.stderrTail.push(line.length > 500 ? `${line.slice(0, 500)}...` : line);
      if (child.stderrTail.length > STDERR_TAIL_LINES) child.stderrTail.shift();
      // The sidecar logs at WARNING and above by default, each record "resolver: ...": those
      // are for the operator (a fix to make, such as `resolver openclaw sync-mcp`); anything
      // else (a traceback's lines) goes to debug.
      if (line.startsWith("resolver: ")) this.logger.warn?.(`[${PLUGIN_ID}] sidecar: ${line}`);
      else this.logger.debug?.(`[${PLUGIN_ID}] sidecar: ${line}`);
    }
  }

  onStdout(child, chunk) {
    if (child.retired) return; // a killed child's output is not trusted
    child.buf += chunk;
    let nl;
    while ((nl = child.buf.indexOf("\n")) >= 0) {
      const line = child.buf.slice(0, nl).trim();
      child.buf = child.buf.slice(nl + 1);
      if (!line) continue;
      if (!this.onLine(child, line)) return;
    }
    if (child.buf.length > MAX_LINE_BYTES) this.retire(child, "oversized frame on stdout");
  }

  /** Handle one stdout line; false when the child was retired for it. */
  onLine(child, line) {
    let frame;
    try {
      frame = JSON.parse(line);
    } catch {
      frame = undefined;
    }
    if (!isPlainObject(frame) || typeof frame.id !== "string") {
      // stdout is for frames only: a stray line means the stream can no longer be trusted.
      this.retire(child, `non-frame on stdout: ${JSON.stringify(line.slice(0, 120))}`);
      return false;
    }
    const entry = this.pending.get(frame.id);
    if (!entry || entry.child !== child) return true; // late reply to a call already settled
    if (entry.method === "configure" && !(isPlainObject(frame.result) && frame.result.ok === true)) {
      // A child that could not apply its config must not answer anything else (it would
      // answer with defaults): retire it before the next line is read.
      const detail = isPlainObject(frame.error)
        ? `${frame.error.code ?? "error"}: ${String(frame.error.message ?? "").slice(0, 500)}`
        : "reply without ok: true";
      entry.finish({ ok: false, reason: `configure failed (${detail})` });
      this.retire(child, `configure failed (${detail})`);
      return false;
    }
    if (isPlainObject(frame.error)) {
      const code = typeof frame.error.code === "string" ? frame.error.code : "error";
      entry.finish({ ok: false, reason: `sidecar error ${code}`, error: frame.error });
    } else if ("result" in frame) {
      if (this.failures) this.failures = 0;
      entry.finish({ ok: true, result: frame.result });
    } else {
      entry.finish({ ok: false, reason: "frame without result or error" });
    }
    return true;
  }

  failPending(child, reason) {
    for (const entry of [...this.pending.values()]) {
      if (entry.child === child) entry.finish({ ok: false, reason });
    }
  }

  // ---- calls ----------------------------------------------------------------------------

  /**
   * Send one request; resolves (never rejects) with {ok, result} or {ok: false, reason}.
   * `background` calls do not keep the process alive (their timer is unref'd).
   */
  call(method, params, { timeoutMs, background = false } = {}) {
    const child = this.ensureChild();
    if (!child) return Promise.resolve({ ok: false, reason: "sidecar unavailable (backing off)" });
    return this.send(child, method, params, { timeoutMs, background });
  }

  send(child, method, params, { timeoutMs, background }) {
    return new Promise((resolve) => {
      const id = `${child.gen}.${++this.seq}`;
      let line;
      try {
        line = encodeWithin({ id, method, params });
      } catch (err) {
        resolve({ ok: false, reason: `cannot encode ${method}: ${errText(err)}` });
        return;
      }
      let done = false;
      const entry = {
        child,
        method,
        timer: undefined,
        finish: (reply) => {
          if (done) return;
          done = true;
          clearTimeout(entry.timer);
          entry.timer = undefined;
          this.pending.delete(id);
          resolve(reply);
        },
      };
      const deadline = timeoutMs ?? this.settings.sidecarTimeoutMs;
      const expire = () => {
        if (done) return;
        entry.finish({ ok: false, reason: `${method} timed out after ${deadline} ms` });
        // One stuck call would block the next: kill the child and start a fresh one.
        if (this.child === child) {
          this.retire(child, `${method} timed out after ${deadline} ms`);
          this.ensureChild();
        }
      };
      // The host can block the event loop for seconds (start-up, SQLite work); timers run
      // before I/O when the loop wakes, so let one poll phase deliver a reply that is already
      // waiting on the pipe before calling the deadline missed.
      entry.timer = setTimeout(() => setImmediate(expire), deadline);
      if (background) entry.timer.unref?.();
      this.pending.set(id, entry);
      try {
        child.proc.stdin.write(line);
      } catch (err) {
        entry.finish({ ok: false, reason: `write failed: ${errText(err)}` });
      }
    });
  }

  /** Fire-and-forget notification: never awaited by a hook, never holds the process open. */
  notify(method, params) {
    if (!this.child && Date.now() < this.nextSpawnAt) return;
    this.call(method, params, { timeoutMs: this.settings.sidecarTimeoutMs, background: true }).then(
      (reply) => {
        if (!reply.ok) this.logger.debug?.(`[${PLUGIN_ID}] ${method} dropped: ${reply.reason}`);
      },
    );
  }
}

function signal(child, sig) {
  try {
    child.proc.kill(sig);
  } catch {
    // already gone
  }
}

function errText(err) {
  return err instanceof Error ? err.message : String(err);
}

function safeCwd() {
  // Not the host's cwd: `python -m` puts the cwd first on sys.path, and a folder named
  // `resolver` there would shadow the installed package.
  try {
    return homedir() || tmpdir();
  } catch {
    return tmpdir();
  }
}

function getManager() {
  const existing = globalThis[GLOBAL_KEY];
  if (existing && existing.version === MANAGER_VERSION) return existing;
  if (existing) {
    try {
      existing.stopChild?.("plugin code replaced");
    } catch {
      // the old manager is being dropped anyway
    }
  }
  const manager = new SidecarManager();
  globalThis[GLOBAL_KEY] = manager;
  return manager;
}

// ---- hooks ------------------------------------------------------------------------------

function makeBeforePromptBuild(manager, settings, logger, readHost = () => undefined) {
  return async function beforePromptBuild(event, ctx) {
    try {
      const started = Date.now();
      const params = { event: pickEvent(event), ctx: pickCtx(ctx) };
      const host = readHost();
      if (host) params.host = host;
      const reply = await manager.call("resolve", params, { timeoutMs: settings.sidecarTimeoutMs });
      if (!reply.ok) {
        const line = `[${PLUGIN_ID}] abstain (${reply.reason}) ${Date.now() - started}ms`;
        if (settings.logDecisions) logger.info?.(line);
        else logger.debug?.(line);
        return undefined;
      }
      const result = isPlainObject(reply.result) ? reply.result : {};
      const toolsAllow = result.toolsAllow;
      if (toolsAllow === null || toolsAllow === undefined) {
        if (settings.logDecisions) {
          logger.info?.(
            `[${PLUGIN_ID}] abstain source=${result.source ?? "?"} ` +
              `reasons=${JSON.stringify(result.reasonCodes ?? [])} ${Date.now() - started}ms`,
          );
        }
        return undefined;
      }
      if (!isToolsAllow(toolsAllow)) {
        logger.warn?.(`[${PLUGIN_ID}] sidecar returned a malformed toolsAllow; abstaining`);
        return undefined;
      }
      const unique = [...new Set(toolsAllow)];
      if (settings.logDecisions) {
        logger.info?.(
          `[${PLUGIN_ID}] toolsAllow=${unique.length} source=${result.source ?? "?"} ` +
            `reasons=${JSON.stringify(result.reasonCodes ?? [])} ${Date.now() - started}ms`,
        );
      }
      return { toolsAllow: unique };
    } catch (err) {
      logger.warn?.(`[${PLUGIN_ID}] before_prompt_build failed open: ${errText(err)}`);
      return undefined;
    }
  };
}

function makeLlmInput(manager) {
  return function llmInput(event, ctx) {
    try {
      const tools = describeTools(event?.tools);
      if (!tools) return;
      const where = pickCtx(ctx);
      if (typeof event.runId === "string") where.runId = event.runId;
      if (typeof event.sessionId === "string") where.sessionId = event.sessionId;
      if (typeof event.provider === "string") where.modelProviderId ??= event.provider;
      if (typeof event.model === "string") where.modelId ??= event.model;
      manager.notify("observe_surface", { tools, ctx: where });
    } catch {
      // observation only
    }
  };
}

function makeAfterToolCall(manager) {
  return function afterToolCall(event, ctx) {
    try {
      if (typeof event?.toolName !== "string" || !event.toolName) return;
      const call = { name: event.toolName, ok: !event.error };
      if (typeof event.toolCallId === "string") call.toolCallId = event.toolCallId;
      if (typeof event.durationMs === "number") call.durationMs = event.durationMs;
      const where = pickCtx(ctx);
      if (typeof event.runId === "string") where.runId = event.runId;
      manager.notify("observe_tool_calls", { calls: [call], ctx: where });
    } catch {
      // observation only
    }
  };
}

// ---- the /resolver chat command ---------------------------------------------------------

const COMMAND_NAME = "resolver"; // `/tools` is OpenClaw's own command
const COMMAND_HELP =
  "Tool resolver: `/resolver refresh` (this session's next turn keeps every tool and the " +
  "one after is picked afresh), `/resolver clear` (forget this session's reusable " +
  "decisions; `/resolver clear all` for every session), `/resolver status`.";

function commandSession(ctx) {
  const out = {};
  if (typeof ctx?.sessionId === "string" && ctx.sessionId) out.sessionId = ctx.sessionId;
  if (typeof ctx?.sessionKey === "string" && ctx.sessionKey) out.sessionKey = ctx.sessionKey;
  return out;
}

/**
 * `/resolver refresh | clear [all] | status`: handled by OpenClaw's chat command dispatcher
 * (channels, WebChat, the Gateway's chat.send) without a model turn. Never throws: a failed
 * call is reported in the reply.
 */
export function makeCommand(manager) {
  return {
    name: COMMAND_NAME,
    description: "Tool resolver: refresh the tool choice, clear reused decisions, status",
    acceptsArgs: true,
    async handler(ctx) {
      try {
        const words = String(ctx?.args ?? "").trim().toLowerCase().split(/\s+/).filter(Boolean);
        const [verb = "help", scope] = words;
        const session = commandSession(ctx);
        const everyone = scope === "all";
        if (verb === "refresh" || verb === "clear") {
          if (!everyone && !session.sessionId && !session.sessionKey) {
            return { text: `resolver: this chat has no session; try \`/resolver ${verb} all\`` };
          }
          const method = verb === "refresh" ? "refresh" : "clear_reuse";
          const params = everyone ? { all: true } : { ctx: session };
          const timeoutMs = manager.settings.sidecarTimeoutMs;
          const reply = await manager.call(method, params, { timeoutMs });
          if (!reply.ok) return { text: `resolver: ${verb} failed (${reply.reason})` };
          if (verb === "refresh") {
            const whose = everyone ? "every session's next turn keeps" : "the next turn keeps";
            return {
              text: `resolver: ${whose} the full tool surface; tools are picked afresh after it.`,
            };
          }
          const cleared = reply.result?.cleared ?? 0;
          const scope = everyone ? " (all sessions)" : "";
          return { text: `resolver: cleared ${cleared} reusable decision(s)${scope}.` };
        }
        if (verb === "status") {
          const reply = await manager.call("ping", {}, {
            timeoutMs: manager.settings.sidecarTimeoutMs,
          });
          return {
            text: reply.ok
              ? "resolver: the sidecar is running; turns are narrowed to the tools they need."
              : `resolver: the sidecar is not answering (${reply.reason}); ` +
                "turns keep the full tool surface.",
          };
        }
        return { text: COMMAND_HELP };
      } catch (err) {
        return { text: `resolver: command failed (${errText(err)})` };
      }
    },
  };
}

const plugin = {
  id: PLUGIN_ID,
  name: PLUGIN_NAME,
  description: PLUGIN_DESCRIPTION,
  register(api) {
    const mode = api?.registrationMode;
    if (mode === "cli-metadata" || mode === "setup-only") return;
    const logger = api?.logger ?? fallbackLogger();
    const settings = normalizeConfig(api?.pluginConfig);
    settings.mcpServers = mcpServerList(api?.config);
    settings.toolSearch = toolSearchSetting(api?.config);
    if (!settings.enabled) {
      logger.info?.(`[${PLUGIN_ID}] disabled by config; no hooks registered`);
      return;
    }
    if (typeof api?.on !== "function") {
      logger.warn?.(`[${PLUGIN_ID}] host has no api.on(); nothing registered`);
      return;
    }
    const manager = getManager();
    manager.acquire(settings, logger);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      manager.release();
    };
    if (typeof api.lifecycle?.onDispose === "function") {
      try {
        api.lifecycle.onDispose(release);
      } catch {
        // host without managed instances: the child dies with the process
      }
    }

    const readHost = () => hostView(api);
    api.on("before_prompt_build", makeBeforePromptBuild(manager, settings, logger, readHost), {
      timeoutMs: settings.hookTimeoutMs,
    });
    api.on("llm_input", makeLlmInput(manager));
    api.on("after_tool_call", makeAfterToolCall(manager));
    if (typeof api.registerCommand === "function") {
      try {
        api.registerCommand(makeCommand(manager));
      } catch (err) {
        logger.warn?.(`[${PLUGIN_ID}] /${COMMAND_NAME} command not registered: ${errText(err)}`);
      }
    }

    if (mode === undefined || mode === "full") manager.warm();
  },
};

export default plugin;

// The official LangGraph JavaScript client (@langchain/langgraph-sdk, pinned in package-lock.json)
// against the reference server: every call it offers for the reference's assistants, threads,
// runs and store routes, each check asserting what it read back and how many requests it took
// (so a retry or a reconnect the client made on its own would show).
//
// Run by selftests/reference/test_reference_langgraph_js.py, copied beside the client's node_modules, with
// REFERENCE_API_URL (<base>/api/ai) and REFERENCE_TOKEN (a bearer, sent through defaultHeaders,
// never printed). Prints one JSON line: {client, node, calls, checks: [{name, ok, calls, ms,
// error?}]}; exits 1 when a check failed.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { Client } from "@langchain/langgraph-sdk";

const ECHO_ID = "e809e711-7ffe-5960-821d-7d83c173c321";
const COUNTER_ID = "3c2ddcc0-8014-58a3-be2e-582ab4be4c07";
const TOKENS = ["values", "messages-tuple", "updates"];

let calls = 0;
const client = new Client({
  apiUrl: process.env.REFERENCE_API_URL,
  apiKey: null, // no key from the environment: the bearer below is the credential
  defaultHeaders: { Authorization: `Bearer ${process.env.REFERENCE_TOKEN}` },
  callerOptions: { maxRetries: 0 },
  onRequest: (_url, init) => {
    calls += 1;
    return init;
  },
});

// --- helpers -------------------------------------------------------------------------------------

async function collect(parts, until = Infinity) {
  const read = [];
  for await (const part of parts) {
    read.push(part);
    if (read.length >= until) break;
  }
  return read;
}

const names = (parts) => parts.map((part) => part.event);
const shown = (parts) => parts.map(({ id, event, data }) => ({ id, event, data }));
const newThread = async () => (await client.threads.create()).thread_id;
const text = (n, word) => Array.from({ length: n }, (_, i) => `${word}${i}`).join(" ");

function increasingIds(parts) {
  const ids = parts.map((part) => Number(part.id));
  assert.ok(ids.every((id, i) => Number.isInteger(id) && (i === 0 || id > ids[i - 1])), `ids ${ids}`);
}

function notFound(error) {
  assert.equal(error.status, 404, String(error));
  return true;
}

// --- checks: [name, requests it takes, what it does] ---------------------------------------------

const checks = [
  ["assistants search, count, get", 4, async () => {
    const found = await client.assistants.search({ limit: 100 });
    assert.deepEqual(found.map((a) => a.graph_id).sort(), ["counter", "echo"]);
    assert.equal(await client.assistants.count(), found.length);
    assert.equal((await client.assistants.get(ECHO_ID)).graph_id, "echo");
    assert.equal((await client.assistants.get("counter")).assistant_id, COUNTER_ID);
  }],

  ["threads create, get, update, search", 4, async () => {
    const marker = randomUUID();
    const thread = await client.threads.create({ metadata: { suite: "js", marker, n: 1 } });
    const got = await client.threads.get(thread.thread_id);
    assert.deepEqual(got.metadata, { suite: "js", marker, n: 1 });
    assert.equal(got.status, "idle");
    const updated = await client.threads.update(thread.thread_id, { metadata: { n: 2 } });
    assert.deepEqual(updated.metadata, { suite: "js", marker, n: 2 });
    const found = await client.threads.search({ metadata: { marker }, limit: 10 });
    assert.deepEqual(found.map((t) => t.thread_id), [thread.thread_id]);
  }],

  ["threads getState, updateState, getHistory, copy, delete", 10, async () => {
    const threadId = await newThread();
    const first = await client.threads.updateState(threadId, {
      values: { topic: "tea" },
      asNode: "echo",
    });
    assert.ok(first.checkpoint.checkpoint_id);
    assert.deepEqual((await client.threads.getState(threadId)).values, { topic: "tea" });
    await client.threads.updateState(threadId, { values: { mood: "calm" } });
    const history = await client.threads.getHistory(threadId);
    assert.deepEqual(history.map((h) => h.values), [{ topic: "tea", mood: "calm" }, { topic: "tea" }]);
    const copy = await client.threads.copy(threadId);
    assert.notEqual(copy.thread_id, threadId);
    assert.deepEqual((await client.threads.getState(copy.thread_id)).values, history[0].values);
    assert.equal((await client.threads.getHistory(copy.thread_id)).length, 2);
    await client.threads.delete(threadId);
    await assert.rejects(client.threads.get(threadId), notFound);
  }],

  ["runs.stream values", 2, async () => {
    const parts = await collect(client.runs.stream(await newThread(), "echo", {
      input: { text: "red green blue" },
      streamMode: "values",
    }));
    assert.deepEqual(names(parts), ["metadata", "values", "values", "end"]);
    increasingIds(parts);
    const messages = (part) => part.data.messages.map((m) => [m.type, m.content]);
    assert.deepEqual(messages(parts[1]), [["human", "red green blue"]]);
    assert.deepEqual(messages(parts[2]), [["human", "red green blue"], ["ai", "red green blue"]]);
  }],

  ["runs.stream updates", 2, async () => {
    const parts = await collect(client.runs.stream(await newThread(), COUNTER_ID, {
      input: { n: 3 },
      streamMode: "updates",
    }));
    assert.deepEqual(names(parts), ["metadata", "updates", "updates", "updates", "end"]);
    assert.deepEqual(parts.slice(1, 4).map((p) => p.data), [1, 2, 3].map((count) => ({ counter: { count } })));
  }],

  ["runs.stream messages", 2, async () => {
    const parts = await collect(client.runs.stream(await newThread(), "echo", {
      input: { text: "one two three" },
      streamMode: "messages",
    }));
    const partial = Array(3).fill("messages/partial");
    assert.deepEqual(names(parts), ["metadata", "messages/metadata", ...partial, "messages/complete", "end"]);
    increasingIds(parts);
    const runId = parts[0].data.run_id;
    const [id] = Object.keys(parts[1].data);
    assert.deepEqual(parts[1].data[id].metadata, { langgraph_node: "echo", run_id: runId });
    assert.deepEqual(
      parts.slice(2, 6).map((p) => p.data.map((m) => [m.type, m.id, m.content])),
      ["one", "one two", "one two three", "one two three"].map((content) => [["ai", id, content]]),
    );
  }],

  ["runs.stream messages-tuple", 2, async () => {
    const parts = await collect(client.runs.stream(await newThread(), "echo", {
      input: { text: "alpha beta gamma delta" },
      streamMode: "messages-tuple",
    }));
    assert.deepEqual(names(parts), ["metadata", ...Array(4).fill("messages"), "end"]);
    const tuples = parts.slice(1, 5).map((p) => p.data);
    assert.ok(tuples.every(([chunk, meta]) => chunk.type === "AIMessageChunk" && meta.langgraph_node === "echo"));
    assert.equal(tuples.map(([chunk]) => chunk.content).join(""), "alpha beta gamma delta");
  }],

  ["runs.stream custom", 2, async () => {
    const parts = await collect(client.runs.stream(await newThread(), "counter", {
      input: { n: 2 },
      streamMode: ["custom"],
    }));
    assert.deepEqual(shown(parts).map(({ event, data }) => [event, data]).slice(1, -1), [
      ["custom", { count: 1 }],
      ["custom", { count: 2 }],
    ]);
  }],

  ["runs.stream without streamMode: values alone", 2, async () => {
    const parts = await collect(client.runs.stream(await newThread(), "echo", { input: { text: "hi" } }));
    assert.deepEqual(names(parts), ["metadata", "values", "values", "end"]);
    assert.equal(parts[2].data.messages.at(-1).content, "hi");
  }],

  ["runs.joinStream without and with lastEventId", 5, async () => {
    const threadId = await newThread();
    const parts = await collect(client.runs.stream(threadId, "echo", {
      input: { text: "a b c" },
      streamMode: [...TOKENS, "messages"],
    }));
    assert.deepEqual(names(parts), [
      "metadata", "values",
      "messages", "messages/metadata", "messages/partial",
      "messages", "messages/partial",
      "messages", "messages/partial",
      "messages/complete", "updates", "values", "end",
    ]);
    const runId = parts[0].data.run_id;
    const replay = await collect(client.runs.joinStream(threadId, runId));
    assert.deepEqual(shown(replay), shown(parts));
    const later = await collect(client.runs.joinStream(threadId, runId, { lastEventId: parts[4].id }));
    assert.deepEqual(shown(later), shown(parts.slice(5)));
    const after = await collect(client.runs.joinStream(threadId, runId, { lastEventId: parts.at(-1).id }));
    assert.deepEqual(after, []);
  }],

  ["runs.stream cut, then joinStream resumes from lastEventId", 5, async () => {
    const threadId = await newThread();
    const words = text(40, "w");
    const cut = new AbortController();
    const head = await collect(client.runs.stream(threadId, "echo", {
      input: { text: words },
      streamMode: TOKENS,
      signal: cut.signal,
    }), 6);
    cut.abort(); // the connection goes; the run goes on (on_disconnect: continue)
    assert.deepEqual(names(head), ["metadata", "values", "messages", "messages", "messages", "messages"]);
    const runId = head[0].data.run_id;
    const rest = await collect(client.runs.joinStream(threadId, runId, { lastEventId: head.at(-1).id }));
    assert.equal(rest.at(-1).event, "end");
    const whole = await collect(client.runs.joinStream(threadId, runId));
    assert.deepEqual(shown([...head, ...rest]), shown(whole));
    increasingIds(whole);
    const tokens = whole.filter((p) => p.event === "messages").map((p) => p.data[0].content);
    assert.equal(tokens.join(""), words);
    assert.equal((await client.runs.get(threadId, runId)).status, "success");
  }],

  ["runs create, get, list, wait", 6, async () => {
    const threadId = await newThread();
    const run = await client.runs.create(threadId, ECHO_ID, { input: { text: "hi there" } });
    assert.equal(run.status, "pending");
    assert.equal(run.thread_id, threadId);
    const values = await client.runs.wait(threadId, "counter", { input: { n: 3 } }); // queued after it
    assert.equal(values.count, 3);
    assert.deepEqual(values.messages.map((m) => [m.type, m.content]), [["human", "hi there"], ["ai", "hi there"]]);
    const got = await client.runs.get(threadId, run.run_id);
    assert.deepEqual([got.run_id, got.status, got.assistant_id], [run.run_id, "success", ECHO_ID]);
    const listed = await client.runs.list(threadId);
    assert.equal(listed.length, 2);
    assert.equal(listed[1].run_id, run.run_id); // newest first
    assert.deepEqual(listed.map((r) => r.status), ["success", "success"]);
    const page = await client.runs.list(threadId, { limit: 1, offset: 1 });
    assert.deepEqual(page.map((r) => r.run_id), [run.run_id]);
  }],

  ["runs cancel (interrupt, rollback)", 8, async () => {
    const threadId = await newThread();
    const run = await client.runs.create(threadId, "echo", {
      input: { text: text(300, "word") },
      streamMode: TOKENS,
    });
    await client.runs.cancel(threadId, run.run_id, true);
    assert.equal((await client.runs.get(threadId, run.run_id)).status, "interrupted");
    const parts = await collect(client.runs.joinStream(threadId, run.run_id));
    assert.equal(parts[0].event, "metadata");
    assert.equal(parts.at(-1).event, "end");
    assert.ok(parts.filter((p) => p.event === "messages").length < 300);
    const other = await client.runs.create(threadId, "echo", { input: { text: text(300, "x") } });
    await client.runs.cancel(threadId, other.run_id, true, "rollback");
    await assert.rejects(client.runs.get(threadId, other.run_id), notFound);
  }],

  ["store putItem, getItem, searchItems, listNamespaces, deleteItem", 11, async () => {
    const ns = ["js", randomUUID()];
    await client.store.putItem(ns, "k1", { text: "green tea" });
    await client.store.putItem(ns, "k2", { text: "black coffee" });
    const item = await client.store.getItem(ns, "k1");
    assert.deepEqual([item.namespace, item.key, item.value], [ns, "k1", { text: "green tea" }]);
    assert.ok(item.createdAt && item.updatedAt);
    assert.equal(await client.store.getItem(ns, "never-written"), null);
    const filtered = await client.store.searchItems(ns, { filter: { text: "black coffee" } });
    assert.deepEqual(filtered.items.map((i) => i.key), ["k2"]);
    const queried = await client.store.searchItems(ns.slice(0, 1), { query: "tea", limit: 100 });
    assert.deepEqual(queried.items.filter((i) => i.namespace[1] === ns[1]).map((i) => i.key), ["k1"]);
    const spaces = await client.store.listNamespaces({ prefix: ["js"], limit: 1000 });
    assert.ok(spaces.namespaces.some((space) => JSON.stringify(space) === JSON.stringify(ns)));
    await client.store.deleteItem(ns, "k1");
    assert.equal(await client.store.getItem(ns, "k1"), null);
    const left = await client.store.searchItems(ns);
    assert.deepEqual(left.items.map((i) => [i.key, i.value]), [["k2", { text: "black coffee" }]]);
    await client.store.deleteItem(ns, "k2");
  }],
];

// --- run them ------------------------------------------------------------------------------------

const results = [];
for (const [name, expected, check] of checks) {
  const before = calls;
  const started = performance.now();
  let error;
  try {
    await check();
    assert.equal(calls - before, expected, `${calls - before} requests, not ${expected}`);
  } catch (caught) {
    error = String(caught?.stack ?? caught).split("\n").slice(0, 6).join("\n");
  }
  const ms = Math.round(performance.now() - started);
  results.push({ name, ok: !error, calls: calls - before, ms, ...(error && { error }) });
}

const pkg = new URL("./node_modules/@langchain/langgraph-sdk/package.json", import.meta.url);
const { name, version } = JSON.parse(readFileSync(pkg, "utf8"));
console.log(JSON.stringify({ client: `${name} ${version}`, node: process.version, calls, checks: results }));
process.exit(results.every((r) => r.ok) ? 0 : 1);

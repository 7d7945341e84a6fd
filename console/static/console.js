// The console talks only to the A2A HTTP+JSON binding (/rest), with the
// same credentials as any client. Streams resume from the last event id.
"use strict";

const api = "/rest";
const $ = (id) => document.getElementById(id);
const state = { context: null, tasks: new Map(), streams: new Map(), selected: null };
const colors = {
  TASK_STATE_SUBMITTED: "#cfd8dc", TASK_STATE_WORKING: "#90caf9", TASK_STATE_INPUT_REQUIRED: "#ffe082",
  TASK_STATE_AUTH_REQUIRED: "#ffcc80", TASK_STATE_COMPLETED: "#a5d6a7", TASK_STATE_FAILED: "#ef9a9a",
  TASK_STATE_CANCELED: "#bdbdbd", TASK_STATE_REJECTED: "#f48fb1",
};
const terminal = (s) => ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"].includes(s);
const waiting = (s) => s === "TASK_STATE_INPUT_REQUIRED" || s === "TASK_STATE_AUTH_REQUIRED";

$("apikey").value = localStorage.getItem("a2a-key") || "";
$("apikey").addEventListener("change", () => localStorage.setItem("a2a-key", $("apikey").value));

function headers(extra) {
  const h = { "Content-Type": "application/a2a+json", "A2A-Version": "1.0", ...extra };
  if ($("apikey").value) h["X-API-Key"] = $("apikey").value;
  return h;
}

async function call(method, path, body) {
  const res = await fetch(api + path, { method, headers: headers(), body: body ? JSON.stringify(body) : undefined });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((json.error && json.error.message) || res.statusText);
  return json;
}

function showError(e) { $("error").textContent = e ? String(e.message || e) : ""; }

function newId() { return crypto.randomUUID(); }

function textOf(parts) { return (parts || []).filter((p) => p.text !== undefined).map((p) => p.text).join(" "); }

// Send a new request: plain text, the trip playbook, or a plan.
async function send(extra) {
  showError();
  const mode = $("mode").value, input = $("input").value.trim();
  const message = { messageId: newId(), role: "ROLE_USER", parts: [] };
  if (mode === "plan") {
    let plan;
    try { plan = JSON.parse(input); } catch (e) { return showError("the plan is not JSON: " + e.message); }
    message.parts.push({ text: "run this plan" }, { data: { plan: plan.nodes ? plan : plan.plan } });
  } else {
    message.parts.push({ text: input || "hello" });
    if (mode === "trip") message.metadata = { skill: "trip" };
  }
  Object.assign(message, extra || {});
  try {
    const res = await call("POST", "/message:send", { message, configuration: { returnImmediately: true } });
    if (res.task) { await selectContext(res.task.contextId); select(res.task.id); }
    else if (res.message) showError("reply: " + textOf(res.message.parts));
  } catch (e) { showError(e); }
}
$("send").addEventListener("click", () => send());

async function loadContexts() {
  try {
    const res = await call("GET", "/tasks?pageSize=100&historyLength=0");
    const ctxs = [];
    for (const t of res.tasks) if (!ctxs.includes(t.contextId)) ctxs.push(t.contextId);
    const ul = $("contexts");
    ul.innerHTML = "";
    for (const c of ctxs) {
      const li = document.createElement("li");
      li.textContent = c;
      li.dataset.context = c;
      if (c === state.context) li.className = "sel";
      li.onclick = () => selectContext(c);
      ul.appendChild(li);
    }
    setConn(true);
  } catch (e) { setConn(false); }
}

function setConn(ok) { const c = $("conn"); c.textContent = ok ? "live" : "reconnecting…"; c.className = "conn " + (ok ? "ok" : "down"); }

async function selectContext(ctx) {
  if (state.context !== ctx) {
    for (const s of state.streams.values()) s.abort.abort();
    state.streams.clear();
    state.tasks.clear();
    state.selected = null;
  }
  state.context = ctx;
  $("ctxname").textContent = ctx;
  await refreshContext();
  loadContexts();
}

// Every task of the context, in full (the first message names what a task builds on).
async function refreshContext() {
  if (!state.context) return;
  try {
    const res = await call("GET", "/tasks?pageSize=100&historyLength=0&contextId=" + encodeURIComponent(state.context));
    await Promise.all(res.tasks.map((t) => refreshTask(t.id)));
    setConn(true);
  } catch (e) { setConn(false); }
  render();
}

async function refreshTask(id) {
  const t = await call("GET", "/tasks/" + encodeURIComponent(id));
  state.tasks.set(id, t);
  if (!terminal(t.status.state) && !state.streams.has(id)) watch(id);
  return t;
}

// Follow a task's events; on a dropped connection (say, a frontend
// restart) come back with Last-Event-ID and miss nothing.
function watch(id) {
  const s = { abort: new AbortController(), last: "" };
  state.streams.set(id, s);
  (async () => {
    while (!s.abort.signal.aborted) {
      try {
        const h = headers(s.last ? { "Last-Event-ID": s.last } : {});
        const res = await fetch(api + "/tasks/" + encodeURIComponent(id) + ":subscribe", { method: "POST", headers: h, signal: s.abort.signal });
        if (!res.ok) { state.streams.delete(id); return; } // terminal or gone
        setConn(true);
        const reader = res.body.getReader();
        const dec = new TextDecoder();
        let buf = "", ended = false;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += dec.decode(value, { stream: true });
          let i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            const block = buf.slice(0, i); buf = buf.slice(i + 2);
            for (const line of block.split("\n")) {
              if (line.startsWith("id:")) s.last = line.slice(3).trim();
              if (line.startsWith("data:")) {
                const ev = JSON.parse(line.slice(5));
                const st = ev.statusUpdate && ev.statusUpdate.status.state;
                if (st && terminal(st)) ended = true;
              }
            }
            await refreshTask(id).catch(() => {});
            refreshContext();
          }
        }
        if (ended) { state.streams.delete(id); return; }
      } catch (e) {
        if (s.abort.signal.aborted) return;
        setConn(false);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
}

// Layers by what each task builds on (referenceTaskIds of its first message).
function render() {
  const svg = $("graph");
  const tasks = [...state.tasks.values()];
  const refs = (t) => ((t.history && t.history[0] && t.history[0].referenceTaskIds) || []).filter((r) => state.tasks.has(r));
  const depth = new Map();
  const d = (t, seen = new Set()) => {
    if (depth.has(t.id)) return depth.get(t.id);
    if (seen.has(t.id)) return 0;
    seen.add(t.id);
    const v = refs(t).length ? 1 + Math.max(...refs(t).map((r) => d(state.tasks.get(r), seen))) : 0;
    depth.set(t.id, v);
    return v;
  };
  // The orchestrating task sits at the top; its nodes below it.
  tasks.forEach((t) => d(t));
  const isNode = (t) => t.history && t.history[0] && t.history[0].metadata && t.history[0].metadata.node;
  const rows = new Map();
  for (const t of tasks) {
    const row = isNode(t) ? depth.get(t.id) + 1 : 0;
    if (!rows.has(row)) rows.set(row, []);
    rows.get(row).push(t);
  }
  const pos = new Map();
  let h = 60;
  for (const [row, ts] of [...rows.entries()].sort((a, b) => a[0] - b[0])) {
    ts.sort((a, b) => a.id.localeCompare(b.id));
    ts.forEach((t, i) => pos.set(t.id, { x: 20 + i * 150, y: 20 + row * 80 }));
    h = Math.max(h, 100 + row * 80);
  }
  svg.setAttribute("height", h);
  let out = '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L10,5L0,10z" fill="#889"/></marker></defs>';
  for (const t of tasks) {
    for (const r of refs(t)) {
      const a = pos.get(r), b = pos.get(t.id);
      out += `<line class="edge" x1="${a.x + 65}" y1="${a.y + 40}" x2="${b.x + 65}" y2="${b.y}"/>`;
    }
  }
  for (const t of tasks) {
    const p = pos.get(t.id), st = t.status.state;
    const meta = (t.history && t.history[0] && t.history[0].metadata) || {};
    const label = meta.node ? `${meta.node} (${meta.agent})` : (meta.skill || "task");
    out += `<g class="node" data-task="${t.id}" data-label="${label}" data-state="${st}" transform="translate(${p.x},${p.y})">` +
      `<rect width="130" height="40" fill="${colors[st] || "#eee"}"/>` +
      `<text x="6" y="16">${escapeHTML(label)}</text><text x="6" y="32">${st.replace("TASK_STATE_", "")} · ${age(t)}</text></g>`;
  }
  svg.innerHTML = out;
  svg.querySelectorAll(".node").forEach((g) => g.addEventListener("click", () => select(g.dataset.task)));
  if (state.selected) renderTask(state.tasks.get(state.selected));
}

// How long ago the task's status changed.
function age(t) {
  const ts = t.status.timestamp ? Date.parse(t.status.timestamp) : NaN;
  if (isNaN(ts)) return "";
  const s = Math.max(0, Math.round((Date.now() - ts) / 1000));
  return s < 60 ? s + "s" : s < 3600 ? Math.round(s / 60) + "m" : Math.round(s / 3600) + "h";
}

function escapeHTML(s) { return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]); }

function select(id) { state.selected = id; renderTask(state.tasks.get(id)); }

function partHTML(p) {
  if (p.text !== undefined) return `<div>${escapeHTML(p.text)}</div>`;
  if (p.data !== undefined) return `<pre>${escapeHTML(JSON.stringify(p.data, null, 2))}</pre>`;
  if (p.url) return (p.mediaType || "").startsWith("image/") ? `<img src="${escapeHTML(p.url)}" width="200">` : `<a href="${escapeHTML(p.url)}" download>${escapeHTML(p.filename || p.url)}</a>`;
  if (p.raw) {
    const href = `data:${p.mediaType || "application/octet-stream"};base64,${p.raw}`;
    return (p.mediaType || "").startsWith("image/") ? `<img src="${href}" width="200">` : `<a href="${href}" download="${escapeHTML(p.filename || "file")}">${escapeHTML(p.filename || "download")}</a>`;
  }
  return "";
}

function renderTask(t) {
  if (!t) return;
  // The pane is redrawn on every update: keep what the user is typing.
  const body = $("taskbody");
  const keep = [];
  if (body.dataset.task === t.id) {
    for (const id of ["answer", "followup"]) {
      const el = $(id);
      if (el) keep.push({ id, value: el.value, focused: document.activeElement === el });
    }
  }
  const st = t.status.state;
  let html = `<div><b>${escapeHTML(t.id)}</b></div><div>state: <span id="taskstate">${st}</span></div>`;
  if (t.status.message) html += `<div class="${waiting(st) ? "question" : ""}" id="question">${escapeHTML(textOf(t.status.message.parts))}</div>`;
  if (waiting(st)) html += `<div><input id="answer" placeholder="your answer"><button id="answerbtn">Answer</button></div>`;
  if (!terminal(st)) html += `<button id="cancelbtn">Cancel</button>`;
  else html += `<div><input id="followup" placeholder="follow-up in this context"><button id="followbtn">Follow up</button></div>`;
  html += "<h3>Artifacts</h3>";
  for (const a of t.artifacts || []) html += `<div class="artifact"><b>${escapeHTML(a.name || a.artifactId)}</b>${(a.parts || []).map(partHTML).join("")}</div>`;
  html += "<h3>History</h3>";
  for (const m of t.history || []) html += `<div class="msg"><b>${m.role === "ROLE_USER" ? "you" : "agent"}:</b> ${escapeHTML(textOf(m.parts))}</div>`;
  body.innerHTML = html;
  body.dataset.task = t.id;
  for (const k of keep) {
    const el = $(k.id);
    if (!el) continue;
    el.value = k.value;
    if (k.focused) el.focus();
  }
  if ($("answerbtn")) $("answerbtn").onclick = async () => {
    try {
      await call("POST", "/message:send", { message: { messageId: newId(), role: "ROLE_USER", taskId: t.id, contextId: t.contextId, parts: [{ text: $("answer").value }] }, configuration: { returnImmediately: true } });
      await refreshContext();
    } catch (e) { showError(e); }
  };
  if ($("cancelbtn")) $("cancelbtn").onclick = async () => {
    try { await call("POST", "/tasks/" + encodeURIComponent(t.id) + ":cancel", {}); await refreshContext(); } catch (e) { showError(e); }
  };
  if ($("followbtn")) $("followbtn").onclick = () => {
    $("input").value = $("followup").value;
    send({ contextId: t.contextId, referenceTaskIds: [t.id] });
  };
}

loadContexts();
setInterval(() => { loadContexts(); refreshContext(); }, 2000);

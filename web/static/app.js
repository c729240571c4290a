// The operator page: status over a WebSocket, camera frames as binary messages, commands as JSON.
"use strict";

const params = new URLSearchParams(location.search);
const token = params.get("token") || "";
const $ = (id) => document.getElementById(id);
let ws = null;
let status = null;
let retry = 500;

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  ws = new WebSocket(`${proto}//${location.host}/ws${token ? `?token=${encodeURIComponent(token)}` : ""}`);
  ws.binaryType = "arraybuffer";
  ws.onopen = () => {
    retry = 500;
    setConn(true);
  };
  ws.onclose = () => {
    setConn(false);
    setTimeout(connect, retry);
    retry = Math.min(5000, retry * 2);
  };
  ws.onmessage = (ev) => {
    if (typeof ev.data !== "string") return drawFrame(ev.data);
    const m = JSON.parse(ev.data);
    if (m.type === "status") render(m.status);
    else if (m.type === "result" && !m.ok) $("message").textContent = m.error;
  };
}

function setConn(ok) {
  const c = $("conn");
  c.textContent = ok ? "live" : "disconnected";
  c.className = `badge ${ok ? "running" : "off"}`;
}

function send(obj) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(obj));
}

function command(cmd) {
  send({ type: "command", cmd, robot: status ? status.robot : undefined });
}

function drawFrame(buf) {
  const v = new DataView(buf);
  const w = v.getUint16(0, true);
  const h = v.getUint16(2, true);
  const ch = v.getUint8(4);
  const px = new Uint8Array(buf, 5);
  const canvas = $("camera");
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  const g = canvas.getContext("2d");
  const img = g.createImageData(w, h);
  for (let i = 0, j = 0; i < w * h; i++, j += ch) {
    img.data[4 * i] = px[j];
    img.data[4 * i + 1] = px[ch === 3 ? j + 1 : j];
    img.data[4 * i + 2] = px[ch === 3 ? j + 2 : j];
    img.data[4 * i + 3] = 255;
  }
  g.putImageData(img, 0, 0);
  canvas.dataset.frames = String(Number(canvas.dataset.frames || 0) + 1);
}

function fmtTime(s) {
  const m = Math.floor(s / 60);
  return `${m}:${(s - 60 * m).toFixed(1).padStart(4, "0")}`;
}

function render(s) {
  status = s;
  $("robot").textContent = s.robot;
  $("task").textContent = s.task;
  const st = $("state");
  st.textContent = s.estop ? "e-stop" : s.state;
  st.className = `badge ${s.estop ? "estop" : s.state}`;
  document.body.dataset.state = s.state;
  document.body.dataset.estop = String(s.estop);
  $("estop-banner").hidden = !s.estop;
  $("episode").textContent = s.state === "idle" && !s.lastOutcome ? "–" : `#${s.episode} (seed ${s.seed})`;
  $("timer").textContent = s.state === "idle" ? "–" : `${fmtTime(s.elapsedSec)} / ${fmtTime(s.maxSteps / s.controlHz)}`;
  $("step").textContent = s.state === "idle" ? "–" : `${s.step} / ${s.maxSteps}`;
  $("incontrol").textContent = s.inControl;
  const pill = $("control");
  pill.textContent = s.inControl;
  pill.className = `pill ${s.inControl !== "policy" && s.inControl !== "nobody" ? "operator" : ""}`;
  $("policy").textContent = s.policyVersion;
  $("last").textContent = s.lastOutcome ? `${s.lastOutcome} — ${s.lastDetail}` : "–";
  const l = Object.entries(s.learner || {});
  $("learner").textContent = l.length ? l.map(([k, v]) => `${k} ${v}`).join(" · ") : "not connected";
  $("teleop").textContent = s.teleop.error ? `${s.teleop.device}: ${s.teleop.error}` : s.teleop.device;
  $("message").textContent = s.message || "";
  $("window").textContent = String(s.window);
  const tb = $("joints").tBodies[0];
  tb.innerHTML = "";
  s.joints.names.forEach((n, i) => {
    const tr = tb.insertRow();
    tr.insertCell().textContent = n;
    tr.insertCell().textContent = s.joints.position[i].toFixed(3);
  });
  const succ = s.history.map((e) => (e.outcome === "success" ? 1 : 0));
  const inter = s.history.map((e) => (e.steps ? e.interventionSteps / e.steps : 0));
  $("succ-now").textContent = s.history.length ? `${Math.round(100 * s.rollingSuccess)}%` : "";
  $("int-now").textContent = s.history.length ? `${Math.round(100 * s.rollingIntervention)}% of steps` : "";
  const { drawChart, rolling } = window.rlftCharts;
  drawChart($("chart-success"), [{ values: rolling(succ, s.window), color: "#2e9d5b" }]);
  drawChart($("chart-int"), [{ values: inter, color: "#d99a21" }, { values: rolling(inter, s.window), color: "#e8edf2" }]);
}

for (const b of document.querySelectorAll("button[data-cmd]")) b.addEventListener("click", () => command(b.dataset.cmd));

// Keyboard: the same shortcuts as the terminal; motion keys are sent as held keys for the web teleop.
const KEYS = { ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right", PageUp: "pageup", PageDown: "pagedown", ",": ",", ".": ".", g: "g", t: "t" };
const COMMANDS = { n: "start", p: "pause", s: "success", f: "failure", a: "abort", r: "reset", " ": "estop" };
window.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  if (COMMANDS[k]) {
    e.preventDefault();
    if (!e.repeat) command(COMMANDS[k]);
  } else if (KEYS[k]) {
    e.preventDefault();
    if (!e.repeat) send({ type: "key", key: KEYS[k], down: true });
  }
});
window.addEventListener("keyup", (e) => {
  const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  if (KEYS[k]) send({ type: "key", key: KEYS[k], down: false });
});
// Losing focus must not leave a motion key held.
window.addEventListener("blur", () => Object.values(KEYS).forEach((key) => send({ type: "key", key, down: false })));

connect();

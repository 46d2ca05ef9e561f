// The launcher's web panel: the console's commands behind buttons, its status live.
//
// Every change is one console line sent to POST /api/command, so the page can do nothing
// the console cannot, and a refused line changes nothing: its one-line message is shown.
// The token lives only in the HttpOnly cookie the server sets when pairing ends; this
// script never sees it and keeps nothing in localStorage.
"use strict";

const $ = (id) => document.getElementById(id);
const LOG_ROWS = 200; // the console's `log` gives at most 200 too

class ApiError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

// One request to the launcher. A 401 means this device is not paired (or its token was
// revoked or lapsed): the pairing screen replaces the panel.
async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let answer;
  try {
    answer = await fetch(path, init);
  } catch (err) {
    throw new ApiError("network", "the launcher did not answer: " + err.message);
  }
  let data = null;
  try {
    data = await answer.json();
  } catch (err) {
    data = null; // an empty or non-JSON body: the status code says enough
  }
  if (answer.status === 401) {
    showPairing();
    throw new ApiError("token", (data && data.message) || "this device is not paired");
  }
  if (!answer.ok || (data && data.ok === false)) {
    const code = (data && data.error) || String(answer.status);
    throw new ApiError(code, (data && data.message) || `${code}: ${answer.statusText}`);
  }
  return data;
}

// A console line; its JSON reply (`ok`, `data` and any rows).
function command(line) {
  return api("POST", "/api/command", { line });
}

function say(text) {
  const box = $("error");
  box.textContent = text;
  box.hidden = !text;
}

// Runs `work` for a control: the button is disabled meanwhile, an error is shown in one
// line, and a success clears the last error.
async function act(button, work) {
  if (button) button.disabled = true;
  try {
    const out = await work();
    say("");
    return out;
  } catch (err) {
    if (err.code !== "token") say(err.message);
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

// ---- status ----------------------------------------------------------------------------

const view = { status: null, statusAt: 0, led: null, shot: null };

// `event: status` and GET /api/status carry the status data; accept the whole console
// reply too ({"ok": true, "data": {...}}).
function statusOf(obj) {
  return obj && typeof obj.ok === "boolean" && obj.data ? obj.data : obj;
}

function showStatus(status) {
  view.status = status;
  view.statusAt = performance.now();
  $("s-state").textContent = status.state;
  $("s-side").textContent = status.side;
  $("s-side").dataset.side = status.side;
  $("s-inventory").textContent = String(status.inventory);
  $("s-escalation").textContent = String(status.escalation);
  $("s-profile").textContent = status.profile;
  $("s-lid").textContent = status.lid;
  $("s-motor").textContent = status.motor ? `running (${status.motor})` : "off";
  if (status.led) view.led = status.led; // the server's own reading of the LED, if it gives one
  if (status.last_shot) view.shot = status.last_shot;
  showLed();
  showShot();
  showFault(status);
  showSleep();
  document.body.dataset.state = status.state;
  if (!$("profile").matches(":focus")) showProfile(status.profile);
}

function showFault(status) {
  const fault = status.fault && status.fault !== "none" ? status.fault : null;
  $("fault").hidden = !fault;
  if (!fault) return;
  $("s-fault").textContent = fault;
  let way;
  if (status.way_out) {
    way = status.way_out;
  } else if (status.latched === "proven") {
    way = "Its check has passed again: Clear leaves it.";
  } else if (status.latched) {
    way = `Latched (${status.latched}) until its check passes again: repair it; Clear says what to do.`;
  } else {
    way = "Remove the cause, then Clear it (or open the lid and shut it).";
  }
  $("s-way").textContent = way;
}

// The sleep countdown: `sleep_in` as of the last status, counted down here between
// updates (a display; the launcher keeps the time).
function showSleep() {
  const status = view.status;
  if (!status) return;
  if (status.sleep_in === null || status.sleep_in === undefined) {
    $("s-sleep").textContent = status.state === "asleep" ? "asleep"
      : status.fault && status.fault !== "none" ? "not in a fault" : "not while busy";
    return;
  }
  const left = Math.max(0, status.sleep_in - (performance.now() - view.statusAt) / 1000);
  const m = Math.floor(left / 60);
  const s = Math.floor(left % 60);
  $("s-sleep").textContent = `${m}:${String(s).padStart(2, "0")}`;
}

// The LED from the latest `led` event (or the status's `led` when the server gives it).
function showLed() {
  const led = view.led;
  let text = "?";
  if (typeof led === "string") {
    text = led;
  } else if (led && led.pattern === "blink_code") {
    text = `${led.blinks} blinks, pause: fault ${led.fault}`;
  } else if (led && led.pattern) {
    text = led.pattern.replace(/_/g, " ");
  }
  $("s-led").textContent = text;
}

function showShot() {
  const shot = view.shot;
  if (!shot) return;
  const cards = shot.cards === 1 ? "1 card" : `${shot.cards} cards`;
  const short = shot.asked !== undefined && shot.asked !== shot.cards ? ` of ${shot.asked}` : "";
  $("s-shot").textContent = `${cards}${short}` + (shot.side ? ` (${shot.side})` : "");
}

// ---- the event log ---------------------------------------------------------------------

function words(data) {
  return Object.entries(data || {})
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`)
    .join(" ");
}

function logEvent(ev) {
  if (ev.event === "led") view.led = ev.data;
  if (ev.event === "shot") view.shot = ev.data;
  const row = document.createElement("li");
  row.dataset.event = ev.event;
  const t = document.createElement("time");
  t.textContent = typeof ev.t === "number" ? ev.t.toFixed(1) : "";
  const kind = document.createElement("b");
  kind.textContent = ev.event;
  row.append(t, " ", kind, " ", words(ev.data));
  const list = $("log");
  list.prepend(row);
  while (list.children.length > LOG_ROWS) list.lastElementChild.remove();
}

// ---- the live stream -------------------------------------------------------------------

let stream = null;

function link(state, text) {
  $("link").dataset.state = state;
  $("link").textContent = text;
}

function listen() {
  if (stream) stream.close();
  stream = new EventSource("/api/events");
  stream.addEventListener("open", () => link("on", "live"));
  stream.addEventListener("status", (e) => showStatus(statusOf(JSON.parse(e.data))));
  stream.addEventListener("log", (e) => {
    logEvent(JSON.parse(e.data));
    showLed();
    showShot();
  });
  stream.addEventListener("error", () => {
    if (stream.readyState === EventSource.CONNECTING) {
      link("off", "reconnecting"); // the browser tries again by itself
      return;
    }
    // Closed for good: refused (not paired, or too many live clients) or gone. Ask why.
    link("off", "offline");
    stream = null;
    api("GET", "/api/status")
      .then((status) => {
        showStatus(statusOf(status));
        setTimeout(listen, 3000);
      })
      .catch((err) => {
        if (err.code !== "token") {
          say(err.message);
          setTimeout(listen, 3000);
        }
      });
  });
}

// ---- pairing ---------------------------------------------------------------------------

let pairTimer = null;

function showPairing() {
  if (stream) {
    stream.close();
    stream = null;
  }
  link("off", "not paired");
  $("panel").hidden = true;
  $("pairing").hidden = false;
}

function pairSay(text) {
  $("pair-say").textContent = text;
}

async function pair() {
  clearTimeout(pairTimer);
  const button = $("pair");
  button.disabled = true;
  say("");
  let opened;
  try {
    const answer = await fetch("/api/pair", { method: "POST", credentials: "same-origin" });
    opened = await answer.json();
    if (answer.status !== 201) throw new ApiError(opened.error, opened.message || opened.error);
  } catch (err) {
    say(err.message);
    button.disabled = false;
    return;
  }
  const until = performance.now() + opened.expires_s * 1000;
  // The window's id, for a person at the unit's serial console (`web pair ID` confirms it
  // there as the 3 s hold does): only this page and the launcher know it.
  $("pair-line").textContent = `web pair ${opened.id}`;
  $("pair-console").hidden = false;
  const poll = async () => {
    const left = Math.max(0, Math.ceil((until - performance.now()) / 1000));
    pairSay(`Now hold the launcher's button down for 3 seconds (${left} s left).`);
    let answer;
    try {
      answer = await fetch(`/api/pair/${encodeURIComponent(opened.id)}`,
                           { credentials: "same-origin" });
    } catch (err) {
      pairTimer = setTimeout(poll, 1000); // a dropped request; the window decides the end
      return;
    }
    if (answer.status === 202) {
      pairTimer = setTimeout(poll, 1000);
      return;
    }
    button.disabled = false;
    $("pair-console").hidden = true;
    if (answer.status === 200) {
      // The answer set the HttpOnly cookie; the token in its body is not kept here.
      pairSay("");
      start();
      return;
    }
    let state = "unknown";
    try {
      state = (await answer.json()).state || state;
    } catch (err) {
      state = "unknown";
    }
    pairSay(state === "taken"
      ? "That pairing was already used. Press Pair to try again."
      : "The pairing window has expired. Press Pair to try again.");
  };
  poll();
}

// ---- controls --------------------------------------------------------------------------

function showProfile(name) {
  const deal = /^deal (\d+)$/.exec(name || "");
  $("profile").value = deal ? "deal" : name;
  if (deal) $("deal-n").value = deal[1];
  $("deal-n-label").hidden = $("profile").value !== "deal";
}

function onSubmit(id, work) {
  $(id).addEventListener("submit", (e) => {
    e.preventDefault();
    act(e.submitter || $(id).querySelector("button"), work);
  });
}

function onClick(id, work) {
  $(id).addEventListener("click", () => act($(id), work));
}

// A TOML basic string for a console value (the console reads values as TOML).
function tomlString(text) {
  return JSON.stringify(text);
}

function applied(reply, key) {
  const d = reply.data;
  return d.applied === "restart"
    ? `${key} is ${d[key]}; it takes effect at the next start (Save the settings to keep it).`
    : `${key} is ${d[key]}.`;
}

function wire() {
  onClick("press", () => api("POST", "/api/press"));
  onClick("clear", () => command("clear"));
  onClick("sleep", () => command("sleep"));
  onClick("wake", () => command("wake"));
  $("profile").addEventListener("change", () => {
    $("deal-n-label").hidden = $("profile").value !== "deal";
  });
  onSubmit("profile-form", () => {
    const name = $("profile").value;
    return command(name === "deal" ? `profile deal ${$("deal-n").value}` : `profile ${name}`);
  });
  onSubmit("load-form", () => command(`load ${$("load-n").value}`));
  onSubmit("pack-form", async () => {
    const reply = await command(`config set audio.pack ${tomlString($("pack").value)}`);
    $("sound-say").textContent = applied(reply, "audio.pack");
  });
  $("volume").addEventListener("input", () => {
    $("volume-out").textContent = `${Math.round($("volume").value * 100)} %`;
  });
  onSubmit("volume-form", async () => {
    const reply = await command(`config set audio.volume ${$("volume").value}`);
    $("sound-say").textContent = applied(reply, "audio.volume");
  });
  onClick("save", async () => {
    const d = (await command("config save")).data;
    $("unit-say").textContent = d.written
      ? `Saved ${d.saved} setting(s) to ${d.path}.`
      : `Nothing to save: ${d.reason}.`;
  });
  onClick("selftest", async () => showSelftest(await command("selftest")));
  onClick("doctor", async () => showDoctor(await command("doctor")));
  $("luck-side").addEventListener("change", () => act(null, () => loadLuck($("luck-side").value)));
  $("luck-apply").addEventListener("click", () => act(null, applyLuck));
  $("luck-reset").addEventListener("click", () => luckSliders(luck.side));
  $("pair").addEventListener("click", pair);
  setInterval(showSleep, 1000);
}

// A table of results: one row a result, its status first (the row's colour), then the
// cells ``cells`` picks from it; hidden when there is none.
function fillRows(table, results, cells) {
  const body = $(table).tBodies[0];
  body.replaceChildren();
  for (const result of results || []) {
    const row = body.insertRow();
    row.dataset.status = result.status;
    for (const text of [result.status, ...cells(result)]) {
      row.insertCell().textContent = text;
    }
  }
  $(table).hidden = body.rows.length === 0;
}

function showSelftest(reply) {
  fillRows("selftest-rows", reply.parts, (part) => [part.part, part.detail]);
  const d = reply.data;
  $("unit-say").textContent = `Self-test on ${d.on}: ${d.passed} of ${d.parts} passed.`;
}

// The last `launcher doctor --keep` report the unit kept (the console's `doctor`): when,
// the counts, and each check that did not pass with its fix.
function showDoctor(reply) {
  fillRows("doctor-rows", reply.checks, (check) =>
    [check.item, check.fix ? `${check.detail} (fix: ${check.fix})` : check.detail]);
  const d = reply.data;
  $("unit-say").textContent =
    `Doctor, ${d.at}: ${d.pass} passed, ${d.warn} warned, ${d.fail} failed of ${d.checks}.`;
}

// ---- luck ------------------------------------------------------------------------------

// The side's luck as the server gives it (GET /api/luck?side=): hazard, sizes, weights,
// shot_rate, mean_shot, as `luck show` lists them. The chart draws the share of each size
// in the server's distribution (`distribution` when the answer has one, else each weight
// over their sum, which is what the model draws from); the sliders move those same weights.
const luck = { side: null };

function sideOf(answer, side) {
  const rows = answer && (answer.sides || (answer.data && answer.data.sides));
  if (rows) return rows.find((row) => row.side === side);
  return answer && answer.data && answer.data.sizes ? answer.data : answer;
}

async function loadLuck(side) {
  const answer = await api("GET", `/api/luck?side=${encodeURIComponent(side)}`);
  const row = sideOf(answer, side);
  if (!row || !row.sizes) throw new ApiError("luck", `no luck for the ${side} side in the answer`);
  luck.side = row;
  $("luck-side").value = side;
  luckSliders(row);
}

function slider(box, label, value, min, max, step, onInput) {
  const wrap = document.createElement("label");
  const name = document.createElement("span");
  name.textContent = label;
  const input = document.createElement("input");
  Object.assign(input, { type: "range", min, max, step, value });
  const out = document.createElement("output");
  out.textContent = String(value);
  input.addEventListener("input", () => {
    out.textContent = input.value;
    onInput();
  });
  wrap.append(name, input, out);
  box.append(wrap);
  return input;
}

function luckSliders(row) {
  if (!row) return;
  const weights = $("weights");
  const hazard = $("hazard");
  weights.replaceChildren();
  hazard.replaceChildren();
  const top = Math.max(100, ...row.weights.map((w) => Math.ceil(w)));
  row.sizes.forEach((size, i) => {
    slider(weights, size === 1 ? "1 card" : `${size} cards`, row.weights[i], 0, top, 1, drawLuck);
  });
  row.hazard.forEach((h, i) => {
    const last = i === row.hazard.length - 1;
    const input = slider(hazard, i === 0 ? "first press" : `after ${i} dry`, h, 0, 1, 0.01,
                         drawLuck);
    input.disabled = last; // the curve ends at 1.0: the launcher always shoots by then
  });
  drawLuck();
}

function sliderValues(id) {
  return [...$(id).querySelectorAll("input")].map((input) => Number(input.value));
}

function changed() {
  const row = luck.side;
  const same = (a, b) => a.length === b.length && a.every((x, i) => Math.abs(x - b[i]) < 1e-9);
  return !same(sliderValues("weights"), row.weights) || !same(sliderValues("hazard"), row.hazard);
}

function drawLuck() {
  const row = luck.side;
  if (!row) return;
  const moved = changed();
  const weights = moved ? sliderValues("weights") : row.weights;
  let shares;
  if (!moved && Array.isArray(row.distribution)) {
    shares = row.distribution.map((p) => (typeof p === "number" ? p : p.p));
  } else {
    const total = weights.reduce((a, b) => a + b, 0);
    shares = weights.map((w) => (total > 0 ? w / total : 0));
  }
  drawBars(row.sizes, shares);
  $("luck-say").textContent = moved
    ? "Not applied yet: the bars show the new weights; Apply sends them."
    : `A shot about one press in ${(1 / row.shot_rate).toFixed(1)}; ` +
      `${Number(row.mean_shot).toFixed(2)} cards a shot on average.`;
  $("luck-apply").disabled = !moved;
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

function drawBars(sizes, shares) {
  const chart = $("chart");
  chart.replaceChildren();
  const width = 320;
  const floor = 126;
  const high = 100;
  const step = width / sizes.length;
  const top = Math.max(...shares, 0.01);
  sizes.forEach((size, i) => {
    const h = (shares[i] / top) * high;
    const x = i * step + step * 0.15;
    const w = step * 0.7;
    chart.append(svg("rect", { x, y: floor - h, width: w, height: h, class: "bar" }));
    chart.append(svg("text", { x: x + w / 2, y: floor - h - 4, class: "share" },
                     `${Math.round(shares[i] * 100)}%`));
    chart.append(svg("text", { x: x + w / 2, y: floor + 16, class: "size" }, String(size)));
  });
}

async function applyLuck() {
  const side = $("luck-side").value;
  const list = (xs) => `[${xs.join(",")}]`;
  $("luck-apply").disabled = true;
  try {
    // One line for both keys: the console checks them together and applies all or nothing.
    await command(`luck set ${side} hazard ${list(sliderValues("hazard"))} ` +
                  `weights ${list(sliderValues("weights"))}`);
    await loadLuck(side);
  } finally {
    drawLuck(); // Apply stays on while the sliders differ from the unit's luck
  }
}

// ---- start -----------------------------------------------------------------------------

async function start() {
  let status;
  try {
    status = statusOf(await api("GET", "/api/status"));
  } catch (err) {
    if (err.code !== "token") say(err.message);
    return;
  }
  $("pairing").hidden = true;
  $("panel").hidden = false;
  const past = await act(null, () => command(`log ${LOG_ROWS}`));
  $("log").replaceChildren();
  for (const ev of (past && past.events) || []) logEvent(ev);
  showStatus(status);
  listen();
  await act(null, () => loadLuck(status.side));
  await act(null, async () => {
    $("pack").value = (await command("config get audio.pack")).data["audio.pack"];
    const volume = (await command("config get audio.volume")).data["audio.volume"];
    $("volume").value = volume;
    $("volume-out").textContent = `${Math.round(volume * 100)} %`;
  });
}

wire();
start();

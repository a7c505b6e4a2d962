// The tournament's pages: filled from the room server's JSON API, redrawn whenever the
// tournament's live stream (/api/tournament/live, Server-Sent Events) says it changed. The
// clock counts down here between updates. Never a card: the API has none to give.
"use strict";

(function () {
  const page = document.body.dataset.page;
  const live = document.getElementById("live");
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const n = (v) => (typeof v === "number" ? v.toLocaleString("en-US") : "–");
  const esc = (s) => String(s === null || s === undefined ? "" : s)
    .replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const set = (field, value, root) => $$(`[data-field="${field}"]`, root).forEach((el) => { el.textContent = value; });
  let clock = null;   // the latest clock, and the client's offset from the server's time
  let offset = 0;

  async function get(path) {
    const response = await fetch(path, { cache: "no-store" });
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
    return response.json();
  }

  function mmss(seconds) {
    const s = Math.max(0, Math.ceil(seconds));
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const r = String(s % 60).padStart(2, "0");
    return h ? `${h}:${String(m).padStart(2, "0")}:${r}` : `${m}:${r}`;
  }

  function remaining() {
    if (!clock) return 0;
    if (!clock.running) return clock.remaining;
    return clock.remaining - (Date.now() / 1000 + offset - clock.at);
  }

  function blinds(c) {
    if (!c || c.small_blind === null) return "";
    const ante = c.ante ? ` · ante ${n(c.ante)}${c.bb_ante ? " (big blind ante)" : ""}` : "";
    return `${n(c.small_blind)} / ${n(c.big_blind)}${ante}`;
  }

  // ---------------------------------------------------------------- the clock
  async function drawClock() {
    const s = await get("/api/tournament");
    clock = s.clock;
    offset = s.now - Date.now() / 1000;
    set("name", s.name);
    set("level", clock.on_break ? `break after level ${clock.after_level}` : `level ${clock.level}`);
    set("blinds", clock.on_break ? "" : blinds(clock));
    const next = clock.next ? `next: level ${clock.next.level} · ${blinds(clock.next)}` : "last level";
    set("next", next);
    set("players", `${n(s.players_left)} of ${n(s.entries)}`);
    set("average", n(s.average));
    set("pool", s.prize_pool ? `${n(s.prize_pool)} ${esc(s.currency)}`.trim() : "–");
    set("break", clock.next_break_in === null ? "–" : mmss(clock.next_break_in));
    const banner = $('[data-field="banner"]');
    let text = "";
    if (s.finished) text = "the tournament is over";
    else if (!s.started) text = s.seated ? "seats drawn · starting soon" : "starting soon";
    else if (clock.on_break) text = "BREAK";
    else if (s.hand_for_hand.active) text = `HAND-FOR-HAND · hand ${s.hand_for_hand.hand}`;
    else if (!clock.running) text = "clock paused";
    else if (s.bubble) text = "BUBBLE";
    else if (s.final_table) text = "FINAL TABLE";
    if (banner) { banner.textContent = text; banner.hidden = !text; }
    document.body.classList.toggle("on-break", !!clock.on_break);
    document.body.classList.toggle("hand-for-hand", !!s.hand_for_hand.active);
    tick();
    return s;
  }

  function tick() {
    if (!clock) return;
    const left = remaining();
    set("time", mmss(left));
    if (clock.running && left <= 0 && !tick.asked) {
      tick.asked = true;   // the server moves the clock on its next second
      setTimeout(() => { tick.asked = false; refresh(); }, 1200);
    }
  }

  // ---------------------------------------------------------------- chip counts
  async function drawBoard() {
    const [b, r] = await Promise.all([get("/api/tournament/leaderboard"), get("/api/tournament/results")]);
    set("name", `${b.name} · chip counts`);
    set("level", b.level);
    set("players", `${n(b.players_left)} of ${n(b.entries)}`);
    set("average", n(b.average));
    $("#leaderboard tbody").innerHTML = b.players.map((p) => {
      const change = p.change > 0 ? `+${n(p.change)}` : n(p.change);
      const cls = p.change > 0 ? "up" : p.change < 0 ? "down" : "";
      return `<tr data-player="${esc(p.id)}"><td>${p.rank}</td><td class="name">${esc(p.name)}</td>` +
        `<td class="num chips">${n(p.chips)}</td><td class="num">${p.big_blinds === null ? "–" : p.big_blinds.toFixed(1)}</td>` +
        `<td>${esc(p.table || "–")}</td><td>${p.seat || "–"}</td><td class="num change ${cls}">${change}</td></tr>`;
    }).join("");
    $("#results tbody").innerHTML = r.results.map((p) => {
      const place = p.shared ? `${p.place}–${p.place_to} (shared)` : `${p.place}`;
      return `<tr data-player="${esc(p.id)}"><td>${place}</td><td>${esc(p.name)}${p.confirmed ? "" : " <i>(to confirm)</i>"}</td>` +
        `<td class="num">${p.prize ? n(p.prize) : "–"}</td></tr>`;
    }).join("") || '<tr><td colspan="3" class="none">nobody out yet</td></tr>';
    document.body.dataset.version = String(b.version);
  }

  // ---------------------------------------------------------------- the floor
  const who = () => ({ name: $("#floor-name"), token: $("#floor-token"), error: $("#floor-error") });

  async function act(path, body) {
    const w = who();
    w.error.textContent = "";
    if (!w.name.value.trim()) { w.error.textContent = "give your name first"; w.name.focus(); return; }
    const response = await fetch(`/api/tournament/${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${w.token.value}` },
      body: JSON.stringify({ by: w.name.value.trim(), ...body }),
    });
    if (!response.ok) {
      let why = `refused (${response.status})`;
      try { const j = await response.json(); if (j.detail) why = typeof j.detail === "string" ? j.detail : JSON.stringify(j.detail); } catch (e) { /* keep */ }
      w.error.textContent = response.status === 401 ? "wrong token" : why;
      return;
    }
    refresh();
  }

  function proposal(p) {
    const count = p.kind === "move" || p.kind === "out"
      ? `<label>chips counted <input class="chips" type="number" min="0" size="8"></label>` : "";
    const accept = p.kind === "move" ? `<label><input class="accept" type="checkbox"> the count stands</label>` : "";
    const note = p.note ? `<div class="note">${esc(p.note)}</div>` : "";
    return `<div class="proposal ${esc(p.kind)}" data-proposal="${p.id}" data-kind="${esc(p.kind)}">` +
      `<div class="what">${esc(p.text)}</div><div class="rule">${esc(p.rule)}</div>${note}` +
      `<div class="controls">${count}${accept}<button class="confirm">confirm</button>` +
      `<button class="reject">reject</button></div></div>`;
  }

  async function drawFloor() {
    const [s, props, tables, ops, log] = await Promise.all([
      get("/api/tournament"), get("/api/tournament/proposals"), get("/api/tournament/tables"),
      get("/api/tournament/operations"), get("/api/tournament/log"),
    ]);
    clock = s.clock;
    offset = s.now - Date.now() / 1000;
    set("name", `${s.name} · ${s.house}`);
    set("level", clock.on_break ? "break" : `level ${clock.level} · ${blinds(clock)}`);
    const state = s.finished ? "over" : !s.started ? "not started" : s.hand_for_hand.active
      ? `hand-for-hand, hand ${s.hand_for_hand.hand}` : clock.running ? "running" : "paused";
    set("state", `${state} · ${n(s.players_left)} left of ${n(s.entries)} · average ${n(s.average)}`);
    const open = props.filter((p) => p.status === "open");
    $("#proposals").innerHTML = open.map(proposal).join("") || '<p class="none">nothing to confirm</p>';
    $("#tables").innerHTML = tables.filter((t) => t.active || t.players).map((t) => {
      const seats = Object.entries(t.players_at || {}).map(([seat, p]) =>
        `<span class="seat${p.status === "seated" ? "" : " out"}">${seat} ${esc(p.name)} ${n(p.chips)}</span>`).join("");
      const held = t.held ? `<span class="held">held: ${esc(t.held_for.join(", ") || "room")}</span>` : "";
      return `<div class="table-card${t.active ? "" : " closed"}" data-table="${esc(t.table)}"><b>${esc(t.table)}</b> ` +
        `${t.players} players · hand ${t.hand === null ? "–" : t.hand} ${held}<div class="seats">${seats}</div></div>`;
    }).join("");
    $("#ops").innerHTML = ops.filter((o) => o.stage !== "done" || o.error).map((o) =>
      `<div class="op" data-op="${o.id}">${esc(o.kind)} ${esc(o.tables.join(", "))}: ${esc(o.error || o.stage)}` +
      `${o.error ? ' <button class="retry">retry</button>' : ""}</div>`).join("") || '<p class="none">none under way</p>';
    $("#log tbody").innerHTML = log.slice(0, 60).map((e) =>
      `<tr class="${esc(e.severity)}"><td>${new Date(e.t * 1000).toLocaleTimeString()}</td><td>${esc(e.text)}</td>` +
      `<td class="rule">${esc(e.rule || "")}</td></tr>`).join("");
    document.body.dataset.version = String(s.version);
    tick();
  }

  function setupFloor() {
    const w = who();
    w.name.value = localStorage.getItem("monitor.name") || "";
    w.token.value = localStorage.getItem("monitor.token") || "";
    w.name.addEventListener("change", () => localStorage.setItem("monitor.name", w.name.value));
    w.token.addEventListener("change", () => {
      localStorage.setItem("monitor.token", w.token.value);
      w.error.textContent = "";
    });
    document.addEventListener("click", (ev) => {
      const b = ev.target.closest("button");
      if (!b) return;
      const box = b.closest("[data-proposal]");
      if (box && (b.classList.contains("confirm") || b.classList.contains("reject"))) {
        const chips = $(".chips", box);
        const body = {};
        if (chips && chips.value !== "") body.chips = Number(chips.value);
        const accept = $(".accept", box);
        if (accept && accept.checked) body.accept_count = true;
        act(`proposals/${box.dataset.proposal}/${b.classList.contains("confirm") ? "confirm" : "reject"}`, body);
      } else if (b.dataset.act) {
        act(b.dataset.act, {});
      } else if (b.dataset.clock) {
        const body = { action: b.dataset.clock };
        if (b.dataset.seconds) body.seconds = Number(b.dataset.seconds);
        act("clock", body);
      } else if (b.dataset.h4h) {
        act("hand-for-hand", { on: b.dataset.h4h === "true" });
      } else if (b.classList.contains("retry")) {
        act(`operations/${b.closest("[data-op]").dataset.op}/retry`, {});
      }
    });
    $("#register").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const form = new FormData(ev.target);
      const body = { name: form.get("name") };
      if (form.get("player_id")) body.player_id = form.get("player_id");
      act("players", body).then(() => ev.target.reset());
    });
  }

  // ---------------------------------------------------------------- live
  const draw = { clock: drawClock, leaderboard: drawBoard, floor: drawFloor }[page];
  let busy = false;
  let again = false;

  async function refresh() {
    if (!draw || !document.querySelector("main [data-field], main table, main #proposals")) return;
    if (busy) { again = true; return; }
    busy = true;
    try {
      await draw();
      document.body.dataset.rendered = String(Date.now());
    } catch (err) {
      live.classList.add("off");
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }

  function connect() {
    if (!window.EventSource || !draw) return;
    const source = new EventSource("/api/tournament/live");
    source.onopen = () => live.classList.remove("off");
    source.addEventListener("tournament", () => refresh());
    source.onerror = () => live.classList.add("off");
  }

  if (page === "floor" && $("#floor-name")) setupFloor();
  refresh();
  connect();
  setInterval(tick, 250);
  setInterval(refresh, 10000);
})();

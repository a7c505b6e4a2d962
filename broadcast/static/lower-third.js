// The chip-count lower third: the room server's live chip counts (its tournament API, which
// carries no card), shown as many seconds behind as the TV service's secure delay, so the
// counts never get ahead of the hand on air. Query: room=<room server URL> (required);
// mode=leaders (default: the five biggest stacks) or mode=player&player=<id>; top=N.
"use strict";

(function () {
  const params = new URLSearchParams(window.location.search);
  const room = (params.get("room") || "").replace(/\/+$/, "");
  const mode = params.get("mode") === "player" ? "player" : "leaders";
  const wanted = params.get("player");
  const top = Math.max(1, Math.min(10, Number(params.get("top") || 5)));
  if (params.has("backdrop")) document.body.classList.add("backdrop");
  document.body.classList.add(mode);
  const $ = (id) => document.getElementById(id);
  const n = (v) => Number(v || 0).toLocaleString("en-US");
  const esc = (s) => String(s === null || s === undefined ? "" : s)
    .replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  let delay = 0;          // the TV's secure delay, seconds
  const held = [];        // [arrival, board, summary] waiting for the delay to pass
  let shownVersion = -1;

  async function tvDelay() {
    try {
      const status = await (await fetch("/api/status", { cache: "no-store" })).json();
      const table = document.body.dataset.delayTable;
      const tables = Object.values(status.tables || {});
      const mine = (status.tables || {})[table] || tables[0];
      delay = mine ? Number(mine.delay) || 0 : 0;
    } catch (e) { /* keep the last one */ }
    document.body.dataset.delay = String(delay);
  }

  async function take() {
    if (!room) { $("connection").hidden = false; $("connection").textContent = "no room= in the address"; return; }
    try {
      const [board, summary] = await Promise.all([
        fetch(`${room}/api/tournament/leaderboard`, { cache: "no-store" }).then((r) => r.json()),
        fetch(`${room}/api/tournament`, { cache: "no-store" }).then((r) => r.json()),
      ]);
      held.push([Date.now() / 1000, board, summary]);
      $("connection").hidden = true;
    } catch (e) {
      $("connection").hidden = false;
    }
    show();
  }

  function row(p) {
    const change = p.change > 0 ? `<small class="up">+${n(p.change)}</small>` :
      p.change < 0 ? `<small class="down">${n(p.change)}</small>` : "";
    const bb = p.big_blinds === null ? "" : `<small>${p.big_blinds.toFixed(1)} BB</small>`;
    return `<div class="l3-row" data-player="${esc(p.id)}"><span class="l3-rank">${p.rank}</span>` +
      `<span class="l3-name">${esc(p.name)}</span>` +
      `<span class="l3-chips">${n(p.chips)}${bb}${change}</span></div>`;
  }

  function show() {
    const now = Date.now() / 1000;
    let pick = null;
    while (held.length && held[0][0] <= now - delay) pick = held.shift();
    if (!pick) return;
    const [, board, summary] = pick;
    if (board.version === shownVersion) return;
    shownVersion = board.version;
    const clock = summary.clock || {};
    $("l3-event").textContent = board.name;
    $("l3-level").textContent = clock.on_break ? "break" :
      `level ${clock.level} · ${n(clock.small_blind)}/${n(clock.big_blind)}` +
      (clock.ante ? ` · ante ${n(clock.ante)}` : "");
    $("l3-left").textContent = `${n(board.players_left)}/${n(board.entries)}`;
    $("l3-average").textContent = n(board.average);
    let status = "";
    if (summary.finished) status = "final result";
    else if (summary.hand_for_hand && summary.hand_for_hand.active) status = "hand-for-hand";
    else if (summary.bubble) status = "on the bubble";
    else if (summary.final_table) status = "final table";
    else if (summary.in_the_money) status = "in the money";
    $("l3-status").textContent = status;
    const players = mode === "player" ? board.players.filter((p) => p.id === wanted) : board.players.slice(0, top);
    $("l3-rows").innerHTML = players.map(row).join("");
    $("l3").hidden = players.length === 0;
    document.body.dataset.version = String(board.version);
    document.body.dataset.rendered = String(Date.now());
  }

  function connect() {
    if (!room || !window.EventSource) return;
    const source = new EventSource(`${room}/api/tournament/live`);
    source.addEventListener("tournament", () => take());
    source.onerror = () => { $("connection").hidden = false; };
  }

  tvDelay().then(() => { take(); connect(); });
  setInterval(tvDelay, 10000);
  setInterval(show, 250);
  setInterval(take, 15000);
})();

// tablectl tv: draws the frames of /feed/<table> (overlay) or /preview/<table>/ws (preview).
// No data is in the page itself: everything arrives over the WebSocket (docs/tv.md).
"use strict";

(function () {
  const body = document.body;
  const view = body.dataset.view;
  const wsPath = body.dataset.ws;
  const params = new URLSearchParams(window.location.search);
  if (params.has("backdrop")) body.classList.add("backdrop");

  const SUITS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };
  const $ = (id) => document.getElementById(id);

  function esc(text) {
    return String(text === null || text === undefined ? "" : text)
      .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  }
  function chips(n) {
    return Number(n || 0).toLocaleString("en-US");
  }
  function card(c) {
    if (!/^[23456789TJQKA][cdhs]$/.test(c)) return "";
    const rank = c[0] === "T" ? "10" : c[0];
    return `<div class="card face ${c[1]}" data-card="${c}"><span class="rank">${rank}</span>` +
      `<span class="suit">${SUITS[c[1]]}</span></div>`;
  }
  const back = '<div class="card back"></div>';
  const drawn = new Map(); // seat -> the HTML drawn last (redraw only what changed)
  const slot = '<div class="card slot"></div>';

  const VERBS = {
    check: "checks", call: "calls", bet: "bets", raise: "raises to", fold: "folds",
    allin: "is all in",
  };
  // The amount shows once: in the tag only while no bet lies in front of the seat (the
  // bet chip beside the tag shows it, action's `amount` being the seat's total in front).
  function actionTag(a, withAmount) {
    if (!a) return "";
    const priced = withAmount && a.amount && a.action !== "fold" && a.action !== "check";
    const amount = priced ? " " + chips(a.amount) : "";
    return a.action === "allin" ? "" : `<span class="tag">${esc(a.action)}${amount}</span>`;
  }

  function seatHtml(s, frame) {
    let hole = "";
    if (s.cards && s.cards.length) hole = s.cards.map(card).join("");
    else if (s.card_count > 0) hole = back.repeat(Math.min(s.card_count, 2));
    const dealer = s.dealer ? '<span class="dealer">D</span>' : "";
    let sub = `${chips(s.stack)}`;
    if (s.hand_name) sub = `<span class="hand-name">${esc(s.hand_name)}</span>`;
    let act = "";
    if (s.won) act += `<span class="tag won">wins ${chips(s.won)}</span>`;
    else if (s.status === "allin") act += '<span class="tag allin">all in</span>';
    else if (s.status === "folded") act += '<span class="tag">fold</span>';
    else act += actionTag(s.action, !s.bet);
    if (s.bet) act += `<span class="bet">${chips(s.bet)}</span>`;
    let eq = "";
    if (s.equity !== null && s.equity !== undefined) {
      const best = frame.seats.every((o) => o.equity === null || o.equity <= s.equity);
      eq = `<div class="equity${best ? " best" : ""}" data-equity="${s.equity}">` +
        `${s.equity.toFixed(1)}<small>%</small></div>` +
        `<div class="bar" style="width:${Math.max(0, Math.min(100, s.equity))}%"></div>`;
    } else {
      eq = '<div class="equity-none"></div>';
    }
    let outs = "";
    if (s.outs && s.outs.length) {
      outs = `<div class="outs" data-outs="${s.outs.join(" ")}"><b>${s.outs.length} OUT` +
        `${s.outs.length === 1 ? "" : "S"}</b>${s.outs.map((c) => c[0].replace("T", "10") +
          SUITS[c[1]]).join(" ")}</div>`;
    }
    return `<div class="hole">${hole}</div>` +
      `<div class="who"><div class="name">${esc(s.player)}${dealer}</div>` +
      `<div class="sub">${sub}</div></div>` +
      `<div class="act">${act}</div>${eq}${outs}`;
  }

  function render(frame) {
    $("hand-no").textContent = frame.hand ? `Hand ${frame.hand}` : "";
    const lv = frame.level;
    $("blinds").textContent = lv
      ? `Blinds ${chips(lv.small_blind)}/${chips(lv.big_blind)}` + (lv.ante ? ` · ante ${chips(lv.ante)}` : "")
      : "";
    if (view === "preview") {
      $("delay-info").textContent = frame.delay !== null ? `· on air ${frame.delay}s behind` : "";
    }

    const banner = $("banner");
    if (frame.banner) {
      banner.hidden = false;
      banner.dataset.kind = frame.banner.kind;
      banner.querySelector(".banner-title").textContent = frame.banner.title;
      banner.querySelector(".banner-text").textContent = frame.banner.text;
      banner.querySelector(".banner-rule").textContent = frame.banner.rule ? `TDA rule ${frame.banner.rule}` : "";
    } else {
      banner.hidden = true;
      delete banner.dataset.kind;
    }

    const seats = $("seats");
    const keep = new Set();
    for (const s of frame.seats) {
      const key = String(s.seat);
      keep.add(key);
      let el = seats.querySelector(`.seat[data-seat="${key}"]`);
      if (!el) {
        el = document.createElement("div");
        el.dataset.seat = key;
        seats.appendChild(el);
      }
      const classes = ["seat", "plate", s.status];
      if (s.to_act) classes.push("to-act");
      if (s.won) classes.push("winner");
      el.className = classes.join(" ");
      el.dataset.status = s.status;
      const html = seatHtml(s, frame);
      if (drawn.get(key) !== html) {
        el.innerHTML = html;
        drawn.set(key, html);
      }
    }
    for (const el of Array.from(seats.children)) {
      if (!keep.has(el.dataset.seat)) {
        drawn.delete(el.dataset.seat);
        el.remove();
      }
    }
    seats.hidden = frame.seats.length === 0;

    const boardCards = frame.board || [];
    let board = boardCards.map(card).join("");
    if (frame.hand) board += slot.repeat(Math.max(0, 5 - boardCards.length));
    $("board").innerHTML = board;
    $("board").hidden = !frame.hand;

    const pots = frame.pots || [];
    let potHtml = "";
    if (frame.hand) {
      potHtml = `<div class="pot-main">Pot <span>${chips(frame.pot_total)}</span></div>`;
      pots.slice(1).forEach((p, i) => {
        potHtml += `<div class="pot-side">Side pot ${i + 1} <span>${chips(p.amount)}</span></div>`;
      });
    }
    $("pots").innerHTML = potHtml;
    $("pots").hidden = !frame.hand;

    const last = $("last-action");
    const a = frame.last_action;
    if (a && frame.hand && !frame.showdown && !frame.hand_over) {
      const verb = VERBS[a.action] || a.action;
      const amount = ["bet", "raise", "call"].includes(a.action) ? " " + chips(a.amount) : "";
      last.textContent = `${a.player || "Seat " + a.seat} ${verb}${amount}`;
      last.hidden = false;
    } else {
      last.hidden = true;
    }
    body.dataset.seq = String(frame.seq);
    body.dataset.rendered = String(Date.now());
  }

  let retry = 500;
  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${window.location.host}${wsPath}`);
    ws.onopen = () => { $("connection").hidden = true; retry = 500; };
    ws.onmessage = (msg) => {
      let frame;
      try { frame = JSON.parse(msg.data); } catch (e) { return; }
      if (frame && frame.type === "frame") render(frame);
    };
    ws.onclose = () => {
      $("connection").hidden = false;
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 5000);
    };
  }
  connect();
})();

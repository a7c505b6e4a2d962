// The room monitor: reload the server-rendered parts of the page when the room's live
// stream (/api/live, Server-Sent Events) says a batch was stored, and every few seconds
// (ages, offline detection); acknowledge alerts; step through a stored hand.
"use strict";

(function () {
  const live = document.getElementById("live");
  const parts = () => Array.from(document.querySelectorAll("[data-fragment]"));
  let timer = null;
  let busy = false;
  let again = false;
  // Reloads are spaced by twice what the last one cost (at least 250 ms): a big room
  // under a stream of batches costs the server at most a third of its time per page.
  let lastEnd = 0;
  let lastCost = 0;

  async function reload() {
    if (busy) { again = true; return; }
    busy = true;
    const began = performance.now();
    try {
      for (const el of parts()) {
        const response = await fetch(el.dataset.fragment, { cache: "no-store" });
        if (response.ok) {
          el.innerHTML = await response.text();
          el.dataset.loaded = String(Date.now());
        }
      }
      document.body.dataset.rendered = String(Date.now());
    } catch (err) {
      live.classList.add("off");
    } finally {
      busy = false;
      lastEnd = performance.now();
      lastCost = lastEnd - began;
      if (again) { again = false; schedule(0); }
    }
  }

  function schedule(delay) {
    if (timer !== null) return;
    const spacing = lastEnd + Math.max(250, 2 * lastCost) - performance.now();
    timer = setTimeout(() => { timer = null; reload(); }, Math.max(delay, spacing));
  }

  function connect() {
    if (!parts().length || !window.EventSource) return;
    const source = new EventSource("/api/live");
    source.onopen = () => { live.classList.remove("off"); schedule(0); };
    source.addEventListener("batch", () => schedule(50));
    source.onerror = () => { live.classList.add("off"); };
  }

  // Acknowledge: the name and the token stay in this browser (localStorage).
  function setupAck() {
    const name = document.getElementById("ack-name");
    const token = document.getElementById("ack-token");
    if (!name || !token) return;
    name.value = localStorage.getItem("monitor.name") || "";
    token.value = localStorage.getItem("monitor.token") || "";
    name.addEventListener("change", () => localStorage.setItem("monitor.name", name.value));
    token.addEventListener("change", () => localStorage.setItem("monitor.token", token.value));
    const error = document.getElementById("ack-error");
    async function post(url, body) {
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token.value}` },
        body: JSON.stringify({ by: name.value.trim(), ...body }),
      });
      if (!response.ok) {
        error.textContent = response.status === 401 ? "wrong token" : `refused (${response.status})`;
        return false;
      }
      return true;
    }
    document.addEventListener("click", async (ev) => {
      const button = ev.target.closest("button.ack, button.ack-all");
      if (!button) return;
      error.textContent = "";
      if (!name.value.trim()) { error.textContent = "give your name first"; name.focus(); return; }
      button.disabled = true;
      let ok;
      if (button.classList.contains("ack-all")) {
        // every alert not acknowledged of this table and kind, in one request
        ok = await post("/api/table-alerts/ack", {
          table: button.dataset.table, kind: button.dataset.kind,
        });
      } else {
        const ids = button.dataset.alerts.split(",").map(Number);
        ok = ids.length === 1
          ? await post(`/api/table-alerts/${ids[0]}/ack`, {})
          : await post("/api/table-alerts/ack", { ids });
      }
      if (!ok) { button.disabled = false; return; }
      schedule(0);
    });
  }

  // Replay: one step shown at a time.
  function setupReplay() {
    const replay = document.querySelector(".replay");
    if (!replay) return;
    const steps = Array.from(replay.querySelectorAll(".step"));
    const slider = replay.querySelector(".slider");
    const position = replay.querySelector(".position");
    let at = 0;
    const show = (i) => {
      at = Math.max(0, Math.min(steps.length - 1, i));
      steps.forEach((s, k) => { s.hidden = k !== at; });
      slider.value = String(at);
      position.textContent = `step ${at + 1} of ${steps.length}`;
      replay.dataset.at = String(at);
    };
    replay.addEventListener("click", (ev) => {
      const go = ev.target.closest("[data-go]");
      if (go) show(at + Number(go.dataset.go));
      const jump = ev.target.closest("[data-jump]");
      if (jump) {  // the first step of that street
        const first = steps.findIndex((s) => s.dataset.street === jump.dataset.jump);
        if (first >= 0) show(first);
      }
    });
    slider.addEventListener("input", () => show(Number(slider.value)));
    document.addEventListener("keydown", (ev) => {
      if (ev.key === "ArrowRight") show(at + 1);
      if (ev.key === "ArrowLeft") show(at - 1);
    });
    show(0);
  }

  setupAck();
  setupReplay();
  connect();
  if (parts().length) setInterval(() => schedule(0), 5000);
  document.body.dataset.rendered = String(Date.now());
})();

// The replay viewer: any record (docs/RECORD.md), from the server or from a file,
// stepped or played reveal by reveal, with every slap round's hands on the flies.

import { replay } from "./engine.js";
import { cardName, playerName, t, when } from "./i18n.js";
import { api } from "./net.js";
import { fitCentre, renderTable, SEAT_COLOURS } from "./table.js";
import { botMark, esc, errorText, navigate, toast, typing } from "./ui.js";
import { me, players, recordUrl } from "./identity.js";

const STEP_MS = 900;

const ICONS = {
  first: "M6 5h2v14H6zM20 5v14L9 12z",
  prev: "M18 5v14L7 12z",
  play: "M7 5v14l12-7z",
  pause: "M6 5h4v14H6zM14 5h4v14h-4z",
  next: "M6 5v14l11-7z",
  last: "M16 5h2v14h-2zM4 5v14l11-7z",
};
const icon = (name) =>
  `<svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true"><path d="${ICONS[name]}" fill="currentColor"/></svg>`;

function frameText(rec, f) {
  const name = (seat) => playerName(rec.seats[seat], seat);
  if (f.kind === "deal") return t("replay.deal", { name: name(rec.start ?? 0) });
  const args = { name: name(f.seat), card: cardName(f.card), n: f.turn + 1 };
  if (f.kind === "place") return t("replay.placed", args);
  if (f.kind === "trigger") return t(f.allowed.length ? "replay.trigger" : "replay.triggerEmpty", args);
  // R15: an empty centre had nothing to slap; a round nobody slapped had no hands to lift.
  if (!f.allowed.length && !f.centre.length) return t("replay.resolvedEmpty", args);
  if (!f.centre.some((e) => e.hands.length)) return t("replay.resolvedNone", args);
  return t("replay.resolved", args);
}

function sceneOf(rec, f, last, result) {
  return {
    live: false,
    seats: rec.seats.map((p, i) => ({
      name: p.name,
      kind: p.kind,
      level: p.level,
      draw: f.draw[i],
      won: f.won[i],
      points: f.points[i],
    })),
    me: null,
    hands: rec.rules.hands,
    toMove: f.kind === "deal" ? f.toMove : f.seat,
    turnLabel: f.kind === "deal" ? null : "replay.revealer",
    centre: f.centre,
    fresh: f.kind === "place" ? f.card : null,
    trigger: f.trigger ? { card: f.trigger, seat: f.seat } : null,
    roundOpen: f.kind === "trigger",
    laid: null,
    mine: [],
    resolved: f.kind === "resolve" ? { allowed: f.allowed, won: f.wonCards, penalties: f.penalties } : null,
    canReveal: false,
    over: last && f.over,
    result: last && f.over ? result : null,
  };
}

function resultHtml(rec, result) {
  const order = result.places.map((place, seat) => ({ place, seat })).sort((a, b) => a.place - b.place || a.seat - b.seat);
  return `<table class="scores"><thead><tr><th>${esc(t("end.placeHead"))}</th><th>${esc(t("end.player"))}</th>
    <th class="num">${esc(t("end.points"))}</th><th class="num">${esc(t("end.flies"))}</th></tr></thead><tbody>${order
      .map(
        ({ place, seat }) => `<tr class="${place === 1 ? "first" : ""}"><td class="place">${esc(t("end.place", { n: place }))}${
          result.places.filter((p) => p === place).length > 1 ? ` <small>${esc(t("end.tie"))}</small>` : ""
        }</td>
        <td><span class="seat-no" style="background:${SEAT_COLOURS[seat % 8]}">${seat + 1}</span> ${esc(playerName(rec.seats[seat], seat))}</td>
        <td class="num">${result.points[seat]}</td><td class="num">${result.flies[seat]}</td></tr>`,
      )
      .join("")}</tbody></table>`;
}

export function replayPage(app, url) {
  let rec = null;
  let game = null;
  let i = 0;
  let playing = false;
  let timer = null;
  let speed = 1;
  let finalClosed = false;

  function pickerHtml() {
    return `<div class="page"><h1>${esc(t("replay.title"))}</h1>
      <section class="card-box my-games" hidden><h2>${esc(t("replay.yourGames"))}</h2><ul class="game-list"></ul></section>
      <section class="card-box public-games"><h2>${esc(t("replay.recent"))}</h2>
        <form class="game-filters">
          <label class="field"><span>${esc(t("replay.byPlayer"))}</span>
            <input type="search" name="name" maxlength="32" autocomplete="off"></label>
          <label class="field"><span>${esc(t("replay.bySeats"))}</span>
            <select name="seats"><option value="">${esc(t("replay.any"))}</option>
            ${[2, 3, 4, 5, 6, 7, 8].map((n) => `<option value="${n}">${n}</option>`).join("")}</select></label>
          <label class="field"><span>${esc(t("replay.byRated"))}</span>
            <select name="rated"><option value="">${esc(t("replay.any"))}</option>
            <option value="true">${esc(t("replay.ratedOnly"))}</option>
            <option value="false">${esc(t("replay.unratedOnly"))}</option></select></label>
        </form>
        <ul class="game-list" aria-live="polite"></ul>
        <p class="muted none" hidden>${esc(t("replay.noneFound"))}</p>
        <button type="button" class="btn secondary more" hidden>${esc(t("replay.more"))}</button>
      </section>
      <section class="card-box drop-zone">
      <h2>${esc(t("replay.orFile"))}</h2>
      <p class="muted">${esc(t("replay.intro"))}</p>
      <label class="field"><span>${esc(t("replay.file"))}</span>
        <input type="file" id="record-file" accept=".json,application/json"></label>
      <p class="muted" id="replay-error"></p>
    </section></div>`;
  }

  /** Your last games, each a link to its replay (none without an identity or a game). */
  async function listGames() {
    const who = me();
    if (!who) return;
    let games;
    try {
      ({ games } = await players.games(who.player));
    } catch {
      return; // the file picker is still there
    }
    const box = app.querySelector(".my-games");
    if (!box || !games.length) return;
    box.querySelector("ul").innerHTML = games
      .map((g) => {
        const href = `?replay=${encodeURIComponent(recordUrl(g.game_id))}`;
        return `<li><a href="${esc(href)}" data-replay>${esc(when(g.ended_at))}</a>
          <span class="muted">${esc(t("end.place", { n: g.place }))}/${g.seats} · ${esc(t("seat.points", { n: g.points }))}</span></li>`;
      })
      .join("");
    box.hidden = false;
    box.addEventListener("click", (ev) => {
      const a = ev.target.closest("a[data-replay]");
      if (!a) return;
      ev.preventDefault();
      navigate(a.getAttribute("href"));
    });
  }

  /** The recent public games, as the filters ask, a page at a time (GET /api/games). */
  function listPublic() {
    const box = app.querySelector(".public-games");
    const form = box.querySelector("form");
    const list = box.querySelector("ul");
    const more = box.querySelector(".more");
    let next = null;
    let asked = 0; // answers to an older question are dropped
    const item = (g) => {
      const href = `?replay=${encodeURIComponent(g.record_url)}`;
      const names = [...g.players]
        .sort((a, b) => a.place - b.place || a.seat - b.seat)
        .map((s) => `${esc(playerName(s, s.seat))}${botMark(s.bot)}${s.rating != null ? ` <span class="muted">${s.rating}</span>` : ""}`)
        .join(", ");
      return `<li><a href="${esc(href)}" data-replay>${esc(when(g.ended_at))}</a>
        <span>${names}</span>
        <span class="muted">${esc(t("replay.seats", { n: g.seats }))}${g.rated ? ` · ${esc(t("replay.rated"))}` : ""}</span></li>`;
    };
    async function fetchPage(fresh) {
      const n = ++asked;
      const filters = Object.fromEntries(new FormData(form));
      filters.name = filters.name.trim();
      if (!fresh) filters.before = next;
      let page;
      try {
        page = await players.listed(filters);
      } catch (err) {
        if (n === asked) toast(errorText(err.code), "error");
        return;
      }
      if (n !== asked || !app.contains(box)) return;
      const html = page.games.map(item).join("");
      if (fresh) list.innerHTML = html;
      else list.insertAdjacentHTML("beforeend", html);
      next = page.next;
      more.hidden = next == null;
      box.querySelector(".none").hidden = list.children.length > 0;
    }
    let typingTimer = null;
    form.addEventListener("input", (ev) => {
      clearTimeout(typingTimer);
      typingTimer = setTimeout(() => fetchPage(true), ev.target.name === "name" ? 300 : 0);
    });
    form.addEventListener("submit", (ev) => ev.preventDefault());
    more.addEventListener("click", () => fetchPage(false));
    box.addEventListener("click", (ev) => {
      const a = ev.target.closest("a[data-replay]");
      if (!a) return;
      ev.preventDefault();
      navigate(a.getAttribute("href"));
    });
    fetchPage(true);
  }

  function showPicker(errorKey) {
    stop();
    app.innerHTML = pickerHtml();
    listGames();
    listPublic();
    if (errorKey) app.querySelector("#replay-error").textContent = t(errorKey);
    const open = async (file) => {
      if (!file) return;
      try {
        load(JSON.parse(await file.text()));
      } catch (err) {
        showPicker(err instanceof SyntaxError ? "replay.error.json" : err.message);
      }
    };
    app.querySelector("#record-file").addEventListener("change", (ev) => open(ev.target.files[0]));
    // A record file can also be dropped anywhere on the box.
    const zone = app.querySelector(".drop-zone");
    zone.addEventListener("dragover", (ev) => {
      ev.preventDefault();
      zone.classList.add("over");
    });
    zone.addEventListener("dragleave", () => zone.classList.remove("over"));
    zone.addEventListener("drop", (ev) => {
      ev.preventDefault();
      zone.classList.remove("over");
      open(ev.dataTransfer.files[0]);
    });
  }

  function load(record) {
    game = replay(record);
    rec = record;
    i = 0;
    app.innerHTML = `<div class="table-page replay">
      <div class="replay-controls">
        <button class="btn secondary" data-step="first" aria-label="${esc(t("replay.first"))}" title="${esc(t("replay.first"))}">${icon("first")}</button>
        <button class="btn secondary" data-step="prev" aria-label="${esc(t("replay.prev"))}" title="${esc(t("replay.prev"))}">${icon("prev")}</button>
        <button class="btn" data-step="play" aria-label="${esc(t("replay.play"))}" title="${esc(t("replay.play"))}">${icon("play")}</button>
        <button class="btn secondary" data-step="next" aria-label="${esc(t("replay.next"))}" title="${esc(t("replay.next"))}">${icon("next")}</button>
        <button class="btn secondary" data-step="last" aria-label="${esc(t("replay.last"))}" title="${esc(t("replay.last"))}">${icon("last")}</button>
        <select id="speed" aria-label="${esc(t("replay.speed"))}">
          ${[0.5, 1, 2, 4].map((x) => `<option value="${x}" ${x === speed ? "selected" : ""}>${x}×</option>`).join("")}
        </select>
        <input type="range" id="scrub" min="0" max="${game.frames.length - 1}" value="0" aria-label="${esc(t("replay.position"))}">
        <span class="step-info" id="step-info"></span>
        ${url ? `<a class="btn secondary" href="${esc(url)}" download="flyswat-${esc(record.id || "record")}.json" data-download>${esc(t("players.download"))}</a>` : ""}
      </div>
      <div class="replay-note" id="replay-note"></div>
      <div class="replay-text" id="replay-text"></div>
      <div class="replay-table" id="replay-table"></div>
    </div>`;
    const note = app.querySelector("#replay-note");
    if (game.problems.length) {
      note.classList.add("bad");
      note.textContent = t("replay.problems", { n: game.problems[0].turn + 1 });
    } else {
      note.textContent = t("replay.ok", { seats: rec.rules.seats, turns: rec.turns.length, id: rec.id ?? "" });
    }
    app.querySelector(".replay-controls").addEventListener("click", (ev) => {
      const b = ev.target.closest("[data-step]");
      if (!b) return;
      const what = b.dataset.step;
      if (what === "play") return playing ? stop() : play();
      stop();
      if (what === "first") show(0);
      else if (what === "prev") show(i - 1);
      else if (what === "next") show(i + 1);
      else if (what === "last") show(game.frames.length - 1);
    });
    app.querySelector("#scrub").addEventListener("input", (ev) => {
      stop();
      show(Number(ev.target.value));
    });
    app.querySelector("#speed").addEventListener("change", (ev) => (speed = Number(ev.target.value)));
    show(0);
  }

  function show(k) {
    if (!game) return;
    i = Math.max(0, Math.min(game.frames.length - 1, k));
    const f = game.frames[i];
    const last = i === game.frames.length - 1;
    const holder = app.querySelector("#replay-table");
    // The caption first: its height (one line or two) decides how much room the centre has.
    app.querySelector("#step-info").textContent = t("replay.step", { i: i + 1, n: game.frames.length });
    app.querySelector("#replay-text").textContent = frameText(rec, f);
    renderTable(holder, sceneOf(rec, f, last, game.result));
    if (last && f.over && !finalClosed)
      holder.insertAdjacentHTML(
        "beforeend",
        `<div class="card-box final-overlay"><h2>${esc(t("end.title"))}</h2>${resultHtml(rec, game.result)}
          <button class="btn secondary" data-action="close-final">${esc(t("end.close"))}</button></div>`,
      );
    fitCentre(holder);
    app.querySelector("#scrub").value = String(i);
    app.querySelector("[data-step=play]").innerHTML = icon(playing ? "pause" : "play");
  }

  function play() {
    if (!game) return;
    if (i >= game.frames.length - 1) i = 0;
    playing = true;
    const tick = () => {
      if (!playing) return;
      if (i >= game.frames.length - 1) return stop();
      show(i + 1);
      const kind = game.frames[i].kind;
      timer = setTimeout(tick, (kind === "resolve" || kind === "trigger" ? 2 * STEP_MS : STEP_MS) / speed);
    };
    show(i);
    timer = setTimeout(tick, STEP_MS / speed);
  }

  function stop() {
    playing = false;
    clearTimeout(timer);
    const b = app.querySelector("[data-step=play]");
    if (b) b.innerHTML = icon("play");
  }

  function onKey(ev) {
    if (!game || typing(ev)) return;
    if (ev.key === "ArrowRight") (stop(), show(i + 1));
    else if (ev.key === "ArrowLeft") (stop(), show(i - 1));
    else if (ev.key === "Home") (stop(), show(0));
    else if (ev.key === "End") (stop(), show(game.frames.length - 1));
    else if (ev.key === " ") {
      ev.preventDefault();
      if (playing) stop();
      else play();
    } else return;
  }
  document.addEventListener("keydown", onKey);
  app.addEventListener("click", (ev) => {
    if (!ev.target.closest("[data-action=close-final]")) return;
    finalClosed = true;
    ev.target.closest(".final-overlay").remove();
  });
  const onResize = () => fitCentre(app);
  window.addEventListener("resize", onResize);

  if (url) {
    app.innerHTML = `<div class="page"><p class="muted">${esc(t("replay.loading"))}</p></div>`;
    let target;
    try {
      target = new URL(url, location.href);
    } catch {
      target = null;
    }
    if (!target || target.origin !== location.origin) showPicker("replay.error.url");
    else
      api
        .record(target.pathname + target.search)
        .then(load)
        .catch((err) => {
          if (err.code) {
            toast(errorText(err.code), "error");
            showPicker(null);
          } else showPicker(err.message);
        });
  } else showPicker(null);

  return {
    relabel() {
      if (!game) return showPicker(null);
      const k = i;
      load(rec);
      show(k);
    },
    leave() {
      stop();
      document.removeEventListener("keydown", onKey);
      window.removeEventListener("resize", onResize);
    },
  };
}

// The home page: create a table (seats, bots, short game, slap window), or join one.

import { flyCardSvg, swatterCardSvg, colourBadge, COLOUR_ORDER } from "./cards.js";
import { t } from "./i18n.js";
import { api } from "./net.js";
import { storage } from "./storage.js";
import { esc, navigate, showError } from "./ui.js";
import { SEAT_COLOURS } from "./table.js";

/** The bot levels offered; the server's list (GET /api/tables) replaces this one when it comes. */
let botLevels = ["easy", "normal", "hard"];

/** The short-game choices: cards removed unseen before the deal (R6). */
const LENGTHS = [
  { key: "home.length.full", remove: 0 },
  { key: "home.length.half", remove: 56 },
  { key: "home.length.quick", remove: 84 },
];

function seatRows(form) {
  const seats = Number(form.seats.value);
  const box = form.querySelector(".bots");
  const before = [...box.querySelectorAll("select")].map((s) => s.value);
  const rows = [];
  for (let i = 1; i < seats; i++) {
    const fallback = i >= 2 ? (botLevels.includes("normal") ? "normal" : botLevels[0]) : "human";
    const value = before[i - 1] ?? fallback;
    const opts = [`<option value="human" ${value === "human" ? "selected" : ""} data-i18n="home.seatHuman"></option>`]
      .concat(
        botLevels.map(
          (l) => `<option value="${l}" ${value === l ? "selected" : ""}>${esc(t("seat.bot", { level: t(`level.${l}`) }))}</option>`,
        ),
      )
      .join("");
    rows.push(`<label class="bot-row" style="--seat:${SEAT_COLOURS[i]}">
      <span class="seat-no" style="background:${SEAT_COLOURS[i]}">${i + 1}</span>
      <select name="seat${i}" aria-label="${esc(t("seat.empty", { n: i + 1 }))}">${opts}</select></label>`);
  }
  box.innerHTML = `<div class="bot-row"><span class="seat-no" style="background:${SEAT_COLOURS[0]}">1</span>
    <span data-i18n="home.seatYou"></span></div>${rows.join("")}`;
  box.querySelectorAll("[data-i18n]").forEach((el) => (el.textContent = t(el.dataset.i18n)));
}

function options(form) {
  const seats = Number(form.seats.value);
  const bots = [];
  for (let i = 1; i < seats; i++) {
    const v = form[`seat${i}`].value;
    if (v !== "human") bots.push({ seat: i, level: v });
  }
  const custom = form.remove.value.trim();
  const remove = custom !== "" ? Number(custom) : Number(form.length.value);
  return {
    name: form.name.value.trim(),
    seats,
    bots,
    remove: Math.min(remove, 112 - seats),
    slap_window_ms: Math.round(Number(form.window.value) * 1000),
  };
}

export function homePage(app) {
  const fan = [flyCardSvg("R", 3), flyCardSvg("Y", 5), swatterCardSvg(), flyCardSvg("B", 2), flyCardSvg("P", 4)].join("");
  const legend = COLOUR_ORDER.map(
    (c) => `<span>${colourBadge(c, "")}<span data-i18n="colour.${c}"></span></span>`,
  ).join("");
  app.innerHTML = `<div class="page home">
    <section class="card-box hero">
      <div class="cards-fan" aria-hidden="true">${fan}</div>
      <div><h1 data-i18n="home.title"></h1><p data-i18n="home.intro"></p>
        <div class="legend" aria-hidden="true">${legend}</div></div>
    </section>
    <section class="card-box">
      <h2 data-i18n="home.create"></h2>
      <form class="grid" id="create" autocomplete="off">
        <label class="field"><span data-i18n="home.name"></span>
          <input name="name" required maxlength="32" data-i18n-placeholder="home.namePlaceholder"></label>
        <label class="field"><span data-i18n="home.seats"></span>
          <select name="seats">${[2, 3, 4, 5, 6, 7, 8].map((n) => `<option ${n === 4 ? "selected" : ""}>${n}</option>`).join("")}</select>
          <small data-i18n="home.handsNote"></small></label>
        <div class="field players"><span data-i18n="home.players"></span><div class="bots"></div></div>
        <label class="field"><span data-i18n="home.length"></span>
          <select name="length">${LENGTHS.map((l) => `<option value="${l.remove}" data-i18n="${l.key}"></option>`).join("")}</select></label>
        <label class="field"><span data-i18n="home.window"></span>
          <input name="window" type="number" min="0.5" max="30" step="0.5" value="3">
          <small data-i18n="home.windowNote"></small></label>
        <details class="field"><summary data-i18n="home.advanced"></summary>
          <label class="field"><span data-i18n="home.remove"></span>
            <input name="remove" type="number" min="0" max="110" placeholder="0"></label>
        </details>
        <div class="row"><button class="btn big" type="submit" data-i18n="home.createButton"></button></div>
      </form>
    </section>
    <section class="card-box">
      <h2 data-i18n="home.join"></h2>
      <form class="row" id="join" autocomplete="off">
        <input name="code" required maxlength="12" data-i18n-placeholder="home.codePlaceholder" data-i18n-aria="home.code">
        <button class="btn" type="submit" data-i18n="home.joinButton"></button>
      </form>
      <div id="open-tables"></div>
    </section>
  </div>`;
  const form = app.querySelector("#create");
  form.name.value = storage.name();
  seatRows(form);
  form.seats.addEventListener("change", () => seatRows(form));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const opts = options(form);
    storage.saveName(opts.name);
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const seated = await api.createTable(opts);
      storage.saveSeat(seated.code, { seat: seated.seat, token: seated.token, host: seated.host, name: opts.name });
      navigate(`?table=${seated.code}`);
    } catch (err) {
      showError(err);
      button.disabled = false;
    }
  });
  app.querySelector("#join").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const raw = ev.target.code.value.trim();
    const m = /[?&]table=([A-Za-z0-9]+)/.exec(raw);
    navigate(`?table=${encodeURIComponent((m ? m[1] : raw).toUpperCase())}`);
  });
  listTables(app.querySelector("#open-tables"), (levels) => {
    if (!levels?.length || levels.join() === botLevels.join()) return;
    botLevels = levels;
    seatRows(form);
  });
  return { relabel: () => seatRows(form) };
}

async function listTables(el, onLevels) {
  let tables = [];
  try {
    const data = await api.tables();
    tables = data.tables || [];
    onLevels(data.levels);
  } catch {
    return;
  }
  if (!tables.length) return;
  el.innerHTML = `<h3 data-i18n="home.openTables"></h3><ul class="seat-list">${tables
    .map((tb) => {
      const humans = tb.players.filter((p) => p.kind === "human");
      const free = humans.filter((p) => !p.joined).length;
      return `<li><a class="who" href="?table=${esc(tb.code)}" data-table="${esc(tb.code)}">${esc(tb.code)}</a>
        <span class="pill ${tb.state === "lobby" ? "waiting" : ""}">${esc(t(`state.${tb.state}`))}</span>
        <span class="pill">${esc(t("home.freeSeats", { n: free }))}</span></li>`;
    })
    .join("")}</ul>`;
  el.querySelectorAll("[data-i18n]").forEach((x) => (x.textContent = t(x.dataset.i18n)));
  el.addEventListener("click", (ev) => {
    const a = ev.target.closest("a[data-table]");
    if (!a) return;
    ev.preventDefault();
    navigate(`?table=${a.dataset.table}`);
  });
}

// The home page: create a table (seats, bots, length, slap window, time to reveal), join one
// by code or link, the open tables (kept fresh while the page is shown), the featured game
// (live.js: the TV), and the way to learn.

import { flyCardSvg, swatterCardSvg, colourBadge, COLOUR_ORDER } from "./cards.js";
import { t } from "./i18n.js";
import { api } from "./net.js";
import { storage } from "./storage.js";
import { esc, errorText, navigate, showError } from "./ui.js";
import { SEAT_COLOURS } from "./table.js";
import { joinable, tableCode } from "./tables.js";
import { ensureMe, me, players, saveMe } from "./identity.js";
import { ChallengesBox } from "./challenge.js";
import { featuredTv } from "./live.js";

/** The bot levels offered; the server's list (GET /api/tables) replaces this one when it comes. */
let botLevels = ["easy", "normal", "hard"];

/** How often the open tables are asked for again while the home page is shown. */
const POLL_MS = 3000;

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
  // Bots by default: a new table can be played at once, alone; a seat for a friend is a choice.
  const fallback = botLevels.includes("normal") ? "normal" : botLevels[0];
  for (let i = 1; i < seats; i++) {
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
  const humans = [...box.querySelectorAll("select")].filter((s) => s.value === "human").length;
  form.querySelector("#seats-note").textContent = humans
    ? t(humans === 1 ? "home.byLinkOne" : "home.byLink", { n: humans })
    : t("home.allBots");
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
    public: form.public.checked,
    slap_window_ms: Math.round(Number(form.window.value) * 1000),
    turn_timeout_ms: Math.round(Number(form.turn.value) * 1000),
  };
}

/** The Play now box: who you are (or a name to choose, once), the button, your pages. */
function playNowHtml() {
  const who = me();
  const name = who
    ? `<span class="playing-as">${esc(t("players.playingAs", { name: who.name }))}</span>`
    : `<input name="player_name" required maxlength="32" data-i18n-placeholder="home.namePlaceholder" data-i18n-aria="home.name">`;
  const links = who
    ? `<p class="muted player-links"><a href="?player=${esc(who.player)}" data-page="?player=${esc(who.player)}" data-i18n="players.yourProfile"></a> ·
        <a href="?leaderboard" data-page="?leaderboard" data-i18n="players.leaderboard"></a></p>`
    : `<p class="claim"><button type="button" class="link-button" data-show-claim aria-expanded="false" data-i18n="players.haveCode"></button></p>
        <form class="row" id="claim-form" autocomplete="off" novalidate hidden>
          <input name="code" required maxlength="12" placeholder="ABCD-2345" data-i18n-aria="players.claimCode">
          <button class="btn secondary" type="submit" data-i18n="players.claim"></button></form>`;
  return `<section class="card-box play-now" id="play-now">
    <h2 data-i18n="players.playNowTitle"></h2><p data-i18n="players.playNowIntro"></p>
    <form class="row" id="play-now-form" autocomplete="off" novalidate>${name}
      <button class="btn big" type="submit" data-i18n="players.playNow"></button></form>
    <p class="error-text" id="play-now-error" role="alert" hidden></p>${links}</section>`;
}

/** Press Play now: make the identity on a first visit, then take a seat at a table. */
async function playNow(app) {
  const form = app.querySelector("#play-now-form");
  const error = app.querySelector("#play-now-error");
  error.hidden = true;
  const input = form.player_name;
  if (input && !checkName(input)) return;
  const button = form.querySelector("button");
  button.disabled = true;
  try {
    await ensureMe(input ? input.value.trim() : "");
    const seated = await players.playNow();
    storage.saveSeat(seated.code, { seat: seated.seat, token: seated.token, host: seated.host, name: me().name });
    navigate(`?table=${seated.code}`);
  } catch (err) {
    error.textContent = errorText(err.code);
    error.hidden = false;
    button.disabled = false;
  }
}

/** A name must have something other than spaces in it (the server refuses it otherwise). */
function checkName(input) {
  input.setCustomValidity(input.value.trim() ? "" : t("error.bad_name"));
  return input.reportValidity();
}

export function homePage(app) {
  const fan = [flyCardSvg("R", 3), flyCardSvg("Y", 5), swatterCardSvg(), flyCardSvg("B", 2), flyCardSvg("P", 4)].join("");
  const legend = COLOUR_ORDER.map(
    (c) => `<span>${colourBadge(c, "")}<span data-i18n="colour.${c}"></span></span>`,
  ).join("");
  const offer = storage.practice() === null;
  app.innerHTML = `<div class="page home">
    ${offer ? `<section class="card-box first-visit" id="first-visit"><h2 data-i18n="learn.offerTitle"></h2><p data-i18n="learn.offer"></p>
      <div class="row"><button class="btn big" data-learn="practice" data-i18n="learn.practice"></button>
      <button class="btn secondary" data-learn="rules" data-i18n="learn.rules"></button>
      <button class="btn secondary" data-learn="skip" data-i18n="learn.skip"></button></div></section>` : ""}
    <section class="card-box back-to-game" id="back-to-game" hidden></section>
    <section class="card-box challenges" id="challenges" hidden></section>
    ${playNowHtml()}
    <section class="card-box join-box">
      <h2 data-i18n="home.join"></h2>
      <form class="row" id="join" autocomplete="off" novalidate>
        <input name="code" required maxlength="300" data-i18n-placeholder="home.codePlaceholder" data-i18n-aria="home.code">
        <button class="btn" type="submit" data-i18n="home.joinButton"></button>
      </form>
      <p class="error-text" id="join-error" role="alert" hidden></p>
      <div id="open-tables"></div>
    </section>
    <section class="card-box tv" id="featured" aria-live="off"></section>
    <section class="card-box hero">
      <div class="cards-fan" aria-hidden="true">${fan}</div>
      <div><h1 data-i18n="home.title"></h1><p data-i18n="home.intro"></p>
        <div class="legend" aria-hidden="true">${legend}</div>
        <p class="learn-links"><a href="?learn" data-learn="rules" data-i18n="learn.rules"></a> · <a href="?practice" data-learn="practice" data-i18n="learn.practice"></a></p></div>
    </section>
    <section class="card-box">
      <h2 data-i18n="home.create"></h2>
      <form class="grid" id="create" autocomplete="off" novalidate>
        <label class="field"><span data-i18n="home.name"></span>
          <input name="name" required maxlength="32" data-i18n-placeholder="home.namePlaceholder"></label>
        <label class="field"><span data-i18n="home.seats"></span>
          <select name="seats">${[2, 3, 4, 5, 6, 7, 8].map((n) => `<option ${n === 4 ? "selected" : ""}>${n}</option>`).join("")}</select>
          <small data-i18n="home.handsNote"></small></label>
        <div class="field players"><span data-i18n="home.players"></span><div class="bots"></div>
          <small id="seats-note" class="seats-note"></small></div>
        <label class="field"><span data-i18n="home.length"></span>
          <select name="length">${LENGTHS.map((l) => `<option value="${l.remove}" data-i18n="${l.key}"></option>`).join("")}</select></label>
        <label class="field"><span data-i18n="home.window"></span>
          <input name="window" type="number" min="0.5" max="30" step="0.5" value="3">
          <small data-i18n="home.windowNote"></small></label>
        <label class="field"><span data-i18n="home.turn"></span>
          <input name="turn" type="number" min="0.2" max="60" step="0.1" value="4">
          <small data-i18n="home.turnNote"></small></label>
        <label class="check"><input type="checkbox" name="public" checked> <span data-i18n="players.public"></span></label>
        <details class="field"><summary data-i18n="home.advanced"></summary>
          <label class="field"><span data-i18n="home.remove"></span>
            <input name="remove" type="number" min="0" max="110" placeholder="0"></label>
        </details>
        <div class="row"><button class="btn big" type="submit" data-i18n="home.createButton"></button></div>
      </form>
    </section>
  </div>`;
  const form = app.querySelector("#create");
  form.name.value = me()?.name || storage.name(); // with an identity, its name is used
  app.querySelector("#play-now-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    playNow(app);
  });
  app.querySelector("[data-show-claim]")?.addEventListener("click", (ev) => {
    const claim = app.querySelector("#claim-form");
    claim.hidden = !claim.hidden;
    ev.currentTarget.setAttribute("aria-expanded", String(!claim.hidden));
    if (!claim.hidden) claim.code.focus();
  });
  app.querySelector("#claim-form")?.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      saveMe(await players.claim(ev.target.code.value));
      navigate("");
    } catch (err) {
      showError(err);
    }
  });
  seatRows(form);
  form.seats.addEventListener("change", () => seatRows(form));
  form.querySelector(".bots").addEventListener("change", () => seatRows(form));
  form.name.addEventListener("input", () => form.name.setCustomValidity(""));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (!checkName(form.name) || !form.reportValidity()) return;
    const opts = options(form);
    storage.saveName(opts.name);
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      opts.name = (await ensureMe(opts.name)).name;
      const seated = await players.createTable(opts);
      storage.saveSeat(seated.code, { seat: seated.seat, token: seated.token, host: seated.host, name: opts.name });
      navigate(`?table=${seated.code}`);
    } catch (err) {
      showError(err);
      button.disabled = false;
    }
  });
  const join = app.querySelector("#join");
  const joinError = app.querySelector("#join-error");
  join.code.addEventListener("input", () => (joinError.hidden = true));
  join.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const code = tableCode(join.code.value);
    const say = (words) => {
      joinError.textContent = words;
      joinError.hidden = false;
    };
    if (!code) return say(t("home.notACode"));
    try {
      await api.table(code);
      navigate(`?table=${encodeURIComponent(code)}`);
    } catch (err) {
      say(err.code === "not_found" || err.status === 404 ? t("home.noSuchTable", { code }) : errorText(err.code));
    }
  });
  app.querySelector(".page.home").addEventListener("click", (ev) => {
    const page = ev.target.closest("a[data-page]");
    if (page) {
      ev.preventDefault();
      return navigate(page.dataset.page);
    }
    const el = ev.target.closest("[data-learn]");
    if (!el) return;
    ev.preventDefault();
    const what = el.dataset.learn;
    if (what === "skip") {
      storage.savePractice("skipped");
      app.querySelector("#first-visit")?.remove();
    } else navigate(what === "rules" ? "?learn" : "?practice");
  });
  backToGame(app.querySelector("#back-to-game"));
  const tv = featuredTv(app.querySelector("#featured"));
  const list = app.querySelector("#open-tables");
  let tables = [];
  const draw = () => drawTables(list, tables);
  const challenges = new ChallengesBox(app.querySelector("#challenges"));
  let poll = null;
  let shown = true; // a refresh in flight when the page goes must not plan another
  const refresh = async () => {
    await challenges.refresh(); // the invitations to you, and the answers to yours
    try {
      const data = await fetchAll();
      tables = data.tables;
      if (data.levels?.length && data.levels.join() !== botLevels.join()) {
        botLevels = data.levels;
        seatRows(form);
      }
      draw();
    } catch {
      // the list waits for the next try
    }
    if (shown) poll = setTimeout(refresh, POLL_MS);
  };
  refresh();
  list.addEventListener("click", (ev) => {
    const a = ev.target.closest("a[data-table]");
    if (!a) return;
    ev.preventDefault();
    navigate(`?table=${a.dataset.table}`);
  });
  return {
    relabel: () => {
      seatRows(form);
      draw();
      challenges.draw();
      tv.relabel();
    },
    leave: () => {
      shown = false;
      clearTimeout(poll);
      tv.leave();
    },
  };
}

/** "Back to your game": the latest table this browser holds a seat at whose game is on. */
async function backToGame(box) {
  for (const code of storage.seatCodes().slice(0, 5)) {
    let info;
    try {
      info = await api.table(code);
    } catch {
      continue; // gone, or the network: the next one
    }
    if (info.state !== "playing" && info.state !== "lobby") continue;
    if (!box.isConnected) return;
    box.innerHTML = `<p>${esc(t("home.backToGameAt", { code }))}</p>
      <a class="btn big" href="?table=${esc(code)}" data-page="?table=${esc(code)}">${esc(t("home.backToGame"))}</a>`;
    box.hidden = false;
    return;
  }
}

/** Every page of GET /api/tables (protocol 2 pages it with `next`; protocol 1 sends one). */
async function fetchAll() {
  const first = await api.tables();
  const tables = [...(first.tables || [])];
  let next = first.next;
  for (let page = 0; next && page < 5; page++) {
    const more = await api.tables(next);
    tables.push(...(more.tables || []));
    next = more.next;
  }
  return { tables, levels: first.levels };
}

function drawTables(el, all) {
  const tables = joinable(all);
  if (!tables.length) {
    el.innerHTML = "";
    return;
  }
  el.innerHTML = `<h3>${esc(t("home.openTables"))}</h3><ul class="seat-list">${tables
    .map((tb) => {
      const free = tb.players.filter((p) => p.kind === "human" && !p.joined).length;
      const hostSeat = tb.players.find((p) => p.host);
      const host = hostSeat ? `${hostSeat.name || ""}${hostSeat.rating != null ? ` · ${hostSeat.rating}` : ""}` : "";
      return `<li data-code="${esc(tb.code)}"><a class="who" href="?table=${esc(tb.code)}" data-table="${esc(tb.code)}">${esc(tb.code)}</a>
        <span class="host-name">${esc(host)}</span>
        <span class="pill">${esc(t(free === 1 ? "home.freeSeatsOne" : "home.freeSeats", { n: free }))}</span></li>`;
    })
    .join("")}</ul>`;
}

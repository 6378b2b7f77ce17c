// Arenas (docs/PROTOCOL.md, Arenas; docs/PLAYERS.md): the list (?arena), one arena's page
// (?arena=ID: join or leave, the live standings asked again every POLL_MS, the countdown,
// the winner at the end) and, at an arena's table (?table=CODE&arena=ID), the bar that
// brings the player to their next table when the arena pairs them again. There is no socket
// away from a table: the page asks, and its asking says the player is there to be paired.

import { t } from "./i18n.js";
import { ensureMe, me, players } from "./identity.js";
import { storage } from "./storage.js";
import { esc, errorText, listPage, navigate } from "./ui.js";

/** How often an arena's page (and a finished arena table's bar) asks again. */
export const POLL_MS = 2000;

/** The address of an arena's page, and of a table of it. */
export const arenaUrl = (id) => `?arena=${encodeURIComponent(id)}`;
const tableUrl = (code, id) => `?table=${encodeURIComponent(code)}&arena=${encodeURIComponent(id)}`;

/** "12:05" from seconds. */
function clock(s) {
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, "0")}`;
}

function when(a, left) {
  if (a.phase === "upcoming") return t("arena.startsIn", { time: clock(left) });
  if (a.phase === "running") return t("arena.endsIn", { time: clock(left) });
  return a.winner ? t("arena.wonBy", { name: a.winner.name, points: a.winner.points }) : t("arena.ended");
}

/** Sit at the seat the arena gave and open its table. */
function sit(seat, id) {
  storage.saveSeat(seat.code, { seat: seat.seat, token: seat.token, host: seat.host, name: me()?.name || "" });
  navigate(tableUrl(seat.code, id));
}

/** One arena in the list. */
const arenaRow = (a) => `<li data-arena="${esc(a.id)}"><a href="${arenaUrl(a.id)}" data-open="${esc(a.id)}">${esc(a.name)}</a>
    <span class="pill phase-${esc(a.phase)}">${esc(t(`arena.phase.${a.phase}`))}</span>
    <span class="muted">${esc(when(a, a.phase === "upcoming" ? a.starts_in_s : a.ends_in_s))}</span>
    <span class="pill">${esc(t("arena.playersCount", { n: a.players }))}</span></li>`;

/** The list of arenas (?arena). */
export function arenasPage(app) {
  return listPage(app, { key: "arena", page: "arenas", load: async () => (await players.arenas()).arenas,
                         row: arenaRow, link: "open", url: arenaUrl, everyMs: POLL_MS * 5 });
}

function standingRow(s, mine) {
  const fire = s.fire ? ` <span class="fire" title="${esc(t("arena.fire"))}" aria-label="${esc(t("arena.fire"))}">🔥</span>` : "";
  const playing = s.playing ? ` <small class="muted">${esc(t("arena.playing"))}</small>` : "";
  return `<tr class="${s.id === mine ? "me" : ""}" data-player="${esc(s.id)}"><td class="num">${s.rank}</td>
    <td class="who"><a href="?player=${esc(s.id)}" data-page="?player=${esc(s.id)}">${esc(s.name)}</a>${fire}${playing}</td>
    <td class="num points">${s.points}</td><td class="num">${s.games}</td><td class="num">${s.wins}</td></tr>`;
}

/** One arena's page (?arena=ID). */
export function arenaPage(app, id) {
  let view = null;
  let error = null;
  let shown = true;
  let timer = null;
  let tick = null;
  let asked = 0; // when the view was answered (ms): the countdown runs from it
  let busy = false;

  const left = () => {
    if (!view) return 0;
    const a = view.arena;
    const base = a.phase === "upcoming" ? a.starts_in_s : a.ends_in_s;
    return Math.max(0, base - Math.floor((Date.now() - asked) / 1000));
  };
  const action = () => {
    const a = view.arena;
    if (a.phase === "ended") return "";
    const mine = view.me;
    if (mine?.active)
      return `<p class="arena-status" id="arena-status" role="status">${esc(t(a.phase === "running" ? "arena.waiting" : "arena.joinedEarly"))}</p>
        <button class="btn secondary" data-leave>${esc(t("arena.leave"))}</button>`;
    const name = me()
      ? ""
      : `<input name="player_name" required maxlength="32" data-i18n-placeholder="home.namePlaceholder" data-i18n-aria="home.name" placeholder="${esc(t("home.namePlaceholder"))}">`;
    return `<form class="row" id="arena-join" autocomplete="off" novalidate>${name}
      <button class="btn big" type="submit" data-join>${esc(t("arena.join"))}</button></form>`;
  };
  const draw = () => {
    if (error && !view) {
      app.innerHTML = `<div class="page"><section class="card-box"><p class="error-text">${esc(errorText(error))}</p>
        <p><a href="?arena" data-page="?arena">${esc(t("arena.all"))}</a></p></section></div>`;
      return;
    }
    if (!view) {
      app.innerHTML = `<div class="page"><section class="card-box"><p class="muted">${esc(t("table.connecting"))}</p></section></div>`;
      return;
    }
    const a = view.arena;
    const mine = view.me;
    const winner =
      a.phase === "ended"
        ? `<p class="arena-winner" id="arena-winner">${esc(a.winner ? t("arena.wonBy", { name: a.winner.name, points: a.winner.points }) : t("arena.noWinner"))}</p>`
        : "";
    const place = mine ? `<p class="arena-me" id="arena-me">${esc(t("arena.yourPlace", { rank: mine.rank, points: mine.points, games: mine.games }))}</p>` : "";
    const rows = view.standings.map((s) => standingRow(s, me()?.player)).join("");
    app.innerHTML = `<div class="page arena" data-phase="${esc(a.phase)}">
      <section class="card-box"><h1>${esc(a.name)}</h1>
        <p><span class="pill phase-${esc(a.phase)}">${esc(t(`arena.phase.${a.phase}`))}</span>
          <span class="arena-clock" id="arena-clock">${esc(when(a, left()))}</span>
          <span class="pill">${esc(t("arena.playersCount", { n: a.players }))}</span></p>
        ${winner}${place}${action()}
        <p class="error-text" id="arena-error" role="alert" hidden></p>
        <p class="muted">${esc(t("arena.rules"))}</p>
      </section>
      <section class="card-box"><h2>${esc(t("arena.standings"))}</h2>
        ${rows ? `<div class="table-scroll"><table class="scores arena-standings">
          <thead><tr><th class="num">#</th><th>${esc(t("end.player"))}</th><th class="num">${esc(t("arena.points"))}</th>
          <th class="num">${esc(t("arena.games"))}</th><th class="num">${esc(t("arena.wins"))}</th></tr></thead>
          <tbody>${rows}</tbody></table></div>` : `<p class="muted">${esc(t("arena.nobody"))}</p>`}
        <p><a href="?arena" data-page="?arena">${esc(t("arena.all"))}</a></p>
      </section></div>`;
  };
  const showError = (code) => {
    const el = app.querySelector("#arena-error");
    if (!el) return;
    el.textContent = errorText(code);
    el.hidden = false;
  };
  const answered = (v) => {
    view = v;
    asked = Date.now();
    error = null;
    if (v.me?.seat) return sit(v.me.seat, id); // paired: to the table at once
    if (shown && !busy) draw();
  };
  const refresh = async () => {
    try {
      answered(me() ? await players.arenaMe(id) : await players.arena(id));
    } catch (err) {
      if (err.code === "bad_secret" || err.code === "not_in_arena") {
        try {
          answered(await players.arena(id));
        } catch (again) {
          error = again.code;
        }
      } else error = err.code;
      if (shown && !view) draw();
    }
    if (!shown) return;
    clearTimeout(timer);
    timer = setTimeout(refresh, POLL_MS);
  };
  const onSubmit = async (ev) => {
    if (!ev.target.closest("#arena-join")) return;
    ev.preventDefault();
    const input = ev.target.player_name;
    if (input && !input.value.trim()) {
      input.setCustomValidity(t("error.bad_name"));
      return input.reportValidity();
    }
    busy = true;
    try {
      await ensureMe(input ? input.value.trim() : "");
      busy = false;
      answered(await players.joinArena(id));
    } catch (err) {
      busy = false;
      showError(err.code);
    }
  };
  const onClick = async (ev) => {
    const page = ev.target.closest("a[data-page]");
    if (page) {
      ev.preventDefault();
      return navigate(page.dataset.page);
    }
    if (ev.target.closest("[data-leave]")) {
      try {
        answered(await players.leaveArena(id));
      } catch (err) {
        showError(err.code);
      }
    }
  };
  app.addEventListener("submit", onSubmit);
  app.addEventListener("click", onClick);
  tick = setInterval(() => {
    const el = app.querySelector("#arena-clock");
    if (el && view) el.textContent = when(view.arena, left());
  }, 1000);
  draw();
  refresh();
  return {
    relabel: draw,
    leave: () => {
      shown = false;
      clearTimeout(timer);
      clearInterval(tick);
      app.removeEventListener("submit", onSubmit);
      app.removeEventListener("click", onClick);
    },
  };
}

/**
 * At a table of arena `id` (?table=CODE&arena=ID): a bar above the table back to the arena,
 * and once this table's game is over (`state()` says "over"), the arena asked every POLL_MS
 * so that the player's next table opens by itself when they are paired again.
 */
export function arenaBar(app, id, code, state) {
  const bar = document.createElement("p");
  bar.className = "arena-bar";
  bar.id = "arena-bar";
  app.prepend(bar);
  let timer = null;
  let stopped = false;
  const draw = () => {
    const over = state() === "over";
    bar.innerHTML = `${esc(t(over ? "arena.nextSoon" : "arena.atTable"))}
      <a href="${arenaUrl(id)}" data-arena-back>${esc(t("arena.back"))}</a>`;
  };
  const ask = async () => {
    if (stopped) return;
    if (state() === "over" && me()) {
      try {
        const seat = (await players.arenaMe(id)).me?.seat;
        if (!stopped && seat && seat.code !== code) return sit(seat, id);
      } catch {
        // asked again next time
      }
    }
    if (stopped) return;
    draw();
    timer = setTimeout(ask, POLL_MS);
  };
  bar.addEventListener("click", (ev) => {
    const a = ev.target.closest("a[data-arena-back]");
    if (!a) return;
    ev.preventDefault();
    navigate(arenaUrl(id));
  });
  draw();
  timer = setTimeout(ask, POLL_MS);
  return {
    relabel: draw,
    leave: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** A player's arenas for their profile: how many they won, and their places. */
export function arenaResultsHtml(results) {
  if (!results || !results.arenas.length) return "";
  const rows = results.arenas
    .map(
      (r) => `<li data-arena-result="${esc(r.id)}"><a href="${arenaUrl(r.id)}" data-page="${arenaUrl(r.id)}">${esc(r.name)}</a>
      ${r.won ? `<strong class="arena-won">🏆 ${esc(t("arena.won"))}</strong>` : ""}
      <span class="muted">${esc(t("arena.result", { place: r.place ?? "—", players: r.players, points: r.points }))}</span></li>`,
    )
    .join("");
  return `<section class="card-box" id="profile-arenas"><h2>${esc(t("arena.profileTitle"))}</h2>
    <p>${esc(t("arena.wonCount", { n: results.won }))}</p><ul class="seat-list">${rows}</ul></section>`;
}

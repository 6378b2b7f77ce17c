// Watching: the Live now page (?live: the public games being played, the best-rated first,
// each opened as a spectator with one click; kept fresh while it is shown) and the home
// page's featured game, flyswat's TV: the best-rated live game, watched live, then the next
// one when it ends.

import { t, playerName } from "./i18n.js";
import { api, Connection } from "./net.js";
import { botMark, esc, listPage, navigate } from "./ui.js";
import { GameManager } from "./game.js";

/** How often the live games are asked for again while they are shown. */
export const POLL_MS = 3000;
/** How long the TV keeps a finished game's end in view before it turns to the next one. */
export const NEXT_MS = 4000;

/** The address that opens a game as a spectator. */
export const watchUrl = (code) => `?table=${encodeURIComponent(code)}&watch`;

/** One live game as a line: its players (rating by each), the table's rating, its watchers. */
function gameRow(g) {
  const players = g.players
    .map((p, i) => `${esc(playerName(p, i))}${botMark(p.bot_account)}${p.rating != null ? ` <small>${p.rating}</small>` : ""}`)
    .join(" · ");
  const rating = g.rating != null ? t("live.rating", { rating: g.rating }) : t("live.unrated");
  return `<li data-code="${esc(g.code)}"><span class="live-players">${players}</span>
    <span class="pill">${esc(rating)}</span>
    <span class="pill">${esc(t(g.spectators === 1 ? "live.watchersOne" : "live.watchers", { n: g.spectators }))}</span>
    <a class="btn" href="${watchUrl(g.code)}" data-watch="${esc(g.code)}">${esc(t("live.watch"))}</a></li>`;
}

/** The Live now page (?live). */
export function livePage(app) {
  return listPage(app, { key: "live", page: "live", load: async () => (await api.live()).games,
                         row: gameRow, link: "watch", url: watchUrl, everyMs: POLL_MS });
}

/** An input that listens to nothing: the TV is watched, not played. */
class NoInput {
  stop() {}
}

const SILENT = { play() {}, enabled: () => false };

/**
 * The featured game in `box`: the best-rated live game (GET /api/live), watched live as a
 * spectator, quietly; when it ends, after NEXT_MS, the next best-rated one; with none live,
 * it says so and asks again every POLL_MS. Returns {leave, relabel}.
 */
export function featuredTv(box, { live = () => api.live(3), pauseMs = NEXT_MS } = {}) {
  const ended = new Set(); // the games seen to their end (the list may still hold one a moment)
  let game = null;
  let code = null;
  let timer = null;
  let stopped = false;

  const frame = (inner, link = "") => {
    const all = `<a class="tv-all" href="?live" data-live>${esc(t("tv.all"))}</a>`;
    box.innerHTML = `<div class="tv-head"><h2>${esc(t("tv.title"))}</h2>${link}</div>${inner}<p class="tv-foot">${all}</p>`;
  };
  const next = (ms) => {
    clearTimeout(timer);
    timer = setTimeout(pick, ms);
  };
  const none = () => {
    code = null;
    frame(`<p class="muted" id="tv-none">${esc(t("tv.none"))}</p>`);
  };

  async function pick() {
    if (stopped) return;
    let games = [];
    try {
      games = (await live()).games;
    } catch {
      // the network: try again soon
    }
    if (stopped) return;
    const best = games.find((g) => !ended.has(g.code));
    if (!best) {
      game?.leave();
      game = null;
      none();
      return next(POLL_MS);
    }
    watch(best.code);
  }

  function watch(c) {
    game?.leave();
    code = c;
    frame(
      // A preview: nothing in it takes the focus or a click (its link opens the game).
      `<div class="tv-screen" id="tv-screen" data-code="${esc(c)}" inert></div>`,
      `<a class="tv-link" href="${watchUrl(c)}" data-watch="${esc(c)}">${esc(t("tv.open"))}</a>`,
    );
    const screen = box.querySelector("#tv-screen");
    game = new GameManager(c, screen, {
      connect: (handlers) => new Connection(c, null, handlers),
      Input: NoInput,
      sound: SILENT,
      watch: true,
      quiet: true,
      onState: (s) => {
        const over = s.table?.state === "over" || s.stopped;
        if (over && code === c && !ended.has(c)) {
          ended.add(c);
          next(pauseMs);
        }
      },
    });
  }

  const onClick = (ev) => {
    const a = ev.target.closest("a[data-watch], a[data-live]");
    if (!a) return;
    ev.preventDefault();
    navigate(a.dataset.watch ? watchUrl(a.dataset.watch) : "?live");
  };
  box.addEventListener("click", onClick);
  none();
  pick();
  return {
    relabel: () => {
      const h = box.querySelector(".tv-head h2");
      if (h) h.textContent = t("tv.title");
      const link = box.querySelector(".tv-link");
      if (link) link.textContent = t("tv.open");
      const all = box.querySelector(".tv-all");
      if (all) all.textContent = t("tv.all");
      if (game) game.renderer.render(game.state, false);
      else none();
    },
    leave: () => {
      stopped = true;
      clearTimeout(timer);
      game?.leave();
      box.removeEventListener("click", onClick);
    },
  };
}

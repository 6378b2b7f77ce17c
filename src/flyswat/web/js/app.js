// The client's entry point: language, routing between the pages, the header.
//   /                 home: create a table, or join one
//   /?table=CODE      a table: lobby, game, end (a join link)
//   /?replay=URL      the replay of a record (empty: open a file)
//   /?learn           how to play: the rules
//   /?practice[=N]    the practice game against a slow bot (from lesson N)
//   /?player=ID       a player's profile: rating, games, replays, records
//   /?leaderboard     the rated players, best first
//   /?ratings         how ratings work
//   /?live            Live now: the public games being played, the best-rated first
//   /?table=CODE&watch  a table watched as a spectator (whatever seat this browser holds)
//   /?arena[=ID]      the arenas; one arena: join, its standings, its winner
//   /?table=CODE&arena=ID  a table of an arena: its next table opens when paired again

import { apply, language, onLanguage, preferredLanguage, setLanguage, t } from "./i18n.js";
import { navigate } from "./ui.js";
import { homePage } from "./home.js";
import { tablePage } from "./game.js";
import { replayPage } from "./replay.js";
import { sound } from "./sound.js";
import { practicePage, rulesPage } from "./learn.js";
import { tableCode } from "./tables.js";
import { profilePage } from "./profile.js";
import { leaderboardPage } from "./leaderboard.js";
import { ratingsPage } from "./ratings.js";
import { me } from "./identity.js";
import { keysOverlay } from "./keys.js";
import { livePage } from "./live.js";
import { arenaBar, arenaPage, arenasPage } from "./arena.js";

const SPEAKER = {
  on: "M4 9v6h4l5 4V5L8 9zm12.5 3a4.5 4.5 0 0 0-2.5-4v8a4.5 4.5 0 0 0 2.5-4zM14 3.2v2.1a7 7 0 0 1 0 13.4v2.1a9 9 0 0 0 0-17.6z",
  off: "M4 9v6h4l5 4V5L8 9zm12.6 3 2.7-2.7-1.4-1.4-2.7 2.7-2.7-2.7-1.4 1.4 2.7 2.7-2.7 2.7 1.4 1.4 2.7-2.7 2.7 2.7 1.4-1.4z",
};

/** The header's sound switch: shows and flips the remembered choice (sound.js). */
function soundSwitch() {
  const b = document.getElementById("sound");
  const show = () => {
    const on = sound.enabled();
    const key = on ? "sound.on" : "sound.off";
    b.setAttribute("aria-pressed", String(on));
    b.dataset.i18nTitle = key;
    b.dataset.i18nAria = key;
    b.innerHTML = `<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true"><path fill="currentColor" d="${SPEAKER[on ? "on" : "off"]}"/></svg>`;
    apply(b.parentElement);
  };
  b.addEventListener("click", () => sound.set(!sound.enabled()));
  sound.onChange(show);
  show();
}

let current = null;

/** A table page of an arena: the arena's bar above it, left with it. */
function withArena(page, app, id, code) {
  const bar = arenaBar(app, id, code, () => page.game.state.table?.state);
  return {
    ...page,
    relabel: () => {
      page.relabel();
      bar.relabel();
    },
    leave: () => {
      bar.leave();
      page.leave();
    },
  };
}

let shown = location.href; // the address of the page on screen

function route() {
  shown = location.href;
  if (current?.leave) current.leave();
  const params = new URLSearchParams(location.search);
  const app = document.getElementById("app");
  app.innerHTML = "";
  if (params.has("table")) {
    const raw = params.get("table");
    const code = tableCode(raw) || raw.trim().toUpperCase();
    current = tablePage(app, code, { watch: params.has("watch") });
    if (params.get("arena")) current = withArena(current, app, params.get("arena"), code);
  } else if (params.has("replay")) current = replayPage(app, params.get("replay"));
  else if (params.has("learn")) current = rulesPage(app);
  else if (params.has("practice")) current = practicePage(app, Number(params.get("practice")) || 1);
  else if (params.has("player")) current = profilePage(app, params.get("player") || me()?.player || "");
  else if (params.has("leaderboard")) current = leaderboardPage(app);
  else if (params.has("ratings")) current = ratingsPage(app);
  else if (params.has("live")) current = livePage(app);
  else if (params.has("arena")) current = params.get("arena") ? arenaPage(app, params.get("arena")) : arenasPage(app);
  else current = homePage(app);
  apply(app);
}

async function main() {
  const select = document.getElementById("lang");
  await setLanguage(preferredLanguage());
  select.value = language();
  select.addEventListener("change", () => setLanguage(select.value));
  soundSwitch();
  keysOverlay();
  onLanguage(() => {
    select.value = language();
    apply(document);
    current?.relabel?.();
  });
  document.addEventListener("click", (ev) => {
    const a = ev.target.closest("a[data-nav]");
    if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    ev.preventDefault();
    // A live game goes on without you (your turns played for you): ask before leaving it.
    if (current?.live?.() && !window.confirm(t("table.leaveConfirm"))) return;
    const profile = me() ? `?player=${encodeURIComponent(me().player)}` : "?player"; // none yet: says so
    navigate({ replay: "?replay", learn: "?learn", leaderboard: "?leaderboard", live: "?live", arena: "?arena", profile }[a.dataset.nav] || "");
  });
  window.addEventListener("popstate", () => {
    // Back, from a live game: asked as the header's links ask; refused, the table stays.
    if (current?.live?.() && !window.confirm(t("table.leaveConfirm"))) return history.pushState(null, "", shown);
    route();
  });
  window.addEventListener("flyswat:navigate", route);
  route();
}

main();

// Installable, and the practice game and the rules offline: the service worker keeps the
// client's files (sw.js). Not where there is none (plain http on another host than this one).
if ("serviceWorker" in navigator && window.isSecureContext)
  navigator.serviceWorker.register("sw.js").catch(() => {}); // without it, online only

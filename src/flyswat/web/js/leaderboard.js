// The leaderboard (?leaderboard): rated players, best first by the conservative estimate
// (GET /api/leaderboard), one's own row marked, and the bots' fixed ratings for scale.

import { t } from "./i18n.js";
import { botMark, esc, errorText, followPageLinks } from "./ui.js";
import { me, players } from "./identity.js";
import { provisionalMark } from "./rematch.js";

export function leaderboardPage(app) {
  let board = null;
  let programs = null; // the bot accounts' own board
  const mine = me()?.player;
  let shown = true; // an answer that comes after the page was left draws nothing

  const rowsOf = (list) =>
    list
      .map(
        (p) => `<tr class="${p.id === mine ? "mine" : ""}" data-player="${esc(p.id)}"><td class="num">${p.rank}</td>
        <td><a href="?player=${esc(p.id)}" data-page="?player=${esc(p.id)}">${esc(p.name)}</a>${botMark(p.bot)}${p.id === mine ? ` <em>(${esc(t("seat.you"))})</em>` : ""}</td>
        <td class="num">${p.rating}${provisionalMark(p.provisional)}</td><td class="num">${p.rated_games}</td></tr>`,
      )
      .join("");

  function draw() {
    if (!board || !shown) return;
    const rows = rowsOf(board.players);
    const botRows = programs ? rowsOf(programs.players) : "";
    const bots = Object.entries(board.bots)
      .map(([level, r]) => t("players.botRating", { level: t(`level.${level}`), rating: r }))
      .join(" · ");
    app.innerHTML = `<div class="page leaderboard"><section class="card-box">
      <h1>${esc(t("players.leaderboard"))}</h1><p class="muted">${esc(t("players.leaderboardIntro"))}</p>
      ${rows ? `<table class="scores"><thead><tr><th class="num">#</th><th>${esc(t("end.player"))}</th>
        <th class="num">${esc(t("players.rating"))}</th><th class="num">${esc(t("players.games"))}</th></tr></thead>
        <tbody>${rows}</tbody></table>` : `<p class="muted">${esc(t("players.noneRated"))}</p>`}
      <p class="muted bots-scale">${esc(bots)}</p>
      <p><a href="?ratings" data-page="?ratings">${esc(t("ratings.link"))}</a></p></section>
      ${botRows ? `<section class="card-box bot-board"><h2>${esc(t("players.botBoard"))}</h2>
        <table class="scores"><tbody>${botRows}</tbody></table></section>` : ""}</div>`;
  }

  const stop = followPageLinks(app);
  players
    .leaderboard()
    .then((b) => {
      board = b;
      draw();
      return players.leaderboard(0, "bots");
    })
    .then((b) => {
      programs = b;
      draw();
    })
    .catch((err) => {
      if (shown) app.innerHTML = `<div class="page"><p class="error-text">${esc(errorText(err.code))}</p></div>`;
    });
  const leave = () => {
    shown = false;
    stop();
  };
  return { relabel: draw, leave };
}

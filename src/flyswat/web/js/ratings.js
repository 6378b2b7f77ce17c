// How ratings work (?ratings): where a new player starts, what one game changes, the
// provisional mark of the first games, the leaderboard's order, the games that do not count.
// The bots' figures come from the server (GET /api/leaderboard), as the leaderboard shows them.

import { t } from "./i18n.js";
import { esc, followPageLinks } from "./ui.js";
import { players } from "./identity.js";

const PARTS = ["start", "moves", "provisional", "board", "unrated"];

export function ratingsPage(app) {
  let bots = null;
  const draw = () => {
    const scale = bots
      ? `<p class="muted bots-scale">${esc(Object.entries(bots).map(([level, r]) => t("players.botRating", { level: t(`level.${level}`), rating: r })).join(" · "))}</p>`
      : "";
    app.innerHTML = `<div class="page ratings-page"><section class="card-box">
      <h1>${esc(t("ratings.title"))}</h1><p>${esc(t("ratings.intro"))}</p>
      ${PARTS.map((k) => `<h2>${esc(t(`ratings.${k}.h`))}</h2><p>${esc(t(`ratings.${k}.p`))}</p>${k === "start" ? scale : ""}`).join("")}
      <p><a href="?leaderboard" data-page="?leaderboard">${esc(t("players.leaderboard"))}</a></p>
    </section></div>`;
  };
  const stop = followPageLinks(app);
  draw();
  players
    .leaderboard()
    .then((b) => {
      bots = b.bots;
      if (app.querySelector(".ratings-page")) draw();
    })
    .catch(() => {}); // offline: the words are enough
  return { relabel: draw, leave: stop };
}

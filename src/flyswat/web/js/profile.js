// A player's page (?player=ID): rating and place, games, places, points, flies won, the
// reaction times over time as a small plot, the too-fast count, and every game with its
// replay and its record to download (GET /api/players/{id}, /games in pages). One's own page
// also moves the identity to another device (a one-time code).

import { t, when } from "./i18n.js";
import { botMark, errorText, esc, navigate, showError } from "./ui.js";
import { me, players, recordUrl } from "./identity.js";
import { provisionalMark } from "./rematch.js";
import { challenge, challengeButton } from "./challenge.js";
import { arenaResultsHtml } from "./arena.js";

/** A small SVG line of values over games (oldest first); "" with fewer than two. */
export function sparkline(values, { width = 320, height = 80, label = "" } = {}) {
  const pts = values.map((v, i) => [i, v]).filter(([, v]) => v != null);
  if (pts.length < 2) return "";
  const ys = pts.map(([, v]) => v);
  const lo = Math.min(...ys);
  const hi = Math.max(...ys);
  const x = (i) => 6 + (i / (values.length - 1)) * (width - 12);
  const y = (v) => height - 14 - ((v - lo) / (hi - lo || 1)) * (height - 28);
  const line = pts.map(([i, v]) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const dots = pts.map(([i, v]) => `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="2.5"/>`).join("");
  return `<svg class="spark" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(label)}">
    <polyline points="${line}" fill="none" stroke="currentColor" stroke-width="2"/>${dots}
    <text x="4" y="11">${esc(Math.round(hi))}</text><text x="4" y="${height - 2}">${esc(Math.round(lo))}</text></svg>`;
}

function gameRow(g) {
  const delta = !g.rated ? "—" : g.delta > 0 ? `+${g.delta}` : g.delta < 0 ? `−${-g.delta}` : "±0";
  const date = when(g.ended_at);
  const replay = `?replay=${encodeURIComponent(recordUrl(g.game_id))}`;
  return `<tr data-game="${esc(g.game_id)}">
    <td class="when">${esc(date)}<span class="links"><a href="${esc(replay)}" data-page="${esc(replay)}" data-replay>${esc(t("players.replay"))}</a>
      <a href="${esc(recordUrl(g.game_id))}" download="flyswat-${esc(g.game_id)}.json" data-download>${esc(t("players.download"))}</a></span></td>
    <td class="num">${esc(t("end.place", { n: g.place }))}/${g.seats}</td>
    <td class="num">${g.points}</td><td class="num opt">${g.flies}</td>
    <td class="num opt">${g.reaction_ms == null ? "—" : esc(t("players.ms", { ms: g.reaction_ms }))}</td>
    <td class="num opt">${g.too_fast || ""}</td>
    <td class="num delta ${g.delta > 0 ? "up" : g.delta < 0 ? "down" : ""}">${delta}</td></tr>`;
}

/** The page of "You" before a first game: there is no profile yet, and the way to make one. */
function noProfile(app) {
  const draw = () => {
    app.innerHTML = `<div class="page no-profile-page"><section class="card-box"><h1>${esc(t("nav.profile"))}</h1>
      <p class="no-profile">${esc(t("players.noIdentity"))}</p>
      <button class="btn big" data-action="play-now">${esc(t("players.playNow"))}</button></section></div>`;
    app.querySelector("[data-action=play-now]").addEventListener("click", () => navigate(""));
  };
  draw();
  return { relabel: draw };
}

export function profilePage(app, id) {
  if (!id) return noProfile(app);
  let profile = null;
  let games = [];
  let next = null;
  let code = null;
  let arenas = null;
  const mine = me()?.player === id;

  function draw() {
    if (!profile) return;
    const p = profile;
    const facts = [
      [t("players.rating"), p.rating],
      [t("players.rank"), p.rank ?? "—"],
      [t("players.games"), p.games],
      [t("players.wins"), p.wins],
      [t("end.points"), p.points],
      [t("end.flies"), p.flies],
      [t("players.reaction"), p.reaction_ms == null ? "—" : t("players.ms", { ms: p.reaction_ms })],
      [t("players.tooFast"), p.too_fast],
    ];
    const oldest = [...games].reverse();
    const places = [1, 2, 3, 4].map((n) => [n, games.filter((g) => g.place === n).length]).filter(([, c]) => c);
    app.innerHTML = `<div class="page profile">
      <section class="card-box"><h1>${esc(p.name)}${botMark(p.bot)}${mine ? ` <em>(${esc(t("seat.you"))})</em>` : ""}</h1>
        <dl class="facts">${facts.map(([k, v], i) => `<div><dt>${esc(k)}</dt><dd>${esc(v)}${i === 0 ? provisionalMark(p.provisional) : ""}</dd></div>`).join("")}</dl>
        ${places.length ? `<p class="muted places">${esc(t("players.places", { places: places.map(([n, c]) => t("players.placeCount", { place: t("end.place", { n }), n: c })).join(" · ") }))}</p>` : ""}
        <div class="plots">
          <figure><figcaption>${esc(t("players.reactionPlot"))}</figcaption>${sparkline(oldest.map((g) => g.reaction_ms), { label: t("players.reactionPlot") }) || `<p class="muted">${esc(t("players.plotEmpty"))}</p>`}</figure>
          <figure><figcaption>${esc(t("players.ratingPlot"))}</figcaption>${sparkline(oldest.map((g) => g.rating_after), { label: t("players.ratingPlot") }) || `<p class="muted">${esc(t("players.plotEmpty"))}</p>`}</figure>
        </div>
        ${challengeButton(p)}
        <p><a href="?leaderboard" data-page="?leaderboard">${esc(t("players.leaderboard"))}</a> ·
          <a href="?ratings" data-page="?ratings">${esc(t("ratings.link"))}</a></p>
      </section>
      <section class="card-box"><h2>${esc(t("players.gamesTitle"))}</h2>
        ${games.length ? `<div class="table-scroll"><table class="scores games">
          <thead><tr><th>${esc(t("players.when"))}</th><th class="num">${esc(t("end.placeHead"))}</th>
          <th class="num">${esc(t("end.points"))}</th><th class="num opt">${esc(t("end.flies"))}</th>
          <th class="num opt">${esc(t("players.reaction"))}</th><th class="num opt">${esc(t("players.tooFast"))}</th>
          <th class="num">±</th></tr></thead>
          <tbody>${games.map(gameRow).join("")}</tbody></table></div>` : `<p class="muted">${esc(t("players.noGames"))}</p>`}
        ${next ? `<button class="btn secondary" data-more>${esc(t("players.more"))}</button>` : ""}
      </section>
      ${arenaResultsHtml(arenas)}
      ${mine ? `<section class="card-box"><h2>${esc(t("players.moveTitle"))}</h2><p class="muted">${esc(t("players.moveIntro"))}</p>
        ${code ? `<p class="claim-code" data-claim-code>${esc(code)}</p><p class="muted">${esc(t("players.moveCodeNote"))}</p>` : `<button class="btn secondary" data-make-code>${esc(t("players.makeCode"))}</button>`}
      </section>` : ""}
    </div>`;
  }

  let shown = true;

  async function load() {
    try {
      [profile, { games, next }, arenas] = await Promise.all([
        players.profile(id),
        players.games(id),
        players.arenaResults(id).catch(() => null), // without them, the rest of the profile
      ]);
      if (shown) draw();
    } catch (err) {
      if (shown) app.innerHTML = `<div class="page"><section class="card-box"><p class="error-text">${esc(errorText(err.code))}</p></section></div>`;
    }
  }

  app.addEventListener("click", onClick);
  async function onClick(ev) {
    if (ev.defaultPrevented) return; // the click that opened this page, followed already
    const page = ev.target.closest("a[data-page]");
    if (page) {
      ev.preventDefault();
      return navigate(page.dataset.page);
    }
    const challenged = ev.target.closest("[data-challenge]");
    if (challenged) return challenge(challenged.dataset.challenge, challenged);
    if (ev.target.closest("[data-more]")) {
      const more = await players.games(id, next);
      games = games.concat(more.games);
      next = more.next;
      return draw();
    }
    if (ev.target.closest("[data-make-code]")) {
      try {
        code = (await players.claimCode()).code;
        draw();
      } catch (err) {
        showError(err);
      }
    }
  }
  load();
  return {
    relabel: draw,
    leave: () => {
      shown = false; // an answer that comes after the page was left draws nothing
      app.removeEventListener("click", onClick);
    },
  };
}

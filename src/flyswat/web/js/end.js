// The end of a game: places (ties shared, R24), points, flies won, and the way to the replay.

import { playerName, t } from "./i18n.js";
import { SEAT_COLOURS } from "./table.js";
import { botMark, esc } from "./ui.js";
import { deltaHtml, endLinks, rematchHtml } from "./rematch.js";

/** The end screen's HTML for the page state s and the scene sc (which holds the result). */
export function endHtml(s, sc) {
  const res = sc.result;
  if (!res) return "";
  const order = res.places.map((place, seat) => ({ place, seat })).sort((a, b) => a.place - b.place || a.seat - b.seat);
  const shared = (place) => res.places.filter((p) => p === place).length > 1;
  const rated = !s.table?.practice; // the practice game moves no rating: no column for one
  // Names as the game ended (a player who has left since is still who played).
  const who = (seat) => s.endSeats?.[seat] ?? sc.seats[seat];
  const rows = order
    .map(({ place, seat }) => {
      const name = playerName(who(seat), seat);
      const you = seat === sc.me && name.toLowerCase() !== t("seat.you").toLowerCase() ? ` <em>(${esc(t("seat.you"))})</em>` : "";
      return `<tr class="${place === 1 ? "first" : ""}" data-seat="${seat}">
        <td class="place${shared(place) ? " tie" : ""}">${esc(t("end.place", { n: place }))}${shared(place) ? ` <small>${esc(t("end.tie"))}</small>` : ""}</td>
        <td class="who"><span class="seat-no" style="background:${SEAT_COLOURS[seat % SEAT_COLOURS.length]}">${seat + 1}</span> <span class="name">${esc(name)}</span>${botMark(who(seat).botAccount)}${you}</td>
        <td class="num points">${res.points[seat]}</td><td class="num flies">${res.flies[seat]}</td>
        ${rated ? `<td class="num rating-delta">${deltaHtml(s, seat)}</td>` : ""}</tr>`;
    })
    .join("");
  const winners = order.filter((o) => o.place === 1).map((o) => playerName(who(o.seat), o.seat));
  const headline =
    winners.length > 1 ? t("end.sharedWin", { names: winners.join(", ") }) : t("end.winner", { name: winners[0] });
  // A player seated at a real table leaves it by this button (game.newGame): it says so.
  const leaves = s.seat !== null && !s.table?.practice;
  // Not modal: the header (pages, language, sound) stays in reach above it.
  return `<div class="end" role="dialog" aria-labelledby="end-title">
    <div class="card-box">
      <h1 id="end-title" tabindex="-1">${esc(t("end.title"))}</h1>
      <p class="headline">${esc(headline)}</p>
      <table class="scores">
        <thead><tr><th>${esc(t("end.placeHead"))}</th><th>${esc(t("end.player"))}</th>
          <th class="num">${esc(t("end.points"))}</th><th class="num">${esc(t("end.flies"))}</th>
          ${rated ? `<th class="num delta-col">${esc(t("end.rating"))}</th>` : ""}</tr></thead>
        <tbody>${rows}</tbody>
      </table>
      ${rated && s.ratings?.seats?.some((x) => x.rated === false) ? `<p class="unrated-note"><small>— ${esc(t("end.unrated"))}</small></p>` : ""}
      ${s.fair === undefined ? "" : `<p class="fair ${s.fair ? "ok" : "bad"}">${esc(t(s.fair ? "end.fair" : "end.unfair"))}</p>`}
      ${rematchHtml(s)}
      <div class="end-actions">
        ${s.recordUrl ? `<button class="btn big" data-action="replay">${esc(t("end.replay"))}</button>` : ""}
        <button class="btn secondary" data-action="close-end">${esc(t("end.close"))}</button>
        <button class="btn secondary" data-action="home">${esc(t(leaves ? "lobby.leave" : "end.newGame"))}</button>
      </div>
      ${endLinks(s)}
    </div>
  </div>`;
}

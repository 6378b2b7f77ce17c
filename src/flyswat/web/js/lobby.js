// The lobby of a table: who is seated and ready, the share link, join, ready, start.

import { playerName, seconds, t } from "./i18n.js";
import { SEAT_COLOURS } from "./table.js";
import { botMark, esc } from "./ui.js";
import { fillHtml, hostButtons, leaveButton, ratingPill } from "./rematch.js";

function playerRow(p, mySeat, tb) {
  const colour = SEAT_COLOURS[p.seat % SEAT_COLOURS.length];
  const pills = [];
  // A Play now table has no host: nobody made it, and it starts by itself.
  if (p.host && tb.options.autofill_ms == null) pills.push(`<span class="pill">${esc(t("lobby.host"))}</span>`);
  if (p.kind === "bot") pills.push(`<span class="pill bot">${esc(t("seat.bot", { level: t(`level.${p.level || "normal"}`) }))}</span>`);
  else if (!p.joined) pills.push(`<span class="pill">${esc(t("lobby.free"))}</span>`);
  else {
    pills.push(
      p.ready || p.host
        ? `<span class="pill ready">${esc(t("lobby.ready"))}</span>`
        : `<span class="pill waiting">${esc(t("lobby.notReady"))}</span>`,
    );
    if (!p.connected) pills.push(`<span class="pill">${esc(t("seat.offline"))}</span>`);
  }
  const name = playerName(p, p.seat);
  const you = p.seat === mySeat ? ` <em>(${esc(t("seat.you"))})</em>` : "";
  return `<li class="${p.kind === "human" && !p.joined ? "free" : ""}" style="--seat:${colour}" data-seat="${p.seat}">
    <span class="seat-no" style="background:${colour}">${p.seat + 1}</span>
    <span class="who">${esc(name)}${botMark(p.bot_account)}${you}</span>${ratingPill(p)}${pills.join("")}${hostButtons(tb, p, mySeat)}</li>`;
}

/** What the lobby still waits for, in words: the free seats, then who is not ready. */
function awaited(players) {
  const free = players.filter((p) => p.kind === "human" && !p.joined).map((p) => t("seat.empty", { n: p.seat + 1 }));
  if (free.length) return t("lobby.waitingFor", { seats: free.join(", ") });
  const slow = players.filter((p) => p.kind === "human" && p.joined && !p.ready && !p.host).map((p) => playerName(p, p.seat));
  return slow.length ? t("lobby.waitingReady", { names: slow.join(", ") }) : t("lobby.waiting");
}

/** The lobby's HTML for the page state s (table, seat); savedName fills the join form. */
export function lobbyHtml(s, savedName = "") {
  const tb = s.table;
  const link = `${location.origin}${location.pathname}?table=${tb.code}`;
  const players = tb.players;
  const me = s.seat;
  const mine = me === null ? null : players[me];
  const freeHuman = players.some((p) => p.kind === "human" && !p.joined);
  const allIn = players.every((p) => p.kind === "bot" || (p.joined && (p.ready || p.host)));
  let actions = "";
  if (tb.state !== "lobby") {
    actions = `<p class="muted">${esc(t(`state.${tb.state}`))}</p>`;
  } else if (mine && tb.options.autofill_ms != null) {
    // Play now: the table starts when it is full or the wait is over; alone, at once if you like.
    const alone = players.every((p) => p.kind === "bot" || !p.joined || p.seat === me);
    actions = `<div class="row">${alone ? `<button class="btn big" data-action="start">${esc(t("lobby.startNow"))}</button>` : ""}
      <span class="muted lobby-status">${esc(t(alone ? "lobby.playNowAlone" : "lobby.playNowWait"))}</span>${leaveButton(s)}</div>`;
  } else if (mine === null) {
    actions = freeHuman
      ? `<form id="join-seat" class="row" autocomplete="off">
          <input name="name" required maxlength="32" value="${esc(savedName)}"
            placeholder="${esc(t("home.namePlaceholder"))}" aria-label="${esc(t("home.name"))}">
          <button class="btn big" type="submit">${esc(t("lobby.join"))}</button></form>`
      : `<p class="muted">${esc(t("lobby.full"))}</p>`;
  } else {
    const ready = mine.ready;
    actions = `<div class="row">
      ${mine.host ? "" : `<button class="btn big ${ready ? "secondary" : ""}" data-action="ready" data-ready="${ready}">${esc(t(ready ? "lobby.notReadyButton" : "lobby.readyButton"))}</button>`}
      ${mine.host ? `<button class="btn big" data-action="start" ${allIn ? "" : "disabled"}>${esc(t("lobby.start"))}</button>` : ""}
      <span class="muted lobby-status">${esc(allIn ? t(mine.host ? "lobby.canStart" : "lobby.waitHost") : awaited(players))}</span>
      ${leaveButton(s)}
    </div>`;
  }
  const o = tb.options;
  const facts = [
    t("lobby.factSeats", { n: o.seats }),
    o.seats >= 5 ? t("lobby.factHandsOne") : t("lobby.factHands", { n: 2 }),
    t("lobby.factCards", { n: 112 - o.remove }),
    t("lobby.factWindow", { s: seconds(o.slap_window_ms) }),
    ...(o.turn_timeout_ms ? [t("lobby.factTurn", { s: seconds(o.turn_timeout_ms) })] : []),
    ...(o.bot_accounts ? [t("lobby.factBotAccounts")] : []),
  ];
  return `<div class="page lobby">
    <section class="card-box">
      <h1>${esc(t("lobby.title", { code: tb.code }))}</h1>
      <p class="muted">${esc(facts.join(" · "))}</p>
      <label class="field"><span>${esc(t("lobby.share"))}</span>
        <span class="share"><input id="share-link" readonly value="${esc(link)}">
        <button class="btn secondary" data-action="copy" type="button">${esc(t("lobby.copy"))}</button></span></label>
    </section>
    <section class="card-box">
      <h2>${esc(t("lobby.players"))}</h2>
      <ul class="seat-list">${players.map((p) => playerRow(p, me, tb)).join("")}</ul>
      ${fillHtml(tb)}
      ${s.challengeAnswer ? `<p class="challenge-answer" data-state="${esc(s.challengeAnswer.state)}">${esc(t(`challenge.answer.${s.challengeAnswer.state}`, { name: s.challengeAnswer.opponent.name }))}</p>` : ""}
    </section>
    <section class="card-box">${actions}</section>
  </div>`;
}

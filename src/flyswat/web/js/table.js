// The table, drawn from a "scene": the same picture for a live game and for a replay.
//
// scene = {
//   seats: [{name, kind, level, draw, won, points?, ready?, online?}], me: seat|null,
//   hands, toMove, centre: [{card, hands: [seat…], outcome: null|"won"|"wrong"}],
//   fresh: card|null (just placed), trigger: {card, seat}|null, roundOpen, laid: [n…]|null,
//   mine: [card…] (my hands this round), resolved: {allowed, won, penalties}|null,
//   canReveal, over, result|null, live: bool
// }

import { backSvg, cardSvg, colourBadge, parseCard } from "./cards.js";
import { cardName, playerName, t } from "./i18n.js";
import { botMark } from "./ui.js";

import { FLY_KEYS } from "./model.js";

export const SEAT_COLOURS = [
  "#1b3a5c", "#8a3b12", "#00796b", "#6a1b9a", "#4e5d6c", "#5b6b1f", "#b0306b", "#222222",
];

const esc = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

/** A hand icon in the seat's colour with its number. */
export function handSvg(seat, label = "") {
  const fill = SEAT_COLOURS[seat % SEAT_COLOURS.length];
  // Without a label the hand is decoration (the words beside it say whose it is).
  const named = label ? `role="img"><title>${esc(label)}</title>` : `aria-hidden="true">`;
  return `<svg class="hand" viewBox="0 0 40 44" ${named}
    <path d="M10,40C5,34 3,27 4,22c1,-3 4,-3 5,0l2,5V8c0,-3 4,-3 4,0v12V5c0,-3 4,-3 4,0v15V6c0,-3 4,-3 4,0v14V10c0,-3 4,-3 4,0v18c0,6 -2,9 -5,12Z"
      fill="${fill}" stroke="#fff" stroke-width="2" stroke-linejoin="round"/>
    <text x="20" y="35" font-size="11" font-weight="800" fill="#fff" text-anchor="middle">${seat + 1}</text>
  </svg>`;
}

function seatLabel(scene, i) {
  return playerName(scene.seats[i], i);
}

function laidHtml(scene, i) {
  const laid = scene.laid ? scene.laid[i] : 0;
  return scene.roundOpen && laid
    ? `<span class="laid" title="${esc(laid === 1 ? t("seat.laidOne") : t("seat.laid", { n: laid }))}">${handSvg(i).repeat(laid)}</span>`
    : "";
}

function seatPanel(scene, i) {
  const s = scene.seats[i];
  const classes = ["seat"];
  if (i === scene.toMove && !scene.over && !scene.roundOpen && !scene.paused) classes.push("to-move");
  if (i === scene.me) classes.push("me");
  if (s.online === false) classes.push("offline");
  const kind =
    s.kind === "bot"
      ? `<span class="tag bot">${esc(t("seat.bot", { level: t(`level.${s.level || "normal"}`) }))}</span>`
      : s.online === false
        ? `<span class="tag off">${esc(t("seat.offline"))}</span>`
        : "";
  const handsRow = laidHtml(scene, i);
  const fastText = s.tooFast === 1 ? t("seat.tooFastOne") : t("seat.tooFast", { n: s.tooFast });
  const fast = s.tooFast
    ? `<span class="tag fast" title="${esc(fastText)}" aria-label="${esc(fastText)}"><span aria-hidden="true">⚡</span>${esc(t("seat.tooFastShort", { n: s.tooFast }))}</span>`
    : "";
  const points =
    s.points !== undefined && s.points !== null
      ? `<span class="pts">${esc(t("seat.points", { n: s.points }))}</span>`
      : "";
  return `<div class="${classes.join(" ")}" data-seat="${i}" style="--seat:${SEAT_COLOURS[i % SEAT_COLOURS.length]}">
    <div class="seat-head">
      <span class="seat-no">${i + 1}</span>
      <span class="seat-name">${esc(seatLabel(scene, i))}${botMark(s.botAccount)}${i === scene.me && seatLabel(scene, i).toLowerCase() !== t("seat.you").toLowerCase() ? ` <em>(${esc(t("seat.you"))})</em>` : ""}</span>
      ${s.rating != null ? `<span class="seat-rating" title="${esc(t("seat.rating", { rating: s.rating }))}">${esc(s.rating)}</span>` : ""}${kind}${fast}
    </div>
    <div class="piles">
      <span class="pile draw" title="${esc(t("seat.drawTitle"))}">
        <span class="mini-back">${backSvg()}</span>
        <span class="pile-n"><b class="count-draw">${s.draw}</b><small>${esc(t("seat.draw"))}</small></span>
      </span>
      <span class="pile won" title="${esc(t("seat.wonTitle"))}">
        <span class="won-icon" aria-hidden="true">★</span>
        <span class="pile-n"><b class="count-won">${s.won}</b><small>${esc(t("seat.won"))}</small></span>
      </span>
      ${points}
    </div>
    ${i === scene.toMove && !scene.over && !scene.roundOpen && !scene.paused ? `<div class="turn-flag">${esc(t(scene.turnLabel || (i === scene.me ? "table.yourTurn" : "seat.toMove")))}</div>` : ""}
    ${handsRow}
  </div>`;
}

function myHandHtml(scene) {
  return `<span class="stacked" style="--j:0">${handSvg(scene.me)}</span>`;
}

function centreCard(scene, entry, k) {
  const { card, hands = [], outcome = null } = entry;
  const name = cardName(card);
  // Keys are for slapping: none once the game is over, none for a spectator or a replay; and
  // only a card that can be slapped is a button (a spectator's Tab does not wander the cards).
  const player = scene.live && scene.me !== null && !scene.over;
  const key = player ? FLY_KEYS[k] : undefined;
  const tag = player ? "button" : "div";
  const classes = ["fly-card"];
  if (scene.fresh === card) classes.push("fresh");
  if (outcome) classes.push(outcome);
  const mine = scene.mine && scene.mine.includes(card);
  if (mine) classes.push("mine");
  if (scene.roundOpen && scene.me !== null && !scene.over) classes.push("slappable");
  // Hands fan out from the bottom one (R17); many hands squeeze closer to stay on the card.
  const step = Math.min(0.19, 0.55 / Math.max(1, hands.length - 1));
  const stack = hands
    .map(
      (seat, j) =>
        `<span class="stacked" style="--j:${j};--step:${step}">${handSvg(seat, seatLabel(scene, seat))}</span>`,
    )
    .join("");
  // R20: a fly won and then paid back as a penalty by the same player in the same round.
  const paidBack =
    outcome === "won" && (scene.resolved?.penalties || []).some((p) => p.seat === hands[0] && p.card === card);
  const said =
    outcome === "won"
      ? paidBack
        ? t("table.wonPaidBack", { name: seatLabel(scene, hands[0]) })
        : t("table.wonBy", { name: seatLabel(scene, hands[0]) })
      : outcome === "wrong"
        ? t("table.wrong")
        : "";
  const mark = said ? `<span class="outcome ${outcome === "won" ? `won-mark${paidBack ? " paid-back" : ""}` : "wrong-mark"}">${esc(said)}</span>` : "";
  const myHand = mine && !hands.length ? myHandHtml(scene) : "";
  return `<${tag} class="${classes.join(" ")}" data-card="${card}" data-index="${k}"
>
    <span class="sr-only">${esc(key ? t("table.slapKey", { card: name, key: key.toUpperCase() }) : name)}</span>
    ${cardSvg(card).replace('role="img"', 'aria-hidden="true"') /* the words above name it */}
    ${key ? `<kbd class="key" aria-hidden="true">${key.toUpperCase()}</kbd>` : ""}
    <span class="hands-stack">${stack}${myHand}</span>
    ${mark}
  </${tag}>`;
}

function triggerZone(scene) {
  if (!scene.trigger) return `<div class="trigger-zone empty"></div>`;
  const c = parseCard(scene.trigger.card);
  const label = c.swatter ? t("table.swatter") : t("table.fifthColour");
  const who = seatLabel(scene, scene.trigger.seat);
  return `<div class="trigger-zone ${scene.roundOpen ? "open" : "closed"} ${c.swatter ? "swat" : "fifth"}">
    <div class="trigger-card">${cardSvg(scene.trigger.card, cardName(scene.trigger.card))}</div>
    <div class="trigger-text"><strong>${esc(label)}</strong><span>${esc(t("table.revealedBy", { name: who }))}</span></div>
  </div>`;
}

function resolvedPanel(scene) {
  const r = scene.resolved;
  if (!r) return "";
  const allowed = r.allowed.length
    ? r.allowed.map((c) => `${colourBadge(c, t(`colour.${c}`))}`).join("")
    : `<em>${esc(t("table.emptyCentre"))}</em>`;
  const lines = [];
  for (const w of r.won)
    lines.push(`<li class="ev-won">${handSvg(w.seat)} ${esc(t("table.eventWon", { name: seatLabel(scene, w.seat), card: cardName(w.card) }))}</li>`);
  for (const p of r.penalties)
    lines.push(`<li class="ev-pen">${handSvg(p.seat)} ${esc(t("table.eventPenalty", { name: seatLabel(scene, p.seat), card: cardName(p.card) }))}</li>`);
  // R19: a wrong hand of a player whose won pile was empty paid nothing — say so.
  const wrongHands = new Map();
  for (const e of scene.centre || [])
    if (e.outcome === "wrong") for (const seat of e.hands || []) wrongHands.set(seat, (wrongHands.get(seat) || 0) + 1);
  for (const [seat, n] of wrongHands)
    if (r.penalties.filter((p) => p.seat === seat).length < n)
      lines.push(`<li class="ev-pen ev-free">${handSvg(seat)} ${esc(t("table.eventNothingToPay", { name: seatLabel(scene, seat) }))}</li>`);
  if (!lines.length) lines.push(`<li class="ev-none">${esc(t("table.eventNone"))}</li>`);
  return `<div class="resolved">
    <div class="allowed"><span>${esc(t("table.allowed"))}</span>${allowed}</div>
    <ul class="events">${lines.join("")}</ul>
  </div>`;
}

function myBar(scene) {
  if (scene.me === null || scene.me === undefined || scene.over) return "";
  const handCount = scene.hands;
  const mine = scene.roundOpen ? scene.mine || [] : [];
  const used = scene.roundOpen ? Math.max(mine.length, scene.usedHands || 0) : 0;
  const hands = Array.from({ length: handCount }, (_, h) => {
    const on = mine[h];
    const label = on ? cardName(on) : h < used ? t("table.handUsed") : t("table.handFree");
    return `<span class="my-hand ${h < used ? "used" : "free"}">${handSvg(scene.me)}<small>${esc(label)}</small></span>`;
  }).join("");
  // The bar under the button runs out when the server would reveal for an absent player.
  const total = scene.turnTimeoutMs;
  const left = scene.turnLeftMs;
  const timed =
    scene.canReveal && total && left !== null && left !== undefined
      ? ` timed" style="--timeout:${total}ms;--elapsed:${Math.round(left - total)}ms`
      : "";
  const revealBtn = `<button class="btn reveal${timed}" data-action="reveal" ${scene.canReveal ? "" : "disabled"}>
      ${esc(t("table.reveal"))} <kbd>${esc(t("key.space"))}</kbd></button>`;
  const doneBtn = scene.roundOpen
    ? `<button class="btn done" data-action="done" ${scene.iAmDone ? "disabled" : ""}>${esc(t("table.done"))} <kbd>${esc(t("key.enter"))}</kbd></button>`
    : "";
  return `<div class="my-bar">
    <div class="my-hands" aria-label="${esc(t("table.yourHands"))}"><span class="lbl">${esc(t("table.yourHands"))}</span>${hands}</div>
    <div class="actions">${scene.roundOpen ? doneBtn : revealBtn}</div>
  </div>`;
}

/** Seat order for display: clockwise, starting after "me" (me is drawn at the bottom). */
function ring(scene) {
  const n = scene.seats.length;
  const first = scene.me === null || scene.me === undefined ? 0 : (scene.me + 1) % n;
  const out = [];
  for (let k = 0; k < n; k++) {
    const i = (first + k) % n;
    if (i !== scene.me) out.push(i);
  }
  return out;
}

/** Render the whole table into el. */
export function renderTable(el, scene) {
  const others = ring(scene).map((i) => seatPanel(scene, i)).join("");
  const me = scene.me !== null && scene.me !== undefined ? seatPanel(scene, scene.me) : "";
  const centre = scene.centre.length
    ? scene.centre.map((e, k) => centreCard(scene, e, k)).join("")
    : `<p class="centre-empty">${esc(t("table.centreEmpty"))}</p>`;
  el.innerHTML = `<div class="table ${scene.roundOpen ? "round-open" : ""} ${scene.trigger && scene.roundOpen ? (parseCard(scene.trigger.card).swatter ? "swat" : "fifth") : ""}">
    <div class="others">${others}</div>
    <div class="felt">
      ${triggerZone(scene)}
      <div class="countdown" hidden><div class="bar"></div><span class="secs"></span></div>
      <div class="centre">${centre}</div>
      ${resolvedPanel(scene)}
    </div>
    <div class="me-row">${me}${myBar(scene)}</div>
  </div>`;
  fitCentre(el);
}

/** Size the centre's cards so that all of them fit without covering each other (R11). */
export function fitCentre(el) {
  const centre = el.querySelector(".centre");
  if (!centre) return;
  const k = centre.querySelectorAll(".fly-card").length;
  if (!k) return;
  // clientWidth/Height include the centre's padding (6px each side): the cards get what is inside.
  const W = centre.clientWidth - 16;
  const H = Math.max(centre.clientHeight - 16, 60);
  const gap = 8;
  let best = 44;
  for (let w = 168; w >= 44; w -= 2) {
    const cols = Math.max(1, Math.floor((W + gap) / (w + gap)));
    const rows = Math.ceil(k / cols);
    if (rows * (w * 1.4 + gap) <= H) {
      best = w;
      break;
    }
  }
  centre.style.setProperty("--cw", `${best}px`);
}

/**
 * Update an open round in place (hands laid, my hands, done) without re-drawing the table:
 * the cards under a player's finger stay the same elements while others slap.
 */
export function patchRound(el, scene) {
  for (const panel of el.querySelectorAll(".seat[data-seat]")) {
    const i = Number(panel.dataset.seat);
    panel.querySelector(".laid")?.remove();
    panel.insertAdjacentHTML("beforeend", laidHtml(scene, i));
  }
  for (const card of el.querySelectorAll(".fly-card[data-card]")) {
    const mine = scene.mine.includes(card.dataset.card);
    if (mine === card.classList.contains("mine")) continue;
    card.classList.toggle("mine", mine);
    card.querySelector(".hands-stack").innerHTML = mine ? myHandHtml(scene) : "";
  }
  const bar = el.querySelector(".my-bar");
  if (bar) bar.outerHTML = myBar(scene);
}

// How to play: the rules page (?learn), with the rulebook's two examples drawn, and the
// practice game (?practice): the live table on a PracticeTable, with a coach beside it.

import { cardSvg, colourBadge, COLOUR_ORDER, flyCardSvg, swatterCardSvg } from "./cards.js";
import { cardName, has, t } from "./i18n.js";
import { GameManager } from "./game.js";
import { allowedColours } from "./rules.js";
import { LESSONS, PracticeTable } from "./practice.js";
import { storage } from "./storage.js";
import { fitCentre } from "./table.js";
import { esc, navigate } from "./ui.js";

const mini = (cards) =>
  `<div class="mini-centre" aria-hidden="true">${cards.map((c) => `<span class="mini-card">${cardSvg(c)}</span>`).join("")}</div>`;

function example(centre, trigger, key) {
  const allowed = allowedColours(centre)
    .map((c) => `${colourBadge(c, t(`colour.${c}`))} ${esc(t(`colour.${c}`))}`)
    .join(" ");
  return `<figure class="example">${mini(centre)}<div class="example-trigger">→ ${mini([trigger])}</div>
    <figcaption>${esc(t(key))}<br><strong>${esc(t("table.allowed"))}</strong> ${allowed}</figcaption></figure>`;
}

const SECTIONS = ["goal", "cards", "turn", "swat", "allowed", "fifth", "wrong", "stack", "hands", "end"];

/** The rules page: every rule a newcomer needs (docs/RULES.md), in the player's language. */
export function rulesPage(app) {
  const draw = () => {
    const art = {
      cards: `<div class="mini-centre">${[1, 2, 3, 4, 5].map((v) => `<span class="mini-card">${flyCardSvg("R", v)}</span>`).join("")}
        <span class="mini-card">${swatterCardSvg()}</span></div>
        <div class="legend">${COLOUR_ORDER.map((c) => `<span>${colourBadge(c, "")}${esc(t(`colour.${c}`))}</span>`).join("")}</div>`,
      allowed: example("R3-1 G2-1 R1-1 B4-1 G5-1 R4-1 P2-1 G3-1 B2-1".split(" "), "S-1", "rules.example2"),
      fifth: example("R5-1 R2-1 Y2-2 R3-3 G1-1 R1-2 Y4-1 P3-1 R4-2".split(" "), "B2-3", "rules.example1"),
    };
    app.innerHTML = `<div class="page rules">
      <section class="card-box"><h1>${esc(t("rules.title"))}</h1><p>${esc(t("rules.intro"))}</p>
        <div class="row"><button class="btn big" data-go="practice">${esc(t("learn.practice"))}</button>
        <button class="btn secondary" data-go="home">${esc(t("nav.home"))}</button></div></section>
      ${SECTIONS.map(
        (k) => `<section class="card-box rule" id="rule-${k}"><h2>${esc(t(`rules.${k}.h`))}</h2><p>${esc(t(`rules.${k}.p`))}</p>${art[k] || ""}</section>`,
      ).join("")}
      <section class="card-box"><div class="row"><button class="btn big" data-go="practice">${esc(t("learn.practice"))}</button>
        <button class="btn secondary" data-go="home">${esc(t("learn.toTables"))}</button></div></section>
    </div>`;
  };
  draw();
  const onClick = (ev) => {
    const b = ev.target.closest("[data-go]");
    if (b) navigate(b.dataset.go === "practice" ? "?practice" : "");
  };
  app.addEventListener("click", onClick); // #app outlives the page: taken off when it goes
  return { relabel: draw, leave: () => app.removeEventListener("click", onClick) };
}

/** The coach's words for a practice event. */
function coachText(ev, lesson) {
  if (ev.phase === "result") {
    const mine = (xs) => xs.filter((x) => x.seat === 0).map((x) => cardName(x.card));
    const r = ev.round;
    const lines = [];
    const won = mine(r.won);
    const paid = mine(r.penalties);
    const wrong = r.slaps.filter((x) => x.seat === 0 && !r.allowed.includes(x.card[0])).length;
    const one = (xs, key) => (xs.length > 1 ? `${key}Many` : key); // one fly, or several
    if (won.length) lines.push(t(one(won, "learn.result.won"), { cards: won.join(", ") }));
    if (paid.length) lines.push(t(one(paid, "learn.result.penalty"), { card: paid.join(", ") }));
    else if (wrong) lines.push(t("learn.result.free"));
    const bot = r.won.filter((x) => x.seat === 1).map((x) => cardName(x.card));
    if (bot.length) lines.push(t("learn.result.botWon", { cards: bot.join(", ") }));
    if (!r.allowed.length) lines.push(t("table.emptyCentre"));
    else if (!won.length && !paid.length && !wrong) lines.push(t("learn.result.none"));
    return lines.join(" ");
  }
  if (ev.phase === "yourTurn") return t("learn.yourTurn");
  if (ev.phase === "botTurn") return t("learn.botTurn");
  if (ev.phase === "done" && ev.result) return t(`learn.${lesson}.done`);
  // A touch screen has no keys: words that name one have a twin that names none.
  const key = `learn.${lesson}.${ev.phase}`;
  return t(touchOnly() && has(`${key}Touch`) ? `${key}Touch` : key);
}

/** A screen with no mouse nor keyboard at hand (a phone): as the CSS hides the keys. */
const touchOnly = () => !!globalThis.matchMedia?.("(pointer: coarse), (hover: none)").matches;

/** The practice game: lessons on the live table, a coach, skip at any time; ?practice=N starts at lesson N. */
export function practicePage(app, first = 1) {
  if (storage.practice() === null) storage.savePractice("offered");
  app.innerHTML = `<div class="practice">
    <aside class="coach card-box" aria-live="polite">
      <div class="coach-head"><strong class="coach-step"></strong><h2 class="coach-title"></h2></div>
      <p class="coach-text"></p><p class="coach-result"></p>
      <div class="row"><button class="btn" data-coach="next" hidden>${esc(t("learn.next"))}</button>
        <button class="btn big" data-coach="finish" hidden>${esc(t("learn.finish"))}</button>
        <button class="btn secondary" data-coach="skip">${esc(t("learn.skip"))}</button></div>
    </aside>
    <div class="table-page" id="table-page"></div>
  </div>`;
  const coach = app.querySelector(".coach");
  const el = (sel) => coach.querySelector(sel);
  let said = null;
  let result = "";
  let done = false;
  let table = null;
  const show = () => {
    if (!said) return;
    const k = LESSONS.findIndex((l) => l.key === said.lesson);
    el(".coach-step").textContent = t("learn.step", { i: k + 1, n: LESSONS.length });
    el(".coach-title").textContent = t(`learn.${said.lesson}.title`);
    el(".coach-text").textContent = coachText(said, said.lesson);
    el(".coach-result").textContent = result;
    const last = k === LESSONS.length - 1;
    el("[data-coach=next]").hidden = !done || last;
    el("[data-coach=finish]").hidden = !(done && last);
    coach.dataset.lesson = said.lesson;
    coach.dataset.phase = said.phase;
    fitCentre(app); // the coach's words changed its height, and so the table's room
  };
  const onCoach = (ev) => {
    if (ev.phase === "nudge") {
      const next = coach.querySelector("[data-coach=next]:not([hidden]), [data-coach=finish]:not([hidden])");
      next?.classList.remove("nudge");
      void next?.offsetWidth; // restart the animation
      next?.classList.add("nudge");
      return;
    }
    if (ev.phase === "result") result = coachText(ev, ev.lesson);
    else {
      if (ev.phase === "setup") result = "";
      said = ev;
      done = ev.phase === "done";
      if (done && ev.result) storage.savePractice("done");
    }
    show();
  };
  const root = app.querySelector("#table-page");
  const game = new GameManager("PRACTICE", root, {
    connect: (handlers) => {
      table = new PracticeTable(handlers, { coach: onCoach, first, name: storage.name() || t("learn.you"), botName: t("learn.botName") });
      return table;
    },
  });
  coach.addEventListener("click", (ev) => {
    const b = ev.target.closest("[data-coach]");
    if (!b) return;
    const what = b.dataset.coach;
    if (what === "next") {
      done = false;
      table.next();
    } else {
      if (what === "skip" && storage.practice() !== "done") storage.savePractice("skipped");
      navigate("");
      if (what === "finish") {
        // "Play a real game": Play now, first on the home page, is where one begins.
        const playNow = document.getElementById("play-now");
        playNow?.scrollIntoView({ block: "center" });
        playNow?.querySelector("input, button")?.focus({ preventScroll: true });
      }
    }
  });
  return {
    relabel: () => {
      show();
      game.renderer.render(game.state, false);
    },
    leave: () => game.leave(),
  };
}

// One table, live: the lobby, the game, the end. Driven by the server's messages
// (docs/PROTOCOL.md); the picture itself is drawn by table.js from a scene.

import { parseCard } from "./cards.js";
import { liveScene, resolvedRound } from "./scene.js";
import { cardName, t } from "./i18n.js";
import { Connection, api, saveSeat, savedSeat } from "./net.js";
import { FLY_KEYS, fitCentre, patchRound, renderTable } from "./table.js";
import { announce, esc, errorText, navigate, showError, toast, typing } from "./ui.js";
import { lobbyHtml } from "./lobby.js";
import { endHtml } from "./end.js";

/** How long the hands of a resolved round stay on the flies before the centre tidies up. */
const RESOLVE_MS = 2600;

export function tablePage(app, code) {
  const saved = savedSeat(code);
  const s = {
    code,
    token: saved?.token || null,
    seat: null,
    table: null,
    view: null,
    round: null, // {turn, windowMs, windowTotal, paintedAt, mine, pending, done, laid, centre}
    turnDeadline: undefined, // performance.now() when the server reveals for me; null: no timer
    resolved: null, // {centre: [...entries], trigger, seat, allowed, won, penalties, until}
    fresh: null,
    revealSent: false,
    endDismissed: false,
    result: null,
    recordUrl: null,
    everOpen: false,
  };
  app.innerHTML = `<div class="table-page" id="table-page"><div class="page"><p class="muted" data-i18n="table.connecting"></p></div></div>`;
  const root = app.querySelector("#table-page");
  let timer = null;
  let countdownFrame = null;

  const conn = new Connection(code, s.token, { onMessage, onStatus });
  // A wrong code or an old link: say so in words, instead of waiting for a table forever.
  api.table(code).catch((err) => {
    if (err.code !== "not_found") return;
    conn.close();
    root.innerHTML = `<div class="page"><section class="card-box"><h1>${esc(t("lobby.title", { code }))}</h1>
      <p class="error-text">${esc(errorText("not_found"))}</p>
      <button class="btn" data-action="home">${esc(t("end.newGame"))}</button></section></div>`;
  });

  function onStatus(status) {
    const el = document.getElementById("conn");
    if (status === "open") s.everOpen = true;
    el.hidden = status === "open" || !s.everOpen;
  }

  function me() {
    return s.seat;
  }

  // ---- messages -------------------------------------------------------------------------

  function onMessage(msg) {
    switch (msg.type) {
      case "welcome":
        s.seat = msg.seat;
        s.table = msg.table;
        s.view = msg.view;
        s.recordUrl = msg.table.record_url;
        s.revealSent = false;
        s.round = null;
        deadline(msg);
        if (msg.view?.round) {
          const total = msg.table.options.slap_window_ms;
          openRound(msg.view.turn, msg.window_left_ms ?? total, msg.view, total);
        }
        if (msg.view?.over) {
          s.result = msg.view.result;
          checkSeed(msg.table.seed, msg.table.commitment);
        }
        render(true);
        break;
      case "table":
        s.table = msg.table;
        render(false);
        break;
      case "started":
        s.table = msg.table;
        s.view = msg.view;
        deadline(msg);
        render(true);
        break;
      case "reveal":
        if (msg.auto && msg.seat === s.seat) toast(t("table.autoReveal"));
        announce(
          t("table.announceReveal", {
            name: s.table.players[msg.seat]?.name || t("seat.empty", { n: msg.seat + 1 }),
            card: cardName(msg.card),
          }),
        );
        s.view = msg.view;
        deadline(msg);
        s.revealSent = false;
        s.resolved = null;
        clearTimeout(timer);
        if (msg.round && msg.view.round) {
          openRound(msg.turn, msg.window_ms, msg.view);
          s.fresh = null;
        } else {
          s.fresh = parseCard(msg.card).swatter ? null : msg.card;
        }
        render(true);
        break;
      case "accepted":
        if (s.round && s.round.turn === msg.turn) {
          s.round.pending = s.round.pending.filter((c) => c !== msg.card);
          if (!s.round.mine.includes(msg.card)) s.round.mine.push(msg.card);
          s.round.lastMs = msg.ms;
          patch();
        }
        break;
      case "hands":
        // Protocol 2: the view's round holds the hands laid per seat and our own.
        if (s.round && s.round.turn === msg.turn && msg.view?.round) {
          s.round.laid = msg.view.round.laid;
          if (msg.view.round.done) s.round.done = true;
          patch();
        }
        break;
      case "round":
        deadline(msg);
        closeRound(msg.view);
        break;
      case "over":
        s.table = msg.table;
        s.result = msg.result;
        s.recordUrl = msg.record_url;
        checkSeed(msg.seed, msg.commitment);
        if (s.round) closeRound(msg.view);
        s.view = msg.view;
        render(true);
        break;
      case "error":
        onError(msg);
        break;
      default:
        break;
    }
  }

  /** Seats with a wrong hand (R19) that paid nothing for it: their won pile was empty. */
  function unpaid(lr) {
    const wrong = new Map();
    for (const x of lr.slaps || [])
      if (!lr.allowed.includes(x.card[0])) wrong.set(x.seat, (wrong.get(x.seat) || 0) + 1);
    return [...wrong].filter(([seat, n]) => lr.penalties.filter((p) => p.seat === seat).length < n).map(([seat]) => seat);
  }

  function onError(msg) {
    if (msg.code === "bad_token") {
      // The saved seat is not valid here (another server, or an old game): watch instead.
      saveSeat(code, null);
      s.token = null;
      conn.reconnectWith(null);
    }
    if (s.round) s.round.pending = [];
    s.revealSent = false;
    toast(errorText(msg.code), "error");
    if (s.round) patch();
    else render(false);
  }

  /** Note when the server will reveal for the player to move (turn_deadline_ms), if it says. */
  function deadline(msg) {
    if (!("turn_deadline_ms" in msg)) return;
    s.turnDeadline = msg.turn_deadline_ms === null ? null : performance.now() + msg.turn_deadline_ms;
  }

  /** Check the revealed seed against the commitment published at the start (fair shuffle). */
  async function checkSeed(seed, commitment) {
    if (seed == null || !commitment || !crypto.subtle) return; // no subtle crypto off https
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(String(seed)));
    const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    s.fair = hex === commitment.toLowerCase();
    render(false);
  }

  function openRound(turn, windowMs, view, total) {
    const full = s.table?.options.slap_window_ms || 3000;
    s.round = {
      turn,
      windowMs: windowMs ?? full,
      windowTotal: total || windowMs || full,
      paintedAt: null,
      mine: [...(view.round.mine || [])],
      pending: [],
      done: !!view.round.done,
      laid: view.round.laid,
      centre: [...view.centre],
      lastMs: null,
    };
  }

  function closeRound(view) {
    const lr = view.last_round;
    const centreBefore = s.round?.centre || [...view.centre, ...(lr?.won || []).map((w) => w.card)];
    s.view = view;
    s.round = null;
    stopCountdown();
    if (lr) {
      s.resolved = resolvedRound(lr, centreBefore, performance.now() + RESOLVE_MS);
      const name = (seat) => s.table.players[seat]?.name || t("seat.empty", { n: seat + 1 });
      announce(
        [
          ...lr.won.map((w) => t("table.eventWon", { name: name(w.seat), card: cardName(w.card) })),
          ...lr.penalties.map((p) => t("table.eventPenalty", { name: name(p.seat), card: cardName(p.card) })),
          ...unpaid(lr).map((seat) => t("table.eventNothingToPay", { name: name(seat) })),
        ].join(". ") || t("table.eventNone"),
      );
      clearTimeout(timer);
      timer = setTimeout(() => render(true), RESOLVE_MS);
    }
    s.fresh = null;
    render(true);
  }

  // ---- actions --------------------------------------------------------------------------

  function reveal() {
    const v = s.view;
    if (!v || v.over || v.round || me() === null) return;
    if (v.to_move !== me()) {
      toast(errorText("not_your_turn"), "error");
      return;
    }
    if (s.revealSent) return;
    if (!conn.send({ type: "reveal" })) return toast(errorText("offline"), "error");
    s.revealSent = true;
    render(false);
  }

  function slap(card, timeStamp) {
    const r = s.round;
    if (!r || me() === null) return;
    if (r.paintedAt === null) return; // not painted yet: nothing could have been seen
    if (r.done) return toast(errorText("done"), "error");
    const hands = [...r.mine, ...r.pending];
    if (hands.includes(card)) return toast(errorText("same_card"), "error");
    // After a reconnect the server counts hands laid before it (laid) but names no cards.
    const used = Math.max(hands.length, r.laid?.[me()] || 0);
    if (used >= s.view.hands) return toast(errorText("no_hands_left"), "error");
    const ms = Math.max(0, Math.round(timeStamp - r.paintedAt));
    if (!conn.send({ type: "slap", card, ms, turn: r.turn })) return toast(errorText("offline"), "error");
    r.pending.push(card);
    patch();
  }

  function done() {
    const r = s.round;
    if (!r || r.done || me() === null) return;
    if (conn.send({ type: "done", turn: r.turn })) r.done = true;
    patch();
  }

  function onPointer(ev) {
    const cardEl = ev.target.closest(".fly-card.slappable");
    if (cardEl) {
      ev.preventDefault();
      slap(cardEl.dataset.card, ev.timeStamp);
      return;
    }
  }

  function onClick(ev) {
    const act = ev.target.closest("[data-action]");
    if (!act) return;
    const a = act.dataset.action;
    if (a === "reveal") reveal();
    else if (a === "done") done();
    else if (a === "ready") conn.send({ type: "ready", ready: act.dataset.ready !== "true" });
    else if (a === "start") conn.send({ type: "start" });
    else if (a === "copy") copyLink();
    else if (a === "replay") navigate(`?replay=${encodeURIComponent(s.recordUrl)}`);
    else if (a === "close-end") {
      s.endDismissed = true;
      render(false);
    } else if (a === "show-end") {
      s.endDismissed = false;
      render(false);
    } else if (a === "home") navigate("");
  }

  function onKey(ev) {
    if (typing(ev) || ev.repeat || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (!s.view || s.view.over) return;
    if (ev.key === " " || ev.code === "Space") {
      ev.preventDefault();
      reveal();
    } else if (ev.key === "Enter") {
      if (s.round) {
        ev.preventDefault();
        done();
      }
    } else if (s.round) {
      const k = FLY_KEYS.indexOf(ev.key.toLowerCase());
      const card = k >= 0 ? s.view.centre[k] : undefined;
      if (card) {
        ev.preventDefault();
        slap(card, ev.timeStamp);
      }
    }
  }

  async function onJoin(ev) {
    const form = ev.target.closest("form#join-seat");
    if (!form) return;
    ev.preventDefault();
    const name = form.name.value.trim();
    if (!name) return;
    localStorage.setItem("flyswat.name", name);
    try {
      const seated = await api.joinTable(code, name);
      saveSeat(code, { seat: seated.seat, token: seated.token, host: seated.host, name });
      s.token = seated.token;
      conn.reconnectWith(seated.token);
    } catch (err) {
      showError(err);
    }
  }

  function copyLink() {
    const input = root.querySelector("#share-link");
    input.select();
    const done = () => toast(t("lobby.copied"));
    if (navigator.clipboard) navigator.clipboard.writeText(input.value).then(done, done);
    else done();
  }

  // ---- drawing --------------------------------------------------------------------------

  const scene = () => liveScene(s, performance.now());

  function render(animate) {
    if (!s.table) return;
    const state = s.table.state;
    if (state === "lobby" || !s.view) {
      root.innerHTML = lobbyHtml(s);
      return;
    }
    const holder = document.createElement("div");
    holder.className = "table-holder";
    const sc = scene();
    renderTable(holder, sc);
    const tableEl = holder.querySelector(".table");
    if (!animate) tableEl.classList.add("still");
    let extra = "";
    if (me() === null) extra += `<div class="watching">${esc(t("table.watching"))}</div>`;
    // The last round's hands stay in view a moment before the result covers the table.
    const settled = !s.resolved || performance.now() >= s.resolved.until - 20;
    if (sc.over && settled) {
      extra += s.endDismissed
        ? `<div class="watching"><button class="btn" data-action="show-end">${esc(t("end.show"))}</button></div>`
        : endHtml(s, sc);
    }
    root.replaceChildren(...holder.childNodes);
    if (extra) root.insertAdjacentHTML("beforeend", extra);
    fitCentre(root);
    if (s.round && s.view.round) {
      // Reaction times count from the frame that paints the trigger (docs/PROTOCOL.md).
      if (s.round.paintedAt === null) {
        const r = s.round;
        requestAnimationFrame((ts) => {
          if (r.paintedAt === null) r.paintedAt = ts;
          startCountdown();
        });
      } else startCountdown();
    }
    showReaction();
  }

  /** Update the open round in place; re-draw everything when there is no table yet. */
  function patch() {
    if (!s.round || !root.querySelector(".table.round-open")) return render(false);
    patchRound(root, scene());
    fitCentre(root);
    showReaction();
  }

  function showReaction() {
    if (s.round?.lastMs == null) return;
    const lbl = root.querySelector(".my-hands .lbl");
    if (lbl) lbl.textContent = `${t("table.yourHands")} · ${t("table.reaction", { ms: s.round.lastMs })}`;
  }

  function startCountdown() {
    const r = s.round;
    const el = root.querySelector(".countdown");
    if (!r || !el || r.paintedAt === null) return;
    el.hidden = false;
    const bar = el.querySelector(".bar");
    const secs = el.querySelector(".secs");
    cancelAnimationFrame(countdownFrame);
    const tick = (now) => {
      if (s.round !== r) return;
      const left = Math.max(0, r.windowMs - (now - r.paintedAt));
      bar.style.transform = `scaleX(${left / r.windowTotal})`;
      secs.textContent = t("table.seconds", { s: (left / 1000).toFixed(1) });
      if (left > 0) countdownFrame = requestAnimationFrame(tick);
    };
    countdownFrame = requestAnimationFrame(tick);
  }

  function stopCountdown() {
    cancelAnimationFrame(countdownFrame);
  }

  const onResize = () => fitCentre(root);
  root.addEventListener("pointerdown", onPointer);
  root.addEventListener("click", onClick);
  root.addEventListener("submit", onJoin);
  document.addEventListener("keydown", onKey);
  window.addEventListener("resize", onResize);

  return {
    relabel: () => render(false),
    leave() {
      conn.close();
      clearTimeout(timer);
      stopCountdown();
      document.removeEventListener("keydown", onKey);
      window.removeEventListener("resize", onResize);
      document.getElementById("conn").hidden = true;
    },
  };
}


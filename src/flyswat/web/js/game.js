// One table, live: the wiring. The model (model.js: reduce and intents), the input
// (input.js), the renderer (renderer.js), the storage (storage.js), the sound (sound.js) and a
// connection (net.js for a server, practice.js for the practice table) are handed to one
// GameManager, as 2048 hands its KeyboardInputManager, HTMLActuator and LocalStorageManager
// to its GameManager. Every server message goes through reduce(); the effects it lists are
// done here.

import { cardName, playerName, seconds, t } from "./i18n.js";
import { initialState, intent, reduce, unsent } from "./model.js";
import { InputManager } from "./input.js";
import { HTMLRenderer } from "./renderer.js";
import { Connection, api } from "./net.js";
import { storage as localStore } from "./storage.js";
import { sound as defaultSound } from "./sound.js";
import { announce, errorText, hideToast, navigate, showError, toast } from "./ui.js";
import { ensureMe, players } from "./identity.js";
import { lifecycleMessage, tickFill } from "./rematch.js";

/** How often a challenge's host, waiting in its lobby, asks for the answer (ms). */
const CHALLENGE_POLL_MS = 3000;

/** Check the revealed seed against the commitment published at the start (fair shuffle). */
async function seedMatches(seed, commitment) {
  if (seed == null || !commitment || !crypto.subtle) return undefined; // no subtle crypto off https
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(String(seed)));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return hex === commitment.toLowerCase();
}

/** What a quiet GameManager leaves undone: it only shows the game. */
const QUIET_SKIPS = new Set(["toast", "sound", "announceReveal", "announceRound", "forgetSeat"]);

export class GameManager {
  /**
   * code: the table's code; root: the element to draw in; connect(handlers, token) opens a
   * connection ({send, reconnectWith, close}); Input and Renderer: the classes that listen
   * and draw (input.js, renderer.js); storage, sound: as in storage.js, sound.js; lookup(code):
   * a promise that fails with not_found or expired when there is no such table. watch: as
   * a spectator, whatever seat this browser holds there; quiet: no sounds, words for screen
   * readers, messages or connection banner (a game shown on another page: the home's TV);
   * onState(state): called after every server message.
   */
  constructor(
    code,
    root,
    {
      connect,
      Input = InputManager,
      Renderer = HTMLRenderer,
      storage = localStore,
      sound = defaultSound,
      lookup = null,
      watch = false,
      quiet = false,
      onState = null,
    },
  ) {
    this.storage = storage;
    this.sound = sound;
    this.quiet = quiet;
    this.onState = onState;
    this.state = initialState(code, watch ? null : storage.seat(code)?.token || null);
    this.timer = null;
    this.everOpen = false;
    this.renderer = new Renderer(root, {
      storage,
      onPainted: (turn, at) => this.dispatch({ type: "painted", turn, at }),
    });
    this.renderer.connecting();
    this.input = new Input(root, (a) => this.act(a));
    this.conn = connect(
      {
        onMessage: (msg) => this.dispatch(msg),
        onStatus: (status) => this.status(status),
        onClose: (closeCode) => this.dispatch({ type: "closed", code: closeCode }),
      },
      this.state.token,
    );
    // A wrong code or an old link: say so in words, instead of waiting for a table forever.
    lookup?.(code).catch((err) => {
      if ((err.code === "not_found" || err.code === "expired") && !this.state.table) this.dispatch({ type: "missing", code: err.code });
    });
    this.onResize = () => this.renderer.render(this.state, false);
    window.addEventListener("resize", this.onResize);
    this.fillTimer = setInterval(() => tickFill(root), 250);
    this.challengeTimer = setInterval(() => this.challengeAnswer(), CHALLENGE_POLL_MS);
  }

  /** The host of a challenge's table (options.reserved) waiting in its lobby: has the player
   * challenged declined, or let it expire? Asked as the home page asks (challenge.js). */
  async challengeAnswer() {
    const s = this.state;
    const host = s.table?.players.find((x) => x.host);
    if (!s.table?.options.reserved || s.table.state !== "lobby" || host?.seat !== s.seat || s.challengeAnswer) return;
    try {
      const mine = await players.challenges();
      const c = mine.outgoing.find((x) => x.code === s.code);
      if (!c || (c.state !== "declined" && c.state !== "expired")) return;
      this.state = { ...this.state, challengeAnswer: c };
      toast(t(`challenge.answer.${c.state}`, { name: c.opponent.name }));
      this.renderer.render(this.state, false);
    } catch {
      // asked again in a moment
    }
  }

  status(status) {
    if (this.quiet) return;
    const el = document.getElementById("conn");
    if (status === "open") this.everOpen = true;
    if (el) el.hidden = status === "open" || !this.everOpen || !!this.state.stopped;
  }

  dispatch(msg) {
    const now = performance.now();
    // A Play now lobby's countdown runs on this clock: ms left, from when it came.
    if (msg.table?.fill_in_ms != null) msg.table.fill_deadline = now + msg.table.fill_in_ms;
    if (msg.type === "error" && msg.code === "kicked") {
      // Removed from the lobby: the token opens nothing now, so come back as a watcher.
      this.storage.saveSeat(this.state.code, null);
      this.conn.token = null;
      this.state = { ...this.state, token: null };
    }
    this.state = reduce(this.state, msg, now);
    if (msg.type === "started") {
      // A rematch: the last game's end is put away.
      Object.assign(this.state, { result: null, recordUrl: null, fair: undefined, endDismissed: false, ratings: null });
    }
    if (this.state.table?.state === "over" && this.state.table.game_id && this.state.ratings?.game_id !== this.state.table.game_id)
      this.fetchRatings(this.state.table.game_id);
    for (const e of this.state.effects) this.effect(e);
    this.onState?.(this.state);
  }

  /** What the finished game did to its players' ratings ("+14"), for the end screen. */
  async fetchRatings(gameId) {
    if (this.fetching === gameId) return;
    this.fetching = gameId;
    try {
      const summary = await players.game(gameId);
      if (this.state.table?.game_id !== gameId) return;
      // The ratings after the game: the seats show them from now on (a rematch keeps the seats,
      // and the table knows only the ratings its players sat down with).
      const after = Object.fromEntries(summary.seats.filter((x) => x.player && x.rated).map((x) => [x.player, x.rating_after]));
      this.state = { ...this.state, ratings: summary, knownRatings: { ...this.state.knownRatings, ...after } };
      this.renderer.render(this.state, false);
    } catch {
      this.fetching = null; // a game without players kept: no ratings to show
    }
  }

  effect(e) {
    const s = this.state;
    if (this.quiet && QUIET_SKIPS.has(e.type)) return;
    const name = (seat) => playerName(s.table?.players[seat], seat);
    switch (e.type) {
      case "render":
        return this.renderer.render(s, e.animate);
      case "patch":
        return this.renderer.patch(s);
      case "countdown":
        return this.renderer.countdown(s);
      case "toast":
        return e.error ? toast(errorText(e.error), "error") : toast(t(e.key));
      case "sound":
        return this.sound.play(e.name);
      case "react":
        if (this.storage.reactionsMuted()) return;
        announce(`${name(e.seat)}: ${t(`react.${e.reaction}`)}`);
        return this.renderer.reacts(s);
      case "announceReveal": {
        const said = t("table.announceReveal", { name: name(e.seat), card: cardName(e.card) });
        const open = e.windowMs ? t("table.announceOpen", { what: "", s: seconds(e.windowMs) }).trim() : "";
        return announce(open ? `${said} ${open}` : said);
      }
      case "announceRound": {
        const lr = e.round;
        return announce(
          [
            ...lr.won.map((w) => t("table.eventWon", { name: name(w.seat), card: cardName(w.card) })),
            ...lr.penalties.map((p) => t("table.eventPenalty", { name: name(p.seat), card: cardName(p.card) })),
            ...e.unpaid.map((seat) => t("table.eventNothingToPay", { name: name(seat) })),
          ].join(". ") || t("table.eventNone"),
        );
      }
      case "timer":
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.renderer.render(this.state, true), e.ms);
        return;
      case "cancelTimer":
        return clearTimeout(this.timer);
      case "checkSeed":
        return void seedMatches(e.seed, e.commitment).then((ok) => ok !== undefined && this.dispatch({ type: "fair", ok }));
      case "forgetSeat":
        return this.storage.saveSeat(s.code, null);
      case "reconnect":
        return this.conn.reconnectWith(e.token);
      case "stop":
        return this.conn.close();
      default:
        return;
    }
  }

  /** An input action: ask the model what it means, send what it says, show what it refuses. */
  act(a) {
    const s = this.state;
    if (a.type === "join") return this.join(a.name);
    if (a.type === "copy") return this.copyLink();
    if (a.type === "replay") return navigate(`?replay=${encodeURIComponent(s.recordUrl)}`);
    if (a.type === "home") return this.newGame();
    if (a.type === "close-end" || a.type === "show-end") return this.dispatch({ type: "endShown", shown: a.type === "show-end" });
    if (a.type === "take-back") return this.dispatch({ type: "takeBack" });
    if (a.type === "profile") return navigate(a.href);
    if (a.type === "mute-reactions") {
      this.storage.saveReactionsMuted(!this.storage.reactionsMuted());
      return this.renderer.reacts(s);
    }
    const lifecycle = lifecycleMessage(a);
    if (lifecycle) {
      if (!this.conn.send(lifecycle)) return toast(errorText("offline"), "error");
      if (lifecycle.type === "leave") {
        this.storage.saveSeat(s.code, null);
        navigate("");
      }
      return;
    }
    const action = a.type === "ready" ? { type: "ready", ready: a.ready !== "true" } : a;
    const out = intent(s, action);
    if (out.handled || (a.type === "key" && (out.send || out.error))) a.event?.preventDefault();
    if (out.error) return toast(errorText(out.error), "error");
    if (!out.send) return;
    this.state = out.state;
    if (!this.conn.send(out.send)) {
      this.state = unsent(this.state, out.send);
      toast(errorText("offline"), "error");
    }
    if (out.send.type === "slap" || out.send.type === "done") this.renderer.patch(this.state);
    else if (out.send.type === "reveal") this.renderer.render(this.state, false);
  }

  /** New game, from the end: the seat is given up (the others' rematch need not wait), then home. */
  newGame() {
    const s = this.state;
    if (s.table?.state === "over" && s.seat !== null && !s.table.practice && this.conn.send({ type: "leave" }))
      this.storage.saveSeat(s.code, null);
    navigate("");
  }

  async join(name) {
    if (!name) return toast(errorText("bad_name"), "error"); // a name of only spaces
    this.storage.saveName(name);
    try {
      name = (await ensureMe(name)).name;
      const seated = await players.joinTable(this.state.code, name);
      this.storage.saveSeat(this.state.code, { seat: seated.seat, token: seated.token, host: seated.host, name });
      this.dispatch({ type: "joined", token: seated.token });
    } catch (err) {
      showError(err);
    }
  }

  copyLink() {
    const input = this.renderer.root.querySelector("#share-link");
    input.select();
    const done = () => toast(t("lobby.copied"));
    if (navigator.clipboard) navigator.clipboard.writeText(input.value).then(done, done);
    else done();
  }

  leave() {
    this.conn.close();
    this.input.stop();
    this.renderer.stop();
    clearTimeout(this.timer);
    clearInterval(this.fillTimer);
    clearInterval(this.challengeTimer);
    window.removeEventListener("resize", this.onResize);
    if (this.quiet) return;
    const el = document.getElementById("conn");
    if (el) el.hidden = true;
    hideToast(); // a table's message never follows the player to another page
  }
}

/** The page of a table on the server (?table=CODE; watch: as a spectator, ?table=CODE&watch). */
export function tablePage(app, code, { watch = false } = {}) {
  app.innerHTML = `<div class="table-page" id="table-page"></div>`;
  const root = app.querySelector("#table-page");
  const game = new GameManager(code, root, {
    connect: (handlers, token) => new Connection(code, token, handlers),
    lookup: (c) => api.table(c),
    watch,
  });
  const live = () => game.state.table?.state === "playing" && game.state.seat !== null;
  return { relabel: () => game.renderer.render(game.state, false), leave: () => game.leave(), live, game };
}

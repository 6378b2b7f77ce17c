// Who this browser's player is (docs/PROTOCOL.md, Players): an id and a secret the server
// made on the first visit, and the name chosen then, kept in localStorage. The secret is
// sent only in request bodies, never in a link. The players' HTTP calls live here too.

import { request } from "./net.js";

const KEY = "flyswat.player";

/** The saved identity {player, secret, name}, or null on a first visit. */
export function me() {
  try {
    const v = JSON.parse(localStorage.getItem(KEY) || "null");
    return v && typeof v.player === "string" && typeof v.secret === "string" ? v : null;
  } catch {
    return null;
  }
}

export function saveMe(who) {
  try {
    if (who) localStorage.setItem(KEY, JSON.stringify({ player: who.player, secret: who.secret, name: who.name }));
    else localStorage.removeItem(KEY);
  } catch {
    // not remembered: the next visit asks for a name again
  }
}

/** {player, secret} for a request body, or {} without an identity. */
export function auth() {
  const who = me();
  return who ? { player: who.player, secret: who.secret } : {};
}

/** The identity, made with `name` on the first visit (the name is chosen once). */
export async function ensureMe(name) {
  const who = me();
  if (who) return who;
  const made = await request("POST", "/api/players", { name });
  saveMe(made);
  return made;
}

const enc = encodeURIComponent;

/** A join attempt's request key (docs/PROTOCOL.md, JoinTable): 16 random bytes, base64url. */
export function requestKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * `call()`, made again (up to `tries` times in all, a growing pause between) when no answer
 * came — the network failed or the server was restarting (a 5xx) —, for requests that are
 * idempotent: a join resent with its request key, or by its identity, gets the seat it took.
 */
export async function retried(call, tries = 4, pauseMs = 500) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      const unanswered = err.code === "network" || err.status >= 500;
      if (!unanswered || attempt >= tries) throw err;
      await new Promise((r) => setTimeout(r, pauseMs * attempt));
    }
  }
}

export const players = {
  profile: (id) => request("GET", `/api/players/${enc(id)}`),
  games: (id, before) => request("GET", `/api/players/${enc(id)}/games${before ? `?before=${enc(before)}` : ""}`),
  leaderboard: (offset = 0, pool = "people") => request("GET", `/api/leaderboard?offset=${offset}&pool=${pool}`),
  game: (gameId) => request("GET", `/api/games/${enc(gameId)}`),
  /** The recent public games: ``filters`` {name, seats, rated, before}, each optional. */
  listed: (filters = {}) => {
    const q = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== "" && v != null));
    return request("GET", `/api/games${q.size ? `?${q}` : ""}`);
  },
  playNow: () => retried(() => request("POST", "/api/play", auth())),
  createTable: (options) => request("POST", "/api/tables", { ...options, ...auth() }),
  joinTable: (code, name) => {
    const body = { name, request: requestKey(), ...auth() }; // one key for this attempt's retries
    return retried(() => request("POST", `/api/tables/${enc(code)}/join`, body));
  },
  claimCode: () => request("POST", "/api/players/claim-code", auth()),
  challenge: (opponent) => request("POST", "/api/challenges", { ...auth(), opponent }),
  challenges: () => request("POST", "/api/challenges/mine", auth()),
  arenas: () => request("GET", "/api/arenas"),
  arena: (id) => request("GET", `/api/arenas/${enc(id)}`),
  arenaMe: (id) => request("POST", `/api/arenas/${enc(id)}/me`, auth()),
  joinArena: (id) => retried(() => request("POST", `/api/arenas/${enc(id)}/join`, auth())),
  leaveArena: (id) => request("POST", `/api/arenas/${enc(id)}/leave`, auth()),
  arenaResults: (id) => request("GET", `/api/players/${enc(id)}/arenas`),
  acceptChallenge: (id) => retried(() => request("POST", `/api/challenges/${enc(id)}/accept`, auth())),
  declineChallenge: (id) => request("POST", `/api/challenges/${enc(id)}/decline`, auth()),
  claim: (code) => request("POST", "/api/players/claim", { code }),
};

/** The URL of a finished game's record, to replay or download. */
export const recordUrl = (gameId) => `/api/games/${enc(gameId)}/record`;

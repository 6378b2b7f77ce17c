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

export const players = {
  profile: (id) => request("GET", `/api/players/${enc(id)}`),
  games: (id, before) => request("GET", `/api/players/${enc(id)}/games${before ? `?before=${enc(before)}` : ""}`),
  leaderboard: (offset = 0) => request("GET", `/api/leaderboard?offset=${offset}`),
  game: (gameId) => request("GET", `/api/games/${enc(gameId)}`),
  playNow: () => request("POST", "/api/play", auth()),
  createTable: (options) => request("POST", "/api/tables", { ...options, ...auth() }),
  joinTable: (code, name) => request("POST", `/api/tables/${enc(code)}/join`, { name, ...auth() }),
  claimCode: () => request("POST", "/api/players/claim-code", auth()),
  claim: (code) => request("POST", "/api/players/claim", { code }),
};

/** The URL of a finished game's record, to replay or download. */
export const recordUrl = (gameId) => `/api/games/${enc(gameId)}/record`;

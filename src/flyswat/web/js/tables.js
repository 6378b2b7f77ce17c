// Pure helpers about tables for the home page (no DOM): which listed tables a newcomer can
// join, and the table code in whatever a player pasted.

/** A table code: letters and digits (the server's codes are 6 of A–Z, 2–9), in any case. */
const CODE = /^[A-Za-z0-9]{4,12}$/;

/**
 * The table code in a pasted text: a whole link (…?table=b7eawb…), a path, or the code
 * itself, in any case; null when there is none.
 */
export function tableCode(raw) {
  const text = String(raw ?? "").trim();
  const m = /[?&]table=([A-Za-z0-9]+)/.exec(text);
  const code = m ? m[1] : text;
  return CODE.test(code) ? code.toUpperCase() : null;
}

/**
 * The tables worth offering: lobbies with a free human seat whose host is still there.
 * (A protocol 2 server lists only joinable lobbies; a protocol 1 server lists every table
 * in play too.)
 */
export function joinable(tables) {
  return (tables || []).filter((tb) => {
    if (tb.state !== "lobby") return false;
    const free = tb.players.some((p) => p.kind === "human" && !p.joined);
    const host = tb.players.find((p) => p.host);
    return free && (!host || host.connected !== false);
  });
}

// Talking to the server (docs/PROTOCOL.md): HTTP for tables and records, one WebSocket
// per table that reconnects by itself with the seat token.

import { Assembler } from "./wire.js";

/** An error from the server: code is the protocol's error code. */
export class ServerError extends Error {
  constructor(code, message, status = 0) {
    super(message || code);
    this.code = code;
    this.status = status;
  }
}

export async function request(method, path, body) {
  let res;
  try {
    res = await fetch(path, {
      method,
      headers: body ? { "content-type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch {
    throw new ServerError("network");
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) throw new ServerError(data?.error || (res.status === 404 ? "not_found" : "http"), data?.message, res.status);
  return data;
}

export const api = {
  createTable: (options) => request("POST", "/api/tables", options),
  joinTable: (code, name) => request("POST", `/api/tables/${encodeURIComponent(code)}/join`, { name }),
  table: (code) => request("GET", `/api/tables/${encodeURIComponent(code)}`),
  live: (limit) => request("GET", limit ? `/api/live?limit=${limit}` : "/api/live"),
  tables: (after) => request("GET", after ? `/api/tables?after=${encodeURIComponent(after)}` : "/api/tables"),
  record: (url) => request("GET", url),
};

/** Close codes after which the client does not reconnect by itself (docs/PROTOCOL.md). */
export const FINAL_CLOSES = new Set([4409, 4404, 4410]); // seat opened elsewhere; no table; expired
/** A policy violation (1008) or a table full of spectators (1013): retry, slowly, never hammering. */
const SLOW_CLOSES = new Set([1008, 1013]);
/** The table is served by another node: go there at once (its address came in a `moved`). */
export const CLOSE_MOVED = 4302;
/**
 * Nothing from the server for this long (ms) on an open socket: the connection is lost, even
 * where the browser has not noticed (a network gone leaves a socket open for minutes). The
 * server pings a seat every second and a spectator every 10 s (docs/PROTOCOL.md).
 */
export const SILENT_MS = { seat: 4000, watcher: 25000 };

/**
 * One table's WebSocket. Sends hello (with the token, if any) on every (re)connection,
 * answers pings, and calls onMessage(msg) for everything else; onStatus("open"|"closed");
 * onClose(code) on every close. Reconnects after a drop with a growing pause (a long one
 * after 1008 and 1013), never after 4409 (replaced), 4404 (no such table) or 4410 (expired),
 * until close() is called.
 */
export class Connection {
  constructor(code, token, { onMessage, onStatus, onClose = () => {} }) {
    this.code = code;
    this.token = token;
    this.onMessage = onMessage;
    this.onStatus = onStatus;
    this.onClose = onClose;
    this.closed = false;
    this.attempt = 0;
    this.ws = null;
    this.moved = null; // the owner node's address, from a `moved` (docs/PROTOCOL.md)
    this.moves = 0; // moves in a row without a welcome: a loop between nodes slows down
    // The browser's word that the network is gone, or back: act at once, not at the next try.
    this.onOffline = () => this.ws && this.lost(this.ws);
    this.onOnline = () => {
      if (this.ws || this.closed) return;
      clearTimeout(this.timer);
      this.attempt = 0;
      this.open();
    };
    globalThis.addEventListener?.("offline", this.onOffline);
    globalThis.addEventListener?.("online", this.onOnline);
    this.open();
  }

  /** A message came on ws: it is alive; it is lost if the server says nothing for a while. */
  heard(ws) {
    clearTimeout(this.silence);
    this.silence = setTimeout(() => this.lost(ws), this.token ? SILENT_MS.seat : SILENT_MS.watcher);
  }

  /** ws is taken for lost: drop it (its close, whenever it comes, is not waited for), say so,
   * and try again. */
  lost(ws) {
    if (this.ws !== ws || this.closed) return;
    clearTimeout(this.silence);
    this.ws = null;
    try {
      ws.close();
    } catch {
      // already closing
    }
    this.onStatus("closed");
    this.retry(false);
  }

  retry(slow) {
    const pause = slow ? Math.min(60000, 10000 * 2 ** this.attempt++) : Math.min(5000, 300 * 2 ** this.attempt++);
    this.timer = setTimeout(() => this.open(), pause);
  }

  url() {
    if (this.moved) return this.moved;
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    return `${proto}//${location.host}/ws/${encodeURIComponent(this.code)}`;
  }

  open() {
    const ws = new WebSocket(this.url());
    this.ws = ws;
    this.wire = new Assembler(); // every connection starts with a welcome's whole view
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.heard(ws);
      ws.send(JSON.stringify(this.token ? { type: "hello", token: this.token } : { type: "hello" }));
      this.onStatus("open");
    };
    ws.onmessage = (ev) => {
      if (this.ws !== ws) return; // a socket given up for lost
      this.heard(ws);
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (msg.type === "ping") {
        this.send({ type: "pong", id: msg.id });
        return;
      }
      if (msg.type === "moved") {
        this.moved = typeof msg.url === "string" && /^wss?:\/\//.test(msg.url) ? msg.url : null;
        return;
      }
      if (msg.type === "welcome") {
        this.attempt = 0;
        this.moves = 0;
      }
      this.onMessage(this.wire.feed(msg));
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws || this.closed) return;
      clearTimeout(this.silence);
      this.onClose(ev.code);
      if (FINAL_CLOSES.has(ev.code)) {
        this.ws = null;
        return;
      }
      if (ev.code === CLOSE_MOVED && this.moves++ < 4) {
        this.open(); // to the owner, at once: nothing is lost, the hello is said again there
        return;
      }
      if (!opened) this.moved = null; // that node is gone: ask the first address again
      this.onStatus("closed");
      this.retry(SLOW_CLOSES.has(ev.code));
    };
  }

  /** Send a message; false when the socket is not open (the caller may say so). */
  send(msg) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  /** Reconnect now as another identity (after joining a seat). */
  reconnectWith(token) {
    this.token = token;
    this.closed = false;
    clearTimeout(this.timer);
    const old = this.ws;
    this.ws = null;
    if (old) old.close();
    this.open();
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.silence);
    globalThis.removeEventListener?.("offline", this.onOffline);
    globalThis.removeEventListener?.("online", this.onOnline);
    if (this.ws) this.ws.close();
  }
}

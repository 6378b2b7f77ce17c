// The lean wire of protocol 3 (docs/PROTOCOL.md, "The lean wire"): the server sends a seat's
// whole view on welcome and started, and afterwards only the public fields that changed
// ("view") and, when it changed, the seat's private part ("you"). An Assembler puts the
// seat's whole view back together, so the rest of the client sees whole views only.
// The JavaScript twin of flyswat.wire.Assembler; tests/js/wire.test.mjs holds them together.

/** A seat's whole view from the public part and its private part (null: a spectator). */
export function assemble(pub, you) {
  if (!you) return pub;
  const view = { ...pub, seat: you.seat, won: you.won };
  if (pub.round) view.round = { ...pub.round, mine: you.mine, done: you.done };
  return view;
}

/** The private part of a whole view, as the server would send it. */
function split(view) {
  if (view.seat === null || view.seat === undefined) return null;
  const r = view.round;
  return { seat: view.seat, won: view.won, mine: r ? r.mine : [], done: !!(r && r.done) };
}

export class Assembler {
  constructor() {
    this.pub = null;
    this.you = null;
  }

  /** msg with its whole view (and "you" taken into it); other messages as they are. */
  feed(msg) {
    if (msg.type === "welcome" || msg.type === "started") {
      this.pub = msg.view || null;
      this.you = msg.view ? split(msg.view) : null;
      return msg;
    }
    if (!msg.view || !this.pub) return msg;
    this.pub = { ...this.pub, ...msg.view };
    const out = { ...msg };
    if ("you" in out) {
      this.you = out.you;
      delete out.you;
    }
    out.view = assemble(this.pub, this.you);
    return out;
  }
}

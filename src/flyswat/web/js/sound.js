// The table's sounds, made here with Web Audio (no sound files): a reveal, a swatter, a fifth
// colour, a slap landing, a win, a penalty, your turn. Silent until the page has had a user
// gesture (browsers require it, and nobody wants a page that starts making noise); the switch
// is remembered; a player who asks the system for reduced motion starts with sound off.
// Each sound played is also announced as a `flyswat:sound` event on window (name in detail).

import { storage as localStore } from "./storage.js";

/** Each sound: notes [{f: Hz, to: Hz (glide), at: s, len: s, type, gain}] and noise bursts. */
const VOICES = {
  reveal: [{ noise: true, at: 0, len: 0.05, gain: 0.25, f: 3000 }, { f: 660, at: 0, len: 0.06, type: "triangle", gain: 0.12 }],
  swatter: [
    { noise: true, at: 0, len: 0.18, gain: 0.5, f: 900 },
    { f: 180, to: 60, at: 0, len: 0.2, type: "square", gain: 0.25 },
  ],
  fifth: [
    { f: 784, at: 0, len: 0.12, type: "triangle", gain: 0.22 },
    { f: 1047, at: 0.09, len: 0.16, type: "triangle", gain: 0.22 },
    { noise: true, at: 0.02, len: 0.12, gain: 0.3, f: 1200 },
  ],
  slap: [{ f: 140, to: 70, at: 0, len: 0.09, type: "sine", gain: 0.5 }, { noise: true, at: 0, len: 0.04, gain: 0.3, f: 600 }],
  win: [
    { f: 523, at: 0, len: 0.1, type: "triangle", gain: 0.2 },
    { f: 659, at: 0.08, len: 0.1, type: "triangle", gain: 0.2 },
    { f: 784, at: 0.16, len: 0.18, type: "triangle", gain: 0.22 },
  ],
  penalty: [{ f: 300, to: 150, at: 0, len: 0.3, type: "sawtooth", gain: 0.12 }],
  turn: [
    { f: 880, at: 0, len: 0.08, type: "sine", gain: 0.15 },
    { f: 1175, at: 0.1, len: 0.1, type: "sine", gain: 0.15 },
  ],
};

export const SOUNDS = Object.keys(VOICES);

export class Sound {
  constructor(store = localStore, win = globalThis.window) {
    this.store = store;
    this.win = win;
    this.ctx = null;
    this.gesture = false;
    const chosen = store.sound();
    const reduced = !!win?.matchMedia?.("(prefers-reduced-motion: reduce)").matches;
    this.on = chosen === null ? !reduced : chosen;
    this.listeners = [];
    if (win) {
      const unlock = () => {
        this.gesture = true;
        win.removeEventListener("pointerdown", unlock, true);
        win.removeEventListener("keydown", unlock, true);
      };
      win.addEventListener("pointerdown", unlock, true);
      win.addEventListener("keydown", unlock, true);
    }
  }

  /** Is sound on (the switch), whether or not the page may play yet? */
  enabled() {
    return this.on;
  }

  /** Turn sound on or off, and remember it. */
  set(on) {
    this.on = !!on;
    this.store.saveSound(this.on);
    for (const fn of this.listeners) fn(this.on);
  }

  onChange(fn) {
    this.listeners.push(fn);
  }

  /** Play a sound by name, if sound is on and the page has had a gesture; never throws. */
  play(name) {
    if (!this.on || !this.gesture || !VOICES[name]) return;
    try {
      const AC = this.win.AudioContext || this.win.webkitAudioContext;
      if (!AC) return;
      this.ctx ??= new AC();
      if (this.ctx.state === "suspended") this.ctx.resume();
      const t0 = this.ctx.currentTime + 0.005;
      for (const v of VOICES[name]) (v.noise ? this.noise : this.note).call(this, v, t0);
      this.win.dispatchEvent(new CustomEvent("flyswat:sound", { detail: name }));
    } catch {
      // no audio on this device: play on in silence
    }
  }

  envelope(v, t0) {
    const g = this.ctx.createGain();
    const start = t0 + v.at;
    g.gain.setValueAtTime(0.0001, start);
    g.gain.exponentialRampToValueAtTime(v.gain, start + 0.008);
    g.gain.exponentialRampToValueAtTime(0.0001, start + v.len);
    g.connect(this.ctx.destination);
    return g;
  }

  note(v, t0) {
    const o = this.ctx.createOscillator();
    o.type = v.type || "sine";
    o.frequency.setValueAtTime(v.f, t0 + v.at);
    if (v.to) o.frequency.exponentialRampToValueAtTime(v.to, t0 + v.at + v.len);
    o.connect(this.envelope(v, t0));
    o.start(t0 + v.at);
    o.stop(t0 + v.at + v.len + 0.02);
  }

  noise(v, t0) {
    const n = Math.ceil(this.ctx.sampleRate * v.len);
    const buf = this.ctx.createBuffer(1, n, this.ctx.sampleRate);
    const data = buf.getChannelData(0);
    for (let i = 0; i < n; i++) data[i] = (Math.random() * 2 - 1) * (1 - i / n);
    const src = this.ctx.createBufferSource();
    src.buffer = buf;
    const filter = this.ctx.createBiquadFilter();
    filter.type = "lowpass";
    filter.frequency.value = v.f;
    src.connect(filter).connect(this.envelope(v, t0));
    src.start(t0 + v.at);
  }
}

export const sound = new Sound();

// What this browser remembers, in localStorage: the seats it holds (by table code), the
// player's name, the sound switch, the quick reactions' switch, and whether the practice game was offered. One object
// handed to the pages (2048's LocalStorageManager); a failing storage (private mode) forgets.

const SEATS = "flyswat.seats";
const NAME = "flyswat.name";
const SOUND = "flyswat.sound";
const PRACTICE = "flyswat.practice";
const REACTIONS_MUTED = "flyswat.reactionsMuted";

function read(key, fallback) {
  try {
    const raw = localStorage.getItem(key);
    return raw === null ? fallback : JSON.parse(raw);
  } catch {
    return fallback;
  }
}

function write(key, value) {
  try {
    if (value === null || value === undefined) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // storage full or refused: the game goes on without remembering
  }
}

export class LocalStorageManager {
  /** The seat this browser holds at table code: {seat, token, host, name}, or null. */
  seat(code) {
    return read(SEATS, {})[code] || null;
  }

  /** The codes of the tables this browser holds seats at, the latest taken first. */
  seatCodes() {
    return Object.keys(read(SEATS, {})).reverse();
  }

  saveSeat(code, seated) {
    const all = read(SEATS, {});
    if (seated) all[code] = seated;
    else delete all[code];
    write(SEATS, all);
  }

  name() {
    try {
      return localStorage.getItem(NAME) || ""; // a plain string, not JSON (older clients wrote it so)
    } catch {
      return "";
    }
  }

  saveName(name) {
    try {
      localStorage.setItem(NAME, name);
    } catch {
      // not remembered
    }
  }

  /** The sound switch: true, false, or null when the player never chose. */
  sound() {
    const v = read(SOUND, null);
    return typeof v === "boolean" ? v : null;
  }

  saveSound(on) {
    write(SOUND, !!on);
  }

  /** The quick reactions' switch: true when they are muted (never shown, none to send). */
  reactionsMuted() {
    return read(REACTIONS_MUTED, false) === true;
  }

  saveReactionsMuted(muted) {
    write(REACTIONS_MUTED, !!muted);
  }

  /** "offered", "done", "skipped", or null on a first visit. */
  practice() {
    return read(PRACTICE, null);
  }

  savePractice(what) {
    write(PRACTICE, what);
  }
}

export const storage = new LocalStorageManager();

// The table's input: pointer, click, key and form events turned into plain actions for the
// model's intents (2048's KeyboardInputManager). Nothing here knows the rules or the socket.

import { typing } from "./ui.js";

/**
 * Listens on root (clicks, taps, forms) and on the document (keys) and calls
 * onAction(action) with {type: "slap", card, at} (at = the event's timeStamp), {type: "key",
 * key, code, at, event}, {type: <data-action>, ...dataset}, or {type: "join", name}.
 * stop() removes every listener.
 */
export class InputManager {
  constructor(root, onAction, doc = document) {
    this.root = root;
    this.doc = doc;
    this.onPointer = (ev) => {
      const card = ev.target.closest(".fly-card.slappable");
      if (!card) return;
      ev.preventDefault();
      onAction({ type: "slap", card: card.dataset.card, at: ev.timeStamp });
    };
    this.onClick = (ev) => {
      const el = ev.target.closest("[data-action]");
      if (!el) return;
      if (el.tagName === "A") ev.preventDefault(); // a link with an action: the action goes there
      onAction({ ...el.dataset, type: el.dataset.action, element: el });
    };
    this.onSubmit = (ev) => {
      const form = ev.target.closest("form#join-seat");
      if (!form) return;
      ev.preventDefault();
      onAction({ type: "join", name: form.name.value.trim() });
    };
    this.onKey = (ev) => {
      if (typing(ev) || ev.repeat || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      onAction({ type: "key", key: ev.key, code: ev.code, at: ev.timeStamp, event: ev });
    };
    root.addEventListener("pointerdown", this.onPointer);
    root.addEventListener("click", this.onClick);
    root.addEventListener("submit", this.onSubmit);
    doc.addEventListener("keydown", this.onKey);
  }

  stop() {
    this.root.removeEventListener("pointerdown", this.onPointer);
    this.root.removeEventListener("click", this.onClick);
    this.root.removeEventListener("submit", this.onSubmit);
    this.doc.removeEventListener("keydown", this.onKey);
  }
}

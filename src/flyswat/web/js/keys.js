// The keyboard overlay: "?" (or the header's ? button) shows every key of the game, Escape or
// "?" again hides it. Drawn in the player's language each time it opens.

import { t } from "./i18n.js";
import { esc, typing } from "./ui.js";

const KEYS = [
  ["key.space", "keys.reveal"],
  ["1–9 0 Q W E…", "keys.slap"],
  ["key.enter", "keys.done"],
  ["Tab", "keys.tab"],
  ["?", "keys.help"],
];

/** Install the overlay: the ? key anywhere but in a text field, and the header's button. */
export function keysOverlay(doc = document) {
  const box = doc.createElement("div");
  box.className = "keys-help";
  box.id = "keys-help";
  box.setAttribute("role", "dialog");
  box.setAttribute("aria-labelledby", "keys-title");
  box.hidden = true;
  doc.body.append(box);
  let back = null; // where the focus was before the overlay took it
  const show = (on) => {
    if (on) {
      back = doc.activeElement;
      const rows = KEYS.map(([k, what]) => `<dt><kbd>${esc(k.startsWith("key.") ? t(k) : k)}</kbd></dt><dd>${esc(t(what))}</dd>`).join("");
      box.innerHTML = `<div class="card-box"><h2 id="keys-title">${esc(t("keys.title"))}</h2><dl>${rows}</dl>
        <button class="btn" type="button" data-keys-close>${esc(t("keys.close"))}</button></div>`;
      box.hidden = false;
      box.querySelector("[data-keys-close]").focus();
    } else if (!box.hidden) {
      box.hidden = true;
      back?.focus?.();
    }
  };
  doc.addEventListener(
    "keydown",
    (ev) => {
      if (ev.key === "?" && !typing(ev)) {
        ev.preventDefault();
        ev.stopImmediatePropagation(); // not a game key
        show(box.hidden);
      } else if (ev.key === "Escape" && !box.hidden) {
        ev.preventDefault();
        ev.stopImmediatePropagation();
        show(false);
      } else if (!box.hidden && ev.key !== "Tab" && ev.key !== "Enter") ev.stopImmediatePropagation(); // the game waits
    },
    true,
  );
  box.addEventListener("click", (ev) => {
    if (ev.target === box || ev.target.closest("[data-keys-close]")) show(false);
  });
  doc.getElementById("keys")?.addEventListener("click", () => show(box.hidden));
}

// Small helpers shared by the pages: escaping, messages, error words, navigation.

import { has, t } from "./i18n.js";

export const esc = (s) =>
  String(s ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c],
  );

let toastTimer = null;

/** Show a short message at the bottom of the screen; kind "error" is red. */
export function toast(text, kind = "info", ms = 3500) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.className = `toast ${kind}`;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (el.hidden = true), ms);
}

/** Hide the message at once (leaving a page: its messages stay with it). */
export function hideToast() {
  clearTimeout(toastTimer);
  const el = document.getElementById("toast");
  if (el) el.hidden = true;
}

/** The mark shown after a bot account's name (a program, not a person), or nothing. */
export function botMark(isBot) {
  return isBot ? ` <span class="bot-mark" title="${esc(t("players.botAccount"))}">${esc(t("players.botMark"))}</span>` : "";
}

/** A server error code in the player's words (error.<code> in the strings file). */
export function errorText(code) {
  return has(`error.${code}`) ? t(`error.${code}`) : t("error.unknown", { code });
}

/** Show a server error (an Error with .code, or a protocol error message) to the player. */
export function showError(err) {
  toast(errorText(err?.code || "unknown"), "error");
}

/** Go to another page of the client without reloading (?table=…, ?replay=…). */
export function navigate(search) {
  history.pushState(null, "", search || location.pathname);
  window.dispatchEvent(new Event("flyswat:navigate"));
}

/** Links marked data-page under root go to their page without a reload; returns the way to stop.
 * A click another page's handler already followed is not followed again: the page it opens
 * may listen on the same root while that click still bubbles through it (two steps of Back). */
export function followPageLinks(root) {
  const onClick = (ev) => {
    const a = ev.target.closest("a[data-page]");
    if (!a || ev.defaultPrevented) return;
    ev.preventDefault();
    navigate(a.dataset.page);
  };
  root.addEventListener("click", onClick);
  return () => root.removeEventListener("click", onClick);
}

/** True while focus is in a text field (so game keys do not steal typing). */
export function typing(ev) {
  const el = ev.target;
  return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT");
}

/** Tell screen readers what just happened on the table (a polite live region). */
export function announce(text) {
  const el = document.getElementById("announce");
  if (el) el.textContent = text;
}

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

/** Go to another page of the client without reloading (?table=…, ?replay=…). The page shown
 * already is drawn again in place, never one more step of Back (a click that two listeners
 * follow, one of them the page it just opened, is one step whatever their order). */
export function navigate(search) {
  const target = new URL(search || location.pathname, location.href);
  if (target.href === location.href) history.replaceState(history.state, "", target.href);
  else history.pushState(null, "", target.href);
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

/**
 * A page that lists what `load()` gives, asked again every `everyMs` while it is shown (Live
 * now, the arenas): the strings `${key}.title`, `${key}.intro` and `${key}.none`, the list
 * `ul.${key}-list` of `row(item)`, and a click on a link `a[data-${link}]` goes to `url(its
 * data-${link})`. A list already shown stays when asking again fails, until the next try.
 */
export function listPage(app, { key, page, load, row, link, url, everyMs }) {
  let items = null;
  let error = null;
  let shown = true;
  let timer = null;
  const draw = () => {
    const body = error
      ? `<p class="error-text">${esc(errorText(error))}</p>`
      : items === null
        ? `<p class="muted">${esc(t("table.connecting"))}</p>`
        : items.length
          ? `<ul class="seat-list ${key}-list">${items.map(row).join("")}</ul>`
          : `<p class="muted" id="${key}-none">${esc(t(`${key}.none`))}</p>`;
    app.innerHTML = `<div class="page ${page}"><section class="card-box"><h1>${esc(t(`${key}.title`))}</h1>
      <p class="muted">${esc(t(`${key}.intro`))}</p>${body}</section></div>`;
  };
  const refresh = async () => {
    try {
      items = await load();
      error = null;
    } catch (err) {
      error = items === null ? err.code : null;
    }
    if (!shown) return;
    draw();
    timer = setTimeout(refresh, everyMs);
  };
  const onClick = (ev) => {
    const a = ev.target.closest(`a[data-${link}]`);
    if (!a) return;
    ev.preventDefault();
    navigate(url(a.dataset[link]));
  };
  app.addEventListener("click", onClick);
  draw();
  refresh();
  return {
    relabel: draw,
    leave: () => {
      shown = false;
      clearTimeout(timer);
      app.removeEventListener("click", onClick);
    },
  };
}

// Translations: one strings file per language in ../i18n/<lang>.json, no strings in code.
// t(key, {name: "Ana"}) fills {name} in the string; elements with data-i18n="<key>" are filled by apply().

export const LANGUAGES = ["en", "pt", "es", "vi", "de"];
const STORE_KEY = "flyswat.lang";

let strings = {};
let fallback = {};
let current = "en";
const listeners = [];

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** A language's strings. A dropped connection or a busy server (429, 5xx) is asked again,
 * a little later each time: the page has no words without them. */
async function load(lang) {
  for (let wait = 250; ; wait = Math.min(2 * wait, 4000)) {
    let res = null;
    try {
      res = await fetch(new URL(`../i18n/${lang}.json`, import.meta.url));
    } catch {
      // the network's, not the file's: ask again
    }
    if (res?.ok) return res.json();
    if (res && res.status !== 429 && res.status < 500) throw new Error(`no strings for ${lang}`);
    await sleep(wait);
  }
}

/** The language to start with: the saved choice, else the browser's, else English. */
export function preferredLanguage() {
  const saved = localStorage.getItem(STORE_KEY);
  if (saved && LANGUAGES.includes(saved)) return saved;
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (LANGUAGES.includes(base)) return base;
  }
  return "en";
}

export function language() {
  return current;
}

/** Switch language: load its strings, remember the choice, re-apply the page. */
let latest = 0;

export async function setLanguage(lang) {
  if (!LANGUAGES.includes(lang)) lang = "en";
  localStorage.setItem(STORE_KEY, lang); // remembered at once, even if the page goes now
  const ticket = ++latest;
  if (!Object.keys(fallback).length) fallback = await load("en");
  const loaded = lang === "en" ? fallback : await load(lang);
  if (ticket !== latest) return; // a later choice won the race
  strings = loaded;
  current = lang;
  document.documentElement.lang = lang;
  apply(document);
  for (const fn of listeners) fn(lang);
}

/** Call fn(lang) after every language switch. */
export function onLanguage(fn) {
  listeners.push(fn);
}

/** The string for key in the current language, with {placeholders} filled in. */
export function t(key, params = {}) {
  let s = strings[key] ?? fallback[key];
  if (s === undefined) return key;
  return s.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

/** Does the current language (or English) have this key? */
export function has(key) {
  return key in strings || key in fallback;
}

/** Fill every [data-i18n] (text), [data-i18n-title], [data-i18n-placeholder], [data-i18n-aria] under root. */
export function apply(root) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle);
  for (const el of root.querySelectorAll("[data-i18n-placeholder]"))
    el.placeholder = t(el.dataset.i18nPlaceholder);
  for (const el of root.querySelectorAll("[data-i18n-aria]"))
    el.setAttribute("aria-label", t(el.dataset.i18nAria));
}

/** A card's accessible name: "red 3", "swatter". */
export function cardName(text) {
  if (text.startsWith("S-")) return t("card.swatter");
  return t("card.fly", { colour: t(`colour.${text[0]}`), value: text[1] });
}

/** A seat's display name: the player's name, a bot's name in this language, or "Seat n". */
export function playerName(p, seat) {
  if (p?.kind === "bot" && (!p.name || /^Bot \d+$/.test(p.name))) return t("seat.botName", { n: seat + 1 });
  return p?.name || t("seat.empty", { n: seat + 1 });
}

let secondsFormat = null;

/** Seconds with one decimal, as the current language writes them (3.0 in English, 3,0 in Portuguese). */
export function seconds(ms) {
  const lang = language();
  if (secondsFormat?.lang !== lang) {
    // Made once per language: the slap window's countdown asks at every frame.
    const format = new Intl.NumberFormat(lang, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
    secondsFormat = { lang, format };
  }
  return secondsFormat.format.format(ms / 1000);
}

/** A moment (an ISO time the server sent) as the chosen language writes it, not the browser's. */
export function when(iso) {
  const at = new Date(String(iso).replace(/\.\d+Z$/, "Z"));
  return isNaN(at) ? String(iso) : at.toLocaleString(current, { dateStyle: "short", timeStyle: "short" });
}

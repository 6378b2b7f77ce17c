// The client's entry point: language, routing between the pages, the header.
//   /                 home: create a table, or join one
//   /?table=CODE      a table: lobby, game, end (a join link)
//   /?replay=URL      the replay of a record (empty: open a file)

import { apply, language, onLanguage, preferredLanguage, setLanguage } from "./i18n.js";
import { navigate } from "./ui.js";
import { homePage } from "./home.js";
import { tablePage } from "./game.js";
import { replayPage } from "./replay.js";

let current = null;

function route() {
  if (current?.leave) current.leave();
  const params = new URLSearchParams(location.search);
  const app = document.getElementById("app");
  app.innerHTML = "";
  if (params.has("table")) current = tablePage(app, params.get("table").toUpperCase());
  else if (params.has("replay")) current = replayPage(app, params.get("replay"));
  else current = homePage(app);
  apply(app);
}

async function main() {
  const select = document.getElementById("lang");
  await setLanguage(preferredLanguage());
  select.value = language();
  select.addEventListener("change", () => setLanguage(select.value));
  onLanguage(() => {
    select.value = language();
    apply(document);
    current?.relabel?.();
  });
  document.addEventListener("click", (ev) => {
    const a = ev.target.closest("a[data-nav]");
    if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    ev.preventDefault();
    navigate(a.dataset.nav === "replay" ? "?replay" : "");
  });
  window.addEventListener("popstate", route);
  window.addEventListener("flyswat:navigate", route);
  route();
}

main();

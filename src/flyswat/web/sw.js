// The service worker: the client's files kept for offline play (the practice game, the rules).
// The server fills in VERSION (a hash of every file) and FILES (their paths) when it serves
// this file (server/static.py): a changed file makes a new version, whose install fetches the
// files afresh and whose activation drops the old copy. The tables, the API and the sockets
// always go to the network.

const VERSION = "dev";
const FILES = [];
const CACHE = `flyswat-${VERSION}`;

self.addEventListener("install", (ev) => {
  ev.waitUntil(
    caches
      .open(CACHE)
      .then((c) => c.addAll(FILES))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (ev) => {
  ev.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith("flyswat-") && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (ev) => {
  const req = ev.request;
  const url = new URL(req.url);
  if (req.method !== "GET" || url.origin !== location.origin) return;
  if (url.pathname.startsWith("/api/") || url.pathname.startsWith("/ws/")) return;
  if (req.mode === "navigate") {
    // A page (?practice, ?learn, ?table=…): the network's when it answers, else the kept one.
    ev.respondWith(fetch(req).catch(() => caches.match("./", { ignoreSearch: true })));
    return;
  }
  ev.respondWith(
    caches.match(req).then(
      (kept) =>
        kept ||
        fetch(req).then((res) => {
          if (res.ok && res.type === "basic") {
            const copy = res.clone();
            caches.open(CACHE).then((c) => c.put(req, copy));
          }
          return res;
        }),
    ),
  );
});

"""What a newcomer's browser fetches on the first visit to the home page, and on the second.

It starts ``flyswat serve`` (a temporary SQLite store, a free port), opens the home page in
Debian's Chromium with an empty cache (a phone's viewport), and counts from the DevTools
protocol every request of the page and the bytes that crossed the wire for it (headers and
bodies, as sent: compressed when the server compressed). Then it loads the page again in the
same browser (the cache warm) and counts again. The service worker's own fetches (it keeps
the client for offline play, after the page has loaded) are counted apart.

    flock -x -o /tmp/bench.lock uv run python bench/first_load.py [--runs 3]

Run it on a checkout before a change and after to compare (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def _server() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "flyswat.cli", "serve", "--port", str(port),
               "--workers", "1", "--db", f"sqlite:///{tmp}/b.db"]  # fmt: skip
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(200):
                with contextlib.suppress(OSError):
                    urllib.request.urlopen(url + "/health", timeout=1).close()
                    break
                time.sleep(0.1)
            yield url
        finally:
            proc.terminate()
            proc.wait(10)


def _load(page: Any, cdp: Any, url: str) -> dict[str, Any]:
    """Requests and wire bytes of one load of ``url`` (until the network is quiet)."""
    seen: dict[str, dict[str, Any]] = {}

    def sent(ev: dict[str, Any]) -> None:
        seen[ev["requestId"]] = {"url": ev["request"]["url"], "bytes": 0, "cached": False}

    def got(ev: dict[str, Any]) -> None:
        if ev["requestId"] in seen:
            seen[ev["requestId"]]["bytes"] = ev["encodedDataLength"]

    def cached(ev: dict[str, Any]) -> None:
        if ev["requestId"] in seen:
            seen[ev["requestId"]]["cached"] = True

    def answered(ev: dict[str, Any]) -> None:
        r = ev["response"]
        if ev["requestId"] in seen and (r.get("fromServiceWorker") or r.get("fromDiskCache")):
            seen[ev["requestId"]]["cached"] = True

    cdp.on("Network.requestWillBeSent", sent)
    cdp.on("Network.loadingFinished", got)
    cdp.on("Network.requestServedFromCache", cached)
    cdp.on("Network.responseReceived", answered)
    started = time.perf_counter()
    page.goto(url, wait_until="networkidle")
    ms = (time.perf_counter() - started) * 1000
    handlers = {
        "Network.requestWillBeSent": sent,
        "Network.loadingFinished": got,
        "Network.requestServedFromCache": cached,
        "Network.responseReceived": answered,
    }
    for name, handler in handlers.items():
        cdp.remove_listener(name, handler)
    wire = [r for r in seen.values() if not r["cached"]]
    return {
        "requests": len(seen),
        "over the wire": len(wire),
        "KB": round(sum(r["bytes"] for r in wire) / 1024, 1),
        "ms": round(ms),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="fresh browsers to average over")
    args = ap.parse_args()
    rows: dict[str, list[dict[str, Any]]] = {"first": [], "again": []}
    with _server() as url, sync_playwright() as p:
        for _ in range(args.runs):
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            ctx = browser.new_context(viewport={"width": 390, "height": 844}, locale="en")
            page = ctx.new_page()
            cdp = ctx.new_cdp_session(page)
            cdp.send("Network.enable")
            rows["first"].append(_load(page, cdp, url + "/"))
            page.wait_for_timeout(1500)  # the service worker, if any, keeps the client now
            rows["again"].append(_load(page, cdp, url + "/"))
            browser.close()
    print(f"{'load':<8}{'requests':>10}{'over the wire':>15}{'KB on the wire':>16}{'ms':>8}")
    for name, runs in rows.items():
        mean = {k: sum(r[k] for r in runs) / len(runs) for k in runs[0]}
        print(f"{name:<8}{mean['requests']:>10.0f}{mean['over the wire']:>15.0f}"
              f"{mean['KB']:>16.1f}{mean['ms']:>8.0f}")  # fmt: skip


if __name__ == "__main__":
    main()

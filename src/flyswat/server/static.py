"""The browser client's static files, compressed once and cached by their content's hash.

Every file under the web folder is read when the server starts: its ETag is the hash of its
bytes, and text files are kept gzip- and brotli-compressed too (brotli by Google's ``brotli``
package). A request gets the smallest form its ``Accept-Encoding`` takes, ``304`` when its
``If-None-Match`` names the file's ETag, and:

- ``Cache-Control: no-cache`` (the browser asks again, answered ``304`` when nothing changed),
- or, for a URL that names the hash (``?v=<etag>``, as ``index.html`` names its stylesheet and
  entry module), ``immutable`` for a year: a new version has a new URL.

``index.html`` is served with those hashed URLs, and ``sw.js`` (the service worker) with the
version of the whole client and the list of its files, so that an offline copy is renewed
exactly when a file changed. A path outside the folder, or not in it, is ``404``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import brotli
from starlette.types import Receive, Scope, Send

#: Kinds of file worth compressing (the icons as SVG, too).
TEXT = {".html", ".js", ".css", ".json", ".svg", ".webmanifest", ".txt", ".map"}
#: What a URL that names the file's hash may be cached for.
IMMUTABLE = "public, max-age=31536000, immutable"
#: Brotli's effort: 5 is some 25 times quicker than 11 at start, for 9 % more bytes (measured on
#: the client's files: 107 KB against 98 KB); gzip at 9 is quick anyway.
BROTLI_QUALITY = 5
#: The files ``index.html`` names with their hash.
HASHED_IN_INDEX = ("css/style.css", "js/app.js")

mimetypes.add_type("application/manifest+json", ".webmanifest")
mimetypes.add_type("text/javascript", ".js")


@dataclass(frozen=True, slots=True)
class Asset:
    """One file as served: its bytes, compressed forms (empty when not worth it), ETag."""

    body: bytes
    gzip: bytes
    br: bytes
    etag: str
    media_type: str

    @classmethod
    def of(cls, name: str, body: bytes) -> Asset:
        """The asset of file ``name`` with content ``body``."""
        kind = Path(name).suffix
        media = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if kind in TEXT and not media.endswith("charset=utf-8"):
            media += "; charset=utf-8"
        gz = br = b""
        if kind in TEXT and len(body) > 256:
            gz = gzip.compress(body, 9, mtime=0)
            br = brotli.compress(body, quality=BROTLI_QUALITY)
        return cls(body, gz, br, hashlib.sha256(body).hexdigest()[:16], media)


def _version(assets: dict[str, Asset]) -> str:
    """One hash of the whole client."""
    h = hashlib.sha256()
    for name in sorted(assets):
        h.update(f"{name}:{assets[name].etag}\n".encode())
    return h.hexdigest()[:16]


def load(root: Path) -> dict[str, Asset]:
    """Every file under ``root`` by its path (``js/app.js``), with ``index.html`` naming its
    stylesheet and entry module by hash and ``sw.js`` given the client's version and files."""
    raw = {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }
    assets = {name: Asset.of(name, body) for name, body in raw.items()}
    if "index.html" in raw:
        page = raw["index.html"].decode()
        for name in HASHED_IN_INDEX:
            if name in assets:
                page = page.replace(f'"{name}"', f'"{name}?v={assets[name].etag}"')
        assets["index.html"] = Asset.of("index.html", page.encode())
    if "sw.js" in raw:
        # What the offline copy needs (the install icons are fetched when installing).
        kept = (n for n in assets if n not in ("sw.js", "index.html") and not n.endswith(".png"))
        files = ["./", *sorted(kept)]
        files = [f"{n}?v={assets[n].etag}" if n in HASHED_IN_INDEX else n for n in files]
        worker = raw["sw.js"].decode()
        worker = worker.replace(
            'const VERSION = "dev";', f"const VERSION = {json.dumps(_version(assets))};"
        )
        worker = worker.replace("const FILES = [];", f"const FILES = {json.dumps(files)};")
        assets["sw.js"] = Asset.of("sw.js", worker.encode())
    return assets


def _accepts(scope: Scope) -> str:
    for key, value in scope.get("headers", ()):
        if key == b"accept-encoding":
            return str(value.decode("latin-1")).lower()
    return ""


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


class WebFiles:
    """An ASGI app serving the files of ``root`` (``/`` is ``index.html``)."""

    def __init__(self, root: Path) -> None:
        self.assets = load(root)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # no socket but a table's: refused (403), as ASGI says
            await send({"type": "websocket.close", "code": 1000})
            return
        if scope["type"] != "http":
            return
        path = scope["path"].lstrip("/") or "index.html"
        asset = self.assets.get(path)
        method = scope["method"]
        if asset is None or method not in ("GET", "HEAD"):
            status = 404 if asset is None else 405
            await _send(
                send,
                status,
                [(b"content-type", b"text/plain")],
                b"Not Found" if status == 404 else b"",
            )
            return
        query = scope.get("query_string", b"").decode("latin-1")
        cache = IMMUTABLE if query == f"v={asset.etag}" else "no-cache"
        etag = f'"{asset.etag}"'
        headers = [(b"etag", etag.encode()), (b"cache-control", cache.encode()),
                   (b"vary", b"accept-encoding")]  # fmt: skip
        if path == "sw.js":
            headers.append((b"service-worker-allowed", b"/"))
        if etag in (_header(scope, b"if-none-match") or "").replace("W/", "").split(", "):
            await _send(send, 304, headers, b"")
            return
        accepts = _accepts(scope)
        body, coding = asset.body, None
        if asset.br and "br" in accepts:
            body, coding = asset.br, b"br"
        elif asset.gzip and "gzip" in accepts:
            body, coding = asset.gzip, b"gzip"
        headers.append((b"content-type", asset.media_type.encode()))
        if coding:
            headers.append((b"content-encoding", coding))
        headers.append((b"content-length", str(len(body)).encode()))
        await _send(send, 200, headers, b"" if method == "HEAD" else body)


async def _send(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    start: dict[str, Any] = {"type": "http.response.start", "status": status, "headers": headers}
    await send(start)
    await send({"type": "http.response.body", "body": body})

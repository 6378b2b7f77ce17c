"""The client's static files as the server serves them: compressed, cached by content hash,
``index.html`` naming its stylesheet and entry module by hash, the service worker given the
client's version and files; nothing outside the web folder."""

from __future__ import annotations

import asyncio
import gzip
import json
import re
from pathlib import Path
from typing import Any

import brotli
import httpx
import pytest

from flyswat.server.static import IMMUTABLE, WebFiles, load

WEB = Path(__file__).resolve().parents[2] / "src" / "flyswat" / "web"


class Client:
    """Requests to a :class:`WebFiles` app in process (httpx decodes gzip and br itself)."""

    def __init__(self) -> None:
        self.app = WebFiles(WEB)

    def request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://web") as c:
                return await c.request(method, path, **kw)

        return asyncio.run(go())

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("POST", path, **kw)


@pytest.fixture(scope="module")
def client() -> Client:
    return Client()


@pytest.mark.parametrize("coding", ["br", "gzip"])
def test_text_files_come_compressed_in_the_best_form_the_browser_takes(
    client: Client, coding: str
) -> None:
    plain = (WEB / "js" / "model.js").read_bytes()
    r = client.get("/js/model.js", headers={"accept-encoding": f"{coding}, identity"})
    assert r.status_code == 200 and r.headers["content-encoding"] == coding
    assert r.headers["content-type"].startswith("text/javascript")
    assert r.content == plain
    assert int(r.headers["content-length"]) < len(plain) / 2
    r = client.get("/js/model.js", headers={"accept-encoding": "identity"})
    assert "content-encoding" not in r.headers and r.content == plain


def test_a_file_is_known_by_its_hash_asked_again_it_is_304_and_a_hashed_url_is_immutable(
    client: Client,
) -> None:
    r = client.get("/css/style.css")
    etag = r.headers["etag"]
    assert r.headers["cache-control"] == "no-cache"
    again = client.get("/css/style.css", headers={"if-none-match": etag})
    assert again.status_code == 304 and again.content == b""
    page = client.get("/").text
    hashed = re.search(r'href="(css/style\.css\?v=[0-9a-f]{16})"', page)
    assert hashed and f"v={etag.strip(chr(34))}" in hashed.group(1)
    assert re.search(r'src="js/app\.js\?v=[0-9a-f]{16}"', page)
    assert client.get("/" + hashed.group(1)).headers["cache-control"] == IMMUTABLE
    assert client.get("/css/style.css?v=0000000000000000").headers["cache-control"] == "no-cache"


def test_the_service_worker_is_given_the_clients_version_and_files() -> None:
    assets = load(WEB)
    worker = assets["sw.js"].body.decode()
    version = re.search(r'const VERSION = "([0-9a-f]{16})";', worker)
    files = json.loads(re.search(r"const FILES = (\[.*\]);", worker).group(1))  # type: ignore[union-attr]
    assert version and "./" in files and "js/practice.js" in files and "i18n/vi.json" in files
    assert any(f.startswith("js/app.js?v=") for f in files) and "sw.js" not in files
    assert not any(f.endswith(".png") for f in files)  # the install icons: fetched on install


def test_unknown_paths_and_paths_outside_the_folder_are_404_and_writes_405(
    client: Client,
) -> None:
    for path in ("/nope.js", "/../pyproject.toml", "/js/../../server/app.py", "/%2e%2e/README.md"):
        assert client.get(path).status_code == 404, path
    assert client.post("/js/app.js").status_code == 405


def test_the_compressed_forms_are_the_files_bytes() -> None:
    for name, asset in load(WEB).items():
        if asset.gzip:
            assert gzip.decompress(asset.gzip) == asset.body, name
            assert brotli.decompress(asset.br) == asset.body, name


def test_a_changed_file_changes_the_service_workers_version(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(WEB, tmp_path / "web")
    before = load(tmp_path / "web")["sw.js"].body
    (tmp_path / "web" / "js" / "rules.js").write_text("// changed\n", "utf-8")
    after = load(tmp_path / "web")["sw.js"].body
    assert before != after and b"js/rules.js" in after

"""``simkit serve``'s API docs work offline (simkit.service.apidocs): ``/docs`` and ``/redoc`` and every asset
they reference come from the local server, none from a CDN.

The first test reads the pages over HTTP and follows each ``src``/``href``/``url`` they name; the second loads
``/docs`` in Debian's Chromium with every request to another host aborted and waits for Swagger UI to draw the
service's operations (skipped without Chromium and playwright, unless ``SIMKIT_REQUIRE_BROWSER=1``).
"""
import os
import re
import shutil
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from simkit.service import dev_service
from simkit.service.apidocs import ASSET_FILES, STATIC
from simkit.service.http import create_app, running

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
REQUIRED = os.environ.get("SIMKIT_REQUIRE_BROWSER") == "1"
#: what a page references: src="...", href="...", spec-url="..." (ReDoc), url: '...' (Swagger UI's OpenAPI
#: document), and any bare URL
REFERENCES = re.compile(r"""(?:src|href|spec-url)\s*=\s*["']([^"']+)["']|url\s*:\s*["']([^"']+)["']|(https?://[^\s"'<>)]+)""")


def referenced(html: str) -> set[str]:
    return {next(g for g in m.groups() if g) for m in REFERENCES.finditer(html)}


@pytest.fixture(scope="module")
def served():
    with running(create_app(dev_service())) as url:
        yield url


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_docs_pages_and_every_asset_they_reference_are_served_locally(served, page):
    with httpx.Client(base_url=served, timeout=30) as c:
        r = c.get(page)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        refs = referenced(r.text)
        assert "/openapi.json" in refs, refs
        assert any(ref.endswith(".js") for ref in refs), refs
        for ref in refs:
            url = urljoin(served + page, ref)
            assert urlsplit(url).netloc == urlsplit(served).netloc, f"{page} loads {ref} from another host"
            asset = c.get(url)
            assert asset.status_code == 200 and asset.content, (ref, asset.status_code)
    expected = {f"{STATIC}/{ASSET_FILES[k]}" for k in
                (("swagger_js", "swagger_css", "favicon") if page == "/docs" else ("redoc_js", "favicon"))}
    assert expected <= refs


def test_swagger_ui_can_read_the_openapi_version_the_service_writes(served):
    """FastAPI writes OpenAPI 3.1; Swagger UI renders it from version 5 on (4.x shows an error instead)."""
    with httpx.Client(base_url=served, timeout=30) as c:
        assert c.get("/openapi.json").json()["openapi"].startswith("3.1")
        bundle = c.get(f"{STATIC}/{ASSET_FILES['swagger_js']}").text
    assert "OpenAPI 3.1" in bundle or "oas31" in bundle.lower()


def test_docs_render_in_a_browser_with_the_network_cut_off(served):
    if not Path(CHROMIUM).exists():
        (pytest.fail if REQUIRED else pytest.skip)(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api") if not REQUIRED else __import__(
        "playwright.sync_api", fromlist=["sync_playwright"])
    local = urlsplit(served).netloc
    elsewhere = []

    def only_local(route):
        if urlsplit(route.request.url).netloc == local:
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        try:
            page = browser.new_page()
            page.route("**/*", only_local)
            page.goto(f"{served}/docs")
            page.wait_for_selector(".opblock-summary-path", timeout=30_000)
            paths = page.locator(".opblock-summary-path").all_inner_texts()
            errors = page.locator(".errors-wrapper").count()
        finally:
            browser.close()
    assert not elsewhere, f"/docs asked other hosts for {elsewhere}"
    assert errors == 0
    assert any("/api/v1/memory/checkpoints" in path for path in paths), paths

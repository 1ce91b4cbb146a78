"""The service's API docs without the network (docs/service.md, "simkit serve"): ``/docs`` (Swagger UI) and
``/redoc`` (ReDoc) over ``/openapi.json``, their scripts, styles and icon served by ``simkit serve`` itself.

FastAPI's own pages load these assets from a CDN, so on a machine offline (a workshop room, a CI runner
without egress) ``/docs`` stays blank. This follows FastAPI's documented way of self-hosting them
(``docs_url=None``, the pages built by ``fastapi.openapi.docs``, the files mounted with ``StaticFiles``), and
takes the files from the installed package ``fastapi-offline``, which ships Swagger UI 5 and ReDoc 2 (a
dependency in pyproject.toml). Swagger UI 5, not the 4.x of ``swagger-ui-bundle``: FastAPI writes OpenAPI 3.1,
which Swagger UI renders from version 5 on. Swagger UI's online validator badge is off (``validatorUrl:
null``): it would call out too.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse

__all__ = ["ASSETS", "ASSET_FILES", "STATIC", "add_docs"]

#: The folder of the installed asset package that holds Swagger UI's and ReDoc's files.
ASSETS = Path(fastapi_offline.__file__).resolve().parent / "static"
#: The files ``/docs`` and ``/redoc`` load, by role.
ASSET_FILES = {"swagger_js": "swagger-ui-bundle.js", "swagger_css": "swagger-ui.css",
               "redoc_js": "redoc.standalone.js", "favicon": "favicon.png"}
#: Where the service serves them.
STATIC = "/_docs"


def add_docs(app: FastAPI, docs_url: str = "/docs", redoc_url: str = "/redoc") -> None:
    """Serve Swagger UI at ``docs_url`` and ReDoc at ``redoc_url`` for ``app`` (made with ``docs_url=None,
    redoc_url=None``), every asset from :data:`STATIC` on the same server."""
    app.mount(STATIC, StaticFiles(directory=ASSETS), name="api-docs-assets")

    def asset(request: Request, role: str) -> str:
        return f"{request.scope.get('root_path', '')}{STATIC}/{ASSET_FILES[role]}"

    # GET and HEAD, as /openapi.json and the assets answer (RFC 9110, 9.1: a server supports both): FastAPI's
    # app.get is GET alone, and HEAD /docs was a 405
    page = partial(app.api_route, methods=["GET", "HEAD"], include_in_schema=False)

    @page(docs_url)
    async def swagger_ui(request: Request) -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=f"{request.scope.get('root_path', '')}{app.openapi_url}",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=asset(request, "swagger_js"), swagger_css_url=asset(request, "swagger_css"),
            swagger_favicon_url=asset(request, "favicon"), oauth2_redirect_url=None,
            swagger_ui_parameters={"validatorUrl": None})

    @page(redoc_url)
    async def redoc(request: Request) -> HTMLResponse:
        return get_redoc_html(
            openapi_url=f"{request.scope.get('root_path', '')}{app.openapi_url}",
            title=f"{app.title} - ReDoc",
            redoc_js_url=asset(request, "redoc_js"), redoc_favicon_url=asset(request, "favicon"),
            with_google_fonts=False)

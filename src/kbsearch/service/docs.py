"""The API's documentation page, ``/docs`` (Swagger UI), served with its script and style from
this server: FastAPI's own page loads them from cdn.jsdelivr.net, so it was blank on a machine
without internet access.

The files come from the ``fastapi-offline`` package (a dependency of the ``serve`` extra): its
Swagger UI 5 reads the OpenAPI 3.1 that FastAPI writes (``swagger-ui-bundle`` ships Swagger UI
4, which shows "Unable to render this definition" for anything but OpenAPI 2.0 and 3.0.n).
ReDoc (FastAPI's ``/redoc``) is off: its page fetches a logo from cdn.redoc.ly on every view,
whatever the options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs-assets"


def assets_dir() -> Path:
    import fastapi_offline

    return Path(fastapi_offline.__file__).parent / "static"


def install_docs(app: FastAPI, title: str) -> None:
    """``/docs`` on ``app`` (created with ``docs_url=None, redoc_url=None``), its files under
    :data:`ASSETS`. No key needed, like the OpenAPI document."""
    app.mount(ASSETS, StaticFiles(directory=assets_dir()), name="docs-assets")
    openapi = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "") + ASSETS
        return get_swagger_ui_html(
            openapi_url=openapi,
            title=f"{title} - API",
            swagger_js_url=f"{root}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}/swagger-ui.css",
            swagger_favicon_url=f"{root}/favicon.png",
            swagger_ui_parameters={"validatorUrl": None},  # no badge from validator.swagger.io
        )


# how a key may be sent (context.py reads them; the page's cookie is for the browser only)
SECURITY_SCHEMES = {
    "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "`Authorization: Bearer KEY`",
    },
    "apiKey": {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "`X-API-Key: KEY`",
    },
}
OPEN_PATHS = ("/healthz",)  # answered without a key


def declare_keys(app: FastAPI) -> None:
    """The key schemes in ``app``'s OpenAPI (``/docs`` gets its Authorize button): either
    scheme for every operation but :data:`OPEN_PATHS`. Documentation only: the keys are
    checked, and the audience taken from them, by ``Service.caller``."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = build()
            spec.setdefault("components", {})["securitySchemes"] = SECURITY_SCHEMES
            spec["security"] = [{name: []} for name in SECURITY_SCHEMES]
            for path in OPEN_PATHS:
                for operation in spec["paths"].get(path, {}).values():
                    operation["security"] = []
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

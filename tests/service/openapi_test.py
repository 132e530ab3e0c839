"""The OpenAPI document (``/openapi.json``, shown by ``/docs``) says what the server does:
its errors' codes and body, and how a key is sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

HTTP_METHODS = ("get", "put", "post", "delete")


def spec_of(client: httpx.Client) -> dict[str, Any]:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    spec: dict[str, Any] = response.json()
    return spec


def operations(spec: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method, path): operation
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if method in HTTP_METHODS
    }


def test_no_route_documents_fastapis_validation_error(client: httpx.Client) -> None:
    spec = spec_of(client)
    assert "HTTPValidationError" not in spec.get("components", {}).get("schemas", {})
    error = spec["components"]["schemas"]["ErrorBody"]
    assert error["properties"] == {"error": {"type": "string", "title": "Error",
                                            "description": error["properties"]["error"]
                                            ["description"]}}  # fmt: skip
    assert error["required"] == ["error"]
    for (method, path), operation in operations(spec).items():
        for code, answer in operation["responses"].items():
            if code.startswith(("4", "5")) and path != "/healthz":
                schema = answer["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (method, path)


@pytest.mark.parametrize(
    ("method", "path", "codes"),
    [
        ("get", "/search", {"200", "401", "403", "422", "503"}),
        ("post", "/search", {"200", "400", "401", "403", "413", "422", "503"}),
        ("get", "/explain", {"200", "401", "403", "404", "422", "503"}),
        ("get", "/passages/{passage_id}", {"200", "401", "403", "404", "422", "503"}),
        ("get", "/documents/{doc_id}", {"200", "401", "403", "404", "422", "503"}),
        ("put", "/documents/{doc_id}",
         {"200", "201", "400", "401", "403", "413", "415", "422", "503"}),
        ("delete", "/documents/{doc_id}", {"200", "401", "403", "404", "422", "503"}),
        ("get", "/healthz", {"200", "422", "503"}),
    ],
)  # fmt: skip
def test_each_route_lists_its_error_codes(
    client: httpx.Client, method: str, path: str, codes: set[str]
) -> None:
    paths = spec_of(client)["paths"]
    path = path if path in paths else path.replace("}", ":path}")
    assert set(paths[path][method]["responses"]) == codes


def test_put_documents_both_answers(client: httpx.Client) -> None:
    answers = spec_of(client)["paths"]["/documents/{doc_id}"]["put"]["responses"]
    assert "Added" in answers["201"]["description"]
    assert "Replaced" in answers["200"]["description"]


def test_with_keys_the_docs_offer_both_ways_to_send_a_key(client: httpx.Client) -> None:
    spec = spec_of(client)
    schemes = spec["components"]["securitySchemes"]
    assert schemes["bearer"] == {"type": "http", "scheme": "bearer",
                                 "description": schemes["bearer"]["description"]}  # fmt: skip
    assert schemes["apiKey"]["in"] == "header" and schemes["apiKey"]["name"] == "X-API-Key"
    assert spec["security"] == [{"bearer": []}, {"apiKey": []}]  # either one
    assert spec["paths"]["/healthz"]["get"]["security"] == []  # needs no key
    assert "security" not in spec["paths"]["/search"]["get"]  # the global one
    assert client.get("/search", params={"q": "parcel"}).status_code == 401  # still checked


def test_without_keys_the_docs_ask_for_none(serve: Any, kb_file: Path) -> None:
    server = serve(kb_file)
    with httpx.Client(base_url=server.url) as client:
        spec = spec_of(client)
    assert "securitySchemes" not in spec.get("components", {}) and "security" not in spec


def test_descriptions_are_markdown_not_rst(client: httpx.Client) -> None:
    """Swagger UI renders descriptions as Markdown: RST's ``double backticks`` show as is."""
    spec = spec_of(client)
    text = str(spec)
    assert "``" not in text
    body = spec["paths"]["/search"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["description"].startswith("`POST /search`: the same fields")

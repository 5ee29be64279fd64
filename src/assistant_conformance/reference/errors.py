"""Error answers of the reference server: JSON `{statusCode, message, error}` for every 4xx."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any, NoReturn

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import iter_route_contexts
from starlette.exceptions import HTTPException as StarletteHTTPException


class ApiError(Exception):
    """Raised by route code; becomes a JSON error answer."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {"statusCode": status, "message": message, "error": HTTPStatus(status).phrase}
    return JSONResponse(body, status_code=status, headers=headers)


def bad_request(message: str) -> NoReturn:
    raise ApiError(400, message)


def not_found(what: str, id: str) -> NoReturn:
    raise ApiError(404, f"{what} {id!r} not found")


def _describe(errors: list[Any]) -> str:
    parts = []
    for err in errors[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body",)) or "body"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(400, _describe(list(exc.errors())))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        headers = getattr(exc, "headers", None)
        if exc.status_code == 405:
            headers = {**(headers or {}), "Allow": _allowed_methods(request)}
        return error_response(exc.status_code, str(exc.detail), headers)


def _allowed_methods(request: Request) -> str:
    """The methods of the path. Starlette's 405 names only the first route's, and here each method
    of a path is a route of its own. A literal path (`/conversations/search`) wins over a template
    that also matches it (`/conversations/{conversation_id}`)."""
    by_params: dict[int, set[str]] = {}
    for route in iter_route_contexts(request.app.router.routes):  # flattens included routers
        regex = getattr(route, "path_regex", None)
        if regex is not None and regex.match(request.scope["path"]):
            params = str(route.path_format).count("{")
            by_params.setdefault(params, set()).update(route.methods or ())
    return ", ".join(sorted(by_params[min(by_params)])) if by_params else ""

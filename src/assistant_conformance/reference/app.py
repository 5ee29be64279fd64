"""The reference server's ASGI application."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from . import conversations, files, knowledge, threads
from .auth import BearerAuth, BodyLimit
from .context import Context, Settings
from .db import Database
from .errors import install_error_handlers
from .limits import QueryLimit

ROUTE_MODULES = (knowledge, files, threads, conversations)


def create_app(settings: Settings) -> FastAPI:
    settings.files_dir.mkdir(parents=True, exist_ok=True)
    ctx = Context(settings=settings, db=Database(settings.db_path))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        for module in ROUTE_MODULES:
            startup = getattr(module, "on_startup", None)
            if startup is not None:
                await startup(ctx)
        yield
        for module in ROUTE_MODULES:
            shutdown = getattr(module, "on_shutdown", None)
            if shutdown is not None:
                await shutdown(ctx)
        ctx.db.close()

    app = FastAPI(
        title="Assistant API reference server",
        lifespan=lifespan,
        openapi_url=None,  # the contract is spec/openapi.yaml, not FastAPI's rendering
        docs_url=None,
        redoc_url=None,
    )
    app.state.context = ctx
    install_error_handlers(app)
    for module in ROUTE_MODULES:
        app.include_router(module.router)
    # Outermost first: size limit, then auth, then query length, then routes.
    app.add_middleware(QueryLimit)
    app.add_middleware(BearerAuth, tokens=lambda: settings.tokens, db=lambda: ctx.db)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes, seconds=settings.body_timeout_s)
    return app

"""Routes of the reference server: knowledge (placeholder, being written)."""

from fastapi import APIRouter

router = APIRouter(prefix="/api/ai")

"""Routes of the reference server: threads (placeholder, being written)."""

from fastapi import APIRouter

router = APIRouter(prefix="/api/ai")

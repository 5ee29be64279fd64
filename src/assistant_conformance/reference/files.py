"""Routes of the reference server: files (placeholder, being written)."""

from fastapi import APIRouter

router = APIRouter(prefix="/api/ai")

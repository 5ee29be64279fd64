"""Routes of the reference server: conversations (placeholder, being written)."""

from fastapi import APIRouter

router = APIRouter(prefix="/api/ai")

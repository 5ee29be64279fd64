"""The reference's search index (db.fields): the same answers as reading every document, and a
database written before the index existed is indexed when opened. Its speed is measured in
bench/search.py, not here."""

from __future__ import annotations

from assistant_conformance.reference.db import Database

OWNER, OTHER = "principal-0", "principal-1"


def fill(db: Database) -> None:
    for i in range(30):
        doc = {"id": f"t{i}", "status": "idle" if i % 3 else "busy", "metadata": {"b": f"b{i % 5}"}}
        db.put("thread", f"t{i}", OWNER, doc)
    db.put("thread", "other", OTHER, {"id": "other", "status": "idle", "metadata": {"b": "b0"}})


def ids(db: Database, equals: dict) -> list[str]:
    return [d["id"] for d in db.scan("thread", OWNER, equals)]


def test_scan_narrows_by_every_field_newest_first(tmp_path) -> None:
    db = Database(tmp_path / "r.db")
    fill(db)
    everything = [d for d in reversed(db.list("thread", OWNER))]
    for equals in ({}, {"metadata.b": "b0"}, {"metadata.b": "b0", "status": "busy"}):
        expected = [d["id"] for d in everything if all(
            (d["metadata"]["b"] if k == "metadata.b" else d[k]) == v for k, v in equals.items()
        )]  # fmt: skip
        assert ids(db, equals) == expected and expected


def test_a_changed_or_deleted_document_leaves_the_index(tmp_path) -> None:
    db = Database(tmp_path / "r.db")
    fill(db)
    db.put("thread", "t0", OWNER, {"id": "t0", "status": "idle", "metadata": {"b": "moved"}})
    db.delete("thread", "t5", OWNER)
    assert "t0" not in ids(db, {"metadata.b": "b0"}) and ids(db, {"metadata.b": "moved"}) == ["t0"]
    assert "t5" not in ids(db, {"metadata.b": "b0"})


def test_a_database_from_before_the_index_is_indexed_when_opened(tmp_path) -> None:
    db = Database(tmp_path / "r.db")
    fill(db)
    db._conn.execute("DELETE FROM fields")  # as written by a version without the index
    db._conn.execute("PRAGMA user_version=0")
    db.close()
    reopened = Database(tmp_path / "r.db")
    assert ids(reopened, {"metadata.b": "b1"}) == ["t26", "t21", "t16", "t11", "t6", "t1"]

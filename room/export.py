"""`tablectl room export --phh DIR`: every completed hand in the database as a PHH file."""

from __future__ import annotations

from pathlib import Path

from controller.errors import TableError
from room.config import RoomConfig
from room.store import open_store
from room.summary import hand_phh


def export_phh(
    config: RoomConfig, out: Path, *, table: str | None = None
) -> tuple[int, list[tuple[str, int, str]]]:
    """Write `<table>-<hand>.phh` files; (written, [(table, hand, why not)])."""
    store = open_store(config.database, config.name)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TableError(f"{out}: {exc.strerror or exc}") from exc
    written = 0
    skipped: list[tuple[str, int, str]] = []
    try:
        tables = [table] if table else [str(t["table_id"]) for t in store.tables()]
        for name in tables:
            before: int | None = None
            while True:
                rows = store.hands(name, 500, before)
                if not rows:
                    break
                for row in rows:
                    if row["completed_t"] is None:
                        continue
                    phh = hand_phh(store, name, int(row["hand"]))
                    if phh is None or phh.text is None:
                        why = phh.problem if phh is not None else "its start is missing"
                        skipped.append((name, int(row["hand"]), str(why)))
                        continue
                    (out / phh.filename).write_text(phh.text, encoding="utf-8")
                    written += 1
                before = min(int(r["hand"]) for r in rows)
    finally:
        store.close()
    return written, skipped

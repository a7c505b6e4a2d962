"""`tablectl room export --phh DIR`: every completed hand in the database as a PHH file.

Read-only: the database must exist and be a room database (it is never created or
migrated here), and a room or a table it does not hold is an error, not 0 hands."""

from __future__ import annotations

from pathlib import Path

from controller.errors import TableError
from room.config import RoomConfig
from room.store import Store, open_store
from room.summary import hand_phh


def open_existing(config: RoomConfig) -> Store:
    """The room's database, opened as it is: an error (TableError) if there is none at the
    configured place, if it is not a room database, or if the room has nothing in it."""
    database = config.database
    if not database.is_postgres and not database.sqlite_path.is_file():
        raise TableError(
            f"{config.path}: [database] url: no database at {database.sqlite_path} "
            "(nothing exported; `tablectl room migrate` creates one)"
        )
    store = open_store(database, config.name, migrate=False)
    try:
        try:
            version = store.schema_version()
        except Exception as exc:  # no schema_version table: not ours
            raise TableError(f"{database.url}: not a room database ({exc})") from None
        if version == 0:
            raise TableError(f"{database.url}: not a room database (no schema)")
        if not store.tables():
            rooms = store.query("SELECT DISTINCT room FROM tables ORDER BY room")
            names = ", ".join(str(r["room"]) for r in rooms) or "none"
            raise TableError(
                f"{database.url}: room {config.name!r} has no table in this database "
                f"(rooms in it: {names})"
            )
    except BaseException:
        store.close()
        raise
    return store


def export_phh(
    config: RoomConfig, out: Path, *, table: str | None = None
) -> tuple[int, list[tuple[str, int, str]]]:
    """Write `<table>-<hand>.phh` files; (written, [(table, hand, why not)])."""
    store = open_existing(config)
    written = 0
    skipped: list[tuple[str, int, str]] = []
    try:
        known = [str(t["table_id"]) for t in store.tables()]
        if table is not None and table not in known:
            raise TableError(
                f"room {config.name!r} has no table {table!r} (tables: {', '.join(known)})"
            )
        if out.exists() and not out.is_dir():
            raise TableError(f"--phh {out}: not a directory")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TableError(f"--phh {out}: {exc.strerror or exc}") from exc
        tables = [table] if table else known
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

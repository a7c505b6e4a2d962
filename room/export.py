"""`tablectl room export` and `room verify`: the stored hands as PHH files, the signed events.

Read-only: the database must exist and be a room database (it is never created or
migrated here), and a room or a table it does not hold is an error, not 0 hands."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from kernel.errors import TableError
from room.chain import RoomChain
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


def tables_of(store: Store, config: RoomConfig, table: str | None) -> list[str]:
    """The room's tables, or only `table`: an error (TableError) if the room has no such table."""
    known = [str(t["table_id"]) for t in store.tables()]
    if table is not None and table not in known:
        raise TableError(
            f"room {config.name!r} has no table {table!r} (tables: {', '.join(known)})"
        )
    return [table] if table is not None else known


def export_phh(
    config: RoomConfig, out: Path, *, table: str | None = None
) -> tuple[int, list[tuple[str, int, str]]]:
    """Write `<table>-<hand>.phh` files; (written, [(table, hand, why not)])."""
    store = open_existing(config)
    written = 0
    skipped: list[tuple[str, int, str]] = []
    try:
        tables = tables_of(store, config, table)
        if out.exists() and not out.is_dir():
            raise TableError(f"--phh {out}: not a directory")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TableError(f"--phh {out}: {exc.strerror or exc}") from exc
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


def export_events(
    config: RoomConfig, out: Path, *, table: str | None = None
) -> list[tuple[Path, int]]:
    """Write `<table>.events` per table: the stored events in seq order, as published, for
    `tablectl verify`; [(file, events)]."""
    store = open_existing(config)
    done: list[tuple[Path, int]] = []
    try:
        tables = tables_of(store, config, table)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TableError(f"--events {out}: {exc.strerror or exc}") from exc
        chain = RoomChain(store, config.keys.directory)
        for name in tables:
            path = out / f"{name}.events"
            done.append((path, chain.export(name, path)))
    finally:
        store.close()
    return done


def verify_tables(config: RoomConfig, *, table: str | None = None) -> Iterator[tuple[str, bool]]:
    """Audit every table's stored chain (room/chain.py); a room alert for each break.
    Yields (line to print, ok)."""
    from controller.verify import lines_of

    store = open_existing(config)
    try:
        chain = RoomChain(store, config.keys.directory)
        for name in tables_of(store, config, table):
            report = chain.audit(name)
            if not report.ok:
                store.add_room_alert(
                    name, "chain_broken", "critical", f"room verify: {report.broken}"
                )
            for line in lines_of(report):
                yield line, report.ok
    finally:
        store.close()

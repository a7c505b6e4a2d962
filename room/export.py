"""`tablectl room export --phh DIR`: every completed hand in the database as a PHH file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from controller.errors import TableError
from room.chain import RoomChain
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


def export_events(
    config: RoomConfig, out: Path, *, table: str | None = None
) -> list[tuple[Path, int]]:
    """Write `<table>.events` per table: the stored events in seq order, as published, for
    `tablectl verify`; [(file, events)]."""
    store = open_store(config.database, config.name)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TableError(f"{out}: {exc.strerror or exc}") from exc
    chain = RoomChain(store, config.keys.directory)
    done: list[tuple[Path, int]] = []
    try:
        tables = [table] if table else [str(t["table_id"]) for t in store.tables()]
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

    store = open_store(config.database, config.name)
    chain = RoomChain(store, config.keys.directory)
    try:
        tables = [table] if table else [str(t["table_id"]) for t in store.tables()]
        for name in tables:
            report = chain.audit(name)
            if not report.ok:
                store.add_room_alert(
                    name, "chain_broken", "critical", f"room verify: {report.broken}"
                )
            for line in lines_of(report):
                yield line, report.ok
    finally:
        store.close()

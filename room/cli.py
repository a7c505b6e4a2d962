"""`tablectl room`: run the room server, export PHH hand histories, migrate the database."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from kernel.errors import TableError
from room.config import load_room_config


def _serve(args: argparse.Namespace) -> int:
    from room.server import RoomServer

    config = load_room_config(args.config)
    server = RoomServer(config, port=args.port)
    print(f"room server {config.name}: {server.url} (API docs: {server.url}docs)", flush=True)
    server.run()
    return 0


def _export(args: argparse.Namespace) -> int:
    from room.export import export_events, export_phh

    config = load_room_config(args.config)
    if args.phh is None and args.events is None:
        raise TableError("room export: give --phh DIR and/or --events DIR")
    if args.events is not None:
        for path, count in export_events(config, args.events, table=args.table):
            print(f"room export: {count} event(s) to {path} (check it: tablectl verify)")
    if args.phh is None:
        return 0
    written, skipped = export_phh(config, args.phh, table=args.table)
    for table, hand, problem in skipped:
        print(f"room export: {table} hand {hand} not written: {problem}", file=sys.stderr)
    print(f"room export: {written} hand(s) written to {args.phh}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from room.export import verify_tables

    config = load_room_config(args.config)
    broken = 0
    for line, ok in verify_tables(config, table=args.table):
        print(line, file=sys.stdout if ok else sys.stderr)
        broken += not ok
    return 1 if broken else 0


def _migrate(args: argparse.Namespace) -> int:
    from room.store import open_store

    config = load_room_config(args.config)
    store = open_store(config.database, config.name)
    print(f"room database at schema version {store.schema_version()}")
    store.close()
    return 0


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be 1 to 65535, not {port}")
    return port


def build_parser() -> argparse.ArgumentParser:
    """`tablectl room [--config FILE]`, `tablectl room export|migrate ...`."""
    parser = argparse.ArgumentParser(
        prog="tablectl room", description="The room server (docs/room.md)."
    )
    parser.add_argument("--config", type=Path, required=True, help="the room server's TOML file")
    parser.add_argument(
        "--port", type=_port, default=None, help="HTTP port, 1 to 65535 (default: [http] port)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.set_defaults(func=_serve)
    sub = parser.add_subparsers(dest="action")
    p = sub.add_parser(
        "export",
        help="write every completed hand as a PHH file, or each table's signed events "
        "(read-only: never creates)",
    )
    p.add_argument("--phh", type=Path, default=None, help="directory for the .phh files")
    p.add_argument(
        "--events", type=Path, default=None, help="directory for each table's signed events"
    )
    p.add_argument("--config", type=Path, required=True, help="the room server's TOML file")
    p.add_argument("--table", default=None, help="only this table (an error if the room has none)")
    p.set_defaults(func=_export)
    p = sub.add_parser("verify", help="check every table's stored events against its chain")
    p.add_argument("--config", type=Path, required=True, help="the room server's TOML file")
    p.add_argument("--table", default=None, help="only this table")
    p.set_defaults(func=_verify)
    p = sub.add_parser("migrate", help="create or upgrade the database schema, then exit")
    p.add_argument("--config", type=Path, required=True, help="the room server's TOML file")
    p.set_defaults(func=_migrate)
    return parser


def main(argv: Sequence[str]) -> int:
    """Entry point of `tablectl room ...` (tablectl/cli.py hands every argument here)."""
    argv = list(argv)
    # `tablectl room export --phh DIR --config F`: the global --config is the sub-command's
    if argv and argv[0] in ("export", "migrate", "verify"):
        args = build_parser().parse_args(["--config", "-", *argv])
    else:
        args = build_parser().parse_args(argv)
    if getattr(args, "verbose", False):
        logging.getLogger("tablectl").setLevel(logging.DEBUG)
    try:
        return int(args.func(args))
    except TableError as exc:
        print(f"tablectl room: {exc}", file=sys.stderr)
        return 2

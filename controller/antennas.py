"""`tablectl antennas`: check a reader board live, showing which antenna reads which tag."""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from controller.config import Config, ReaderConfig
from controller.registry import ChipRegistry, DeckRegistry, load_chips, load_deck
from kernel.errors import ConfigError, DeviceError
from kernel.inputs import TagIn, TagOut

READERS = {"cards": "card_reader", "chips": "chip_reader"}


def _name(uid: str, deck: DeckRegistry | None, chips: ChipRegistry | None) -> str:
    """What a tag is, if a registry knows it."""
    if deck is not None and (card := deck.card_of(uid)) is not None:
        return card
    if chips is not None and uid in chips:
        return f"chip {chips.value_of(uid)}"
    return "unregistered"


def check_antennas(
    config: Config,
    reader: str = "cards",
    *,
    seconds: float | None = None,
    simulate: bool = False,
    stdout: TextIO = sys.stdout,
) -> int:
    """Print every tag arriving at or leaving each antenna, with the board's own time, until
    `seconds` have passed (or Ctrl-C). Returns 0, or 1 if the board never answered.

    With `simulate` (sim backend only), a simulated hand carries one tag across every
    antenna in turn, so the whole chain from antenna to this screen can be watched.
    """
    from controller.devices import board_note, open_board, reader_driver

    if reader not in READERS:
        raise ConfigError(f"--reader must be one of {', '.join(READERS)}, got {reader!r}")
    name = READERS[reader]
    cfg: ReaderConfig = getattr(config, name)
    if simulate and cfg.backend != "sim":
        raise DeviceError("--simulate needs the reader's sim backend")
    link = open_board(name, cfg, kind="card" if reader == "cards" else "chip")
    board: Any = link if cfg.backend == "sim" else None  # the simulated board, to walk a tag
    port = link.path
    paths = config.registries
    deck = load_deck(paths.deck) if paths.deck is not None else None
    chips = load_chips(paths.chips) if paths.chips is not None else None
    events: queue.Queue[tuple[str, object]] = queue.Queue()
    times: dict[tuple[str, str], int | None] = {}

    on_frame = _frame_times(board_note, cfg.antennas, events, times)
    driver = reader_driver(
        link,
        cfg,
        on_event=lambda event: events.put(("tag", event)),
        on_alert=lambda kind, message, _d: events.put(("alert", f"{kind}: {message}")),
        clock=time.monotonic,
        name=name,
        on_frame=on_frame,
    )
    stop = threading.Event()
    walker: threading.Thread | None = None
    driver.start()
    try:
        if not driver.wait_synced(10.0):
            print(f"{name}: no answer from {port}", file=stdout)
            return 1
        hello = driver.hello
        if hello is not None:
            print(
                f"{name} on {port}: firmware {hello.firmware}, protocol {hello.protocol}, "
                f"{hello.kind} board, antennas {' '.join(hello.antennas)}",
                file=stdout,
            )
        _table(driver.positions(), deck, chips, stdout)
        if simulate and board is not None:
            walker = threading.Thread(
                target=_walk, args=(board, cfg.antennas, _demo_uid(reader, deck, chips), stop)
            )
            walker.start()
        end = None if seconds is None else time.monotonic() + seconds
        while end is None or time.monotonic() < end:
            try:
                kind, item = events.get(timeout=0.1)
            except queue.Empty:
                continue
            _show(kind, item, times, driver.positions, deck, chips, stdout)
        _table(driver.positions(), deck, chips, stdout)
    except KeyboardInterrupt:
        _table(driver.positions(), deck, chips, stdout)
    finally:
        stop.set()
        if walker is not None:
            walker.join(timeout=5.0)
        driver.stop()
        link.stop()
    return 0


def _frame_times(
    board_note: Callable[[object], Any],
    antennas: Sequence[str],
    events: queue.Queue[tuple[str, object]],
    times: dict[tuple[str, str], int | None],
) -> Callable[[object], None]:
    """What the driver calls with each frame: board errors queued, and the board's own time
    of each tag's arrival kept by antenna and UID."""

    def on_frame(frame: object) -> None:
        note = board_note(frame)
        if note is None:
            return
        if note.error is not None:
            events.put(("board_error", note.error))
        elif note.antenna is not None and note.uid is not None and note.antenna < len(antennas):
            times[(antennas[note.antenna], note.uid)] = note.board_ms

    return on_frame


def _show(
    kind: str,
    item: object,
    times: dict[tuple[str, str], int | None],
    positions: Callable[[], dict[str, list[str]]],
    deck: DeckRegistry | None,
    chips: ChipRegistry | None,
    stdout: TextIO,
) -> None:
    """Print one tag arriving or leaving (with what the antenna holds now), or an alert."""
    if kind == "tag" and isinstance(item, TagIn | TagOut) and item.uid is not None:
        sign = "+" if isinstance(item, TagIn) else "-"
        stamp = times.get((item.antenna, item.uid))
        when = "" if stamp is None else f"  (board {stamp / 1000:.3f} s)"
        now = positions().get(item.antenna, [])
        held = " ".join(_name(u, deck, chips) for u in now) or "-"
        print(
            f"{sign} {item.antenna:<8} {item.uid:<20} {_name(item.uid, deck, chips):<14}"
            f" now: {held}{when}",
            file=stdout,
        )
    elif kind == "alert":
        print(f"! {item}", file=stdout)
    elif kind == "board_error":
        print(f"! board error {item}", file=stdout)


def _table(
    positions: dict[str, list[str]],
    deck: DeckRegistry | None,
    chips: ChipRegistry | None,
    stdout: TextIO,
) -> None:
    for antenna, uids in positions.items():
        held = ", ".join(f"{u} ({_name(u, deck, chips)})" for u in uids) or "-"
        print(f"  {antenna:<8} {held}", file=stdout)


def _demo_uid(reader: str, deck: DeckRegistry | None, chips: ChipRegistry | None) -> str:
    if reader == "cards" and deck is not None:
        return deck.uid_of("As")
    if reader == "chips" and chips is not None:
        return next(uid for uid, _ in chips.items())
    return "04DE000000AA55"


def _walk(board: Any, antennas: tuple[str, ...], uid: str, stop: threading.Event) -> None:
    """A simulated hand: the tag lies on each antenna in turn for a moment (`board`: the
    simulated reader board, which the sim backend gives as its link)."""
    for antenna in antennas:
        if stop.wait(0.2):
            return
        board.place(antenna, uid)
        if stop.wait(0.2):
            return
        board.remove(antenna, uid)

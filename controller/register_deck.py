"""`tablectl register-deck`: the reader reads a deck's tags one by one on a registration antenna."""

from __future__ import annotations

import queue
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from controller.config import Config
from controller.devices import open_board, reader_driver
from controller.registration import DeckRegistration, generate_sim_deck
from kernel.errors import ConfigError, DeviceError
from kernel.inputs import TagIn, TagOut


def register_deck(
    config: Config,
    out: Path,
    deck_id: str,
    *,
    antenna: str = "register",
    simulate: bool = False,
    timeout: float = 600.0,
    stdout: TextIO = sys.stdout,
) -> int:
    """Register 52 cards read one at a time at `antenna`; write the deck file when complete.

    The dealer lays the cards on the antenna in the printed order (2c, 2d, ... As): a blank
    tag has no identity, so the order is the identity. A tag read twice and a 53rd tag are
    refused on the spot. Returns 0 when the file was written, 1 otherwise.
    """
    reader = config.card_reader
    if antenna not in reader.antennas:
        raise ConfigError(
            f"{config.path}: [devices.card_reader] antennas: no {antenna!r} antenna to register on"
        )
    link = open_board("card_reader", reader, kind="card")
    board: Any = link if reader.backend == "sim" else None  # a simulated board takes tags
    reads: queue.Queue[TagIn | TagOut] = queue.Queue()
    driver = reader_driver(
        link,
        reader,
        on_event=reads.put,
        on_alert=lambda kind, message, _details: print(f"reader: {kind}: {message}", file=stdout),
        clock=time.monotonic,
        name="card_reader",
    )
    registration = DeckRegistration(deck_id)
    driver.start()
    try:
        # Reads before the driver's first inventory are not reported (it only trusts the
        # board once synced): prompt the dealer, real or simulated, only when it is ready.
        if not driver.wait_synced(min(timeout, 30.0)):
            print(f"card reader: no answer from {link.path}: nothing registered", file=stdout)
            return 1
        if simulate:
            if board is None:
                raise DeviceError("--simulate needs the card reader's sim backend")
            # A simulated dealer: the tags of a generated deck, one by one, then one again.
            uids = list(generate_sim_deck(deck_id))
            for uid in [*uids, uids[7]]:
                board.place(antenna, uid)
                board.remove(antenna, uid)
        print(f"registering deck {deck_id!r}: lay the cards on '{antenna}' in order", file=stdout)
        print(f"next card: {registration.next_card}", file=stdout)
        end = time.monotonic() + timeout
        while not registration.complete and time.monotonic() < end:
            try:
                read = reads.get(timeout=0.2)
            except queue.Empty:
                continue
            if not isinstance(read, TagIn) or read.antenna != antenna or read.uid is None:
                continue
            result = registration.offer(read.uid)
            print(f"{read.uid}: {result.message}", file=stdout)
        if simulate:
            time.sleep(0.3)  # let the repeated tag arrive, to show it is refused
            while not reads.empty():
                read = reads.get()
                if isinstance(read, TagIn) and read.uid is not None:
                    print(f"{read.uid}: {registration.offer(read.uid).message}", file=stdout)
    finally:
        driver.stop()
        link.stop()
    if not registration.complete:
        print(f"deck incomplete ({len(registration)} of 52): nothing written", file=stdout)
        return 1
    registration.save(out)
    print(f"deck {deck_id!r} written to {out}", file=stdout)
    return 0

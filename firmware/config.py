"""The reference boards' configuration: antennas in port order, front-end channels, pins.

A board reads `/board.json` at start when it exists (same keys as below) so one firmware
image serves the card board and the chip board; docs/hardware.md shows both files.
"""

# Front-end channels are the 4-bit addresses on the chip-select decoder / BUSY multiplexer.
CARD_BOARD = {
    "kind": "card",
    "antennas": [
        ["seat1", [0]],
        ["seat2", [1]],
        ["seat3", [2]],
        ["seat4", [3]],
        ["seat5", [4]],
        ["seat6", [5]],
        ["seat7", [6]],
        ["seat8", [7]],
        ["seat9", [8]],
        ["board", [9, 10, 11]],
        ["burn", [12]],
        ["muck", [13]],
    ],
    "protocols": ["iso15693", "iso14443a"],
    "background_ms": 800,
    "recheck_ms": 1600,
}

CHIP_BOARD = {
    "kind": "chip",
    "antennas": [
        ["bet1", [0]],
        ["bet2", [1]],
        ["bet3", [2]],
        ["bet4", [3]],
        ["bet5", [4]],
        ["bet6", [5]],
        ["bet7", [6]],
        ["bet8", [7]],
        ["bet9", [8]],
        ["pot", [9, 10]],
    ],
    "protocols": ["iso15693"],
    "background_ms": 1000,
}

# Raspberry Pi Pico GPIO numbers (docs/hardware.md, pin table).
PINS = {
    "sck": 18,
    "mosi": 19,
    "miso": 16,
    "nss": 17,  # enable of the 74HC154 chip-select decoder (active low)
    "select": [10, 11, 12, 13],  # S0..S3: decoder address and BUSY/MISO multiplexer channel
    "busy": 14,  # CD74HC4067 common output: BUSY of the addressed front-end
    "reset": 15,  # RESET_N of every PN5180
    "maintenance": 22,  # jumper to GND: do not start, leave the REPL to mpremote
    "led": 25,
}

DEFAULTS = {
    "firmware": "tablefw-1.1",
    "spi_hz": 7000000,
    "heartbeat_ms": 1000,
    "inventory_ms": 5000,
    "debounce_in": 1,
    "debounce_out": 2,
    # a tag missed by a read is gone once a read at least this much later missed it too
    "confirm_ms": 40,
    # with a focus from the host: a tag on a background antenna is reported within this
    # time (docs/hardware.md, the schedule; the card and chip boards set their own)
    "background_ms": 1000,
    # the longest turn of the scan (a background read goes on at its next turn)
    "slice_ms": 12,
    # a protocol no tag answers (ISO 15693 on a card board with an NTAG deck) is read on
    # each front-end this often; known ISO 14443A cards are read in full this often (in
    # between they are only checked for)
    "recheck_ms": 2000,
    "full_ms": 5000,
    # a host frame not finished this long after its last byte is dropped (ERROR 6)
    "rx_timeout_ms": 50,
    "max_tags": 1000,  # tags on the whole board (ERROR 5 beyond)
    "tx_fifo": 16384,  # a paged inventory of 1,000 tags is about 9.5 kB
}


def load(path: str = "/board.json") -> dict[str, object]:
    """The card board's settings, overridden by the JSON file at `path` if there is one."""
    import json

    settings: dict[str, object] = {}
    settings.update(DEFAULTS)
    settings.update(CARD_BOARD)
    settings["pins"] = PINS
    try:
        with open(path) as handle:
            settings.update(json.load(handle))
    except OSError:
        pass
    return settings

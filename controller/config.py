"""Table configuration: one TOML file per table, loaded into typed, validated dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

PROFILES = ("tda-2019", "tda-2015", "venezia", "casinos-austria", "campione")
GAMES = ("nlhe", "plhe", "flhe")


@dataclass(frozen=True, slots=True)
class TableConfig:
    """[table]: identity and size."""

    id: str
    room: str
    seats: int  # 2..10, seats are numbered 1..seats


@dataclass(frozen=True, slots=True)
class RulesConfig:
    """[rules]: rule profile, game structure and timing."""

    profile: str = "tda-2019"
    game: str = "nlhe"
    settle_seconds: float = 1.0  # a chip push is read as settled this long after its last chip


@dataclass(frozen=True, slots=True)
class ReaderConfig:
    """[devices.card_reader] / [devices.chip_reader]: an RFID reader board on a serial port."""

    backend: str = "sim"  # "sim": firmware simulator on a pty; "serial": a real board
    port: str | None = None  # e.g. /dev/ttyUSB0 (required for backend "serial")
    baudrate: int = 115200
    antennas: tuple[str, ...] = ()  # antenna names in board port order


@dataclass(frozen=True, slots=True)
class GpioConfig:
    """[devices.gpio] and [pins]: GPIO backend and BCM pin numbers."""

    backend: str = "sim"  # "sim" or "rpi"
    shuffler: int | None = None
    panel: dict[str, int] = field(default_factory=dict)  # button name -> pin
    allin_buttons: dict[int, int] = field(default_factory=dict)  # seat -> pin
    allin_lamps: dict[int, int] = field(default_factory=dict)  # seat -> pin
    lamps: dict[str, int] = field(default_factory=dict)  # floor / pending / fault -> pin
    bounce_ms: int = 50


@dataclass(frozen=True, slots=True)
class BadgeConfig:
    """[devices.badge_reader]: PC/SC badge reader."""

    backend: str = "none"  # "none", "sim" or "pcsc"
    reader: str | None = None  # PC/SC reader name substring


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """[broker]: the room MQTT broker."""

    host: str | None = None  # None: `sim` starts a local mosquitto; `run` refuses
    port: int = 1883
    prefix: str = ""  # default filled in by load(): poker/<room>/<table>
    client_id: str = ""  # default: tablectl-<table>
    keepalive: int = 30
    tls: bool = False
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    credentials_file: Path | None = None  # TOML: username = "...", password = "..."
    username: str | None = None  # filled in from credentials_file
    password: str | None = None


@dataclass(frozen=True, slots=True)
class RegistriesConfig:
    """[registries]: deck and chip registry files."""

    deck: Path | None = None
    chips: Path | None = None


@dataclass(frozen=True, slots=True)
class JournalConfig:
    """[journal]: where every input and output is recorded before it has effect."""

    path: Path | None = None  # None: no journal (replay, tests)


@dataclass(frozen=True, slots=True)
class SimConfig:
    """[sim]: what `tablectl sim` plays."""

    script: Path | None = None  # a dealing script (trace format); None: built-in demo
    speed: float = 1.0  # time scale of the script (2.0 = twice as fast)
    hands: int = 0  # 0: play the script once; N: loop until N hands were dealt


@dataclass(frozen=True, slots=True)
class Config:
    """A whole table configuration."""

    path: Path
    table: TableConfig
    rules: RulesConfig
    card_reader: ReaderConfig
    chip_reader: ReaderConfig
    gpio: GpioConfig
    badge: BadgeConfig
    broker: BrokerConfig
    registries: RegistriesConfig
    journal: JournalConfig
    sim: SimConfig

    @property
    def seat_numbers(self) -> range:
        """Seat numbers 1..N."""
        return range(1, self.table.seats + 1)


def default_card_antennas(seats: int) -> tuple[str, ...]:
    """Card board ports: seat1..seatN, board, burn, muck."""
    return (*(f"seat{n}" for n in range(1, seats + 1)), "board", "burn", "muck")


def default_chip_antennas(seats: int) -> tuple[str, ...]:
    """Chip board ports: bet1..betN, pot."""
    return (*(f"bet{n}" for n in range(1, seats + 1)), "pot")

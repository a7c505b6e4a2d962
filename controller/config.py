"""Table configuration: one TOML file per table, loaded into typed, validated dataclasses."""

from __future__ import annotations

import os
import re
import ssl
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from controller.backends import backend_names
from kernel.configkit import (
    Section,
    check_private,
    existing_file,
    load_credentials,
    read_sections,
    resolve,
    section,
    type_name,
)
from kernel.errors import ConfigError

PROFILES = ("tda-2019", "tda-2015", "venezia", "casinos-austria", "campione")
GAMES = ("nlhe", "plhe", "flhe")
FSYNC_POLICIES = ("always", "interval", "never")


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
    sim_socket: Path | None = None  # sim backend: unix socket taking presses from outside


@dataclass(frozen=True, slots=True)
class BadgeConfig:
    """[devices.badge_reader]: PC/SC badge reader."""

    backend: str = "none"  # "none", "sim" or "pcsc"
    reader: str | None = None  # PC/SC reader name substring
    staff: Path | None = None  # staff registry file (required unless backend = "none")


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """[broker]: the room MQTT broker."""

    host: str | None = None  # None: `sim` starts a local mosquitto; `run` refuses
    port: int = 1883
    prefix: str = ""  # default filled in by load(): poker/<room>/<table>
    # The table's identity: the credentials' username, else "table-<table>" (the name of its
    # client certificate). A broker that binds client ids to identities (the room kit: its
    # client file, or use_username_as_clientid with client certificates) lets no other
    # identity take this session over.
    client_id: str = ""
    keepalive: int = 30
    # The broker keeps the table's session (its `cmd` subscription and the commands
    # sent meanwhile) this long after the table went away: a restart loses no command.
    # 0: a clean session at every connection (commands sent while away are dropped).
    session_expiry: int = 3600
    # `status` is published again (retained, a new `t`) every `heartbeat` seconds while
    # connected, so the room can tell a live table from a retained "online" left behind by
    # a broker that died (no will is sent then). 0: only at each connection.
    heartbeat: int = 10
    tls: bool = False
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    credentials_file: Path | None = None  # TOML: username = "...", password = "..."
    username: str | None = None  # filled in from credentials_file
    password: str | None = field(default=None, repr=False)  # never printed


@dataclass(frozen=True, slots=True)
class RegistriesConfig:
    """[registries]: deck and chip registry files."""

    deck: Path | None = None
    chips: Path | None = None


@dataclass(frozen=True, slots=True)
class JournalConfig:
    """[journal]: where every input and output is recorded before it has effect."""

    path: Path | None = None  # None: no journal (replay, tests)
    # Every input and every output reaches the OS before it has effect (survives a
    # daemon crash). "always": also fdatasync'd before anything is published (survives
    # a power cut; one fdatasync per batch of inputs, group commit); "interval":
    # fdatasync'd in the background every `fsync_interval` s; "never": the kernel's.
    fsync: str = "always"
    fsync_interval: float = 0.1
    # A directory of segments instead of one file (exclusive with `path`): a segment is
    # rotated between hands once it reaches max_segment_mb, each new one opening with an
    # engine checkpoint; older ones are deleted beyond keep_segments / keep_days (0: keep).
    directory: Path | None = None
    max_segment_mb: float = 16.0
    keep_segments: int = 0
    keep_days: float = 90.0


@dataclass(frozen=True, slots=True)
class SimConfig:
    """[sim]: what `tablectl sim` plays."""

    script: Path | None = None  # a dealing script (trace format); None: built-in demo
    speed: float = 1.0  # time scale of the script (2.0 = twice as fast)
    hands: int = 0  # 0: play the script once; N: loop until N hands were dealt


@dataclass(frozen=True, slots=True)
class SealConfig:
    """[seal]: hole cards sealed until the broadcast may show them; the signed chain."""

    # A hole card's key is released `delay` seconds after the card was read, or once the
    # hand is over (`at_hand_end`); with both, the later of the two. TV cannot shorten it.
    delay: float = 30.0
    at_hand_end: bool = False
    # The table's Ed25519 private key (PEM, private to the daemon's user): it signs the
    # hash chain at every hand's end and journal rotation. None: the chain is unsigned.
    signing_key: Path | None = None
    # The public key to check signatures with (`tablectl verify`, `replay`) where the
    # private key is not at hand; defaults to the signing key's own.
    public_key: Path | None = None


@dataclass(frozen=True, slots=True)
class InputsConfig:
    """[inputs]: how the daemon orders the inputs of its devices."""

    # Inputs are applied in the order they were made, not the order they arrived: each
    # waits this long (milliseconds) after it was made for anything made before it that
    # a busier source delivers late (docs/operations.md, "The reorder window"). 0: off,
    # applied as they arrive.
    reorder_ms: float = 60.0

    @property
    def window(self) -> float:
        """The reorder window in seconds."""
        return self.reorder_ms / 1000.0


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
    seal: SealConfig = SealConfig()
    inputs: InputsConfig = field(default_factory=InputsConfig)

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


# --------------------------------------------------------------------------- loader

PANEL_BUTTONS = ("check", "misdeal", "floor", "exposed", "boxed", "raise")
LAMP_NAMES = ("floor", "pending", "fault")
MIN_SEATS, MAX_SEATS = 2, 10
MIN_PIN, MAX_PIN = 2, 27  # BCM GPIO numbers on the 40-pin header

_SECTIONS = (
    "table",
    "rules",
    "devices",
    "pins",
    "broker",
    "registries",
    "journal",
    "sim",
    "seal",
    "inputs",
)
_DEVICES = ("card_reader", "chip_reader", "gpio", "badge_reader")

# defaults (slots dataclasses keep no class-level default values)
_RULES = RulesConfig()
_READER = ReaderConfig()
_GPIO = GpioConfig()
_BADGE = BadgeConfig()
_BROKER = BrokerConfig()
_SIM = SimConfig()


def _load_table(path: Path, data: dict[str, Any]) -> TableConfig:
    s = section(path, data, "table", ("id", "room", "seats"))
    table_id = s.name("id", required=True)
    room = s.name("room", required=True)
    assert table_id is not None and room is not None
    seats = s.required_int("seats", lo=MIN_SEATS, hi=MAX_SEATS)
    return TableConfig(id=table_id, room=room, seats=seats)


def _load_rules(path: Path, data: dict[str, Any], profile_override: str | None) -> RulesConfig:
    s = section(path, data, "rules", ("profile", "game", "settle_seconds"))
    profile = s.choice("profile", PROFILES, _RULES.profile)
    if profile_override is not None:
        if profile_override not in PROFILES:
            raise ConfigError(
                f"{path}: --profile (overrides [rules] profile): {profile_override!r} "
                f"is not one of {', '.join(PROFILES)}"
            )
        profile = profile_override
    game = s.choice("game", GAMES, _RULES.game)
    settle = s.float_("settle_seconds", _RULES.settle_seconds)
    if not 0 < settle <= 5:
        raise s.error("settle_seconds", f"{settle:g} is out of range (0, 5] seconds")
    return RulesConfig(profile=profile, game=game, settle_seconds=settle)


_READER_KEYS = ("backend", "port", "baudrate", "antennas")


def _load_reader(
    section: Section, default_antennas: tuple[str, ...]
) -> tuple[ReaderConfig, list[str]]:
    backend = section.choice("backend", backend_names("reader"), _READER.backend)
    port = section.str_("port")
    if backend == "serial" and port is None:
        raise section.error("port", 'required when backend = "serial" (e.g. "/dev/ttyUSB0")')
    baudrate = section.int_("baudrate", _READER.baudrate, lo=1)
    antennas = section.str_list("antennas")
    names = list(default_antennas) if antennas is None else antennas
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            raise section.error(
                f"antennas[{i}]", f"duplicate antenna {name!r} (also antennas[{seen[name]}])"
            )
        seen[name] = i
    reader = ReaderConfig(backend=backend, port=port, baudrate=baudrate, antennas=tuple(names))
    return reader, names


def _check_antenna_names(
    section: Section, names: list[str], seats: int, prefix: str, fixed: set[str]
) -> None:
    """Every name is `<prefix>N` with 1 <= N <= seats, or one of `fixed`."""
    number_re = re.compile(rf"^{prefix}([1-9][0-9]*)$")
    for i, name in enumerate(names):
        match = number_re.match(name)
        if match is not None:
            number = int(match.group(1))
            if number > seats:
                raise section.error(
                    f"antennas[{i}]",
                    f"antenna {name!r}: {prefix} {number} is beyond [table] seats = {seats}",
                )
        elif name not in fixed:
            allowed = f"{prefix}1..{prefix}{seats}, " + ", ".join(sorted(fixed))
            raise section.error(f"antennas[{i}]", f"unknown antenna {name!r}; allowed: {allowed}")


def _load_readers(
    path: Path, devices: dict[str, Any], seats: int
) -> tuple[ReaderConfig, ReaderConfig]:
    card_s = section(path, devices, "devices.card_reader", _READER_KEYS)
    chip_s = section(path, devices, "devices.chip_reader", _READER_KEYS)
    card, card_names = _load_reader(card_s, default_card_antennas(seats))
    chip, chip_names = _load_reader(chip_s, default_chip_antennas(seats))
    for i, name in enumerate(chip_names):
        if name in card_names:
            raise chip_s.error(
                f"antennas[{i}]",
                f"duplicate antenna {name!r}: already on [devices.card_reader] "
                f"antennas[{card_names.index(name)}]",
            )
    _check_antenna_names(card_s, card_names, seats, "seat", {"board", "burn", "muck", "register"})
    _check_antenna_names(chip_s, chip_names, seats, "bet", {"pot"})
    required = [f"seat{n}" for n in range(1, seats + 1)] + ["board", "burn", "muck"]
    missing = [name for name in required if name not in card_names]
    if missing:
        raise card_s.error("antennas", f"missing required antenna(s): {', '.join(missing)}")
    return card, chip


class _PinBook:
    """Every BCM pin handed out so far, with the dotted key that took it."""

    def __init__(self, section: Section) -> None:
        self.section = section
        self.used: dict[int, str] = {}

    def take(self, key: str, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.section.error(key, f"expected an integer pin, got {type_name(value)}")
        if not MIN_PIN <= value <= MAX_PIN:
            raise self.section.error(
                key, f"pin {value} is out of range: BCM GPIO pins are {MIN_PIN}..{MAX_PIN}"
            )
        if value in self.used:
            raise self.section.error(key, f"pin {value} is already used by pins.{self.used[value]}")
        self.used[value] = key
        return value


def _named_pins(
    book: _PinBook, key: str, table: dict[str, Any] | None, names: tuple[str, ...]
) -> dict[str, int]:
    pins: dict[str, int] = {}
    for name, value in (table or {}).items():
        if name not in names:
            raise book.section.error(
                f"{key}.{name}", f"unknown name {name!r}; allowed: {', '.join(names)}"
            )
        pins[name] = book.take(f"{key}.{name}", value)
    return pins


def _seat_pins(
    book: _PinBook, key: str, table: dict[str, Any] | None, seats: int
) -> dict[int, int]:
    pins: dict[int, int] = {}
    for name, value in (table or {}).items():
        if not re.fullmatch(r"[1-9][0-9]?", name):
            raise book.section.error(
                f"{key}.{name}", f'{name!r} is not a seat number ("1".."{seats}")'
            )
        seat = int(name)
        if seat > seats:
            raise book.section.error(
                f"{key}.{name}", f"seat {seat} is beyond [table] seats = {seats}"
            )
        pins[seat] = book.take(f"{key}.{name}", value)
    return dict(sorted(pins.items()))


def _load_gpio(path: Path, data: dict[str, Any], devices: dict[str, Any], seats: int) -> GpioConfig:
    dev = section(path, devices, "devices.gpio", ("backend", "bounce_ms", "sim_socket"))
    backend = dev.choice("backend", backend_names("gpio"), _GPIO.backend)
    bounce_ms = dev.int_("bounce_ms", _GPIO.bounce_ms, lo=0, hi=1000)
    socket_value = dev.str_("sim_socket")
    if socket_value is not None and backend != "sim":
        raise dev.error("sim_socket", 'only for backend = "sim" (a real table has real buttons)')
    sim_socket = None
    if socket_value is not None:
        sim_socket = resolve(Path(os.path.abspath(path)).parent, socket_value)
    s = section(path, data, "pins", ("shuffler", "panel", "allin_buttons", "allin_lamps", "lamps"))
    book = _PinBook(s)
    shuffler = book.take("shuffler", s.data["shuffler"]) if s.has("shuffler") else None
    panel = _named_pins(book, "panel", s.table("panel"), PANEL_BUTTONS)
    allin_buttons = _seat_pins(book, "allin_buttons", s.table("allin_buttons"), seats)
    allin_lamps = _seat_pins(book, "allin_lamps", s.table("allin_lamps"), seats)
    lamps = _named_pins(book, "lamps", s.table("lamps"), LAMP_NAMES)
    return GpioConfig(
        backend=backend,
        shuffler=shuffler,
        panel=panel,
        allin_buttons=allin_buttons,
        allin_lamps=allin_lamps,
        lamps=lamps,
        bounce_ms=bounce_ms,
        sim_socket=sim_socket,
    )


def _load_badge(path: Path, devices: dict[str, Any], base: Path) -> BadgeConfig:
    s = section(path, devices, "devices.badge_reader", ("backend", "reader", "staff"))
    backend = s.choice("backend", ("none", *backend_names("badge_reader")), _BADGE.backend)
    reader = s.str_("reader")
    staff = existing_file(s, "staff", base)
    if staff is None and backend != "none":
        raise s.error(
            "staff",
            f'required with backend = "{backend}" (the staff registry file, e.g. '
            '"staff/sim-staff.toml")',
        )
    return BadgeConfig(backend=backend, reader=reader, staff=staff)


def _check_client_certificate(section: Section, cert_file: Path, key_file: Path) -> None:
    """The client certificate and its key load, and belong together (TLS would fail later,
    at every connection attempt, with a less clear message)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_cert_chain(str(cert_file), str(key_file))
    except ssl.SSLError as exc:
        reason = exc.reason or str(exc)
        if "KEY_VALUES_MISMATCH" in reason.upper():
            reason = "the key does not belong to the certificate"
        raise section.error(
            "cert_file", f"{cert_file} with key_file {key_file}: {reason}"
        ) from None
    except OSError as exc:
        raise section.error("cert_file", f"{cert_file}: {exc.strerror or exc}") from None


def _load_broker(path: Path, data: dict[str, Any], table: TableConfig, base: Path) -> BrokerConfig:
    s = section(
        path,
        data,
        "broker",
        (
            "host",
            "port",
            "prefix",
            "client_id",
            "keepalive",
            "session_expiry",
            "heartbeat",
            "tls",
            "ca_file",
            "cert_file",
            "key_file",
            "credentials_file",
        ),
    )
    host = s.str_("host")
    port = s.int_("port", _BROKER.port, lo=1, hi=65535)
    prefix = s.str_("prefix") or f"poker/{table.room}/{table.id}"
    if "+" in prefix or "#" in prefix:
        raise s.error("prefix", f"{prefix!r}: MQTT wildcards '+' and '#' are not allowed")
    if prefix.endswith("/"):
        raise s.error("prefix", f"{prefix!r} must not end with '/'")
    keepalive = s.int_("keepalive", _BROKER.keepalive, lo=1, hi=65535)
    session_expiry = s.int_("session_expiry", _BROKER.session_expiry, lo=0, hi=7 * 86400)
    heartbeat = s.int_("heartbeat", _BROKER.heartbeat, lo=0, hi=3600)
    tls = s.bool_("tls", _BROKER.tls)
    ca_file = existing_file(s, "ca_file", base)
    cert_file = existing_file(s, "cert_file", base)
    key_file = existing_file(s, "key_file", base)
    for key, value in (("ca_file", ca_file), ("cert_file", cert_file), ("key_file", key_file)):
        if value is not None and not tls:
            raise s.error(key, "given but tls = false (set tls = true or remove it)")
    if (cert_file is None) != (key_file is None):
        missing = "key_file" if key_file is None else "cert_file"
        given = "cert_file" if key_file is None else "key_file"
        raise s.error(missing, f"required with {given} (client certificate and its key)")
    if cert_file is not None and key_file is not None:
        check_private(s, "key_file", key_file)
        _check_client_certificate(s, cert_file, key_file)
    cred_path, username, password = load_credentials(s, base)
    # The client id is the identity: the room kit's broker accepts an identity with no other
    # client id (its client file binds the two), and one that does not bind them must not
    # be given a name another identity may claim.
    identity = username or f"table-{table.id}"
    client_id = s.str_("client_id") or identity
    if username is not None and client_id != username:
        raise s.error(
            "client_id",
            f"{client_id!r} differs from the username {username!r} of credentials_file: the "
            "client id is the identity (remove client_id; the room kit's broker refuses any "
            "other client id for this identity)",
        )
    return BrokerConfig(
        host=host,
        port=port,
        prefix=prefix,
        client_id=client_id,
        keepalive=keepalive,
        session_expiry=session_expiry,
        heartbeat=heartbeat,
        tls=tls,
        ca_file=ca_file,
        cert_file=cert_file,
        key_file=key_file,
        credentials_file=cred_path,
        username=username,
        password=password,
    )


def _load_registries(path: Path, data: dict[str, Any], base: Path) -> RegistriesConfig:
    s = section(path, data, "registries", ("deck", "chips"))
    return RegistriesConfig(
        deck=existing_file(s, "deck", base), chips=existing_file(s, "chips", base)
    )


def _load_journal(path: Path, data: dict[str, Any], base: Path) -> JournalConfig:
    s = section(
        path,
        data,
        "journal",
        (
            "path",
            "directory",
            "fsync",
            "fsync_interval",
            "max_segment_mb",
            "keep_segments",
            "keep_days",
        ),
    )
    fsync = s.choice("fsync", FSYNC_POLICIES, "always")
    interval = s.float_("fsync_interval", 0.1)
    if not 0 < interval <= 5:
        raise s.error("fsync_interval", f"must be in (0, 5] seconds, got {interval}")
    value = s.str_("path")
    folder = s.str_("directory")
    if value is not None and folder is not None:
        raise s.error("directory", "give either path (one file) or directory (segments), not both")
    if folder is None:
        for key in ("max_segment_mb", "keep_segments", "keep_days"):
            if s.has(key):
                raise s.error(key, "applies to a segmented journal only (set directory)")
    if value is None and folder is None:
        return JournalConfig(fsync=fsync, fsync_interval=float(interval))
    if value is not None:
        journal = resolve(base, value)
        if journal.is_dir():
            raise s.error("path", f"{journal} is a directory (expected a file path)")
        return JournalConfig(path=journal, fsync=fsync, fsync_interval=float(interval))
    assert folder is not None
    directory = resolve(base, folder)
    if directory.exists() and not directory.is_dir():
        raise s.error("directory", f"{directory} is not a directory")
    max_mb = s.float_("max_segment_mb", 16.0)
    if not 0.01 <= max_mb <= 1024:
        raise s.error("max_segment_mb", f"must be in [0.01, 1024] MiB, got {max_mb:g}")
    keep_segments = s.int_("keep_segments", 0, lo=0)
    keep_days = s.float_("keep_days", 90.0)
    if keep_days < 0:
        raise s.error("keep_days", f"must be >= 0 (0: no age limit), got {keep_days:g}")
    return JournalConfig(
        fsync=fsync,
        fsync_interval=float(interval),
        directory=directory,
        max_segment_mb=float(max_mb),
        keep_segments=keep_segments,
        keep_days=float(keep_days),
    )


def _load_sim(path: Path, data: dict[str, Any], base: Path) -> SimConfig:
    s = section(path, data, "sim", ("script", "speed", "hands"))
    script = existing_file(s, "script", base)
    speed = s.float_("speed", _SIM.speed)
    if speed <= 0:
        raise s.error("speed", f"{speed:g} must be greater than 0")
    hands = s.int_("hands", _SIM.hands, lo=0)
    return SimConfig(script=script, speed=speed, hands=hands)


#: The longest release delay accepted (seconds), as for the TV's own delay.
MAX_SEAL_DELAY = 3600.0


def _load_seal(path: Path, data: dict[str, Any], base: Path) -> SealConfig:
    s = section(path, data, "seal", ("delay", "at_hand_end", "signing_key", "public_key"))
    d = SealConfig()
    delay = s.float_("delay", d.delay)
    if not 0 <= delay <= MAX_SEAL_DELAY:
        raise s.error("delay", f"{delay:g} is out of range 0..{MAX_SEAL_DELAY:g} seconds")
    signing_key = existing_file(s, "signing_key", base)
    if signing_key is not None:
        check_private(s, "signing_key", signing_key)
    return SealConfig(
        delay=float(delay),
        at_hand_end=s.bool_("at_hand_end", d.at_hand_end),
        signing_key=signing_key,
        public_key=existing_file(s, "public_key", base),
    )


MAX_REORDER_MS = 1000.0


def _load_inputs(path: Path, data: dict[str, Any]) -> InputsConfig:
    s = section(path, data, "inputs", ("reorder_ms",))
    window = s.float_("reorder_ms", InputsConfig().reorder_ms)
    if not 0 <= window <= MAX_REORDER_MS:
        raise s.error("reorder_ms", f"must be in [0, {MAX_REORDER_MS:g}] ms, got {window:g}")
    return InputsConfig(reorder_ms=float(window))


def with_game(config: Config, game: str | None) -> Config:
    """The configuration playing ``game`` instead of [rules] game (the CLI's --game)."""
    if game is None:
        return config
    if game not in GAMES:
        raise ConfigError(
            f"{config.path}: --game (overrides [rules] game): {game!r} is not one of "
            f"{', '.join(GAMES)}"
        )
    return replace(config, rules=replace(config.rules, game=game))


def load_config(path: Path, *, profile_override: str | None = None) -> Config:
    """Read and validate a table's TOML file; any refusal is a ConfigError naming file and key.

    Relative paths in the file are resolved against the file's directory.
    `profile_override` (the CLI's --profile) replaces [rules] profile.
    """
    path = Path(path)
    data = read_sections(path, _SECTIONS)
    base = Path(os.path.abspath(path)).parent
    table = _load_table(path, data)
    rules = _load_rules(path, data, profile_override)
    devices = section(path, data, "devices", _DEVICES).data
    card_reader, chip_reader = _load_readers(path, devices, table.seats)
    gpio = _load_gpio(path, data, devices, table.seats)
    badge = _load_badge(path, devices, base)
    broker = _load_broker(path, data, table, base)
    return Config(
        path=Path(os.path.abspath(path)),
        table=table,
        rules=rules,
        card_reader=card_reader,
        chip_reader=chip_reader,
        gpio=gpio,
        badge=badge,
        broker=broker,
        registries=_load_registries(path, data, base),
        journal=_load_journal(path, data, base),
        sim=_load_sim(path, data, base),
        seal=_load_seal(path, data, base),
        inputs=_load_inputs(path, data),
    )

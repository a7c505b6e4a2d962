"""Tests for the table configuration loader: the example loads, every refusal names file and key."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from controller.config import (
    PROFILES,
    Config,
    default_card_antennas,
    default_chip_antennas,
    load_config,
)
from kernel.errors import ConfigError, TableError
from tests.broker import RoomPki

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sim-table.toml"

MINIMAL = """\
[table]
id = "t07"
room = "main"
seats = 6
"""


def write(tmp_path: Path, text: str, name: str = "table.toml", mode: int | None = None) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    if mode is not None:
        path.chmod(mode)
    return path


def refuse(tmp_path: Path, text: str, *fragments: str, name: str = "table.toml") -> str:
    """Load `text`, expect a ConfigError naming the file and every fragment; return it."""
    path = write(tmp_path, text, name)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


# --------------------------------------------------------------------------- good files


def test_example_loads() -> None:
    config = load_config(EXAMPLE)
    assert isinstance(config, Config)
    assert config.table.id == "t01"
    assert config.table.room == "sim"
    assert list(config.seat_numbers) == list(range(1, 10))
    assert config.rules.profile == "tda-2019"
    assert config.rules.game == "nlhe"
    assert config.card_reader.backend == "sim"
    assert config.chip_reader.backend == "sim"
    assert config.gpio.backend == "sim"
    assert config.badge.backend == "sim"
    assert config.badge.staff == ROOT / "examples" / "staff" / "sim-staff.toml"
    assert config.card_reader.antennas == default_card_antennas(9)
    assert config.chip_reader.antennas == default_chip_antennas(9)
    assert sorted(config.gpio.allin_buttons) == list(range(1, 10))
    assert config.gpio.allin_lamps == {}
    assert config.broker.host is None
    assert config.broker.prefix == "poker/sim/t01"
    assert config.broker.client_id == "table-t01"  # its identity (docs/security.md)
    assert config.registries.deck == ROOT / "examples" / "decks" / "sim-deck.toml"
    assert config.registries.chips == ROOT / "examples" / "chips" / "sim-chips.toml"
    assert config.journal.path == ROOT / "var" / "t01.journal"


def test_example_pins_are_distinct_bcm_pins() -> None:
    gpio = load_config(EXAMPLE).gpio
    pins = [gpio.shuffler, *gpio.panel.values(), *gpio.allin_buttons.values()]
    pins += list(gpio.lamps.values())
    assert len(pins) == len(set(pins)) == 1 + 6 + 9 + 3
    assert all(p is not None and 2 <= p <= 27 for p in pins)


def test_minimal_file_gets_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL))
    assert config.rules.profile == "tda-2019"
    assert config.rules.settle_seconds == 1.0
    assert config.card_reader.antennas == default_card_antennas(6)
    assert config.chip_reader.antennas == default_chip_antennas(6)
    assert config.badge.backend == "none"
    assert config.broker.port == 1883
    assert config.broker.prefix == "poker/main/t07"
    assert config.broker.client_id == "table-t07"
    assert config.broker.heartbeat == 10
    assert config.registries.deck is None
    assert config.journal.path is None
    assert config.sim.speed == 1.0
    assert config.path == tmp_path / "table.toml"


def test_relative_paths_resolve_against_config_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf_dir = tmp_path / "conf"
    (conf_dir / "decks").mkdir(parents=True)
    (conf_dir / "decks" / "d.toml").write_text("", encoding="utf-8")
    (tmp_path / "script.jsonl").write_text("", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the working directory must not matter
    text = MINIMAL + (
        '[registries]\ndeck = "decks/d.toml"\n'
        '[journal]\npath = "../var/j/t07.journal"\n'
        '[sim]\nscript = "../script.jsonl"\n'
    )
    config = load_config(write(conf_dir, text))
    assert config.registries.deck == conf_dir / "decks" / "d.toml"
    assert config.journal.path == tmp_path / "var" / "j" / "t07.journal"  # dir need not exist
    assert config.sim.script == tmp_path / "script.jsonl"


def test_relative_config_path_is_named_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, MINIMAL + "[table.x]\n", name="rel.toml")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"^rel\.toml: "):
        load_config(Path("rel.toml"))


def test_credentials_file_fills_username_and_password(tmp_path: Path) -> None:
    write(tmp_path, 'username = "tv"\npassword = "s3cret"\n', name="creds.toml", mode=0o640)
    text = MINIMAL + '[broker]\nhost = "broker.local"\ncredentials_file = "creds.toml"\n'
    config = load_config(write(tmp_path, text))
    assert config.broker.username == "tv"
    assert config.broker.password == "s3cret"
    assert config.broker.credentials_file == tmp_path / "creds.toml"
    assert config.broker.client_id == "tv", "the client id is the identity"
    assert "s3cret" not in repr(config)


def test_tls_files_and_broker_keys(tmp_path: Path, room_pki: RoomPki) -> None:
    write(tmp_path, "x", name="ca.pem")
    shutil.copy(room_pki.cert("table-t01"), tmp_path / "cert.pem")
    shutil.copy(room_pki.key("table-t01"), tmp_path / "key.pem")  # mode 600
    text = MINIMAL + (
        '[broker]\nhost = "b"\nport = 8883\ntls = true\nprefix = "room/a/t07"\n'
        'client_id = "me"\nkeepalive = 10\n'
        'ca_file = "ca.pem"\ncert_file = "cert.pem"\nkey_file = "key.pem"\n'
    )
    broker = load_config(write(tmp_path, text)).broker
    assert (broker.host, broker.port, broker.tls) == ("b", 8883, True)
    assert (broker.prefix, broker.client_id, broker.keepalive) == ("room/a/t07", "me", 10)
    assert broker.ca_file == tmp_path / "ca.pem"
    assert broker.key_file == tmp_path / "key.pem"


def test_custom_antennas_and_pins(tmp_path: Path) -> None:
    text = MINIMAL + (
        "[devices.card_reader]\n"
        'backend = "serial"\nport = "/dev/ttyUSB0"\nbaudrate = 57600\n'
        'antennas = ["board", "burn", "muck", "seat1", "seat2", "seat3", "seat4", "seat5",'
        ' "seat6", "register"]\n'
        '[devices.chip_reader]\nantennas = ["pot", "bet1"]\n'
        '[devices.gpio]\nbackend = "rpi"\nbounce_ms = 20\n'
        '[pins]\nshuffler = 4\nallin_lamps = { "6" = 27 }\n'
    )
    config = load_config(write(tmp_path, text))
    assert config.card_reader.port == "/dev/ttyUSB0"
    assert config.card_reader.baudrate == 57600
    assert config.card_reader.antennas[0] == "board"
    assert config.card_reader.antennas[-1] == "register"
    assert config.chip_reader.antennas == ("pot", "bet1")
    assert config.gpio.backend == "rpi"
    assert config.gpio.allin_lamps == {6: 27}


@pytest.mark.parametrize("profile", PROFILES)
def test_profile_override(tmp_path: Path, profile: str) -> None:
    config = load_config(write(tmp_path, MINIMAL), profile_override=profile)
    assert config.rules.profile == profile


# --------------------------------------------------------------------------- refusals


def test_config_error_is_a_table_error() -> None:
    assert issubclass(ConfigError, TableError)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml: file not found"):
        load_config(tmp_path / "nope.toml")


def test_toml_syntax_error_names_line(tmp_path: Path) -> None:
    message = refuse(tmp_path, MINIMAL + "[rules]\nprofile = tda-2019\n", "line 6", "TOML")
    assert "column" in message


def test_unknown_top_level_section(tmp_path: Path) -> None:
    refuse(tmp_path, MINIMAL + "[tabel]\n", "unknown section [tabel]")


def test_unknown_top_level_key(tmp_path: Path) -> None:
    refuse(tmp_path, "seats = 3\n" + MINIMAL, "unknown top-level key 'seats'")


def test_unknown_key_in_section(tmp_path: Path) -> None:
    text = '[table]\nid = "t"\nroom = "r"\nsets = 9\n'
    message = refuse(tmp_path, text, "unknown key 'sets' in [table]")
    assert "did you mean 'seats'" in message


def test_unknown_device(tmp_path: Path) -> None:
    refuse(tmp_path, MINIMAL + "[devices.printer]\n", "unknown key 'printer' in [devices]")


def test_unknown_key_in_nested_table(tmp_path: Path) -> None:
    refuse(
        tmp_path,
        MINIMAL + '[devices.card_reader]\nbackend = "sim"\nspeed = 3\n',
        "unknown key 'speed' in [devices.card_reader]",
    )


def test_unknown_name_in_pins_subtable(tmp_path: Path) -> None:
    refuse(tmp_path, MINIMAL + "[pins.panel]\nchek = 5\n", "[pins] panel.chek", "unknown name")


@pytest.mark.parametrize(
    ("snippet", "key", "expected"),
    [
        ('[table]\nid = "t"\nroom = "r"\nseats = "9"\n', "[table] seats", "an integer"),
        ('[table]\nid = "t"\nroom = "r"\nseats = 9.0\n', "[table] seats", "an integer"),
        ('[table]\nid = "t"\nroom = "r"\nseats = true\n', "[table] seats", "an integer"),
        ('[table]\nid = 1\nroom = "r"\nseats = 9\n', "[table] id", "a string"),
        (MINIMAL + "[broker]\ntls = 1\n", "[broker] tls", "a boolean"),
        (MINIMAL + '[rules]\nsettle_seconds = "1"\n', "[rules] settle_seconds", "a number"),
        (MINIMAL + '[devices.chip_reader]\nantennas = "pot"\n', "antennas", "an array"),
        (MINIMAL + '[pins]\nshuffler = "4"\n', "[pins] shuffler", "an integer"),
        (MINIMAL + "[pins]\npanel = 5\n", "[pins] panel", "a table"),
        ("rules = 3\n" + MINIMAL, "[rules]", "must be a table"),
    ],
)
def test_wrong_type(tmp_path: Path, snippet: str, key: str, expected: str) -> None:
    refuse(tmp_path, snippet, key, expected)


@pytest.mark.parametrize("seats", [0, 1, 11, -3])
def test_seats_out_of_range(tmp_path: Path, seats: int) -> None:
    text = f'[table]\nid = "t"\nroom = "r"\nseats = {seats}\n'
    refuse(tmp_path, text, "[table] seats", f"{seats} is out of range 2..10")


def test_table_section_required(tmp_path: Path) -> None:
    refuse(tmp_path, '[rules]\ngame = "nlhe"\n', "[table] id", "missing")


@pytest.mark.parametrize("key", ["id", "room"])
def test_table_names_charset(tmp_path: Path, key: str) -> None:
    text = MINIMAL.replace('"t07"' if key == "id" else '"main"', '"t/07"')
    refuse(tmp_path, text, f"[table] {key}", "'t/07'")


@pytest.mark.parametrize(
    ("snippet", "key"),
    [
        ('[rules]\nprofile = "wsop"\n', "[rules] profile"),
        ('[rules]\ngame = "omaha"\n', "[rules] game"),
        ("[rules]\nsettle_seconds = 0\n", "[rules] settle_seconds"),
        ("[rules]\nsettle_seconds = 5.5\n", "[rules] settle_seconds"),
        ('[devices.card_reader]\nbackend = "usb"\n', "[devices.card_reader] backend"),
        ('[devices.chip_reader]\nbackend = "serial"\n', "[devices.chip_reader] port"),
        ('[devices.gpio]\nbackend = "pigpio"\n', "[devices.gpio] backend"),
        ('[devices.badge_reader]\nbackend = "nfc"\n', "[devices.badge_reader] backend"),
        ("[broker]\nport = 0\n", "[broker] port"),
        ("[broker]\nport = 70000\n", "[broker] port"),
        ('[broker]\nprefix = "poker/+/t07"\n', "[broker] prefix"),
        ('[broker]\nprefix = "poker/#"\n', "[broker] prefix"),
        ('[broker]\nprefix = "poker/main/"\n', "[broker] prefix"),
        ("[sim]\nspeed = 0\n", "[sim] speed"),
        ("[sim]\nhands = -1\n", "[sim] hands"),
    ],
)
def test_impossible_values(tmp_path: Path, snippet: str, key: str) -> None:
    refuse(tmp_path, MINIMAL + snippet, key)


def test_profile_override_refused(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL)
    with pytest.raises(ConfigError) as info:
        load_config(path, profile_override="home-game")
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert "--profile" in message and "[rules] profile" in message and "'home-game'" in message


def test_profile_override_does_not_hide_a_bad_file_profile(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + '[rules]\nprofile = "wsop"\n')
    with pytest.raises(ConfigError, match=r"\[rules\] profile"):
        load_config(path, profile_override="venezia")


# antennas


def test_duplicate_antenna_within_a_board(tmp_path: Path) -> None:
    text = MINIMAL + '[devices.chip_reader]\nantennas = ["bet1", "pot", "bet1"]\n'
    refuse(tmp_path, text, "[devices.chip_reader] antennas[2]", "duplicate antenna 'bet1'")


def test_duplicate_antenna_across_boards(tmp_path: Path) -> None:
    cards = ", ".join(f'"{a}"' for a in default_card_antennas(6))
    text = MINIMAL + f'[devices.card_reader]\nantennas = [{cards}, "pot"]\n'
    message = refuse(tmp_path, text, "duplicate antenna 'pot'", "[devices.card_reader]")
    assert "[devices.chip_reader] antennas" in message


def test_antenna_beyond_seats(tmp_path: Path) -> None:
    text = MINIMAL + '[devices.chip_reader]\nantennas = ["bet1", "bet7", "pot"]\n'
    refuse(tmp_path, text, "[devices.chip_reader] antennas[1]", "'bet7'", "seats = 6")


def test_card_antenna_beyond_seats(tmp_path: Path) -> None:
    cards = ", ".join(f'"{a}"' for a in default_card_antennas(6))
    text = MINIMAL + f'[devices.card_reader]\nantennas = [{cards}, "seat9"]\n'
    refuse(tmp_path, text, "[devices.card_reader] antennas[9]", "'seat9'", "beyond")


@pytest.mark.parametrize("name", ["seat0", "table", "bet1", "Board"])
def test_unknown_card_antenna(tmp_path: Path, name: str) -> None:
    cards = ", ".join(f'"{a}"' for a in default_card_antennas(6))
    text = MINIMAL + f'[devices.card_reader]\nantennas = [{cards}, "{name}"]\n'
    if name == "bet1":  # also on the (default) chip board
        refuse(tmp_path, text, "duplicate antenna 'bet1'")
    else:
        refuse(tmp_path, text, "[devices.card_reader] antennas[9]", f"unknown antenna '{name}'")


def test_missing_required_card_antenna(tmp_path: Path) -> None:
    text = MINIMAL + (
        '[devices.card_reader]\nantennas = ["seat1", "seat2", "seat3", "seat5", "seat6", '
        '"board", "muck"]\n'
    )
    refuse(tmp_path, text, "[devices.card_reader] antennas", "missing", "seat4, burn")


def test_antenna_list_items_must_be_strings(tmp_path: Path) -> None:
    text = MINIMAL + '[devices.chip_reader]\nantennas = ["pot", 3]\n'
    refuse(tmp_path, text, "[devices.chip_reader] antennas[1]", "a string")


# pins


def test_pin_used_twice_names_both_keys(tmp_path: Path) -> None:
    text = MINIMAL + "[pins]\nshuffler = 17\npanel = { check = 17 }\n"
    message = refuse(tmp_path, text)
    expected = "[pins] panel.check: pin 17 is already used by pins.shuffler"
    assert message == f"{tmp_path / 'table.toml'}: {expected}"


def test_pin_used_twice_across_subtables(tmp_path: Path) -> None:
    text = MINIMAL + '[pins]\nallin_buttons = { "2" = 5 }\nlamps = { fault = 5 }\n'
    refuse(tmp_path, text, "[pins] lamps.fault", "pins.allin_buttons.2")


@pytest.mark.parametrize("pin", [0, 1, 28, 40, -2])
def test_pin_out_of_range(tmp_path: Path, pin: int) -> None:
    text = MINIMAL + f"[pins]\nlamps = {{ floor = {pin} }}\n"
    refuse(tmp_path, text, "[pins] lamps.floor", "2..27")


def test_allin_seat_beyond_seats(tmp_path: Path) -> None:
    text = MINIMAL + '[pins.allin_lamps]\n"7" = 5\n'
    refuse(tmp_path, text, "[pins] allin_lamps.7", "seats = 6")


@pytest.mark.parametrize("seat", ["0", "one", "01"])
def test_allin_seat_not_a_number(tmp_path: Path, seat: str) -> None:
    text = MINIMAL + f'[pins.allin_buttons]\n"{seat}" = 5\n'
    refuse(tmp_path, text, f"[pins] allin_buttons.{seat}", "not a seat number")


# files


def test_missing_registry_file(tmp_path: Path) -> None:
    message = refuse(
        tmp_path,
        MINIMAL + '[registries]\ndeck = "decks/none.toml"\n',
        "[registries] deck: file not found:",
    )
    assert message.endswith(str(tmp_path / "decks" / "none.toml"))


def test_missing_chip_registry_file(tmp_path: Path) -> None:
    refuse(tmp_path, MINIMAL + '[registries]\nchips = "c.toml"\n', "[registries] chips")


@pytest.mark.parametrize("key", ["ca_file", "cert_file", "key_file"])
def test_missing_tls_file(tmp_path: Path, key: str) -> None:
    write(tmp_path, "x", name="present.pem")
    others = {k: "present.pem" for k in ("ca_file", "cert_file", "key_file")}
    others[key] = "absent.pem"
    lines = "".join(f'{k} = "{v}"\n' for k, v in others.items())
    refuse(
        tmp_path,
        MINIMAL + f"[broker]\ntls = true\n{lines}",
        f"[broker] {key}: file not found",
        "absent.pem",
    )


def test_tls_files_need_tls(tmp_path: Path) -> None:
    write(tmp_path, "x", name="ca.pem")
    refuse(tmp_path, MINIMAL + '[broker]\nca_file = "ca.pem"\n', "[broker] ca_file", "tls")


def test_cert_without_key(tmp_path: Path) -> None:
    write(tmp_path, "x", name="cert.pem")
    text = MINIMAL + '[broker]\ntls = true\ncert_file = "cert.pem"\n'
    refuse(tmp_path, text, "[broker] key_file", "cert_file")


def test_missing_sim_script(tmp_path: Path) -> None:
    refuse(tmp_path, MINIMAL + '[sim]\nscript = "s.jsonl"\n', "[sim] script: file not found")


def test_journal_path_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "j").mkdir()
    refuse(tmp_path, MINIMAL + '[journal]\npath = "j"\n', "[journal] path", "directory")


def test_missing_credentials_file(tmp_path: Path) -> None:
    refuse(
        tmp_path,
        MINIMAL + '[broker]\ncredentials_file = "creds.toml"\n',
        "[broker] credentials_file: file not found",
    )


@pytest.mark.parametrize(
    ("creds", "expected"),
    [
        ('username = "tv"\n', "missing key 'password'"),
        ('password = "x"\n', "missing key 'username'"),
        ('username = "tv"\npassword = 3\n', "password must be a non-empty string"),
        ('username = "tv"\npassword = "x"\ntoken = "y"\n', "unknown key 'token'"),
        ('username = "tv"\npassword = \n', "TOML syntax error"),
    ],
)
def test_bad_credentials_file(tmp_path: Path, creds: str, expected: str) -> None:
    write(tmp_path, creds, name="creds.toml", mode=0o600)
    message = refuse(
        tmp_path,
        MINIMAL + '[broker]\ncredentials_file = "creds.toml"\n',
        "[broker] credentials_file",
        expected,
    )
    assert re.search(r"creds\.toml", message.split("credentials_file", 1)[1])


# [devices.badge_reader]


def test_badge_reader_pcsc_with_reader_and_staff(tmp_path: Path) -> None:
    write(tmp_path, "", name="staff.toml")
    text = '[devices.badge_reader]\nbackend = "pcsc"\nreader = "ACR122"\nstaff = "staff.toml"\n'
    badge = load_config(write(tmp_path, MINIMAL + text)).badge
    assert (badge.backend, badge.reader, badge.staff) == ("pcsc", "ACR122", tmp_path / "staff.toml")


def test_badge_reader_none_needs_no_staff_but_may_name_one(tmp_path: Path) -> None:
    none = '[devices.badge_reader]\nbackend = "none"\n'
    assert load_config(write(tmp_path, MINIMAL + none)).badge.staff is None
    write(tmp_path, "", name="staff.toml")
    with_staff = load_config(write(tmp_path, MINIMAL + none + 'staff = "staff.toml"\n'))
    assert with_staff.badge.staff == tmp_path / "staff.toml"  # replay resolves badges


@pytest.mark.parametrize("backend", ["sim", "pcsc"])
def test_badge_reader_needs_staff(tmp_path: Path, backend: str) -> None:
    refuse(
        tmp_path,
        MINIMAL + f'[devices.badge_reader]\nbackend = "{backend}"\n',
        "[devices.badge_reader] staff: required",
        f'backend = "{backend}"',
    )


def test_badge_reader_staff_file_missing(tmp_path: Path) -> None:
    message = refuse(
        tmp_path,
        MINIMAL + '[devices.badge_reader]\nbackend = "sim"\nstaff = "staff/none.toml"\n',
        "[devices.badge_reader] staff: file not found:",
    )
    assert message.endswith(str(tmp_path / "staff" / "none.toml"))


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ('staff = 3\nbackend = "sim"\n', "[devices.badge_reader] staff: expected a string"),
        ('reader = ""\n', "[devices.badge_reader] reader: must not be empty"),
        ('staf = "s.toml"\n', "unknown key 'staf' in [devices.badge_reader]"),
    ],
)
def test_badge_reader_refusals(tmp_path: Path, snippet: str, expected: str) -> None:
    refuse(tmp_path, MINIMAL + "[devices.badge_reader]\n" + snippet, expected)


# --------------------------------------------------------------------------- secrets


def test_credentials_file_readable_by_others_is_refused_like_ssh_does(tmp_path: Path) -> None:
    """A password file made under a permissive umask (0666 here) is refused, with what to do."""
    old = os.umask(0)
    try:
        write(tmp_path, 'username = "table-t07"\npassword = "s3cret-pw"\n', name="creds.toml")
    finally:
        os.umask(old)
    assert (tmp_path / "creds.toml").stat().st_mode & 0o777 == 0o666
    message = refuse(
        tmp_path,
        MINIMAL + '[broker]\ncredentials_file = "creds.toml"\n',
        "[broker] credentials_file",
        "accessible by other users (mode 0666)",
        "chmod 600",
    )
    assert "s3cret" not in message
    (tmp_path / "creds.toml").chmod(0o640)  # root:tablectl 640, as documented: accepted
    assert load_config(tmp_path / "table.toml").broker.username == "table-t07"


def test_client_key_readable_by_others_is_refused(tmp_path: Path, room_pki: RoomPki) -> None:
    shutil.copy(room_pki.cert("table-t01"), tmp_path / "t.crt")
    shutil.copy(room_pki.key("table-t01"), tmp_path / "t.key")
    (tmp_path / "t.key").chmod(0o644)
    text = MINIMAL + '[broker]\ntls = true\ncert_file = "t.crt"\nkey_file = "t.key"\n'
    refuse(tmp_path, text, "[broker] key_file", "t.key", "accessible by other users (mode 0644)")


def test_client_key_of_another_identity_is_refused(tmp_path: Path, room_pki: RoomPki) -> None:
    shutil.copy(room_pki.cert("table-t01"), tmp_path / "t.crt")
    shutil.copy(room_pki.key("tv"), tmp_path / "tv.key")
    text = MINIMAL + '[broker]\ntls = true\ncert_file = "t.crt"\nkey_file = "tv.key"\n'
    refuse(tmp_path, text, "[broker] cert_file", "the key does not belong to the certificate")
    write(tmp_path, "not a certificate", name="junk.crt")
    text = MINIMAL + '[broker]\ntls = true\ncert_file = "junk.crt"\nkey_file = "tv.key"\n'
    refuse(tmp_path, text, "[broker] cert_file", "junk.crt")


def test_client_id_is_the_identity(tmp_path: Path) -> None:
    """The client id defaults to the username; another one is refused (a broker binding
    client ids to identities would replace it, and no other identity may claim it)."""
    write(tmp_path, 'username = "table-t07"\npassword = "pw-secret"\n', name="c.toml", mode=0o600)
    refuse(
        tmp_path,
        MINIMAL + '[broker]\ncredentials_file = "c.toml"\nclient_id = "tablectl-t07"\n',
        "[broker] client_id",
        "'tablectl-t07' differs from the username 'table-t07'",
    )
    text = MINIMAL + '[broker]\ncredentials_file = "c.toml"\nclient_id = "table-t07"\n'
    assert load_config(write(tmp_path, text)).broker.client_id == "table-t07"


@pytest.mark.parametrize("value", ["-1", "3601", "true", "2.5"])
def test_bad_heartbeat(tmp_path: Path, value: str) -> None:
    refuse(tmp_path, MINIMAL + f"[broker]\nheartbeat = {value}\n", "[broker] heartbeat")


def test_heartbeat_zero_turns_it_off(tmp_path: Path) -> None:
    text = MINIMAL + "[broker]\nheartbeat = 0\n"
    assert load_config(write(tmp_path, text)).broker.heartbeat == 0

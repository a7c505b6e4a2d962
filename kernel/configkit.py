"""The configuration kit the table, the room and TV share: one strict TOML reader.

Strict sections (an unknown key or section is refused, named, with the nearest known name),
typed getters, paths and credentials files. Every name here is public; a loader builds its
dataclasses from them."""

from __future__ import annotations

import difflib
import math
import os
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kernel.errors import ConfigError
from kernel.private import exposure

NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
"""An id, a name or a topic level from a configuration file."""

_TOML_POS_RE = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


class Where:
    """Names the file (and the section of it) a refusal is about."""

    def __init__(self, path: Path, section: str) -> None:
        self.path = path
        self.section = section

    def error(self, key: str | None, message: str) -> ConfigError:
        """A ConfigError `<file>: [section] key: message`."""
        where = f"[{self.section}]" if key is None else f"[{self.section}] {key}"
        return ConfigError(f"{self.path}: {where}: {message}")


def type_name(value: object) -> str:
    names: dict[type, str] = {
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a float",
        list: "an array",
        dict: "a table",
    }
    for kind, name in names.items():
        if type(value) is kind:
            return name
    return f"a {type(value).__name__}"


class Section:
    """One TOML table being read: typed getters that refuse with file + dotted key."""

    def __init__(self, where: Where, data: dict[str, Any], allowed: tuple[str, ...]) -> None:
        self.where = where
        self.data = data
        for key in data:
            if key not in allowed:
                hint = difflib.get_close_matches(key, allowed, n=1)
                suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
                known = ", ".join(allowed) if allowed else "none"
                raise ConfigError(
                    f"{where.path}: unknown key '{key}' in [{where.section}]{suggestion}; "
                    f"known keys: {known}"
                )

    def error(self, key: str, message: str) -> ConfigError:
        return self.where.error(key, message)

    def has(self, key: str) -> bool:
        return key in self.data

    def _get(self, key: str, kinds: tuple[type, ...], expected: str, required: bool) -> Any:
        if key not in self.data:
            if required:
                raise self.where.error(key, "missing (required)")
            return None
        value = self.data[key]
        # bool is a subclass of int: never accept true/false where a number is expected
        if isinstance(value, bool) and bool not in kinds:
            raise self.error(key, f"expected {expected}, got {type_name(value)}")
        if not isinstance(value, kinds):
            raise self.error(key, f"expected {expected}, got {type_name(value)}")
        return value

    def str_(self, key: str, *, required: bool = False) -> str | None:
        value: str | None = self._get(key, (str,), "a string", required)
        if value is not None and not value:
            raise self.error(key, "must not be empty")
        return value

    def name(self, key: str, *, required: bool = False) -> str | None:
        value = self.str_(key, required=required)
        if value is not None and not NAME_RE.match(value):
            raise self.error(key, f"{value!r}: only letters, digits, '_' and '-' are allowed")
        return value

    def choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        value = self.str_(key)
        if value is None:
            return default
        if value not in choices:
            raise self.error(key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def int_(self, key: str, default: int, *, lo: int | None = None, hi: int | None = None) -> int:
        value: int | None = self._get(key, (int,), "an integer", False)
        if value is None:
            return default
        check_range(self, key, value, lo, hi)
        return value

    def required_int(self, key: str, *, lo: int | None = None, hi: int | None = None) -> int:
        value: int = self._get(key, (int,), "an integer", True)
        check_range(self, key, value, lo, hi)
        return value

    def float_(self, key: str, default: float) -> float:
        value: int | float | None = self._get(key, (int, float), "a number", False)
        if value is None:
            return default
        if not math.isfinite(value):
            raise self.error(key, f"{value} is not a finite number")
        return float(value)

    def bool_(self, key: str, default: bool) -> bool:
        value: bool | None = self._get(key, (bool,), "a boolean (true/false)", False)
        return default if value is None else value

    def table(self, key: str) -> dict[str, Any] | None:
        value: dict[str, Any] | None = self._get(key, (dict,), "a table", False)
        return value

    def str_list(self, key: str) -> list[str] | None:
        value: list[Any] | None = self._get(key, (list,), "an array of strings", False)
        if value is None:
            return None
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise self.error(f"{key}[{i}]", f"expected a string, got {type_name(item)}")
        return [str(item) for item in value]


def check_range(section: Section, key: str, value: int, lo: int | None, hi: int | None) -> None:
    if lo is not None and hi is not None and not lo <= value <= hi:
        raise section.error(key, f"{value} is out of range {lo}..{hi}")
    if lo is not None and value < lo:
        raise section.error(key, f"{value} must be at least {lo}")
    if hi is not None and value > hi:
        raise section.error(key, f"{value} must be at most {hi}")


def resolve(base: Path, value: str) -> Path:
    """A path from the config: `~` expanded, relative ones against the config's directory."""
    path = Path(value).expanduser()
    return Path(os.path.normpath(path if path.is_absolute() else base / path))


def existing_file(section: Section, key: str, base: Path) -> Path | None:
    value = section.str_(key)
    if value is None:
        return None
    path = resolve(base, value)
    if not path.exists():
        raise section.error(key, f"file not found: {path}")
    if not path.is_file():
        raise section.error(key, f"not a regular file: {path}")
    return path


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; every failure is a ConfigError naming the file (and line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        pos = _TOML_POS_RE.search(message)
        if pos is None:
            raise ConfigError(f"{path}: TOML syntax error: {message}") from None
        reason = message[: pos.start()]
        raise ConfigError(
            f"{path}: line {pos.group(1)}, column {pos.group(2)}: TOML syntax error: {reason}"
        ) from None


def sub(where_path: Path, data: dict[str, Any], section: str) -> dict[str, Any]:
    """The sub-table `section` (dotted, e.g. "devices.gpio") of `data`, or {} when absent."""
    value = data.get(section.rsplit(".", 1)[-1], {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where_path}: [{section}] must be a table, got {type_name(value)}")
    return value


def read_sections(path: Path, sections: Sequence[str]) -> dict[str, Any]:
    """A TOML file's data, refused (ConfigError naming the file) if it has a section or
    top-level key not in `sections`, with the nearest known name as a hint."""
    data = read_toml(path)
    for key, value in data.items():
        if key not in sections:
            hint = difflib.get_close_matches(key, sections, n=1)
            suggestion = f" (did you mean [{hint[0]}]?)" if hint else ""
            what = f"section [{key}]" if isinstance(value, dict) else f"top-level key '{key}'"
            raise ConfigError(
                f"{path}: unknown {what}{suggestion}; known sections: {', '.join(sections)}"
            )
    return data


def read_credentials(path: Path) -> tuple[str, str]:
    """(username, password) from a credentials file: TOML with exactly these two keys, not
    accessible by other users. ConfigError names the file."""
    problem = exposure(path)
    if problem is not None:
        raise ConfigError(f"{path} {problem}")
    creds = read_toml(path)
    for key in creds:
        if key not in ("username", "password"):
            raise ConfigError(f"{path}: unknown key {key!r} (only username, password)")
    values: list[str] = []
    for key in ("username", "password"):
        value = creds.get(key)
        if value is None:
            raise ConfigError(f"{path}: missing key {key!r}")
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{path}: {key} must be a non-empty string")
        values.append(value)
    return values[0], values[1]


def load_credentials(section: Section, base: Path) -> tuple[Path | None, str | None, str | None]:
    cred_path = existing_file(section, "credentials_file", base)
    if cred_path is None:
        return None, None, None
    try:
        username, password = read_credentials(cred_path)
    except ConfigError as exc:
        raise section.error("credentials_file", str(exc)) from None
    except OSError as exc:
        raise section.error("credentials_file", f"{cred_path}: {exc.strerror or exc}") from None
    return cred_path, username, password


def check_private(section: Section, key: str, path: Path) -> None:
    """A file holding a secret (password, private key) must not be readable by others."""
    try:
        problem = exposure(path)
    except OSError as exc:
        raise section.error(key, f"{path}: {exc.strerror or exc}") from None
    if problem is not None:
        raise section.error(key, f"{path} {problem}")


def section(path: Path, data: dict[str, Any], name: str, keys: tuple[str, ...]) -> Section:
    """The section `name` (dotted for a sub-table) of a file's `data`, read strictly: a
    key not in `keys` is refused (ConfigError naming the file and the nearest key)."""
    return Section(Where(path, name), sub(path, data, name), keys)

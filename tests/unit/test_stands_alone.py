"""The repository stands alone: rules are cited by document and article, never by a
transcript's file name or line, and no file cites a tracker's issue number."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("bench", "broadcast", "controller", "docs", "drivers", "examples", "firmware")
FOLDERS += ("firmware_sim", "kernel", "sim", "room", "scripts", "systemd", "tablectl", "tests")
SUFFIXES = {".py", ".md", ".toml", ".jsonl", ".json", ".js", ".html", ".sh", ".conf", ".txt"}

#: A transcript's file name (three digits, an underscore and sixteen hex digits), a line of
#: one (its number, a colon and the line, in brackets or not; "line N"), or the folder
#: they live in outside the repository. The examples below are built from pieces, so that
#: this file itself cites nothing.
TRANSCRIPT = re.compile(
    r"\b00[0-4]_[0-9a-f]{16}\b|\(00[0-4]:|\b00[0-4]:[0-9]|\b00[0-4] lines? [0-9]|seeds/|"
    r"tda-2019-en\.txt"
)
ISSUE = re.compile(r"\bissues? ?#?[0-9]+\b|\(#[0-9]+\)", re.IGNORECASE)


def _texts() -> list[Path]:
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and ".venv" not in path.parts:
                found.append(path)
    return [*found, ROOT / "README.md", ROOT / "pyproject.toml"]


def _hits(pattern: re.Pattern[str]) -> list[str]:
    me = Path(__file__).resolve()
    out = []
    for path in _texts():
        if path == me:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if pattern.search(line):
                out.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    return out


def test_house_rules_are_cited_by_document_and_article_not_by_transcript() -> None:
    assert _hits(TRANSCRIPT) == []


def test_no_file_cites_an_issue_number() -> None:
    assert _hits(ISSUE) == []


def test_the_patterns_catch_what_they_are_for() -> None:
    number, name = "00" + "4", "002_" + "9ee9120963990579"
    assert TRANSCRIPT.search(f"Campione ({number}:10): two cards")
    assert TRANSCRIPT.search(f'source="{name}.txt"')
    assert TRANSCRIPT.search("# misdeals: 000 line 335")
    assert ISSUE.search("secrets (issue 12)") and ISSUE.search("see #24)") is None
    assert ISSUE.search("fixed in (#24)")
    assert not TRANSCRIPT.search("1_000_000 and 0.001: 5")

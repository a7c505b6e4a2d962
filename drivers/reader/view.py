"""The host's view of which tag UIDs sit at which antenna, and its diff against an inventory."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Change = tuple[Literal["in", "out"], str, str]  # (direction, antenna name, uid hex)


class TagView:
    """Per-antenna ordered sets of UIDs (uppercase hex). Not thread-safe: one owner."""

    def __init__(self, antennas: Sequence[str]) -> None:
        self._tags: dict[str, dict[str, None]] = {name: {} for name in antennas}

    def add(self, antenna: str, uid: str) -> bool:
        """Record a TAG_IN; False (nothing changed) if the tag was already there."""
        tags = self._tags[antenna]
        if uid in tags:
            return False
        tags[uid] = None
        return True

    def discard(self, antenna: str, uid: str) -> bool:
        """Record a TAG_OUT; False (nothing changed) if the tag was not there."""
        tags = self._tags[antenna]
        if uid not in tags:
            return False
        del tags[uid]
        return True

    def snapshot(self) -> dict[str, list[str]]:
        return {name: list(tags) for name, tags in self._tags.items()}

    def reconcile(self, truth: Sequence[Sequence[str]]) -> list[Change]:
        """Make the view equal the board's per-antenna lists; return the changes, outs first.

        Removals come before arrivals so a tag that moved reads as leaving, then arriving.
        """
        names = list(self._tags)
        if len(truth) != len(names):
            raise ValueError(f"inventory has {len(truth)} antennas, the view has {len(names)}")
        changes: list[Change] = []
        for name, uids in zip(names, truth, strict=True):
            present = set(uids)
            changes += [("out", name, uid) for uid in self._tags[name] if uid not in present]
        for name, uids in zip(names, truth, strict=True):
            changes += [
                ("in", name, uid) for uid in dict.fromkeys(uids) if uid not in self._tags[name]
            ]
        for direction, name, uid in changes:
            if direction == "out":
                self.discard(name, uid)
            else:
                self.add(name, uid)
        return changes

"""Antenna scanning: read each antenna's front-ends, diff against what was there, debounce.

An antenna (a seat, the board, a bet zone...) is served by one or more PN5180 front-ends;
what it holds is the union of their reads. A tag is reported in on the first read that sees
it (`debounce_in` reads in a row, 1 by default); it is reported out only after
`debounce_out` reads in a row missed it, so a tag the field loses for one read (a card
sliding, a hand over the antenna) does not flicker out and in. Each report carries the
board's time: for an arrival, the read that first saw the tag; for a departure, the first
read that missed it.
"""

from firmware import protocol
from firmware.hal import HardwareError
from firmware.pn5180 import PN5180


class Antenna:
    """One named antenna: its front-ends and the air protocols to read on it."""

    def __init__(self, name: str, frontends: list[PN5180], protocols: tuple[str, ...]) -> None:
        self.name = name
        self.frontends = frontends
        self.protocols = protocols

    def read(self) -> list[bytes]:
        uids: list[bytes] = []
        for frontend in self.frontends:
            for uid in frontend.read_tags(self.protocols):
                if uid not in uids:
                    uids.append(uid)
        return uids


class Report:
    """A change to report: TAG_IN or TAG_OUT of `uid` at antenna `index`, at board time."""

    def __init__(self, msg_type: int, index: int, uid: bytes, board_ms: int) -> None:
        self.msg_type = msg_type
        self.index = index
        self.uid = uid
        self.board_ms = board_ms


class Scanner:
    """The tags each antenna holds, as debounced reads made them, in order of arrival."""

    def __init__(
        self, antennas: list[Antenna], debounce_in: int = 1, debounce_out: int = 2
    ) -> None:
        self.antennas = antennas
        self.debounce_in = max(1, debounce_in)
        self.debounce_out = max(1, debounce_out)
        self.present: list[list[bytes]] = [[] for _ in antennas]
        self._missed: list[dict[bytes, list[int]]] = [{} for _ in antennas]  # uid: [count, ms]
        self._seen: list[dict[bytes, list[int]]] = [{} for _ in antennas]  # uid: [count, ms]
        self._refused: list[list[bytes]] = [[] for _ in antennas]
        # uid: board time of its TAG_IN; a tag found by the power-up read has none (unknown)
        self.arrived: list[dict[bytes, int]] = [{} for _ in antennas]
        self.faults: list[str | None] = [None for _ in antennas]
        self.size = self._payload_size()
        self.reads = 0

    def _payload_size(self) -> int:
        """Bytes of the INVENTORY payload for what is present (count, lists, board time)."""
        size = 1 + 4
        for uids in self.present:
            size += 1
            for uid in uids:
                size += 1 + len(uid)
        return size

    def read(self, index: int) -> list[bytes] | None:
        """Read antenna `index` now; None if a front-end failed (its fault text is kept)."""
        self.reads += 1
        try:
            uids = self.antennas[index].read()
        except HardwareError as exc:
            self.faults[index] = "antenna %s: %s" % (self.antennas[index].name, exc)
            return None
        self.faults[index] = None
        return uids

    def update(
        self, index: int, seen: list[bytes], now_ms: int
    ) -> tuple[list[Report], list[bytes]]:
        """Fold one read of antenna `index` into its state.

        Returns the reports to send, and the UIDs refused because the inventory would no
        longer fit in one frame (the board reports ERROR 5 for those).
        """
        reports: list[Report] = []
        present = self.present[index]
        missed = self._missed[index]
        pending = self._seen[index]
        refused: list[bytes] = []
        for uid in list(present):
            if uid in seen:
                if uid in missed:
                    del missed[uid]
                continue
            entry = missed.get(uid)
            if entry is None:
                entry = [0, now_ms]
                missed[uid] = entry
            entry[0] += 1
            if entry[0] >= self.debounce_out:
                del missed[uid]
                present.remove(uid)
                self.arrived[index].pop(uid, None)
                self.size -= 1 + len(uid)
                reports.append(Report(protocol.TAG_OUT, index, uid, entry[1]))
        for uid in list(pending):
            if uid not in seen:
                del pending[uid]
        old_refused = self._refused[index]
        self._refused[index] = [uid for uid in old_refused if uid in seen]
        for uid in seen:
            if uid in present:
                continue
            entry = pending.get(uid)
            if entry is None:
                entry = [0, now_ms]
                pending[uid] = entry
            entry[0] += 1
            if entry[0] < self.debounce_in:
                continue
            del pending[uid]
            if self.size + 1 + len(uid) > protocol.MAX_PAYLOAD:
                if uid not in self._refused[index]:
                    self._refused[index].append(uid)
                    refused.append(uid)
                continue
            present.append(uid)
            self.arrived[index][uid] = entry[1]
            self.size += 1 + len(uid)
            reports.append(Report(protocol.TAG_IN, index, uid, entry[1]))
        return reports, refused

    def settle(self, index: int, seen: list[bytes]) -> list[bytes]:
        """Take a read as the truth with no reports (the first read after power-up); returns
        the UIDs refused because the inventory would not fit in one frame."""
        self.present[index] = []
        self.arrived[index] = {}
        self._missed[index] = {}
        self._seen[index] = {}
        self.size = self._payload_size()
        refused: list[bytes] = []
        for uid in seen:
            if uid in self.present[index]:
                continue
            if self.size + 1 + len(uid) > protocol.MAX_PAYLOAD:
                refused.append(uid)
                continue
            self.present[index].append(uid)
            self.size += 1 + len(uid)
        self._refused[index] = refused
        return refused

    def lists(self) -> list[list[bytes]]:
        return [list(uids) for uids in self.present]

    def arrivals(self) -> list[tuple[int, bytes, int]]:
        """(antenna index, UID, arrival board time) of the tags present whose arrival was
        seen, newest first, as many as one ARRIVALS frame holds (255 tags at most)."""
        tags: list[tuple[int, int, bytes]] = []
        for index, uids in enumerate(self.present):
            arrived = self.arrived[index]
            for uid in uids:
                if uid in arrived:
                    tags.append((arrived[uid], index, uid))
        tags.sort(key=lambda tag: -tag[0])
        out: list[tuple[int, bytes, int]] = []
        size = 5  # board time and count
        for arrived_ms, index, uid in tags:
            size += 6 + len(uid)
            if size > protocol.MAX_PAYLOAD or len(out) == 255:
                break
            out.append((index, uid, arrived_ms & protocol.U32_MAX))
        return out

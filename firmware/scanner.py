"""Antenna scanning: read each antenna's front-ends, diff against what was there, debounce.

An antenna (a seat, the board, a bet zone...) is served by one or more PN5180 front-ends;
what it holds is the union of their reads. A read of an antenna (a pass) is made a step at
a time (`AntennaPass`: one request of the anticollision per step, front-end after
front-end), so the board can read other antennas between two steps of a tall stack.

A board reading two air protocols (the card board: ISO 15693 and ISO 14443A cards) reads
on each front-end, at every pass, the protocols its tags have been answering; one that no
tag on the board has answered for `quiet_ms` while the other did is read on each front-end
once every `recheck_ms` only (a card of the other kind is still seen within that time),
and a departure is never concluded from a protocol the pass did not read.

ISO 14443A cards a front-end found are, at the next passes, only checked for (their
anticollision answers as the trie of their UIDs says: PN5180.check_14443a), and read again
in full when that finds a change, and at least every `full_ms`.

A tag is reported in as soon as a step sees it (`debounce_in` passes in a row, 1 by
default); it is reported out only after `debounce_out` complete passes in a row missed it,
the last of them starting at least `confirm_ms` after the first, so a tag the field loses
for a moment (a card sliding, a hand over the antenna) does not flicker out and in. Each
report carries the board's time: for an arrival, the start of the step that first saw the
tag; for a departure, the start of the first pass that missed it.
"""

from firmware import protocol
from firmware.hal import HardwareError
from firmware.pn5180 import ISO14443A, ISO15693, PN5180, FieldRead

#: The most tags one board holds at once (ERROR 5 beyond): inventories larger than one
#: frame are paged (protocol version 4), so the limit is the board's memory, not a frame.
MAX_TAGS = 1000


def air_protocol(uid: bytes) -> str:
    """The air protocol a UID was read with: 8 bytes ISO 15693, else ISO 14443A."""
    return ISO15693 if len(uid) == 8 else ISO14443A


class Antenna:
    """One named antenna: its front-ends and the air protocols to read on it."""

    def __init__(self, name: str, frontends: list[PN5180], protocols: tuple[str, ...]) -> None:
        self.name = name
        self.frontends = frontends
        self.protocols = protocols
        # ISO 15693 tags each front-end found in its last read: a stack skips requests
        self.stacked = [0 for _ in frontends]
        # board time each front-end last read each protocol (index as in `protocols`)
        self.read_at = [[-(1 << 30) for _ in protocols] for _ in frontends]
        # what each front-end's last read found, and when it last read its ISO 14443A
        # cards in full (in between they are only checked for: check_14443a)
        self.found: list[list[bytes]] = [[] for _ in frontends]
        self.full_at = [-(1 << 30) for _ in frontends]

    def read(self) -> list[bytes]:
        """Every tag on the antenna now, in one go."""
        read = self.start()
        while not read.done:
            read.step()
        return read.seen

    def start(
        self,
        now_ms: int = 0,
        quiet: tuple[str, ...] = (),
        recheck_ms: int = 0,
        full_ms: int = 0,
    ) -> "AntennaPass":
        """A read of the antenna made a step at a time: on each front-end every protocol,
        except a `quiet` one read there less than `recheck_ms` ago; the ISO 14443A cards
        the front-end last found only checked for, unless read in full `full_ms` ago."""
        plans: list[list[str]] = []
        skipped: list[str] = []
        checks: list[list[bytes] | None] = []
        for i in range(len(self.frontends)):
            plan = []
            for j in range(len(self.protocols)):
                air = self.protocols[j]
                if air in quiet and now_ms - self.read_at[i][j] < recheck_ms:
                    if air not in skipped:
                        skipped.append(air)
                    continue
                plan.append(air)
                self.read_at[i][j] = now_ms
            plans.append(plan)
            cards = [uid for uid in self.found[i] if len(uid) != 8]
            if full_ms and cards and now_ms - self.full_at[i] < full_ms:
                checks.append(cards)
            else:
                checks.append(None)
                if ISO14443A in plan:
                    self.full_at[i] = now_ms
        return AntennaPass(self, plans, skipped, checks)


class AntennaPass:
    """One read of an antenna: its front-ends one after the other, a step at a time.

    An antenna with no front-end of its own (a test's scripted antenna) is read by its
    `read()` in a single step.
    """

    def __init__(
        self,
        antenna: Antenna,
        plans: list[list[str]] | None = None,
        skipped: list[str] | None = None,
        checks: list[list[bytes] | None] | None = None,
    ) -> None:
        self.antenna = antenna
        self.skipped = skipped or []  # protocols some front-end did not read in this pass
        self.reads = [
            FieldRead(
                chip,
                antenna.protocols if plans is None else plans[i],
                antenna.stacked[i],
                None if checks is None else checks[i],
            )
            for i, chip in enumerate(antenna.frontends)
        ]
        self.at = 0
        self.seen: list[bytes] = []
        self.done = False
        self.started_ms = -1  # board time of the first step
        self.step_ms = -1  # board time of the step in progress
        self.steps = 0

    def step(self) -> list[bytes]:
        """One step; the UIDs it saw that this pass had not seen yet."""
        if self.done:
            return []
        self.steps += 1
        if not self.reads:
            self.done = True
            got = self.antenna.read()
            return self._add(got)
        read = self.reads[self.at]
        got = read.step()
        if read.done:
            self.antenna.stacked[self.at] = sum(1 for uid in read.found if len(uid) == 8)
            self.antenna.found[self.at] = list(read.found)
            self.at += 1
            self.done = self.at >= len(self.reads)
        return self._add(got)

    def _add(self, got: list[bytes]) -> list[bytes]:
        new = []
        seen = self.seen
        for uid in got:
            if uid not in seen:
                seen.append(uid)
                new.append(uid)
        return new

    def pause(self) -> None:
        """Switch the field off: another antenna is read before the next step."""
        if not self.done and self.reads:
            self.reads[self.at].pause()


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
        self,
        antennas: list[Antenna],
        debounce_in: int = 1,
        debounce_out: int = 2,
        confirm_ms: int = 0,
        max_tags: int = MAX_TAGS,
        recheck_ms: int = 0,
        quiet_ms: int = 60000,
        full_ms: int = 0,
    ) -> None:
        self.antennas = antennas
        self.debounce_in = max(1, debounce_in)
        self.debounce_out = max(1, debounce_out)
        self.confirm_ms = max(0, confirm_ms)
        self.max_tags = max_tags
        self.present: list[list[bytes]] = [[] for _ in antennas]
        self._missed: list[dict[bytes, list[int]]] = [{} for _ in antennas]  # uid: [count, ms]
        self._seen: list[dict[bytes, list[int]]] = [{} for _ in antennas]  # uid: [count, ms]
        self._refused: list[list[bytes]] = [[] for _ in antennas]
        # uid: board time of its TAG_IN; a tag found by the power-up read has none (unknown)
        self.arrived: list[dict[bytes, int]] = [{} for _ in antennas]
        self.faults: list[str | None] = [None for _ in antennas]
        self.passes: list[AntennaPass | None] = [None for _ in antennas]
        self.count = 0  # tags present on the whole board
        self.reads = 0
        self.recheck_ms = recheck_ms  # a quiet protocol is read this often (0: every pass)
        self.quiet_ms = quiet_ms
        self.full_ms = full_ms  # known ISO 14443A cards read in full this often (0: always)
        self.heard: dict[str, int] = {}  # protocol: board time a tag last answered it

    # -- a pass, a step at a time ----------------------------------------------------------

    def advance(self, index: int, now_ms: int) -> tuple[list[Report], list[bytes], bool]:
        """One step of antenna `index`'s pass (begun if none is under way).

        Returns the reports to send, the UIDs refused (the board is full: ERROR 5), and
        whether the pass is over (complete, or failed: a front-end fault, kept in `faults`,
        says nothing about the tags).
        """
        read = self.passes[index]
        if read is None:
            antenna = self.antennas[index]
            read = antenna.start(now_ms, self.quiet(now_ms), self.recheck_ms, self.full_ms)
            self.passes[index] = read
            read.started_ms = now_ms
            self.reads += 1
        read.step_ms = now_ms
        try:
            new = read.step()
        except HardwareError as exc:
            self.faults[index] = "antenna %s: %s" % (self.antennas[index].name, exc)
            self.passes[index] = None
            return [], [], True
        reports: list[Report] = []
        refused: list[bytes] = []
        for uid in new:
            self.heard[air_protocol(uid)] = now_ms
            if self.debounce_in == 1:
                self._arrive(index, uid, now_ms, reports, refused)
        if not read.done:
            return reports, refused, False
        self.passes[index] = None
        self.faults[index] = None
        seen = read.seen
        if read.skipped:  # no departure concluded from a protocol not read
            seen = seen + [
                uid for uid in self.present[index] if air_protocol(uid) in read.skipped
            ]
        more, more_refused = self._complete(index, seen, read.started_ms)
        return reports + more, refused + more_refused, True

    def quiet(self, now_ms: int) -> tuple[str, ...]:
        """The protocols no tag answered for `quiet_ms` while another one did (none when
        `recheck_ms` is 0)."""
        if not self.recheck_ms:
            return ()
        heard = self.heard
        quiet = []
        for air in (ISO15693, ISO14443A):
            last = heard.get(air, -1)
            other = heard.get(ISO14443A if air == ISO15693 else ISO15693, -1)
            if other > last and (last < 0 or now_ms - last >= self.quiet_ms):
                quiet.append(air)
        return tuple(quiet)

    def pause(self, index: int) -> None:
        """The pass of antenna `index` stops here for now (its field goes off)."""
        read = self.passes[index]
        if read is not None:
            read.pause()

    def in_progress(self, index: int) -> bool:
        return self.passes[index] is not None

    def missing(self, index: int) -> int:
        """Board time of the earliest miss still to confirm at `index` (-1: none)."""
        earliest = -1
        for entry in self._missed[index].values():
            if earliest < 0 or entry[1] < earliest:
                earliest = entry[1]
        return earliest

    # -- whole reads -----------------------------------------------------------------------

    def read(self, index: int) -> list[bytes] | None:
        """Read antenna `index` now, in one go; None if a front-end failed (its fault text
        is kept)."""
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
        """Fold one whole read of antenna `index`, made at `now_ms`, into its state.

        Returns the reports to send, and the UIDs refused because the board is full (the
        board reports ERROR 5 for those).
        """
        reports: list[Report] = []
        refused: list[bytes] = []
        if self.debounce_in == 1:
            for uid in seen:
                self._arrive(index, uid, now_ms, reports, refused)
        more, more_refused = self._complete(index, seen, now_ms)
        return reports + more, refused + more_refused

    def _arrive(
        self, index: int, uid: bytes, now_ms: int, reports: list[Report], refused: list[bytes]
    ) -> None:
        """A step saw `uid` (debounce_in 1): reported at once if it is new here."""
        if uid in self.present[index]:
            missed = self._missed[index]
            if uid in missed:
                del missed[uid]
            return
        self._take(index, uid, now_ms, reports, refused)

    def _take(
        self, index: int, uid: bytes, since_ms: int, reports: list[Report], refused: list[bytes]
    ) -> None:
        if self.count >= self.max_tags:
            if uid not in self._refused[index]:
                self._refused[index].append(uid)
                refused.append(uid)
            return
        self.present[index].append(uid)
        self.arrived[index][uid] = since_ms
        self.count += 1
        reports.append(Report(protocol.TAG_IN, index, uid, since_ms))

    def _complete(
        self, index: int, seen: list[bytes], started_ms: int
    ) -> tuple[list[Report], list[bytes]]:
        """A complete pass that started at `started_ms` saw `seen`: departures (debounced),
        and arrivals still counting (debounce_in > 1)."""
        reports: list[Report] = []
        refused: list[bytes] = []
        present = self.present[index]
        missed = self._missed[index]
        pending = self._seen[index]
        for uid in list(present):
            if uid in seen:
                if uid in missed:
                    del missed[uid]
                continue
            entry = missed.get(uid)
            if entry is None:
                entry = [0, started_ms]
                missed[uid] = entry
            entry[0] += 1
            if entry[0] >= self.debounce_out and started_ms - entry[1] >= self.confirm_ms:
                del missed[uid]
                present.remove(uid)
                self.arrived[index].pop(uid, None)
                self.count -= 1
                reports.append(Report(protocol.TAG_OUT, index, uid, entry[1]))
        for uid in list(pending):
            if uid not in seen:
                del pending[uid]
        self._refused[index] = [uid for uid in self._refused[index] if uid in seen]
        if self.debounce_in > 1:
            for uid in seen:
                if uid in present:
                    continue
                entry = pending.get(uid)
                if entry is None:
                    entry = [0, started_ms]
                    pending[uid] = entry
                entry[0] += 1
                if entry[0] >= self.debounce_in:
                    del pending[uid]
                    self._take(index, uid, entry[1], reports, refused)
        return reports, refused

    def settle(self, index: int, seen: list[bytes]) -> list[bytes]:
        """Take a read as the truth with no reports (the first read after power-up); returns
        the UIDs refused because the board is full."""
        self.count -= len(self.present[index])
        self.present[index] = []
        self.arrived[index] = {}
        self._missed[index] = {}
        self._seen[index] = {}
        refused: list[bytes] = []
        for uid in seen:
            if uid in self.present[index]:
                continue
            if self.count >= self.max_tags:
                refused.append(uid)
                continue
            self.present[index].append(uid)
            self.count += 1
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

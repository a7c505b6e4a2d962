"""PC/SC badge reader via pcscd (pyscard imported only here): blocking status waits, FF CA uid."""

from __future__ import annotations

import importlib
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from drivers.badge.base import OFFLINE, ONLINE, BadgeReader
from kernel.errors import DeviceError

log = logging.getLogger(__name__)

GET_UID_APDU = (0xFF, 0xCA, 0x00, 0x00, 0x00)
"""PC/SC part 3 "Get Data": the contactless card's uid, answered by the reader itself."""

PNP_NOTIFICATION = "\\\\?PnP?\\Notification"
"""The special reader name whose state changes when a reader is plugged or unplugged."""

INSTALL_HINT = (
    "install pyscard (`pip install 'tablectl[badge]'`, which needs the libpcsclite-dev and "
    "swig packages to build) and run pcscd (`apt install pcscd`)"
)


def _import_scard() -> Any:
    try:
        return importlib.import_module("smartcard.scard")
    except ImportError as exc:
        raise DeviceError(
            f"badge reader backend 'pcsc' needs pyscard, which is missing ({exc}): {INSTALL_HINT}"
        ) from exc


class _ServiceLost(Exception):
    """pcscd went away (or our context with it): establish a new context."""


@dataclass
class _Watch:
    """What the watch of one context knows between two waits."""

    reader_state: int  # the followed reader's last state (UNAWARE: not yet seen)
    pnp_state: int  # the plug notifications' last state
    reader: str | None = None
    pnp_supported: bool = True  # False with an old pcscd: timed re-listing instead
    relist: bool = True


class PcscBadgeReader(BadgeReader):
    """A contactless PC/SC reader used through pcscd, watched on a thread of its own.

    The thread blocks in SCardGetStatusChange (timeout `wait_timeout`, cancelled by
    `stop()`) on the chosen reader and on the PnP notification pseudo-reader, so badges
    arriving and leaving and readers being plugged or unplugged wake it at once without
    polling. A badge is read once when it arrives, with the reader's GET UID command
    (`FF CA 00 00 00`). When pcscd goes away the context is established again, with a
    backoff from `backoff_min` doubling up to `backoff_max` seconds.

    `reader` chooses the reader by a substring of its name; the first reader otherwise.
    """

    name = "pcsc"

    def __init__(
        self,
        *,
        reader: str | None = None,
        wait_timeout: float = 2.0,
        backoff_min: float = 0.2,
        backoff_max: float = 5.0,
        scard: Any = None,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.scard: Any = scard if scard is not None else _import_scard()
        self.reader_filter = reader
        self.reader_name: str | None = None  # the reader in use, once found
        self.wait_timeout = wait_timeout
        self.backoff_min = backoff_min
        self.backoff_max = backoff_max
        self.contexts = 0  # how many PC/SC contexts were established (1 + reconnections)
        self._stop = threading.Event()
        self._ctx_lock = threading.Lock()
        self._context: Any = None
        self._thread: threading.Thread | None = None
        self._service_down_alerted = False
        self._healthy = False  # a status wait succeeded on the current context
        s = self.scard
        self._lost_codes = {
            getattr(s, name)
            for name in (
                "SCARD_E_NO_SERVICE",
                "SCARD_E_SERVICE_STOPPED",
                "SCARD_E_INVALID_HANDLE",
            )
            if hasattr(s, name)
        }
        self._gone_codes = {
            getattr(s, name)
            for name in ("SCARD_W_REMOVED_CARD", "SCARD_E_NO_SMARTCARD", "SCARD_W_RESET_CARD")
            if hasattr(s, name)
        }
        self._vanished_codes = {
            getattr(s, name)
            for name in ("SCARD_E_UNKNOWN_READER", "SCARD_E_READER_UNAVAILABLE")
            if hasattr(s, name)
        }

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("pcsc badge reader already started")
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="badge reader pcsc", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        # SCardCancel ends a wait in progress only: cancel again until the thread is out.
        deadline = time.monotonic() + self.wait_timeout + 5.0
        while thread.is_alive() and time.monotonic() < deadline:
            with self._ctx_lock:
                if self._context is not None:
                    self.scard.SCardCancel(self._context)
            thread.join(timeout=0.1)

    # -- the thread ------------------------------------------------------------------------

    def _run(self) -> None:
        delay = self.backoff_min
        while not self._stop.is_set():
            context = self._establish()
            if context is None:
                self._device(OFFLINE)
                self._stop.wait(delay)
                delay = min(delay * 2, self.backoff_max)
                continue
            self._healthy = False
            try:
                self._watch(context)
            except _ServiceLost as exc:
                log.warning("pcsc badge reader: lost pcscd (%s), connecting again", exc)
                self._device(OFFLINE)
            except Exception:  # a bug must not kill the reader thread
                log.exception("pcsc badge reader: unexpected error, connecting again")
                self._device(OFFLINE)
            finally:
                self._release()
            # A context that worked gets a quick retry; one failing at once backs off.
            if self._healthy:
                delay = self.backoff_min
            self._stop.wait(delay)
            delay = min(delay * 2, self.backoff_max)

    def _establish(self) -> Any:
        s = self.scard
        hr, context = s.SCardEstablishContext(s.SCARD_SCOPE_USER)
        if hr != s.SCARD_S_SUCCESS:
            if not self._service_down_alerted:
                self._service_down_alerted = True
                self._alert(
                    "pcsc_unavailable",
                    f"badge reader: cannot reach pcscd: {self._error(hr)}",
                    {"reader": self.reader_filter, "error": self._error(hr)},
                )
            return None
        self._service_down_alerted = False
        with self._ctx_lock:
            self._context = context
            self.contexts += 1
            if self._stop.is_set():  # stop() ran before the context was there to cancel
                s.SCardCancel(context)
        return context

    def _release(self) -> None:
        with self._ctx_lock:
            context, self._context = self._context, None
        if context is not None:
            self.scard.SCardReleaseContext(context)

    def _watch(self, context: Any) -> None:
        """Follow the reader on one context until stopped; _ServiceLost when pcscd goes."""
        s = self.scard
        w = _Watch(reader_state=s.SCARD_STATE_UNAWARE, pnp_state=s.SCARD_STATE_UNAWARE)
        while not self._stop.is_set():
            if w.relist:
                self._relist(context, w)
            states: list[tuple[str, int]] = []
            if w.pnp_supported:
                states.append((PNP_NOTIFICATION, w.pnp_state))
            if w.reader is not None:
                states.append((w.reader, w.reader_state))
            if not states:  # neither a reader nor plug notifications: look again later
                self._stop.wait(self.wait_timeout)
                w.relist = True
                continue
            hr, new_states = s.SCardGetStatusChange(context, int(self.wait_timeout * 1000), states)
            if self._stop.is_set():
                return
            if self._wait_failed(hr, w):
                continue
            self._healthy = True
            for name, event, _atr in new_states:
                self._changed(context, w, name, event)

    def _relist(self, context: Any, w: _Watch) -> None:
        """List the readers again: a new one is followed, a gone one has left."""
        w.relist = False
        found = self._find_reader(context)
        if found != w.reader:
            if w.reader is not None:
                self._left()
            w.reader, w.reader_state = found, self.scard.SCARD_STATE_UNAWARE
            self.reader_name = found
        if w.reader is None:
            self._device(OFFLINE)

    def _wait_failed(self, hr: int, w: _Watch) -> bool:
        """Whether the wait gave no states to read (timeout, cancelled, the reader gone);
        _ServiceLost on any other error."""
        s = self.scard
        if hr == s.SCARD_E_TIMEOUT:
            w.relist = w.reader is None
            return True
        if hr == s.SCARD_E_CANCELLED:
            return True
        if hr in self._vanished_codes:
            w.reader = None
            self._device(OFFLINE)
            self._stop.wait(self.backoff_min)
            w.relist = True
            return True
        if hr != s.SCARD_S_SUCCESS:
            raise _ServiceLost(self._error(hr))
        return False

    def _changed(self, context: Any, w: _Watch, name: str, event: int) -> None:
        """One state the wait reported: plug notifications, or the followed reader's."""
        s = self.scard
        changed = s.SCARD_STATE_CHANGED
        vanished = s.SCARD_STATE_UNKNOWN | s.SCARD_STATE_IGNORE | s.SCARD_STATE_UNAVAILABLE
        if name == PNP_NOTIFICATION:
            if event & s.SCARD_STATE_UNKNOWN:
                w.pnp_supported = False  # an old pcscd: fall back to timed re-listing
            elif event & changed:
                w.relist = True
            w.pnp_state = event & ~changed
        elif w.reader is not None and name == w.reader:
            if event & vanished:
                w.reader = None
                self._device(OFFLINE)
                return
            self._device(ONLINE)  # listed and answering (only a change is reported)
            if event & changed or w.reader_state == s.SCARD_STATE_UNAWARE:
                self._card_event(context, w.reader, w.reader_state, event)
            w.reader_state = event & ~changed

    def _find_reader(self, context: Any) -> str | None:
        s = self.scard
        hr, readers = s.SCardListReaders(context, [])
        if hr == getattr(s, "SCARD_E_NO_READERS_AVAILABLE", None):
            return None
        if hr != s.SCARD_S_SUCCESS:
            raise _ServiceLost(self._error(hr))
        for name in readers:
            if self.reader_filter is None or self.reader_filter in name:
                return str(name)
        return None

    def _card_event(self, context: Any, reader: str, before: int, event: int) -> None:
        s = self.scard
        if not event & s.SCARD_STATE_PRESENT:
            self._left()
            return
        fresh = before == s.SCARD_STATE_UNAWARE or not before & s.SCARD_STATE_PRESENT
        # pcsc-lite counts insertions and removals in the high word: a badge taken off and
        # laid on again between two waits shows as PRESENT -> PRESENT with a new count.
        if not fresh and (before >> 16) == (event >> 16):
            return  # the same badge, still there (our own connect changes INUSE, nothing else)
        if event & s.SCARD_STATE_MUTE:
            self._alert(
                "badge_read_failed",
                f"badge reader {reader}: the badge does not answer (mute card)",
                {"reader": reader, "error": "mute"},
            )
            return
        uid = self._read_uid(context, reader)
        if uid is not None:
            self._arrived(uid)

    def _read_uid(self, context: Any, reader: str) -> str | None:
        """The uid of the badge on the reader; None (with an alert when it matters)."""
        s = self.scard
        hr, card, protocol = s.SCardConnect(
            context, reader, s.SCARD_SHARE_SHARED, s.SCARD_PROTOCOL_T0 | s.SCARD_PROTOCOL_T1
        )
        if hr != s.SCARD_S_SUCCESS:
            self._read_failed(reader, hr, "cannot connect to the badge")
            return None
        try:
            hr, response = s.SCardTransmit(card, protocol, list(GET_UID_APDU))
            if hr != s.SCARD_S_SUCCESS:
                self._read_failed(reader, hr, "GET UID was not transmitted")
                return None
        finally:
            s.SCardDisconnect(card, s.SCARD_LEAVE_CARD)
        data, sw = bytes(response[:-2]), bytes(response[-2:])
        if len(sw) < 2 or sw != b"\x90\x00":
            status = sw.hex().upper() or "none"
            self._alert(
                "badge_read_failed",
                f"badge reader {reader}: the badge answered {status} to GET UID (FF CA), "
                "not 9000: is it a contactless card the reader supports?",
                {"reader": reader, "sw": status},
            )
            return None
        if not 1 <= len(data) <= 20:
            self._alert(
                "badge_read_failed",
                f"badge reader {reader}: GET UID returned {len(data)} bytes (expected 1..20)",
                {"reader": reader, "sw": "9000", "length": len(data)},
            )
            return None
        return data.hex().upper()

    def _read_failed(self, reader: str, hr: int, what: str) -> None:
        if hr in self._lost_codes:
            raise _ServiceLost(self._error(hr))
        if hr in self._gone_codes:
            log.info("badge reader %s: badge gone before it was read", reader)
            return
        self._alert(
            "badge_read_failed",
            f"badge reader {reader}: {what}: {self._error(hr)}",
            {"reader": reader, "error": self._error(hr)},
        )

    def _error(self, hr: int) -> str:
        try:
            text = str(self.scard.SCardGetErrorMessage(hr)).strip().rstrip(".")
        except Exception:
            text = "error"
        return f"{text} (0x{hr & 0xFFFFFFFF:08X})"

"""paho's network loop on `poll` instead of `select.select` (no limit on fd numbers)."""

from __future__ import annotations

import contextlib
import select
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import MQTTErrorCode

_HANGUP = select.POLLHUP | select.POLLERR  # read: loop_read sees the connection end


class PollClient(mqtt.Client):
    """A paho client whose loop (`loop_start`, `loop_forever`, `loop`) waits with
    `poll(2)`.

    paho 2.x waits for its socket with `select.select`, which cannot take a descriptor
    numbered 1024 or more: a process holding many tables (`tablectl sim --tables N`: each
    with its pseudo-terminals, serial ports, pipes, journal and sockets) passes that and
    every client in it stops. This loop does what paho's does (read, drain the wake-up
    pair, write, housekeeping) around `poll` instead (one system call, as `select` is);
    everything else is paho's own.
    """

    def _loop(self, timeout: float = 1.0) -> MQTTErrorCode:
        if timeout < 0.0:
            raise ValueError("Invalid timeout.")
        sock: Any = getattr(self, "_sock", None)
        if sock is None:
            return MQTTErrorCode.MQTT_ERR_NO_CONN
        pending = sock.pending() if hasattr(sock, "pending") else 0
        if pending > 0:
            timeout = 0.0
        wake: Any = getattr(self, "_sockpairR", None)
        readable = writable = False
        woken = False
        try:
            poller, sock_fd, wake_fd = self._poller(sock, wake)
            for fd, mask in poller.poll(timeout * 1000.0):
                if mask & select.POLLNVAL:
                    raise ValueError("a descriptor was closed under the loop")
                if fd == sock_fd:
                    readable = readable or bool(mask & (select.POLLIN | _HANGUP))
                    writable = writable or bool(mask & select.POLLOUT)
                elif fd == wake_fd:
                    woken = True
        except (TypeError, ValueError, OSError):
            # the socket was closed under us (disconnect(), a lost connection)
            self._lost()
            return MQTTErrorCode.MQTT_ERR_CONN_LOST
        if readable or pending > 0:
            rc = self.loop_read()
            if rc or getattr(self, "_sock", None) is None:
                return rc
        if woken:
            writable = True  # a publish() woke us: write even though we did not ask
            with contextlib.suppress(BlockingIOError, OSError):
                wake.recv(10000)
        if writable:
            rc = self.loop_write()
            if rc or getattr(self, "_sock", None) is None:
                return rc
        return self.loop_misc()

    def _poller(self, sock: Any, wake: Any) -> tuple[Any, int, int]:
        """The poll object for this socket and wake-up pair (kept while they are the same:
        the loop runs once per packet), asking for POLLOUT only while paho has output."""
        kept = getattr(self, "_poll_kept", None)
        fd = sock.fileno()
        if fd < 0:
            raise ValueError("the socket is closed")
        if kept is None or kept[0] is not sock or kept[1] is not wake or kept[3] != fd:
            poller = select.poll()
            sock_fd = sock.fileno()
            wake_fd = wake.fileno() if wake is not None else -1
            poller.register(sock_fd, select.POLLIN)
            if wake is not None:
                poller.register(wake_fd, select.POLLIN)
            kept = [sock, wake, poller, sock_fd, wake_fd, select.POLLIN]
            self._poll_kept = kept
        wanted = select.POLLIN | (select.POLLOUT if self.want_write() else 0)
        if wanted != kept[5]:
            kept[2].modify(kept[3], wanted)
            kept[5] = wanted
        return kept[2], kept[3], kept[4]

    def _lost(self) -> None:
        """As paho: a loop whose socket went away reports the connection lost, unless the
        client is disconnecting on purpose."""
        state = getattr(self, "_state", None)
        states = getattr(mqtt, "_ConnectionState", None)
        if states is None or state is None:
            return
        if state not in (states.MQTT_CS_DISCONNECTING, states.MQTT_CS_DISCONNECTED):
            self._state = states.MQTT_CS_CONNECTION_LOST

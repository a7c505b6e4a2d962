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
            poller = select.poll()
            wanted = select.POLLIN | (select.POLLOUT if self.want_write() else 0)
            poller.register(sock, wanted)
            if wake is not None:
                poller.register(wake, select.POLLIN)
            for fd, mask in poller.poll(timeout * 1000.0):
                if fd == sock.fileno():
                    readable = readable or bool(mask & (select.POLLIN | _HANGUP))
                    writable = writable or bool(mask & select.POLLOUT)
                elif wake is not None and fd == wake.fileno():
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

    def _lost(self) -> None:
        """As paho: a loop whose socket went away reports the connection lost, unless the
        client is disconnecting on purpose."""
        state = getattr(self, "_state", None)
        states = getattr(mqtt, "_ConnectionState", None)
        if states is None or state is None:
            return
        if state not in (states.MQTT_CS_DISCONNECTING, states.MQTT_CS_DISCONNECTED):
            self._state = states.MQTT_CS_CONNECTION_LOST

"""MQTT publisher: an ordered, at-least-once outbox in front of a paho-mqtt 2.x client."""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

from controller.config import BrokerConfig
from controller.connection import Backoff, ConnectionHealth, Recovery, describe_failure
from controller.mqtt_poll import PollClient
from kernel.errors import TableError
from kernel.messages import EVENTS, HOLECARDS, HOLEKEYS, STATUS, TVREQ, Message

log = logging.getLogger(__name__)

#: Messages handed to paho and not yet acknowledged, at most (kept below mosquitto's
#: default receive maximum of 20 so the broker never has to refuse one).
WINDOW = 16

# paho return codes after which paho holds the message (sent now or after reconnecting).
_KEPT = (MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_NO_CONN)


class PublishError(TableError):
    """A message the contract forbids (e.g. a retained hole card) was given to the publisher."""


@dataclass(slots=True)
class _Entry:
    """One message in the outbox, with the number it was accepted under."""

    number: int
    topic: str
    payload: bytes
    qos: int
    retain: bool
    is_event: bool
    mid: int | None = None
    seq: int | None = None  # an events message's seq


class CommandSink(Protocol):
    """on_command(name, payload, ack, retained=...): a message on `cmd/<name>`; call `ack()`
    once it is safely taken (journaled): only then does the broker hear the PUBACK.
    `retained`: it came with the retain flag, i.e. the broker keeps it (see
    `COMMAND_SUBSCRIPTION`): not a live request."""

    def __call__(
        self, name: str, payload: bytes, ack: Callable[[], None], *, retained: bool = False
    ) -> None: ...


#: The table's subscription to `cmd/#` (MQTT v5 options). Retain As Published: a command
#: comes with the retain flag exactly when the broker keeps it (published with retain, now
#: or before), never for a live, unretained one, so the table can refuse it. Retain Handling
#: 1: what the broker kept is sent when the subscription is new (a first connection, or the
#: session expired), not again at every reconnection of a session it still holds.
COMMAND_SUBSCRIPTION = SubscribeOptions(
    qos=1, retainHandling=SubscribeOptions.RETAIN_SEND_IF_NEW_SUB, retainAsPublished=True
)


class Publisher:
    """Publishes table messages to the room broker; survives broker outages without loss.

    Every message given to `publish` is kept, in order, until the broker acknowledged it
    (PUBACK for QoS 1), and re-sent after a reconnection: delivery is at-least-once and a
    subscriber de-duplicates events by `seq`. One sender thread feeds at most `WINDOW`
    messages to paho; paho re-sends those after a reconnection before anything newer is
    handed over, so the broker always receives them in the order they were published.

    Commands: the session is kept by the broker for `session_expiry` seconds after the
    table went away (its `cmd` subscription and the commands sent meanwhile), and a
    command is acknowledged only when the handler says so (paho's manual ack), so one
    the table had not journaled when it died is delivered again.

    Connection: attempts are spaced by a short jittered backoff (`reconnect_min_delay`
    doubling to `reconnect_max_delay` seconds); why an attempt failed is logged once per
    change (controller/connection.py) and, once connected, published in `status`
    (`last_connect_error`, `reconnected_after`). While connected, `status` is published
    again every `broker.heartbeat` seconds with a new `t`.
    """

    def __init__(
        self,
        broker: BrokerConfig,
        prefix: str,
        client_id: str,
        status: dict[str, object],
        on_command: CommandSink | None = None,
        on_connection: Callable[[bool], None] | None = None,
        outbox_limit: int = 100_000,
        *,
        reconnect_min_delay: float = 0.5,
        reconnect_max_delay: float = 4.0,
        acked_seq: int = 0,
        on_tv_request: Callable[[str, bytes], None] | None = None,
        status_fields: Callable[[], dict[str, object]] | None = None,
    ) -> None:
        if not broker.host:
            raise PublishError("broker host is not set")
        if outbox_limit < 1:
            raise PublishError(f"outbox_limit must be >= 1, got {outbox_limit}")
        self._broker = broker
        self._prefix = prefix.rstrip("/")
        self._client_id = client_id
        self._status = dict(status)
        self._heartbeat = float(broker.heartbeat)
        if self._heartbeat > 0:
            self._status["heartbeat"] = broker.heartbeat
        self._recovery = Recovery(None, None)
        self._health = ConnectionHealth(f"{broker.host}:{broker.port}")
        self._backoff = Backoff(min(reconnect_min_delay, reconnect_max_delay), reconnect_max_delay)
        self._next_beat = 0.0  # monotonic time of the next heartbeat (while connected)
        self._refused = False  # the broker refused this attempt in its CONNACK
        self._on_command = on_command
        self._on_tv_request = on_tv_request  # tvreq/<kind>: TV asks for hole cards it missed
        self._status_fields = status_fields  # more for `status` (the last hole-card seq)
        self._on_connection = on_connection
        self._outbox_limit = outbox_limit

        self._cond = threading.Condition()
        self._pending: OrderedDict[int, _Entry] = OrderedDict()  # not yet handed to paho
        self._others: deque[int] = deque()  # numbers of pending non-event entries, oldest first
        self._retained_pending: dict[str, int] = {}  # topic -> number of the pending retained one
        self._inflight: list[_Entry] = []  # handed to paho, oldest first, awaiting the ack
        self._early_acks: dict[int, bool] = {}  # mid -> success, acks that beat publish()'s return
        self._next_number = 1
        self._connected = False
        self._resending = False  # paho is re-sending the window after a reconnection
        self._started = False
        self._stopping = False
        self._closed = False
        self._connects = 0
        self._counts = {"published": 0, "acked": 0, "rejected": 0, "dropped": 0, "coalesced": 0}
        # Delivery mark: every events seq <= _acked_seq was acknowledged by the broker.
        self._acked_seq = acked_seq
        self._unacked_seqs: deque[int] = deque()  # events seqs given, oldest first ...
        self._acked_early: set[int] = set()  # ... of which these were acked already

        self._client = PollClient(  # paho on poll(2): any fd number (controller/mqtt_poll.py)
            CallbackAPIVersion.VERSION2,
            client_id=client_id,
            protocol=MQTTProtocolVersion.MQTTv5,
            manual_ack=True,
        )
        self._client.max_inflight_messages_set(WINDOW)
        self._set_next_delay()
        self._client.on_connect = self._handle_connect
        self._client.on_connect_fail = self._handle_connect_fail
        self._client.on_disconnect = self._handle_disconnect
        self._client.on_publish = self._handle_publish
        self._client.on_message = self._handle_message
        if broker.username is not None:
            self._client.username_pw_set(broker.username, broker.password)
        if broker.tls:
            self._client.tls_set(
                ca_certs=str(broker.ca_file) if broker.ca_file else None,
                certfile=str(broker.cert_file) if broker.cert_file else None,
                keyfile=str(broker.key_file) if broker.key_file else None,
            )
        self._sender = threading.Thread(target=self._send_loop, name="mqtt-sender", daemon=True)

    # ------------------------------------------------------------------ public API

    @property
    def connected(self) -> bool:
        """True while a session with the broker is up."""
        with self._cond:
            return self._connected

    @property
    def connect_error(self) -> str | None:
        """Why the publisher is not connected now (None when connected or not known yet)."""
        return self._health.reason

    def start(self) -> None:
        """Connect in the background and return at once; paho retries until the broker answers."""
        with self._cond:
            if self._started:
                return
            self._started = True
        self._set_will()
        assert self._broker.host is not None
        properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        properties.SessionExpiryInterval = self._broker.session_expiry
        self._client.connect_async(
            self._broker.host,
            self._broker.port,
            keepalive=self._broker.keepalive,
            clean_start=self._broker.session_expiry == 0,
            properties=properties,
        )
        self._client.loop_start()
        self._sender.start()

    def publish(self, msg: Message) -> None:
        """Queue `msg` for delivery; returns at once and never raises on a broker outage."""
        if msg.topic in (HOLECARDS, HOLEKEYS) and msg.retain:
            raise PublishError("hole cards and their keys must never be retained")
        entry_payload = msg.payload_bytes()
        with self._cond:
            if self._closed:
                log.warning("publisher stopped: dropping message on %s", msg.topic)
                self._counts["dropped"] += 1
                return
            self._enqueue(msg.topic, entry_payload, msg.qos, msg.retain, _seq_of(msg))

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every published message was acknowledged; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._pending or self._inflight:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    def stop(self, timeout: float = 2.0) -> None:
        """Publish status offline (retained), wait briefly for the acks, then disconnect."""
        with self._cond:
            if not self._started or self._stopping:
                self._closed = True
                return
            self._stopping = True
            self._enqueue(STATUS, self._status_payload("offline"), 1, True)
        self.wait_idle(timeout)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._client.disconnect()
        self._client.loop_stop()
        self._sender.join(timeout=timeout)
        with self._cond:
            self._connected = False

    @property
    def acked_seq(self) -> int:
        """The highest events `seq` such that it and every events message before it given to
        `publish` were acknowledged by the broker (PUBACK), starting from `acked_seq`.

        A message the broker refused counts as done (sending it again cannot help); one
        dropped from a full outbox holds the mark back, so a restart sends it again.
        """
        with self._cond:
            return self._acked_seq

    def stats(self) -> dict[str, int]:
        """Counters: published, acked, pending, reconnects, dropped (plus coalesced, rejected,
        and connect_failures: connection attempts that failed, since the start)."""
        with self._cond:
            return {
                **self._counts,
                "pending": len(self._pending) + len(self._inflight),
                "reconnects": max(0, self._connects - 1),
                "connect_failures": self._health.total_failures,
            }

    # ------------------------------------------------------------------ outbox (lock held)

    def _enqueue(
        self, topic: str, payload: bytes, qos: int, retain: bool, seq: int | None = None
    ) -> None:
        number = self._next_number
        self._next_number += 1
        self._counts["published"] += 1
        if retain:
            # Only the latest retained message of a topic matters to a subscriber.
            previous = self._retained_pending.pop(topic, None)
            if previous is not None and self._pending.pop(previous, None) is not None:
                self._counts["coalesced"] += 1
            self._retained_pending[topic] = number
        is_event = topic == EVENTS
        self._pending[number] = _Entry(number, topic, payload, qos, retain, is_event, seq=seq)
        if seq is not None and seq > self._acked_seq:
            self._unacked_seqs.append(seq)
        if not is_event:
            self._others.append(number)
            if len(self._others) > 2 * len(self._pending) + 64:
                # forget numbers of coalesced entries
                self._others = deque(n for n in self._others if n in self._pending)
        while len(self._pending) + len(self._inflight) > self._outbox_limit and self._pending:
            self._drop_oldest()
        self._cond.notify_all()

    def _drop_oldest(self) -> None:
        victim: _Entry | None = None
        while self._others:
            candidate = self._pending.pop(self._others.popleft(), None)
            if candidate is not None:
                victim = candidate
                break
        if victim is None:
            _, victim = self._pending.popitem(last=False)
        if self._retained_pending.get(victim.topic) == victim.number:
            del self._retained_pending[victim.topic]
        self._counts["dropped"] += 1
        log.warning("outbox full: dropped message %d on %s", victim.number, victim.topic)

    def _take_next(self) -> _Entry | None:
        if not self._pending or not self._connected or self._resending:
            return None
        if len(self._inflight) >= WINDOW:
            return None
        _, entry = self._pending.popitem(last=False)
        if self._retained_pending.get(entry.topic) == entry.number:
            del self._retained_pending[entry.topic]
        while self._others and self._others[0] <= entry.number:
            self._others.popleft()
        self._inflight.append(entry)
        return entry

    def _acknowledge(self, entry: _Entry, success: bool) -> None:
        self._inflight.remove(entry)
        self._counts["acked" if success else "rejected"] += 1
        if entry.seq is not None and entry.seq > self._acked_seq:
            self._acked_early.add(entry.seq)
            while self._unacked_seqs and self._unacked_seqs[0] in self._acked_early:
                self._acked_early.discard(self._unacked_seqs[0])
                self._acked_seq = max(self._acked_seq, self._unacked_seqs.popleft())
        if not success:
            log.error("broker refused message on %s (not authorised?)", entry.topic)
        if not self._inflight:
            self._resending = False
        self._cond.notify_all()

    # ------------------------------------------------------------------ sender thread

    def _send_loop(self) -> None:
        while True:
            with self._cond:
                self._beat_if_due()
                entry = self._take_next()
                while entry is None:
                    if self._closed:
                        return
                    self._cond.wait(self._beat_wait())
                    self._beat_if_due()
                    entry = self._take_next()
            info = self._client.publish(
                f"{self._prefix}/{entry.topic}", entry.payload, qos=entry.qos, retain=entry.retain
            )
            with self._cond:
                entry.mid = info.mid
                early = self._early_acks.pop(info.mid, None)
                if early is not None:
                    self._acknowledge(entry, early)
                elif info.rc not in _KEPT:
                    # paho did not keep it (e.g. payload too large): it can never be acked.
                    log.error("paho refused a message on %s: %s", entry.topic, info.rc)
                    self._acknowledge(entry, False)

    def _beat_wait(self) -> float | None:
        """Seconds until the next heartbeat is due (None: no heartbeat to wait for)."""
        if self._heartbeat <= 0 or not self._connected or self._stopping:
            return None
        return max(0.0, self._next_beat - time.monotonic())

    def _beat_if_due(self) -> None:
        """Queue `status` online again, with a new `t`, when a heartbeat is due (lock held)."""
        if self._heartbeat <= 0 or not self._connected or self._stopping:
            return
        now = time.monotonic()
        if now < self._next_beat:
            return
        self._next_beat = now + self._heartbeat
        self._enqueue_first(STATUS, self._status_payload("online"))

    # ------------------------------------------------------------------ paho callbacks

    def _set_next_delay(self) -> None:
        """The wait before paho's next attempt: one jittered step of the backoff (paho takes
        whole seconds in its signature, and fractions in fact)."""
        delay = self._backoff.next()
        self._client.reconnect_delay_set(cast(int, delay), cast(int, delay))

    def _handle_connect_fail(self, client: mqtt.Client, userdata: Any) -> None:
        """paho calls this inside its `except OSError` around a failed attempt (TCP, DNS,
        TLS): the exception being handled is the reason."""
        exc = sys.exc_info()[1]
        self._health.failed(describe_failure(exc, str(self._broker.host), self._broker.port))
        self._set_next_delay()

    def _handle_connect(
        self,
        client: mqtt.Client,
        userdata: Any,
        flags: mqtt.ConnectFlags,
        reason_code: ReasonCode,
        properties: Properties | None,
    ) -> None:
        if reason_code.is_failure:
            who = f" as {self._broker.username!r}" if self._broker.username else ""
            self._health.failed(f"the broker refused the connection{who}: {reason_code}")
            self._refused = True  # the disconnect that follows is the same failure
            self._set_next_delay()
            return
        recovery = self._health.connected()
        self._backoff.reset()
        self._set_next_delay()
        if self._on_command is not None:
            # A retained command comes flagged so (the table refuses it): COMMAND_SUBSCRIPTION.
            client.subscribe(f"{self._prefix}/cmd/#", options=COMMAND_SUBSCRIPTION)
        if self._on_tv_request is not None:
            # Only the TV identity may publish there (the broker ACL): hole cards it missed.
            options = SubscribeOptions(qos=1, retainHandling=SubscribeOptions.RETAIN_DO_NOT_SEND)
            client.subscribe(f"{self._prefix}/{TVREQ}/#", options=options)
        with self._cond:
            self._connects += 1
            self._connected = True
            self._recovery = recovery
            self._next_beat = time.monotonic() + self._heartbeat
            # paho re-sends the unacknowledged window itself, right after this callback:
            # hand over nothing newer until that window is acknowledged.
            self._resending = bool(self._inflight)
            if not self._stopping:
                self._enqueue_first(STATUS, self._status_payload("online"))
            self._cond.notify_all()
        self._notify_connection(True)

    def _enqueue_first(self, topic: str, payload: bytes) -> None:
        """Queue a retained status ahead of everything not yet handed over. Room is made for
        it first: a full outbox drops its oldest message, never the status just queued
        (which, dropped, left the connection callback failing and nothing ever sent)."""
        while len(self._pending) + len(self._inflight) >= self._outbox_limit and self._pending:
            self._drop_oldest()
        self._enqueue(topic, payload, 1, True)
        number = self._retained_pending.get(topic)
        if number is not None:
            self._pending.move_to_end(number, last=False)

    def _handle_disconnect(
        self,
        client: mqtt.Client,
        userdata: Any,
        flags: mqtt.DisconnectFlags,
        reason_code: ReasonCode,
        properties: Properties | None,
    ) -> None:
        with self._cond:
            was_connected = self._connected
            self._connected = False
            stopping = self._closed
        if not stopping:
            self._set_will()  # a fresh `t` for the next connection's last will
            if was_connected:
                self._health.lost(str(reason_code))  # the next wait was set at the connection
            elif self._refused:
                self._refused = False
            else:
                # Closed after the TLS handshake but before any CONNACK: with TLS 1.3 a
                # refused client certificate shows only here.
                where = f"{self._broker.host}:{self._broker.port}"
                self._health.failed(
                    f"{where} closed the connection before accepting it ({reason_code}): a "
                    "client certificate it requires or refuses (cert_file)? a broker limit?"
                )
                self._set_next_delay()
        if was_connected:
            self._notify_connection(False)

    def _handle_publish(
        self,
        client: mqtt.Client,
        userdata: Any,
        mid: int,
        reason_code: ReasonCode,
        properties: Properties | None,
    ) -> None:
        success = not reason_code.is_failure
        with self._cond:
            for entry in self._inflight:
                if entry.mid == mid:
                    self._acknowledge(entry, success)
                    return
            self._early_acks[mid] = success

    def _handle_message(
        self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage
    ) -> None:
        def ack() -> None:
            client.ack(message.mid, message.qos)

        tv = f"{self._prefix}/{TVREQ}/"
        if self._on_tv_request is not None and message.topic.startswith(tv):
            try:
                self._on_tv_request(message.topic[len(tv) :], bytes(message.payload))
            except Exception:
                log.exception("TV request handler failed on %s", message.topic)
            ack()  # a lost request is asked again by TV
            return
        base = f"{self._prefix}/cmd/"
        if self._on_command is None or not message.topic.startswith(base):
            ack()
            return
        try:
            name = message.topic[len(base) :]
            self._on_command(name, bytes(message.payload), ack, retained=bool(message.retain))
        except Exception:
            log.exception("command handler failed on %s", message.topic)
            ack()  # a payload the handler cannot take would come back at every reconnection

    # ------------------------------------------------------------------ helpers

    def _status_payload(self, state: str) -> bytes:
        body: dict[str, object] = {"state": state}
        body.update({k: v for k, v in self._status.items() if k not in ("state", "t")})
        if state == "online":
            body["last_connect_error"] = self._recovery.last_connect_error
            body["reconnected_after"] = self._recovery.reconnected_after
            if self._status_fields is not None:
                body.update(self._status_fields())
        body["t"] = time.time()
        return Message(STATUS, body).payload_bytes()

    def _set_will(self) -> None:
        self._client.will_set(
            f"{self._prefix}/{STATUS}", self._status_payload("offline"), qos=1, retain=True
        )

    def _notify_connection(self, up: bool) -> None:
        if self._on_connection is None:
            return
        try:
            self._on_connection(up)
        except Exception:
            log.exception("connection handler failed")


def _seq_of(msg: Message) -> int | None:
    """The `seq` of an events message (None for other topics)."""
    if msg.topic != EVENTS:
        return None
    seq = msg.payload.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None

"""The room's MQTT side: every table's messages into the database, once, nothing missing.

paho's network thread only queues what arrives. One writer thread takes the queue in
batches (at most `batch_size` messages, waiting at most `batch_ms` for more), writes each
batch in one transaction, and only then acknowledges its messages to the broker (paho's
manual ack): a server killed before the commit gets them again from the broker, which
keeps the room's session (fixed client id, `session_expiry`) while it is away.

Holes in a table's `seq` (a message lost before it reached the broker's queue for us: a
broker restart without persistence, a table's outbox overflowing) are found by the gap
tracker, raised as room alerts and asked for with the table's `resend` command; a range the
table no longer has is recorded as lost. Replies to the room's commands wake whoever waits
for them (the HTTP API), after they are stored.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from controller.mqtt_poll import PollClient
from kernel.errors import TableError
from room.chain import RoomChain
from room.config import RoomConfig
from room.gaps import GapTracker, Hole
from room.limits import QuotaMeter, command_payload, valid_table_id
from room.store import Batch, EventRow, MessageRow, RejectedRow, Store, StoreError, WriteResult
from room.summary import SUMMARY_TYPES, summarize

log = logging.getLogger("tablectl.room.ingest")

TOPICS = ("events", "state", "status", "alerts", "replies", "released")
HEAL_PREFIX = "heal-"
#: One `retained_command` room alert per table this often (seconds): the ones between
#: are counted in the next.
RETAINED_ALERT_EVERY = 60.0


@dataclass(frozen=True, slots=True)
class Incoming:
    """A message as paho delivered it, with the time it arrived."""

    topic: str
    payload: bytes
    mid: int
    qos: int
    received_at: float
    retain: bool = False  # kept by the broker (the subscription has Retain As Published)


@dataclass(frozen=True, slots=True)
class Committed:
    """What a committed batch added, for live listeners (`events`: payloads as dicts)."""

    committed_at: float
    events: list[dict[str, Any]]
    messages: list[tuple[str, str, dict[str, Any]]]  # (table, topic, payload)


class CommandError(TableError):
    """A room command could not be sent or was not answered in time."""


class Ingest:
    """Subscribes to `poker/<room>/+/#` as the room identity and stores everything once."""

    def __init__(
        self, config: RoomConfig, store: Store, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.config = config
        self.store = store
        self.clock = clock
        self.prefix = f"poker/{config.name}/"
        self.queue: queue.Queue[Incoming | None] = queue.Queue()
        self.tracker = GapTracker(
            grace=config.gaps.grace, retry=config.gaps.retry, backfill=config.gaps.backfill
        )
        self.listeners: list[Callable[[Committed], None]] = []
        # the tables' signed chains and key releases, checked as they are stored
        self.chain = RoomChain(store, config.keys.directory)
        self.counters = {
            "received": 0,
            "stored_events": 0,
            "duplicates": 0,
            "conflicts": 0,
            "messages": 0,
            "rejected": 0,
            "batches": 0,
            "resend_requests": 0,
            "store_errors": 0,
            "over_quota": 0,
            "rejected_not_kept": 0,
            "retained_commands_cleared": 0,
        }
        self._retained_alerts: dict[str, tuple[float, int]] = {}  # table -> (alerted at, since)
        self.quota = QuotaMeter(clock=clock)
        self.connected = threading.Event()
        self._waiters: dict[str, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._by_mid: dict[int, str] = {}  # a command in flight: its waiter's key
        self._waiters_lock = threading.Lock()
        self._stop = threading.Event()
        self._writer: threading.Thread | None = None
        self._healer: threading.Thread | None = None
        self._client = self._make_client()

    # -- MQTT -------------------------------------------------------------------------

    def _make_client(self) -> mqtt.Client:
        broker = self.config.broker
        client = PollClient(  # paho on poll(2), not select.select (controller/mqtt_poll.py)
            CallbackAPIVersion.VERSION2,
            client_id=broker.client_id,
            protocol=MQTTProtocolVersion.MQTTv5,
            manual_ack=True,
        )
        if broker.username is not None:
            client.username_pw_set(broker.username, broker.password)
        if broker.tls:
            client.tls_set(ca_certs=str(broker.ca_file) if broker.ca_file else None)
        client.reconnect_delay_set(1, 10)
        client.max_inflight_messages_set(100)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_publish = self._on_publish
        return client

    def _on_publish(self, _c: mqtt.Client, _u: Any, mid: int, reason: Any, _p: Any) -> None:
        """The broker's PUBACK: a refusal (MQTT v5 reason >= 0x80) ends the command at once."""
        with self._waiters_lock:
            key = self._by_mid.pop(mid, None)
            waiter = self._waiters.get(key) if key is not None else None
        if waiter is not None and getattr(reason, "is_failure", False):
            log.error("the broker refused command %s: %s", key, reason)
            waiter[1].append({"ok": False, "broker_refused": str(reason)})
            waiter[0].set()

    def _on_connect(self, client: mqtt.Client, _u: Any, flags: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            log.error("broker refused the connection: %s", reason)
            return
        log.info("connected to the broker (session present: %s)", flags.session_present)
        # QoS 1 on the room's tables; the session keeps it (and queues) while we are away.
        # Retain As Published: a message comes flagged retained when the broker keeps it,
        # so a command left retained is found (and cleared) as soon as it is published.
        options = SubscribeOptions(qos=1, retainAsPublished=True)
        client.subscribe(self.config.topic_filter, options=options)
        self.connected.set()

    def _on_disconnect(self, _c: mqtt.Client, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        self.connected.clear()
        if not self._stop.is_set():
            log.warning("disconnected from the broker (%s); reconnecting", reason)

    def _on_message(self, _c: mqtt.Client, _u: Any, msg: mqtt.MQTTMessage) -> None:
        payload, retain = bytes(msg.payload), bool(msg.retain)
        self.queue.put(Incoming(msg.topic, payload, msg.mid, msg.qos, self.clock(), retain))

    def start(self) -> None:
        """Load the gap state, connect (in the background) and start the writer."""
        self.store.migrate()
        now = self.clock()
        for hole in self.tracker.load(self.store.holes(), self.store.lost_ranges(), now):
            hole.found_at = now - self.config.gaps.grace  # known already: ask at once
            hole.gap_id = self.store.open_gap(hole.table, hole.first, hole.last)
        broker = self.config.broker
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = broker.session_expiry
        props.ReceiveMaximum = 65535
        self._client.connect_async(
            broker.host,
            broker.port,
            keepalive=broker.keepalive,
            clean_start=False,
            properties=props,
        )
        self._client.loop_start()
        self._writer = threading.Thread(target=self._write_loop, name="room-writer", daemon=True)
        self._writer.start()
        self._healer = threading.Thread(target=self._heal_loop, name="room-healer", daemon=True)
        self._healer.start()

    def stop(self) -> None:
        """Stop taking messages, write what was received, disconnect."""
        self._stop.set()
        self.queue.put(None)
        if self._writer is not None:
            self._writer.join(timeout=30)
        if self._healer is not None:
            self._healer.join(timeout=5)
        self._client.disconnect()
        self._client.loop_stop()

    # -- writing ----------------------------------------------------------------------

    def _take(self) -> list[Incoming] | None:
        """The next batch (None: stop)."""
        try:
            first = self.queue.get(timeout=0.5)
        except queue.Empty:
            return []
        if first is None:
            return None
        items = [first]
        deadline = time.monotonic() + self.config.database.batch_ms / 1000
        while len(items) < self.config.database.batch_size:
            wait = deadline - time.monotonic()
            try:
                item = self.queue.get(timeout=wait) if wait > 0 else self.queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                self.queue.put(None)
                break
            items.append(item)
        return items

    def _write_loop(self) -> None:
        while True:
            items = self._take()
            if items is None:
                return
            if items:
                self._write(items)

    def _parse(self, items: list[Incoming]) -> tuple[Batch, list[tuple[str, dict[str, Any]]]]:
        """The rows of a batch, and the replies and states in it (in arrival order)."""
        batch = Batch()
        notes: list[tuple[str, dict[str, Any]]] = []
        for item in items:
            self.counters["received"] += 1
            rest = item.topic[len(self.prefix) :] if item.topic.startswith(self.prefix) else ""
            table, _, topic = rest.partition("/")
            if item.retain and topic.startswith("cmd/"):
                self._clear_retained(item, table, topic)  # never a command: not stored
                continue
            reason = None
            payload: Any = None
            if not table or not (topic in TOPICS or topic.startswith("cmd/")):
                reason = f"topic {item.topic!r} is not a table topic the room stores"
                if topic in ("holecards", "holekeys") or topic.startswith("tvreq/"):
                    # the ACL must never let this happen
                    self.store.add_room_alert(
                        table,
                        "holecards_received",
                        "critical",
                        f"a hole card message ({topic}) of table {table} reached the room "
                        "server: check the broker ACL (it was dropped, not stored)",
                    )
                    continue
            else:
                try:
                    payload = json.loads(item.payload.decode("utf-8"))
                    if not isinstance(payload, dict):
                        reason = "payload is not a JSON object"
                except (UnicodeDecodeError, ValueError) as exc:
                    reason = f"payload is not JSON text: {exc}"
            if reason is None and topic == "events":
                seq, kind, t = payload.get("seq"), payload.get("type"), payload.get("t")
                if (
                    not isinstance(seq, int)
                    or isinstance(seq, bool)
                    or seq < 1
                    or not isinstance(kind, str)
                    or not isinstance(t, int | float)
                ):
                    reason = "an event needs an integer seq >= 1, a type and a time t"
            if reason is not None:
                self._reject(batch, item, table, reason)
                continue
            if not self.quota.fits(table, len(item.payload)):
                self.counters["over_quota"] += 1  # refused: stored nowhere, counted, alerted
                continue
            text = item.payload.decode("utf-8")
            digest = hashlib.sha256(item.payload).hexdigest()[:32]
            if topic == "events":
                hand = payload.get("hand")
                batch.events.append(
                    EventRow(
                        table,
                        int(payload["seq"]),
                        hand if isinstance(hand, int) and not isinstance(hand, bool) else None,
                        str(payload["type"]),
                        float(payload["t"]),
                        item.received_at,
                        digest,
                        text,
                    )
                )
            else:
                seq = payload.get("seq") if topic == "state" else None
                batch.messages.append(
                    MessageRow(
                        table,
                        topic,
                        digest,
                        item.received_at,
                        text,
                        seq if isinstance(seq, int) else None,
                    )
                )
                if topic in ("replies", "state", "released"):
                    notes.append((f"{table}/{topic}", payload))
        return batch, notes

    def _clear_retained(self, item: Incoming, table: str, topic: str) -> None:
        """A command the broker keeps (published with retain, by whoever holds the room's
        identity): the room server never retains one and the tables refuse them, so it is
        cleared (an empty retained message on its topic) and a `retained_command` room alert
        says so, one a minute per table. An empty one is such a clearing coming back."""
        if not item.payload:
            return
        self._client.publish(item.topic, b"", qos=1, retain=True)
        self.counters["retained_commands_cleared"] += 1
        now = self.clock()
        alerted_at, since = self._retained_alerts.get(table, (float("-inf"), 0))
        since += 1
        if now - alerted_at < RETAINED_ALERT_EVERY:
            self._retained_alerts[table] = (alerted_at, since)
            return
        self._retained_alerts[table] = (now, 0)
        name = topic.removeprefix("cmd/")
        self.store.add_room_alert(
            table or None,
            "retained_command",
            "warning",
            f"table {table}: {since} command(s) left retained on the broker cleared (the last "
            f"on cmd/{name[:64]}, {len(item.payload)} bytes). Commands are never retained, "
            "and the tables refuse one that is: whoever published it with retain holds the "
            "room's identity (a script with mosquitto_pub -r?)",
        )

    def _reject(self, batch: Batch, item: Incoming, table: str, reason: str) -> None:
        """A message that does not fit the contract: counted; its first bytes kept (with its
        size and digest) while the table's hourly allowance of kept refusals lasts."""
        self.counters["rejected"] += 1
        if not self.quota.keep_rejected(table or "?"):
            self.counters["rejected_not_kept"] += 1
            return
        excerpt = item.payload[: self.quota.quota.excerpt]
        digest = hashlib.sha256(item.payload).hexdigest()[:32]
        kept = f", the first {len(excerpt)} kept" if len(excerpt) < len(item.payload) else ""
        why = f"{reason[:200]} ({len(item.payload)} bytes{kept}, sha256 {digest})"
        batch.rejected.append(
            RejectedRow(item.topic[:256], item.received_at, why, base64.b64encode(excerpt).decode())
        )

    def _quota_alerts(self, tables: set[str]) -> None:
        """Once per table and hour: a table over its storage quota, or refused past what is
        kept of its refusals (room/limits.py)."""
        for table in sorted(tables):
            over = self.quota.alert_over(table)
            if over is not None:
                self.store.add_room_alert(
                    table,
                    "storage_quota",
                    "critical",
                    f"table {table} passed its storage quota of "
                    f"{self.quota.quota.bytes_per_hour // (1024 * 1024)} MB this hour: its "
                    "messages are refused (not stored) until the hour ends; a table publishing "
                    "this much is faulty or compromised",
                )
            rejected = self.quota.alert_rejected(table)
            if rejected is not None:
                self.store.add_room_alert(
                    table,
                    "messages_rejected",
                    "critical",
                    f"table {table}: {rejected} messages this hour did not fit the contract "
                    "(not JSON, no seq ...): the next ones are counted, not kept",
                )

    def _write(self, items: list[Incoming]) -> None:
        batch, notes = self._parse(items)
        while True:
            try:
                result = self.store.write(batch)
                break
            except StoreError as exc:  # nothing acknowledged: retried, the broker keeps it
                self.counters["store_errors"] += 1
                log.error("could not store a batch of %d messages: %s; retrying", len(items), exc)
                if self._stop.wait(1.0):
                    return
        committed = self.clock()
        self._quota_alerts({i.topic[len(self.prefix) :].partition("/")[0] for i in items})
        self.counters["batches"] += 1
        self.counters["stored_events"] += sum(len(v) for v in result.new_events.values())
        self.counters["duplicates"] += result.duplicates
        self.counters["messages"] += result.new_messages
        for item in items:
            if item.qos > 0:
                self._client.ack(item.mid, item.qos)
        try:
            self._after(result, notes, committed)
        except Exception:  # the rows are stored; a summary or an alert failing stops nothing
            log.exception("after a batch")
        if self.listeners:
            event = Committed(
                committed,
                [json.loads(r.payload) for rows in result.new_events.values() for r in rows],
                [(m.table, m.topic, json.loads(m.payload)) for m in batch.messages],
            )
            for listener in list(self.listeners):
                try:
                    listener(event)
                except Exception:
                    log.exception("a live listener failed")

    def _after(
        self, result: WriteResult, notes: list[tuple[str, dict[str, Any]]], now: float
    ) -> None:
        """Gaps, hand summaries, conflicts, replies: everything that follows a commit."""
        for row in result.conflicts:
            self.counters["conflicts"] += 1
            self.store.add_room_alert(
                row.table,
                "seq_reused",
                "critical",
                f"table {row.table} published seq {row.seq} again with other content "
                "(a journal started afresh?): the first one is kept",
            )
        touched = self._new_events(result, now)
        for key, payload in notes:
            table, topic = key.split("/", 1)
            if topic == "state" and isinstance(payload.get("seq"), int):
                for hole in self.tracker.published_up_to(table, int(payload["seq"]), now):
                    hole.gap_id = self.store.open_gap(table, hole.first, hole.last)
            elif topic == "replies":
                self._reply(table, payload, now)
        for table, hand in sorted(touched):
            summarize(self.store, table, hand)
        for key, payload in notes:  # after the summaries: a hand's end is known then
            table, topic = key.split("/", 1)
            if topic == "released":
                for kind, severity, text in self.chain.release(table, payload):
                    self.store.add_room_alert(table, kind, severity, text)

    def _new_events(self, result: WriteResult, now: float) -> set[tuple[str, int]]:
        """The gaps the new events open or heal, their chain checked; the hands to summarize
        again (a summary event, or an event older than what the table had)."""
        touched: set[tuple[str, int]] = set()
        for table, rows in result.new_events.items():
            before = self.tracker.tables.get(table)
            high = before.max_seq if before is not None else 0
            opened, healed = self.tracker.saw(table, [r.seq for r in rows], now)
            for hole in opened:
                hole.gap_id = self.store.open_gap(table, hole.first, hole.last)
            for hole in healed:
                self._healed(hole, now)
            for r in rows:
                if r.hand is not None and (r.type in SUMMARY_TYPES or r.seq < high):
                    touched.add((table, r.hand))
            for kind, severity, text in self.chain.new_events(table, rows):
                self.store.add_room_alert(table, kind, severity, text)
        return touched

    def _healed(self, hole: Hole, now: float) -> None:
        if hole.asked_at is not None:
            self.store.add_room_alert(
                hole.table,
                "gap_healed",
                "info",
                f"table {hole.table}: events {hole.first}..{hole.last} received again (resend)",
            )
        if hole.gap_id is not None:
            self.store.update_gap(hole.gap_id, status="healed", closed_at=now)

    def _reply(self, table: str, payload: dict[str, Any], now: float) -> None:
        rid = payload.get("id")
        if not isinstance(rid, str):
            return
        if rid.startswith(HEAL_PREFIX) and payload.get("command") == "resend":
            for pair in payload.get("missing") or []:
                first, last = int(pair[0]), int(pair[1])
                why = str(payload.get("error"))
                gap_id = self.store.open_gap(table, first, last)  # exactly what is gone
                self.store.update_gap(gap_id, status="lost", closed_at=now, reason=why)
                self.store.add_room_alert(
                    table,
                    "events_lost",
                    "critical",
                    f"table {table}: events {first}..{last} are lost for good: {why}",
                )
                for hole in self.tracker.lost(table, first, last):
                    if hole.gap_id is not None:  # closed: what was not lost was healed
                        self.store.update_gap(hole.gap_id, status="closed", closed_at=now)
        with self._waiters_lock:
            waiter = self._waiters.get(f"{table}/{rid}")
        if waiter is not None:
            waiter[1].append(payload)
            waiter[0].set()

    # -- healing ----------------------------------------------------------------------

    def _heal_loop(self) -> None:
        while not self._stop.wait(0.5):
            if not self.connected.is_set():
                continue
            try:
                self.heal_now()
            except Exception:
                log.exception("asking for missing events failed")

    def heal_now(self) -> int:
        """Ask the tables for every hole that is due; the number of requests sent."""
        sent = 0
        for hole, first, last in self.tracker.due(self.clock()):
            if not valid_table_id(hole.table):  # nothing the broker could refuse
                continue
            rid = f"{HEAL_PREFIX}{hole.table}-{first}-{last}-{hole.tries}"
            body = {"from_seq": first, "to_seq": last, "id": rid}
            self._client.publish(f"{self.prefix}{hole.table}/cmd/resend", json.dumps(body), qos=1)
            sent += 1
            self.counters["resend_requests"] += 1
            if hole.tries == 1:
                self.store.add_room_alert(
                    hole.table,
                    "seq_gap",
                    "warning",
                    f"table {hole.table}: events {first}..{last} missing; asked the table to "
                    "send them again (resend)",
                )
            if hole.gap_id is not None:
                self.store.update_gap(
                    hole.gap_id, status="asked", asked_at=hole.asked_at, tries=hole.tries
                )
        return sent

    # -- commands ---------------------------------------------------------------------

    def command(
        self, table: str, name: str, body: dict[str, Any], timeout: float
    ) -> dict[str, Any]:
        """Send a room command to a table and wait for its reply (stored first).

        The command is checked before it is published (room/limits.py): nothing the broker
        could refuse (a table id with a wildcard or a NUL, a payload past what a table
        takes) ever reaches the MQTT client, which would send it again at every
        reconnection. A publication the broker refuses all the same (its ACL: MQTT v5
        PUBACK >= 0x80) is answered at once; one still unacknowledged when the command
        times out is dropped from the client's queue, never sent again."""
        if not self.connected.is_set():
            raise CommandError("not connected to the broker")
        payload = dict(body)
        rid = payload.get("id")
        if not isinstance(rid, str) or not rid:
            rid = f"room-{uuid.uuid4().hex[:16]}"
            payload["id"] = rid
        data = command_payload(table, name, payload)  # CommandRefused (an HTTP error)
        key = f"{table}/{rid}"
        done = threading.Event()
        slot: list[dict[str, Any]] = []
        with self._waiters_lock:
            self._waiters[key] = (done, slot)
        info: mqtt.MQTTMessageInfo | None = None
        try:
            # paho's own lock first (its network thread holds it while it calls
            # _on_publish): the PUBACK cannot be handled before the mid is known here.
            with self._out_lock(), self._waiters_lock:
                info = self._client.publish(f"{self.prefix}{table}/cmd/{name}", data, qos=1)
                self._by_mid[info.mid] = key
            if info.rc != mqtt.MQTT_ERR_SUCCESS:
                raise CommandError(f"publish failed: {mqtt.error_string(info.rc)}")
            if not done.wait(timeout):
                raise CommandError(
                    f"table {table} did not answer command {name!r} (id {rid}) within {timeout:g} s"
                )
            if "broker_refused" in slot[0]:
                raise CommandError(
                    f"the broker refused command {name!r} for table {table}: "
                    f"{slot[0]['broker_refused']} (its ACL)"
                )
            return slot[0]
        finally:
            with self._out_lock(), self._waiters_lock:
                self._waiters.pop(key, None)
                if info is not None and self._by_mid.pop(info.mid, None) is not None:
                    self._forget(info.mid)

    def _out_lock(self) -> Any:
        """paho's lock of its outgoing messages (a no-op lock if paho has none)."""
        lock = getattr(self._client, "_out_message_mutex", None)
        return lock if lock is not None else contextlib.nullcontext()

    def _forget(self, mid: int) -> None:
        """Drop an unacknowledged command from paho's queue: a command that timed out is
        answered as failed, and must not be sent again at the next reconnection."""
        client: Any = self._client
        messages = getattr(client, "_out_messages", None)
        if not isinstance(messages, dict):  # pragma: no cover - paho changed
            return
        with self._out_lock():
            if messages.pop(mid, None) is not None:
                log.warning("command message %d was never acknowledged: dropped", mid)
                inflight = getattr(client, "_inflight_messages", None)
                if isinstance(inflight, int) and inflight > 0:
                    client._inflight_messages = inflight - 1

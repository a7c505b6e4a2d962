"""The TV service's MQTT client: subscribes as the `tv` identity; publishes only requests.

It subscribes to `state`, `events`, `holecards`, `holekeys` and `status` of each
configured table (QoS 1) and hands every message to a callback, stamped on arrival by the
desk. The one thing it publishes is a table's hole-card requests (`<prefix>/tvreq/...`:
the hole-card seqs it missed, nothing else, broadcast/holecards.py), which only the `tv`
identity may publish; no card, no key, no last will (a will is a message the broker would
publish for it). It uses a clean session (MQTT v5, session expiry 0), so the broker never
queues hole cards for it while it is away; after a reconnection the retained `state`
brings the tables back at once.
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
from collections.abc import Callable, Iterable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from controller.config import BrokerConfig

log = logging.getLogger(__name__)

TOPICS = ("state", "events", "holecards", "holekeys", "status")

Sink = Callable[[str, bytes], None]


class TvSubscriber:
    """A read-only paho client for the production desk."""

    def __init__(self, broker: BrokerConfig, prefixes: Iterable[str], sink: Sink) -> None:
        self.broker = broker
        self.topics = [f"{p}/{t}" for p in prefixes for t in TOPICS]
        self.sink = sink
        self.connected = False
        self.refused: list[str] = []  # subscriptions the broker did not grant
        self.subscribed = threading.Event()
        self._stopping = False
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=broker.client_id or "tablectl-tv",
            protocol=MQTTProtocolVersion.MQTTv5,
        )
        if broker.username is not None:
            self.client.username_pw_set(broker.username, broker.password)
        if broker.tls:
            self.client.tls_set(
                ca_certs=str(broker.ca_file) if broker.ca_file else None,
                certfile=str(broker.cert_file) if broker.cert_file else None,
                keyfile=str(broker.key_file) if broker.key_file else None,
                tls_version=ssl.PROTOCOL_TLS_CLIENT,
            )
        self.client.reconnect_delay_set(1, 30)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_subscribe = self._on_subscribe
        self.client.on_message = self._on_message

    def start(self) -> None:
        """Connect in the background (retrying for ever)."""
        assert self.broker.host is not None
        self.client.connect_async(self.broker.host, self.broker.port, self.broker.keepalive)
        self.client.loop_start()

    def stop(self) -> None:
        """Disconnect and stop the network thread."""
        self._stopping = True
        self.client.disconnect()
        self.client.loop_stop()

    def request(self, prefix: str, kind: str, first: int, last: int) -> None:
        """Ask a table for hole cards (`kind` holecards) or keys (holekeys) it missed."""
        if not self.connected:
            return
        body = json.dumps({"from_seq": first, "to_seq": last}, separators=(",", ":"))
        self.client.publish(f"{prefix}/tvreq/{kind}", body, qos=1)
        log.info("asked %s for %s %d..%d again", prefix, kind, first, last)

    def _on_connect(self, client: mqtt.Client, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            log.warning("broker refused the connection: %s", reason)
            return
        self.connected = True
        log.info("connected to %s:%s", self.broker.host, self.broker.port)
        client.subscribe([(topic, 1) for topic in self.topics])

    def _on_disconnect(self, _c: mqtt.Client, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        self.connected = False
        self.subscribed.clear()
        if not self._stopping:
            log.warning("disconnected from the broker (%s); retrying", reason)

    def _on_subscribe(self, _c: mqtt.Client, _u: Any, _mid: int, codes: Any, _p: Any) -> None:
        self.refused = [t for t, c in zip(self.topics, codes, strict=False) if c.is_failure]
        for topic in self.refused:
            log.error("the broker refused the subscription to %s (ACL?)", topic)
        self.subscribed.set()

    def _on_message(self, _c: mqtt.Client, _u: Any, msg: mqtt.MQTTMessage) -> None:
        try:
            self.sink(msg.topic, bytes(msg.payload))
        except Exception:  # a bad message must never stop the network thread
            log.exception("message on %s not taken", msg.topic)

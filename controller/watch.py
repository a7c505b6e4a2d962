"""The client `tablectl sim` prints the messages with: the broker's TLS, its own identity.

Against a configured broker, the printer connects as the daemon does (TLS, `ca_file`)
but never as the table: the room kit's ACL lets a table read nothing it publishes, and
a second connection with the table's identity would take the daemon's session over
(one connection per identity). It uses the identity it is given (`--watch-credentials`,
or `--watch-cert`/`--watch-key` on a broker that requires client certificates), e.g. the
room's, and otherwise says why it prints nothing.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paho.mqtt.client import Client
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from controller.config import BrokerConfig
from controller.connection import describe_failure
from controller.mqtt_poll import PollClient
from kernel.configkit import read_credentials
from kernel.errors import ConfigError
from kernel.private import exposure


@dataclass(frozen=True, slots=True)
class WatchIdentity:
    """Who the printer connects as (all None: anonymous)."""

    username: str | None = None
    password: str | None = None
    cert_file: Path | None = None
    key_file: Path | None = None


def watch_identity(
    broker: BrokerConfig,
    credentials: Path | None = None,
    cert_file: Path | None = None,
    key_file: Path | None = None,
) -> WatchIdentity | None:
    """The printer's identity, or None when it must not connect (the broker wants an
    identity and none but the table's was given). ConfigError for a bad file."""
    if (cert_file is None) != (key_file is None):
        raise ConfigError("--watch-cert and --watch-key go together")
    username = password = None
    if credentials is not None:
        try:
            username, password = read_credentials(credentials)
        except OSError as exc:
            raise ConfigError(f"{credentials}: {exc.strerror or exc}") from None
    if key_file is not None:
        problem = exposure(key_file)
        if problem is not None:
            raise ConfigError(f"{key_file} {problem}")
    identity = WatchIdentity(username, password, cert_file, key_file)
    if identity == WatchIdentity() and (
        broker.username is not None or broker.cert_file is not None
    ):
        return None
    return identity


def watch_client(broker: BrokerConfig, identity: WatchIdentity) -> Client:
    """A paho client for `broker` with its TLS settings and `identity` (not connected)."""
    client = PollClient(
        CallbackAPIVersion.VERSION2,
        client_id=identity.username or "tablectl-sim-watch",
        protocol=MQTTProtocolVersion.MQTTv5,
    )
    if identity.username is not None:
        client.username_pw_set(identity.username, identity.password)
    if broker.tls:
        client.tls_set(
            ca_certs=str(broker.ca_file) if broker.ca_file else None,
            certfile=str(identity.cert_file) if identity.cert_file else None,
            keyfile=str(identity.key_file) if identity.key_file else None,
        )
    host, port = str(broker.host), broker.port

    def on_connect_fail(_c: Client, _u: Any) -> None:
        # Called by paho inside its `except OSError` around the attempt.
        print(f"watch: {describe_failure(sys.exc_info()[1], host, port)}", file=sys.stderr)

    client.on_connect_fail = on_connect_fail
    return client

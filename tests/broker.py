"""Test helpers: a private mosquitto broker in a subprocess and a collecting MQTT subscriber."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from controller.config import BrokerConfig

MOSQUITTO = "/usr/sbin/mosquitto"
MOSQUITTO_PASSWD = "/usr/bin/mosquitto_passwd"
ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_DIR = ROOT / "examples" / "mosquitto"
EXAMPLE_ACL = EXAMPLE_DIR / "acl"
EXAMPLE_PASSWD = EXAMPLE_DIR / "passwd"
EXAMPLE_CONF = EXAMPLE_DIR / "mosquitto.conf"
EXAMPLE_MTLS_CONF = EXAMPLE_DIR / "mosquitto-mtls.conf"
MAKE_CERTS = EXAMPLE_DIR / "make-certs.sh"
MAKE_PASSWD = EXAMPLE_DIR / "make-passwd.sh"
MAKE_CLIENTS = EXAMPLE_DIR / "make-clients.sh"

#: The users of the shipped example (examples/mosquitto/README.md).
USERS = {"table-t01": "table-secret", "room": "room-secret", "tv": "tv-secret"}


def free_port() -> int:
    """A loopback TCP port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def write_password_file(path: Path, users: dict[str, str]) -> Path:
    """Create a mosquitto password file for `users` with mosquitto_passwd."""
    first = True
    for user, password in users.items():
        args = [MOSQUITTO_PASSWD, "-b", *(["-c"] if first else []), str(path), user, password]
        subprocess.run(args, check=True, capture_output=True, timeout=30)
        first = False
    return path


@dataclass(frozen=True)
class TlsFiles:
    """A test CA and a server certificate for 127.0.0.1 / localhost."""

    ca_file: Path
    cert_file: Path
    key_file: Path


def make_tls_files(directory: Path) -> TlsFiles:
    """Generate a CA and a server certificate with the openssl command line."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("openssl is not installed")
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca_crt = directory / "ca.key", directory / "ca.crt"
    key, csr, crt = directory / "server.key", directory / "server.csr", directory / "server.crt"
    ext = directory / "server.ext"
    ext.write_text(
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
    )
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    ca_ext = ["-addext", "basicConstraints=critical,CA:TRUE"]
    ca_ext += ["-addext", "keyUsage=critical,keyCertSign,cRLSign"]
    signing = ["-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial", "-extfile", ext]
    ca_out = ["-keyout", ca_key, "-out", ca_crt, "-days", "2"]
    steps = [
        [openssl, "req", "-x509", *ec, *ca_ext, "-subj", "/CN=tablectl test CA", *ca_out],
        [openssl, "req", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=localhost"],
        [openssl, "x509", "-req", "-in", csr, *signing, "-out", crt, "-days", "2"],
    ]
    for step in steps:
        subprocess.run([str(a) for a in step], check=True, capture_output=True, timeout=60)
    return TlsFiles(ca_crt, crt, key)


def run_script(script: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run a shipped shell script (no terminal on stdin); return its output, raise on failure."""
    done = subprocess.run(
        ["bash", str(script), *args],
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{script.name} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def make_room_certs(
    directory: Path, sans: Iterable[str] = ("localhost", "127.0.0.1"), args: Iterable[str] = ()
) -> TlsFiles:
    """A CA and server certificate made by the shipped examples/mosquitto/make-certs.sh."""
    san_args = [a for san in sans for a in ("--san", san)]
    run_script(MAKE_CERTS, "--dir", str(directory), *san_args, *args)
    return TlsFiles(directory / "ca.crt", directory / "server.crt", directory / "server.key")


@dataclass(frozen=True)
class RoomPki:
    """A room CA, server certificate and one client certificate per identity, all made by
    the shipped make-certs.sh (`--client`)."""

    directory: Path
    tls: TlsFiles

    def cert(self, identity: str) -> Path:
        """The client certificate of `identity` (CN = identity)."""
        return self.directory / "clients" / f"{identity}.crt"

    def key(self, identity: str) -> Path:
        """The private key of `identity`'s client certificate (mode 600)."""
        return self.directory / "clients" / f"{identity}.key"


def make_room_pki(
    directory: Path,
    identities: Iterable[str] = ("table-t01", "table-t02", "room", "tv"),
    sans: Iterable[str] = ("localhost", "127.0.0.1"),
) -> RoomPki:
    """make-certs.sh with a server certificate and a client certificate per identity."""
    args = [a for identity in identities for a in ("--client", identity)]
    return RoomPki(directory, make_room_certs(directory, sans, args))


def password_env(users: dict[str, str]) -> dict[str, str]:
    """The environment make-passwd.sh reads the passwords of `users` from."""
    env = {f"{u.upper().replace('-', '_')}_PASSWORD": p for u, p in users.items()}
    return env | {"IDENTITIES": " ".join(users), "MOSQUITTO_PASSWD": MOSQUITTO_PASSWD}


def make_room_passwd(path: Path, users: dict[str, str]) -> Path:
    """A password file made by the shipped examples/mosquitto/make-passwd.sh."""
    run_script(MAKE_PASSWD, str(path), env=password_env(users))
    return path


def make_room_clients(passwd: Path, clients: Path) -> Path:
    """The broker's client file (dynamic-security plugin: each identity bound to its client
    id) made from `passwd` by the shipped examples/mosquitto/make-clients.sh."""
    run_script(MAKE_CLIENTS, str(passwd), str(clients))
    return clients


class Mosquitto:
    """A private mosquitto broker on a loopback port, with its own config in `workdir`."""

    def __init__(
        self,
        workdir: Path,
        *,
        port: int | None = None,
        users: dict[str, str] | None = None,
        password_file: Path | None = None,
        acl_file: Path | None = None,
        tls: TlsFiles | None = None,
        persistence: bool = False,
        extra: str = "",
    ) -> None:
        self.extra = extra  # more configuration lines (a bridge section ...), added last
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.host = "127.0.0.1"
        self.port = port if port is not None else free_port()
        self.tls = tls
        self.acl_file = acl_file
        self.persistence = persistence
        self.password_file = password_file
        if users is not None:
            self.password_file = write_password_file(workdir / "passwd", users)
        self.log_file = workdir / "mosquitto.log"
        self.config_file = workdir / "mosquitto.conf"
        self._proc: subprocess.Popen[bytes] | None = None
        #: True when the broker accepts an identity only with its own client id (the kit's
        #: client file): test clients then connect with their username as client id.
        self.identity_client_ids = False
        #: Run the broker with this open-file limit (systemd's LimitNOFILE), None: inherited.
        self.nofile: int | None = None

    @property
    def anonymous(self) -> bool:
        """True when clients may connect without a username."""
        return self.password_file is None

    def _config(self) -> str:
        lines = ["per_listener_settings false", f"allow_anonymous {str(self.anonymous).lower()}"]
        if os.geteuid() == 0:
            lines.append("user root")  # do not drop privileges: the tmp files stay readable
        if self.password_file is not None:
            lines.append(f"password_file {self.password_file}")
        if self.acl_file is not None:
            lines.append(f"acl_file {self.acl_file}")
        if self.persistence:
            lines += ["persistence true", f"persistence_location {self.workdir}/"]
        else:
            lines.append("persistence false")
        # as the shipped examples/mosquitto/mosquitto.conf: never drop a slow subscriber's events
        lines.append("max_queued_messages 1000000")
        lines += ["log_type all", f"listener {self.port} {self.host}"]
        if self.tls is not None:
            lines += [
                f"cafile {self.tls.ca_file}",
                f"certfile {self.tls.cert_file}",
                f"keyfile {self.tls.key_file}",
            ]
        if self.extra:
            lines.append(self.extra)
        return "\n".join(lines) + "\n"

    def start(self, timeout: float = 10.0) -> Mosquitto:
        """Start the broker and wait until its port accepts connections."""
        self.config_file.write_text(self._config())
        log = self.log_file.open("ab")
        limit = [] if self.nofile is None else ["prlimit", f"--nofile={self.nofile}"]
        self._proc = subprocess.Popen(
            [*limit, MOSQUITTO, "-c", str(self.config_file)], stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log_file.read_text()[-2000:]}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"mosquitto did not listen on {self.port}")

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the broker (SIGTERM, then SIGKILL) and wait for it."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)

    def restart(self) -> Mosquitto:
        """Stop and start again on the same port (and the same persistence file)."""
        self.stop()
        return self.start()

    def reload(self) -> None:
        """SIGHUP: mosquitto re-reads its certificates, password file and ACL."""
        if self._proc is None or self._proc.poll() is not None:
            raise RuntimeError("mosquitto is not running")
        self._proc.send_signal(signal.SIGHUP)

    @property
    def running(self) -> bool:
        """True while the broker process is alive."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int:
        """The broker's process id."""
        if self._proc is None:
            raise RuntimeError("mosquitto is not running")
        return self._proc.pid

    def broker_config(
        self, username: str | None = None, password: str | None = None, **extra: Any
    ) -> BrokerConfig:
        """A BrokerConfig pointing at this broker (TLS with the test CA when enabled)."""
        if username is not None and password is None:
            password = USERS.get(username)
        fields: dict[str, Any] = {"host": self.host, "port": self.port}
        fields |= {"username": username, "password": password}
        if username is not None and self.identity_client_ids:
            fields["client_id"] = username  # as load_config makes it: the identity
        if self.tls is not None:
            fields |= {"tls": True, "ca_file": self.tls.ca_file}
        return BrokerConfig(**(fields | extra))

    def __enter__(self) -> Mosquitto:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass(frozen=True)
class Received:
    """One message a Subscriber received."""

    topic: str
    payload: bytes
    retain: bool
    qos: int


class Subscriber:
    """A paho client that subscribes to topic filters and collects what arrives."""

    def __init__(
        self,
        broker: Mosquitto,
        topics: str | Iterable[str],
        *,
        username: str | None = None,
        password: str | None = None,
        client_id: str = "",
        persistent: bool = False,
        qos: int = 1,
        timeout: float = 10.0,
        cert_file: Path | None = None,
        key_file: Path | None = None,
    ) -> None:
        self.topics = [topics] if isinstance(topics, str) else list(topics)
        self.qos = qos
        if not client_id and username is not None and broker.identity_client_ids:
            client_id = username
        self._cond = threading.Condition()
        self._received: list[Received] = []
        self._subscribed = False
        self._granted: list[int] = []
        self._client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id,
            clean_session=not persistent,
            protocol=MQTTProtocolVersion.MQTTv311,
        )
        self._client.reconnect_delay_set(1, 1)
        if username is not None:
            self._client.username_pw_set(username, password or USERS.get(username))
        if broker.tls is not None:
            self._client.tls_set(
                ca_certs=str(broker.tls.ca_file),
                certfile=str(cert_file) if cert_file else None,
                keyfile=str(key_file) if key_file else None,
            )
        self._client.on_connect = self._on_connect
        self._client.on_subscribe = self._on_subscribe
        self._client.on_message = self._on_message
        self._client.connect_async(broker.host, broker.port, keepalive=10)
        self._client.loop_start()
        if not self.wait_subscribed(timeout):
            self.close()
            raise RuntimeError("subscriber could not connect and subscribe")

    def _on_connect(self, client: mqtt.Client, *args: Any) -> None:
        reason = args[2]
        if not reason.is_failure:
            client.subscribe([(t, self.qos) for t in self.topics])

    def _on_subscribe(
        self, client: mqtt.Client, userdata: Any, mid: int, codes: Any, *_: Any
    ) -> None:
        with self._cond:
            self._granted = [c.value for c in codes]
            self._subscribed = True
            self._cond.notify_all()

    def _on_message(self, client: mqtt.Client, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        with self._cond:
            self._received.append(
                Received(msg.topic, bytes(msg.payload), bool(msg.retain), msg.qos)
            )
            self._cond.notify_all()

    def wait_subscribed(self, timeout: float) -> bool:
        """Wait for the SUBACK of the (latest) subscription."""
        with self._cond:
            return self._cond.wait_for(lambda: self._subscribed, timeout)

    @property
    def granted(self) -> list[int]:
        """The granted QoS (or failure code >= 0x80) per topic filter, from the last SUBACK."""
        with self._cond:
            return list(self._granted)

    def messages(self, topic: str | None = None) -> list[Received]:
        """A copy of what arrived so far, optionally only on `topic` (exact or suffix match)."""
        with self._cond:
            return [
                m
                for m in self._received
                if topic is None or m.topic == topic or m.topic.endswith("/" + topic)
            ]

    def wait_for(self, predicate: Callable[[list[Received]], bool], timeout: float = 10.0) -> bool:
        """Wait until `predicate(messages)` is true; False on timeout.

        The predicate runs on a copy, outside the lock, when messages were added since its
        last run, and not again before twice its own run time has passed. A predicate that
        parses every message, run under the lock at each arrival, made a backlog of n
        messages cost O(n²) and held up the network thread (and its PUBACKs) meanwhile:
        3000 events queued over a broker restart then took 25 s or more to come in.
        """
        deadline = time.monotonic() + timeout
        seen = -1
        while True:
            with self._cond:
                while len(self._received) == seen and time.monotonic() < deadline:
                    self._cond.wait(max(0.0, deadline - time.monotonic()))
                received = list(self._received)
            seen = len(received)
            began = time.monotonic()
            if predicate(received):
                return True
            now = time.monotonic()
            if now >= deadline:
                return False
            time.sleep(min(2 * (now - began), deadline - now))

    def publish(self, topic: str, payload: bytes, qos: int = 1, retain: bool = False) -> None:
        """Publish through this client and wait until it was sent (acked for QoS 1)."""
        info = self._client.publish(topic, payload, qos=qos, retain=retain)
        info.wait_for_publish(10)

    def close(self) -> None:
        """Disconnect and stop the network thread."""
        self._client.disconnect()
        self._client.loop_stop()

    def __enter__(self) -> Subscriber:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def install_kit(
    poker: Path,
    tls: TlsFiles,
    *,
    users: dict[str, str] | None = None,
    acl: Path = EXAMPLE_ACL,
    crl: Path | None = None,
) -> Path:
    """What docs/security.md installs in /etc/mosquitto/poker/, in `poker`: the ACL, the
    CA and server certificate, a password file made by make-passwd.sh (`users`) with the
    client file make-clients.sh makes from it, and the revocation list (`crl`, for
    mosquitto-mtls.conf)."""
    poker.mkdir(parents=True, exist_ok=True)
    shutil.copy(acl, poker / "acl")
    files = ((tls.ca_file, "ca.crt"), (tls.cert_file, "server.crt"), (tls.key_file, "server.key"))
    for src, name in files:
        shutil.copy(src, poker / name)
    if crl is not None:
        shutil.copy(crl, poker / "crl.pem")
    if users is not None:
        make_room_passwd(poker / "passwd", users)
        make_room_clients(poker / "passwd", poker / "clients.json")
    return poker


class ShippedBroker(Mosquitto):
    """mosquitto run with a shipped configuration (examples/mosquitto/mosquitto.conf, or
    mosquitto-mtls.conf), only its paths and ports moved: `poker` stands for
    /etc/mosquitto/poker/ (see `install_kit`), the TLS listener 8883 for a free loopback
    port, the plain loopback listener 1883 (mosquitto.conf only) for `plain_port`."""

    def __init__(
        self,
        workdir: Path,
        poker: Path,
        *,
        conf: Path = EXAMPLE_CONF,
        plain_port: int | None = None,
        persistence: bool = False,
    ) -> None:
        passwd = poker / "passwd"
        super().__init__(
            workdir,
            password_file=passwd if passwd.exists() else None,
            acl_file=poker / "acl",
            persistence=persistence,
        )
        self.conf = conf
        self.poker = poker
        self.identity_client_ids = "plugin_opt_config_file" in conf.read_text()
        self.plain_port = plain_port if plain_port is not None else free_port()
        self.tls = TlsFiles(poker / "ca.crt", poker / "server.crt", poker / "server.key")

    @property
    def anonymous(self) -> bool:
        """The shipped configurations never allow anonymous clients."""
        return False

    def _config(self) -> str:
        text = self.conf.read_text()
        moves = [
            ("/etc/mosquitto/poker/", f"{self.poker}/"),
            ("listener 8883\n", f"listener {self.port} 127.0.0.1\n"),
        ]
        if self.conf == EXAMPLE_CONF or "listener 1883 127.0.0.1\n" in text:
            plain = f"listener {self.plain_port} 127.0.0.1\n"
            moves.append(("listener 1883 127.0.0.1\n", plain))
        for old, new in moves:
            assert old in text, f"the shipped {self.conf.name} changed shape: no {old!r}"
            text = text.replace(old, new)
        # What the distribution's main mosquitto.conf provides around the drop-in.
        head = [f"persistence_location {self.workdir}/", "log_type all"]
        if not self.persistence:
            text = text.replace("persistence true\n", "persistence false\n")
        if os.geteuid() == 0:
            head.append("user root")
        return "\n".join(head) + "\n" + text

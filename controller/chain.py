"""The hash chain and the table's signature: what makes an altered record visible.

Two chains run side by side, both SHA-256:

- **the events chain**, carried by every `events` payload in its `chain` field:
  `chain(n) = SHA-256(chain(n-1) as 32 bytes || body(n))`, where `body(n)` is the
  payload as published without its trailing `chain` (and `signature`) members, i.e. the
  compact JSON text up to `,"chain":` followed by `}`. The chain starts from 32 zero bytes
  at seq 1. Every `hand_completed` also carries `signature`: the table's Ed25519 signature
  of its chain value (`signed_message`), so everything up to the end of each hand is signed.
- **the journal chain** (controller/journal.py), carried by every journal record in its
  `h` field, computed the same way over the record's text.

The table's key pair is Ed25519 (`cryptography`): the private key is a PEM (PKCS#8) file,
private to the daemon's user whatever the umask; the public key a PEM
(SubjectPublicKeyInfo) file, registered with the room server. A key is named by its id:
the first 16 hex digits of the SHA-256 of its raw 32 bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from kernel.errors import TableError
from kernel.private import exposure, open_private

#: The chain value before the first event (and before a journal's first record: see journal).
GENESIS = bytes(32)
CHAIN = "chain"
SIGNATURE = "signature"
#: The members the table adds to an `events` payload, in this order, always last.
CHAIN_FIELDS = (CHAIN, SIGNATURE)
_CHAIN_MARK = ',"' + CHAIN + '":"'


class ChainError(TableError):
    """A key file cannot be used, or a record does not hold the chain it should."""


def body_bytes(payload: dict[str, Any]) -> bytes:
    """A payload's body as the chain hashes it: compact JSON, key order kept, without the
    chain members (the bytes the table publishes up to `,"chain":`, plus `}`)."""
    plain = {k: v for k, v in payload.items() if k not in CHAIN_FIELDS}
    return json.dumps(plain, separators=(",", ":"), ensure_ascii=False).encode()


def link(previous: bytes, body: bytes) -> bytes:
    """The chain value after `body`: SHA-256(previous || body)."""
    return hashlib.sha256(previous + body).digest()


def split_text(text: str) -> tuple[str, str | None]:
    """(body, chain hex) of a published `events` payload's text: the body is the text up to
    its last `,"chain":"` member, closed with `}`; (text, None) when it has no chain."""
    at = text.rfind(_CHAIN_MARK)
    if at < 0:
        return text, None
    value = text[at + len(_CHAIN_MARK) : at + len(_CHAIN_MARK) + 64]
    return text[:at] + "}", value


def signed_message(table: str, seq: int, chain: bytes) -> bytes:
    """What a chain signature signs: the table, the seq and the chain value there."""
    return b"tablectl-chain v1 %s %d " % (table.encode(), seq) + chain


def key_id(public: Ed25519PublicKey) -> str:
    """16 hex digits naming a public key."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Signer:
    """The table's private key: signs chain heads."""

    private: Ed25519PrivateKey

    @property
    def public(self) -> Ed25519PublicKey:
        """Its public key."""
        return self.private.public_key()

    @property
    def key_id(self) -> str:
        """The id of its public key."""
        return key_id(self.public)

    def sign(self, message: bytes) -> str:
        """The signature of `message`, base64."""
        return base64.b64encode(self.private.sign(message)).decode()

    def signature(self, table: str, seq: int, chain: bytes) -> dict[str, str]:
        """The `signature` member of a signed event."""
        return {"key": self.key_id, "sig": self.sign(signed_message(table, seq, chain))}


@dataclass(frozen=True, slots=True)
class Verifier:
    """A table's public key: checks its signatures."""

    public: Ed25519PublicKey

    @property
    def key_id(self) -> str:
        """The id of the key."""
        return key_id(self.public)

    def check(self, message: bytes, signature: str) -> bool:
        """True when `signature` (base64) is this key's signature of `message`."""
        try:
            raw = base64.b64decode(signature, validate=True)
            self.public.verify(raw, message)
        except (InvalidSignature, ValueError):
            return False
        return True

    def pem(self) -> str:
        """The public key as PEM text."""
        return self.public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode()


def generate_keys(private_path: Path, public_path: Path | None = None) -> Signer:
    """A new key pair: the private key written 0600 (whatever the umask), the public key
    beside it (`<private>.pub` unless given). Refuses to overwrite a private key."""
    if private_path.exists():
        raise ChainError(f"{private_path} exists: a table key is never overwritten")
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    try:
        private_path.parent.mkdir(parents=True, exist_ok=True)
        with open_private(private_path) as fh:
            fh.write(pem)
            fh.flush()
            os.fsync(fh.fileno())
        signer = Signer(private)
        target = public_path or public_key_path(private_path)
        target.write_text(Verifier(signer.public).pem(), encoding="ascii")
    except OSError as exc:
        raise ChainError(f"{private_path}: {exc.strerror or exc}") from exc
    return signer


def public_key_path(private_path: Path) -> Path:
    """Where the public key of a private key file is written: `<name>.pub` beside it."""
    return private_path.with_name(private_path.name.removesuffix(".key") + ".pub")


def load_signer(path: Path) -> Signer:
    """The private key of a PEM file that no other user can read (ChainError otherwise)."""
    problem = exposure(path)
    if problem is not None:
        raise ChainError(f"{path} {problem}")
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as exc:
        raise ChainError(f"{path}: {exc.strerror or exc}") from exc
    except (ValueError, TypeError) as exc:
        raise ChainError(f"{path}: not a PEM private key ({exc})") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ChainError(f"{path}: not an Ed25519 key (make one with `tablectl keygen`)")
    return Signer(key)


def load_verifier(path: Path) -> Verifier:
    """A public key from a PEM file (SubjectPublicKeyInfo), or the public half of a
    private key file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ChainError(f"{path}: {exc.strerror or exc}") from exc
    return verifier_from_pem(data, str(path))


def verifier_from_pem(data: bytes, where: str = "public key") -> Verifier:
    """A public key from PEM bytes (a private key's public half is taken too)."""
    try:
        if b"PRIVATE KEY" in data:
            private = serialization.load_pem_private_key(data, password=None)
            if not isinstance(private, Ed25519PrivateKey):
                raise ChainError(f"{where}: not an Ed25519 key")
            return Verifier(private.public_key())
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise ChainError(f"{where}: not a PEM key ({exc})") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise ChainError(f"{where}: not an Ed25519 public key")
    return Verifier(key)


class EventChain:
    """The table's side of the events chain: adds `chain` (and, on `hand_completed`, the
    `signature`) to each `events` payload, in order."""

    def __init__(self, head: bytes = GENESIS, signer: Signer | None = None) -> None:
        self.head = head
        self.signer = signer

    def extend(self, payload: dict[str, Any], *, sign: bool = False) -> dict[str, Any]:
        """The payload as published: its body, then `chain`, then (when `sign` and a key is
        there) `signature`."""
        self.head = link(self.head, body_bytes(payload))
        out = {k: v for k, v in payload.items() if k not in CHAIN_FIELDS}
        out[CHAIN] = self.head.hex()
        if sign and self.signer is not None:
            seq = payload.get("seq")
            out[SIGNATURE] = self.signer.signature(
                str(payload.get("table", "")), int(seq) if isinstance(seq, int) else 0, self.head
            )
        return out


def read_chain(payload: dict[str, Any]) -> bytes | None:
    """The chain value an `events` payload carries (None when it has none or it is not
    64 hex digits)."""
    value = payload.get(CHAIN)
    if not isinstance(value, str) or len(value) != 64:
        return None
    try:
        return bytes.fromhex(value)
    except ValueError:
        return None

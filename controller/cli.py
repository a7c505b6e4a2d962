"""`tablectl`: run the daemon, a whole simulated table, replay a trace, register a deck."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import random
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from controller.config import Config, load_config
from controller.errors import TableError
from controller.trace import Badge, Event, load_trace

DEFAULT_SIM_CONFIG = Path("examples/sim-table.toml")


def _config(path: Path | None, profile: str | None = None) -> Config:
    if path is None:
        if not DEFAULT_SIM_CONFIG.exists():
            raise TableError(
                f"no --config given and {DEFAULT_SIM_CONFIG} not found (run from the repository)"
            )
        path = DEFAULT_SIM_CONFIG
    return load_config(path, profile_override=profile)


def cmd_replay(args: argparse.Namespace) -> int:
    """`tablectl replay TRACE --config FILE [--profile NAME]`."""
    from controller.replay import replay_path

    config = _config(args.config)
    # Another profile changes what the engine says (house rule numbers): nothing to verify.
    verify = args.profile in (None, config.rules.profile)
    if not verify:
        config = _config(args.config, args.profile)
    result = replay_path(config, args.trace, sys.stdout, verify=verify)
    for problem in result.mismatches:
        print(f"replay: differs from the journal: {problem}", file=sys.stderr)
    if result.mismatches:
        print(
            f"replay: {len(result.mismatches)} input(s) replay differently from what was "
            "published (another software version or configuration?)",
            file=sys.stderr,
        )
        return 3
    return 0


def _wait_for_signal(stop: threading.Event) -> None:
    def handler(signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def cmd_run(args: argparse.Namespace) -> int:
    """`tablectl run --config FILE`: the daemon on the configured backends."""
    from controller.daemon import Daemon

    config = _config(args.config)
    if config.broker.host is None:
        raise TableError(f"{config.path}: [broker] host: required by `tablectl run`")
    daemon = Daemon(config)
    stop = threading.Event()
    _wait_for_signal(stop)
    daemon.start()
    logging.getLogger("tablectl").info("table %s running", config.table.id)
    while not stop.wait(1.0) and daemon.failed is None:
        pass
    daemon.stop()
    if daemon.failed is not None:
        print(f"tablectl: stopped: {daemon.failed}", file=sys.stderr)
        return 1  # systemd restarts the unit (Restart=on-failure); recovery reads the journal
    return 0


def demo_script(config: Config, hands: int, seed: int) -> list[Event]:
    """The built-in demo: seat every seat, then deal `hands` random, legal hands."""
    from controller.replay import build_engine
    from firmware_sim.dealer import DealerClock, TableDealer, seat_players
    from firmware_sim.plans import random_hand

    seats = list(config.seat_numbers)
    names = [
        "Alice",
        "Bruno",
        "Chiara",
        "Dario",
        "Elena",
        "Fabio",
        "Giulia",
        "Hugo",
        "Irene",
        "Jonas",
    ]
    events = seat_players(
        [(s, names[s - 1], 20_000) for s in seats], (100, 200, 0), button=seats[-1]
    )
    shadow = build_engine(config)
    for event in events:
        shadow.apply(event)
    rng = random.Random(seed)
    dealer = TableDealer(DealerClock(0.5), settle=config.rules.settle_seconds)
    badge = _demo_dealer_badge(config)
    for number in range(hands):
        hand = random_hand(shadow, dealer, rng)
        if number == 0 and badge is not None and hand:
            # The dealer taps the badge in as the first hand starts (dealer push, rule 23).
            t = hand[0].t
            hand[1:1] = [Badge(t, badge), Badge(t, badge, removed=True)]
        for event in hand:
            shadow.apply(event)
        events.extend(hand)
        dealer.clock.step(1.0)
    return events


def _demo_dealer_badge(config: Config) -> str | None:
    """The first dealer's badge uid, on a table with a simulated badge reader."""
    if config.badge.backend != "sim" or config.badge.staff is None:
        return None
    from controller.staff import load_staff

    dealers = [m for m in load_staff(config.badge.staff).members() if m.role == "dealer"]
    return dealers[0].uid if dealers else None


class _Watcher:
    """Prints what a room server and the TV crew would see, one line per message."""

    def __init__(self, host: str, port: int, prefix: str) -> None:
        from paho.mqtt.client import Client
        from paho.mqtt.enums import CallbackAPIVersion

        self.client = Client(CallbackAPIVersion.VERSION2, client_id="tablectl-sim-watch")
        self.prefix = prefix
        self.client.on_message = self._on_message
        self.client.on_connect = lambda c, *_a: c.subscribe(f"{prefix}/#", qos=1)
        self.client.connect(host, port)
        self.client.loop_start()

    def _on_message(self, _c: object, _u: object, msg: object) -> None:
        topic = getattr(msg, "topic", "")[len(self.prefix) + 1 :]
        if topic == "state":
            return
        payload = getattr(msg, "payload", b"").decode(errors="replace")
        print(f"{topic:10} {payload}", flush=True)

    def stop(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def cmd_sim(args: argparse.Namespace) -> int:
    """`tablectl sim [--config FILE]`: simulators + daemon + dealing, on a local broker."""
    from controller.daemon import Daemon
    from controller.localbroker import LocalBroker
    from firmware_sim.player import ScriptPlayer

    config = _config(args.config, args.profile)
    local: LocalBroker | None = None
    broker = config.broker
    if broker.host is None:
        local = LocalBroker(args.broker_port)
        local.start()
        broker = dataclasses.replace(broker, host="127.0.0.1", port=local.port)
        print(
            f"local mosquitto on 127.0.0.1:{local.port}; watch it with:\n"
            f"  mosquitto_sub -h 127.0.0.1 -p {local.port} -t '{broker.prefix}/#' -v",
            flush=True,
        )
    if not args.keep_journal:
        journal_dir = Path(tempfile.mkdtemp(prefix="tablectl-sim-"))
        config = dataclasses.replace(
            config,
            journal=dataclasses.replace(
                config.journal, path=journal_dir / "sim.journal", directory=None
            ),
        )
    print(f"journal: {config.journal.directory or config.journal.path}", flush=True)
    script = args.script or config.sim.script
    hands = args.hands if args.hands is not None else (config.sim.hands or 3)
    events = load_trace(script) if script else demo_script(config, hands, args.seed)
    daemon = Daemon(config, broker=broker)
    stop = threading.Event()
    _wait_for_signal(stop)
    watcher: _Watcher | None = None
    try:
        daemon.start()
        if not args.quiet:
            watcher = _Watcher(broker.host or "127.0.0.1", broker.port, broker.prefix)
        time.sleep(0.5)  # the reader boards say HELLO first
        player = ScriptPlayer(daemon, speed=args.speed or config.sim.speed)
        played = player.play(events, stop)
        time.sleep(1.0)
        if daemon.publisher is not None:
            daemon.publisher.wait_idle(5.0)
        print(
            f"sim: played {played} script events, engine applied {daemon.applied}, "
            f"last seq {daemon.engine.seq}",
            flush=True,
        )
    finally:
        if watcher is not None:
            watcher.stop()
        daemon.stop()
        if local is not None:
            local.stop()
    return 0


def cmd_register_deck(args: argparse.Namespace) -> int:
    """`tablectl register-deck`: read 52 cards one by one on the registration antenna."""
    from controller.register_deck import register_deck

    config = _config(args.config)
    antenna = args.antenna or ("register" if "register" in config.card_reader.antennas else "muck")
    return register_deck(
        config,
        args.out,
        args.deck_id,
        antenna=antenna,
        simulate=args.simulate,
        timeout=float(args.timeout),
    )


def cmd_antennas(args: argparse.Namespace) -> int:
    """`tablectl antennas`: which antenna of a reader board reads which tag, live."""
    from controller.antennas import check_antennas

    return check_antennas(
        _config(args.config), args.reader, seconds=args.seconds, simulate=args.simulate
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (CONTRACT section 1)."""
    parser = argparse.ArgumentParser(prog="tablectl", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="the table daemon on the configured backends")
    p.add_argument("--config", type=Path, required=True)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("sim", help="a whole simulated table against a local broker")
    p.add_argument("--config", type=Path, default=None)
    p.add_argument("--profile", default=None)
    p.add_argument("--script", type=Path, default=None, help="a dealing script (trace format)")
    p.add_argument("--hands", type=int, default=None, help="demo hands to deal (default 3)")
    p.add_argument("--seed", type=int, default=1, help="demo shuffle seed")
    p.add_argument("--speed", type=float, default=None, help="time scale (2 = twice as fast)")
    p.add_argument("--broker-port", type=int, default=None)
    p.add_argument("--keep-journal", action="store_true", help="use the configured journal")
    p.add_argument("--quiet", action="store_true", help="do not print the published messages")
    p.set_defaults(func=cmd_sim)

    p = sub.add_parser("replay", help="feed a trace through the engine, print every message")
    p.add_argument(
        "trace", type=Path, help="a trace or journal file, or a journal directory (all segments)"
    )
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--profile", default=None)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("register-deck", help="register a deck's 52 tags, one card at a time")
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True, help="deck file to write")
    p.add_argument("--deck-id", required=True)
    p.add_argument(
        "--antenna",
        default=None,
        help="antenna the cards are read on (default: 'register' if the card "
        "reader has one, else 'muck')",
    )
    p.add_argument("--timeout", type=float, default=600.0, help="give up after this long")
    p.add_argument(
        "--simulate",
        action="store_true",
        help="sim backend: place 52 simulated tags on the antenna",
    )
    p.set_defaults(func=cmd_register_deck)

    p = sub.add_parser("antennas", help="show live which antenna of a reader reads which tag")
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--reader", default="cards", choices=["cards", "chips"])
    p.add_argument("--seconds", type=float, default=None, help="stop after this long")
    p.add_argument(
        "--simulate", action="store_true", help="sim backend: walk a tag across every antenna"
    )
    p.set_defaults(func=cmd_antennas)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `tablectl` console script."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.func(args))
    except TableError as exc:
        print(f"tablectl: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())

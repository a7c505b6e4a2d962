"""`tablectl`: run the daemon, a whole simulated table, replay a trace, register a deck."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import random
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.config import BrokerConfig, Config, load_config, with_game
from controller.errors import TableError
from controller.trace import Badge, Command, Event, load_trace

if TYPE_CHECKING:
    from broadcast.sim import SimTv
    from controller.watch import WatchIdentity

DEFAULT_SIM_CONFIG = Path("examples/sim-table.toml")
#: Simulated seconds the sim runs on after the script, for the timers it left running.
SIM_TAIL = 2.0


def speed_arg(text: str) -> float:
    """`--speed`: a time scale above 0 (2 = twice as fast), or `max` (as fast as it goes)."""
    if text.strip().lower() in ("max", "inf"):
        return math.inf
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number or 'max': {text!r}") from None
    if not value > 0 or math.isnan(value):
        raise argparse.ArgumentTypeError(f"must be above 0 (or 'max'): {text!r}")
    return value


def _config(path: Path | None, profile: str | None = None) -> Config:
    if path is None:
        if not DEFAULT_SIM_CONFIG.exists():
            raise TableError(
                f"no --config given and {DEFAULT_SIM_CONFIG} not found (run from the repository)"
            )
        path = DEFAULT_SIM_CONFIG
    return load_config(path, profile_override=profile)


def cmd_replay(args: argparse.Namespace) -> int:
    """`tablectl replay TRACE --config FILE [--profile NAME] [--game GAME]`."""
    from controller.replay import replay_path

    config = _config(args.config)
    # Another profile or game changes what the engine says: nothing to verify.
    verify = args.profile in (None, config.rules.profile) and args.game in (
        None,
        config.rules.game,
    )
    if args.profile not in (None, config.rules.profile):
        config = _config(args.config, args.profile)
    config = with_game(config, args.game)
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
    return list(demo_events(config, hands, seed))


#: A stack the demo tops up between hands (the `stack` command), and the stack it gives.
TOP_UP_BELOW, TOP_UP_TO = 2_000, 20_000


def demo_events(
    config: Config, hands: int | None, seed: int, *, chip_set: int | None = None
) -> Iterator[Event]:
    """The demo's events, made as they are played: seat every seat, then `hands` random,
    legal hands (None: without end). With `chip_set`, stacks that ran low are topped up
    before a hand (a day of play goes on) and chip ids are reused from a set of that many,
    as a table's chips are, so a soak sees what a day does to the table, not a new chip
    for every push."""
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
    shadow = build_engine(config)
    for event in seat_players(
        [(s, names[s - 1], TOP_UP_TO) for s in seats], (100, 200, 0), button=seats[-1]
    ):
        shadow.apply(event)
        yield event
    rng = random.Random(seed)
    dealer = TableDealer(DealerClock(0.5), settle=config.rules.settle_seconds)
    badge = _demo_dealer_badge(config)
    number = 0
    while hands is None or number < hands:
        hand: list[Event] = []
        if chip_set is not None:
            dealer.serial %= chip_set
            hand += [
                Command(dealer.clock.t, "stack", {"seat": n, "stack": TOP_UP_TO})
                for n, seat in sorted(shadow.seats.items())
                if seat.player is not None and seat.stack < TOP_UP_BELOW
            ]
        for event in hand:
            shadow.apply(event)
        dealt = random_hand(shadow, dealer, rng)
        dealer.events.clear()  # the dealer's record of the hand: given back, not kept
        if number == 0 and badge is not None and dealt:
            # The dealer taps the badge in as the first hand starts (dealer push, rule 23).
            t = dealt[0].t
            dealt[1:1] = [Badge(t, badge), Badge(t, badge, removed=True)]
        for event in dealt:
            shadow.apply(event)
        yield from hand + dealt
        dealer.clock.step(1.0)
        number += 1


def _demo_dealer_badge(config: Config) -> str | None:
    """The first dealer's badge uid, on a table with a simulated badge reader."""
    if config.badge.backend != "sim" or config.badge.staff is None:
        return None
    from controller.staff import load_staff

    dealers = [m for m in load_staff(config.badge.staff).members() if m.role == "dealer"]
    return dealers[0].uid if dealers else None


class _Watcher:
    """Prints what a room server and the TV crew would see, one line per message: over the
    broker's TLS, as the identity given (controller/watch.py), never as the table."""

    def __init__(self, broker: BrokerConfig, identity: WatchIdentity, prefix: str) -> None:
        from controller.watch import watch_client

        self.client = watch_client(broker, identity)
        self.prefix = prefix
        self.client.on_message = self._on_message

        def on_connect(c: Any, _u: object, _f: object, reason: Any, _p: object) -> None:
            if reason.is_failure:
                print(f"watch: the broker refused the printer: {reason}", file=sys.stderr)
            else:
                c.subscribe(f"{prefix}/#", qos=1)

        self.client.on_connect = on_connect
        self.client.connect_async(str(broker.host), broker.port)
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
    """`tablectl sim [--config FILE] [--tables N]`: simulators + daemons + dealing, on a
    local broker; each table on its own virtual clock (simulated time)."""
    from controller.localbroker import LocalBroker
    from controller.simtables import MAX_TABLES, table_config

    if not 1 <= args.tables <= MAX_TABLES:
        raise TableError(f"--tables: 1 to {MAX_TABLES}, not {args.tables}")
    if args.tournament is not None:  # a whole tournament: room/tournament/sim.py
        from room.tournament.sim import run_tournament_sim

        return run_tournament_sim(lambda house: _config(args.config, args.profile or house), args)
    if args.tables > 1 and args.keep_journal:
        raise TableError("--keep-journal runs one table (the configured journal is one table's)")
    config = _config(args.config, args.profile)
    local: LocalBroker | None = None
    broker = config.broker
    if broker.host is None:
        local = LocalBroker(args.broker_port)
        local.start()
        broker = dataclasses.replace(broker, host="127.0.0.1", port=local.port)
        topics = _watch_prefix(broker.prefix, args.tables)
        print(
            f"local mosquitto on 127.0.0.1:{local.port}; watch it with:\n"
            f"  mosquitto_sub -h 127.0.0.1 -p {local.port} -t '{topics}/#' -v",
            flush=True,
        )
    script = args.script or config.sim.script
    hands = args.hands if args.hands is not None else (config.sim.hands or 3)
    tables: list[_SimTable] = []
    for index in range(args.tables):
        journal = None
        if not args.keep_journal:
            journal = Path(tempfile.mkdtemp(prefix="tablectl-sim-")) / "sim.journal"
        cfg = table_config(config, index, journal)
        which = f" (table {cfg.table.id})" if args.tables > 1 else ""
        print(f"journal: {cfg.journal.directory or cfg.journal.path}{which}", flush=True)
        events = load_trace(script) if script else demo_script(cfg, hands, args.seed + index)
        table_broker = dataclasses.replace(cfg.broker, host=broker.host, port=broker.port)
        tables.append(_SimTable(cfg, table_broker, events))
    identity: WatchIdentity | None = None
    if not args.quiet:
        from controller.watch import watch_identity

        identity = watch_identity(broker, args.watch_credentials, args.watch_cert, args.watch_key)
        if identity is None:
            print(
                "not printing the messages: the broker wants an identity and the table's "
                "must not be used twice; give --watch-credentials (or --watch-cert and "
                "--watch-key) of a reading identity, e.g. the room's",
                flush=True,
            )
    tv = _start_sim_tv(args, broker, local is not None, config.table.id)
    stop = threading.Event()
    _wait_for_signal(stop)
    watcher: _Watcher | None = None
    room = None
    started: list[_SimTable] = []
    try:
        if args.room:  # the room server on the same broker (room/sim.py)
            from room.sim import start_sim_room

            workdir = Path(tempfile.mkdtemp(prefix="tablectl-sim-room-"))
            host = broker.host or "127.0.0.1"
            room = start_sim_room(config.table.room, host, broker.port, workdir)
            print(f"room server: {room.url} (API docs: {room.url}docs)", flush=True)
            print(f"room monitor: {room.url} (open it in a browser)", flush=True)
        for table in tables:
            table.daemon.start()
            started.append(table)
        if identity is not None:
            watcher = _Watcher(broker, identity, _watch_prefix(broker.prefix, args.tables))
        time.sleep(0.5)  # the reader boards say HELLO first
        speed = args.speed if args.speed is not None else config.sim.speed
        _play_tables(tables, speed, stop)
        for table in tables:
            which = f" (table {table.config.table.id})" if args.tables > 1 else ""
            print(
                f"sim: played {table.played} script events, engine applied "
                f"{table.daemon.applied}, last seq {table.daemon.engine.seq}{which}",
                flush=True,
            )
        if room is not None:
            print(room.summary(max(t.daemon.engine.seq for t in tables)), flush=True)
    finally:
        if watcher is not None:
            watcher.stop()
        if tv is not None:
            tv.finish()
        for table in started:
            table.daemon.stop()
        if room is not None:
            room.stop()
        if local is not None:
            local.stop()
    return 0


def _watch_prefix(prefix: str, tables: int) -> str:
    """What the printer subscribes to: the table's topics, or the room's for many tables."""
    return prefix if tables == 1 else prefix.rpartition("/")[0] or prefix


class _SimTable:
    """One simulated table of `tablectl sim`: its daemon on its own virtual clock
    (controller/clock.py), which its script player steps, so --speed paces the game
    without changing it."""

    def __init__(self, config: Config, broker: BrokerConfig, events: list[Event]) -> None:
        from controller.clock import ManualClock
        from controller.daemon import Daemon

        self.config = config
        self.events = events
        self.clock = ManualClock(0.0, wall_start=float(int(time.time())))
        self.daemon = Daemon(config, broker=broker, clock=self.clock)
        self.played = 0

    def play(self, speed: float, stop: threading.Event) -> None:
        """Play the script, then let the timers it left running fire; wait for the broker."""
        from firmware_sim.player import ScriptPlayer

        player = ScriptPlayer(self.daemon, speed=speed, clock=self.clock)
        self.played = player.play(self.events, stop)
        player.advance(round(self.daemon.now() + SIM_TAIL, 6))
        if self.daemon.publisher is not None:
            self.daemon.publisher.wait_idle(5.0)


def _play_tables(tables: Sequence[_SimTable], speed: float, stop: threading.Event) -> None:
    """Play every table at once, each in its own thread (one table: in this one)."""
    if len(tables) == 1:
        tables[0].play(speed, stop)
        return
    threads = [
        threading.Thread(target=t.play, args=(speed, stop), name=f"sim-{t.config.table.id}")
        for t in tables
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(0.5)  # signals reach the main thread meanwhile


def _start_sim_tv(
    args: argparse.Namespace, broker: BrokerConfig, local: bool, table: str
) -> SimTv | None:
    """The TV service on the simulated table (docs/tv.md); None with --no-tv."""
    if args.no_tv:
        return None
    if not local:
        print("tv: not started (the config names a broker: run `tablectl tv`)", flush=True)
        return None
    from broadcast.sim import start_sim_tv

    return start_sim_tv(broker, broker.prefix, table, delay=args.tv_delay, port=args.tv_port)


def cmd_tv(args: argparse.Namespace) -> int:
    """`tablectl tv --config FILE`: the TV production service (docs/tv.md)."""
    from broadcast.cli import run_tv

    return run_tv(args.config)


def cmd_export_phh(args: argparse.Namespace) -> int:
    """`tablectl export-phh TRACE_OR_JOURNAL --config FILE --out DIR`: PHH hand histories."""
    from controller.export_phh import export_phh

    result = export_phh(_config(args.config), args.trace, args.out)
    for hand in result.skipped:
        print(f"export-phh: hand {hand.hand} not written: {hand.problem}", file=sys.stderr)
    print(f"export-phh: {len(result.written)} hand(s) written to {args.out}")
    return 0


def cmd_room(args: argparse.Namespace) -> int:
    """`tablectl room ...`: the room server and its tools (room/cli.py parses the rest)."""
    from room.cli import main as room_main

    return room_main(args.rest)


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
    """The argument parser (the commands of README.md, "The command line")."""
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
    p.add_argument(
        "--seed", type=int, default=1, help="demo shuffle seed (table N: the seed + N - 1)"
    )
    p.add_argument(
        "--speed",
        type=speed_arg,
        default=None,
        help="pace of simulated time (2 = twice as fast, max = as fast as the machine goes); "
        "the same seed plays the same game at any speed",
    )
    p.add_argument(
        "--tables",
        type=int,
        default=1,
        help="simulated tables in one run, on one broker: each its own table id (t01, t02, "
        "...), topics, journal, seed and clock",
    )
    p.add_argument("--broker-port", type=int, default=None)
    p.add_argument("--keep-journal", action="store_true", help="use the configured journal")
    p.add_argument("--quiet", action="store_true", help="do not print the published messages")
    p.add_argument(
        "--watch-credentials",
        type=Path,
        default=None,
        help="against a configured broker: the credentials file the printer connects with "
        "(a reading identity such as the room's, never the table's)",
    )
    p.add_argument("--watch-cert", type=Path, default=None, help="the printer's client cert")
    p.add_argument("--watch-key", type=Path, default=None, help="the printer's client key")
    p.add_argument("--no-tv", action="store_true", help="do not start the TV service")
    p.add_argument("--tv-port", type=int, default=None, help="TV pages port (default 8088)")
    p.add_argument("--tv-delay", type=float, default=None, help="TV secure delay (default 5 s)")
    p.add_argument(
        "--room",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="also run the room server on the local broker and print its URL",
    )
    p.add_argument(
        "--tournament",
        type=Path,
        default=None,
        help="play a whole tournament from this file on the tables, the room running it "
        "(docs/tournament.md)",
    )
    p.add_argument(
        "--floor",
        choices=["auto", "manual"],
        default="auto",
        help="with --tournament: a simulated floor confirms what the room proposes (auto), "
        "or you do, on the floor page (manual)",
    )
    p.add_argument(
        "--floor-delay", type=float, default=1.0, help="seconds the simulated floor takes"
    )
    p.add_argument("--room-port", type=int, default=None, help="the room server's HTTP port")
    p.set_defaults(func=cmd_sim)

    p = sub.add_parser("tv", help="the TV production service: overlay pages, secure delay, feed")
    p.add_argument("--config", type=Path, required=True)
    p.set_defaults(func=cmd_tv)

    p = sub.add_parser("replay", help="feed a trace through the engine, print every message")
    p.add_argument(
        "trace", type=Path, help="a trace or journal file, or a journal directory (all segments)"
    )
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--profile", default=None)
    p.add_argument("--game", default=None, help="nlhe, plhe or flhe instead of [rules] game")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("export-phh", help="PHH hand histories of a journal or trace")
    p.add_argument("trace", type=Path, help="a trace or journal file, or a journal directory")
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--out", type=Path, default=Path("."), help="directory for the .phh files")
    p.set_defaults(func=cmd_export_phh)

    # `tablectl room --config FILE`, `tablectl room export --phh DIR ...`: parsed by room/cli.py
    p = sub.add_parser(  # every argument, options included, goes to room/cli.py
        "room", help="the room server (docs/room.md)", add_help=False, prefix_chars="\x00"
    )
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_room)

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

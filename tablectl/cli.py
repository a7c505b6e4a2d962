"""`tablectl`: run the daemon, a whole simulated table, replay a trace, register a deck."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import math
import shutil
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller import __version__
from controller.config import GAMES, PROFILES, BrokerConfig, Config, with_game
from controller.simview import Feed, JudgingPrinter, LiveView, Sink, make_console
from controller.supervision import stop_on_signals
from controller.trace import load_trace
from kernel.errors import TableError
from kernel.inputs import Event
from sim.demo import demo_events, demo_script
from sim.tables import (
    DEFAULT_SIM_CONFIG,
    MAX_TABLES,
    SIM_TAIL,
    sim_signing_key,
    sim_table_file,
    speed_arg,
)

__all__ = ["build_parser", "demo_events", "demo_script", "main", "trace_headers"]

if TYPE_CHECKING:
    from broadcast.sim import SimTv
    from controller.chain import Verifier
    from controller.engine import Engine
    from controller.watch import WatchIdentity



def bounded_int(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` (to `high`)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low or (high is not None and value > high):
            span = f"{low} to {high}" if high is not None else f"{low} or more"
            raise argparse.ArgumentTypeError(f"must be {span}, not {value}")
        return value

    return parse


def seconds_arg(text: str) -> float:
    """A duration in seconds: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, not {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """A duration in seconds above 0."""
    value = seconds_arg(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be above 0 seconds")
    return value


def trace_headers(path: Path) -> dict[str, str]:
    """The `# profile: NAME` and `# game: GAME` lines heading a trace file (the comment
    lines before its first input); {} for a directory or a journal."""
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for raw in fh:
                line = raw.strip()
                if not line:
                    continue
                if not line.startswith("#"):
                    break
                key, sep, value = line[1:].partition(":")
                if sep and key.strip() in ("profile", "game") and key.strip() not in out:
                    out[key.strip()] = value.strip()
    except OSError:
        return {}
    return out


def _with_headers(
    config: Config,
    config_path: Path | None,
    trace: Path,
    headers: dict[str, str],
    profile: str | None,
    game: str | None,
    command: str,
) -> Config:
    """The configuration a trace's headers ask for: `# profile:` and `# game:` are honoured
    unless the command line names another (then the command line wins, and says so)."""
    for key, given, known in (("profile", profile, PROFILES), ("game", game, GAMES)):
        named = headers.get(key)
        if named is None:
            continue
        if named not in known:
            raise TableError(
                f"{trace}: its '# {key}: {named}' header is not one of {', '.join(known)}"
            )
        if given is not None and given != named:
            print(
                f"{command}: --{key} {given} instead of the trace's '# {key}: {named}'",
                file=sys.stderr,
            )
    if profile is None and "profile" in headers:
        config = _config(config_path, headers["profile"])
    return with_game(config, game or headers.get("game"))


def _config(path: Path | None, profile: str | None = None) -> Config:
    return sim_table_file(path, profile)


def cmd_replay(args: argparse.Namespace) -> int:
    """`tablectl replay TRACE --config FILE [--profile NAME] [--game GAME]`."""
    from controller.replay import replay_path

    config = _config(args.config)
    if not args.trace.exists():
        raise TableError(f"{args.trace}: no such trace, journal or journal directory")
    # Another profile or game changes what the engine says: nothing to verify.
    verify = args.profile in (None, config.rules.profile) and args.game in (
        None,
        config.rules.game,
    )
    if args.profile not in (None, config.rules.profile):
        config = _config(args.config, args.profile)
    config = with_game(config, args.game)
    headers = trace_headers(args.trace)
    if headers:  # a scenario trace: replayed under the profile and game it names
        config = _with_headers(
            config, args.config, args.trace, headers, args.profile, args.game, "replay"
        )
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


def cmd_run(args: argparse.Namespace) -> int:
    """`tablectl run --config FILE`: the daemon on the configured backends."""
    from controller.daemon import Daemon

    config = _config(args.config)
    if config.broker.host is None:
        raise TableError(f"{config.path}: [broker] host: required by `tablectl run`")
    daemon = Daemon(config)
    stop = threading.Event()
    stop_on_signals(stop)
    daemon.start()
    logging.getLogger("tablectl").info("table %s running", config.table.id)
    while not stop.wait(1.0) and daemon.failed is None:
        pass
    daemon.stop()
    if daemon.failed is not None:
        print(f"tablectl: stopped: {daemon.failed}", file=sys.stderr)
        return 1  # systemd restarts the unit (Restart=on-failure); recovery reads the journal
    return 0


@dataclasses.dataclass
class _Run:
    """What one `tablectl sim` run started, for its view, its summary and its clean exit."""

    live: LiveView | None
    workdir: Path | None  # the run's temporary folder (journals, room database)
    keep_files: bool
    links: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    files: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    printer: JudgingPrinter | None = None  # --json: the messages printed, the hands judged

    def say(self, text: str) -> None:
        """A line for people: printed as is with --json, in the view otherwise."""
        if self.live is None:
            print(text, flush=True)
        else:
            self.live.note(text)

    def link(self, name: str, url: str, raw: str | None = None) -> None:
        """A URL for the header and the summary (`raw`: the --json line, as it always was)."""
        self.links.append((name, url))
        if self.live is None and raw is not None:
            print(raw, flush=True)

    def remove_workdir(self) -> None:
        if self.workdir is not None and not self.keep_files:
            shutil.rmtree(self.workdir, ignore_errors=True)


def _sim_script(args: argparse.Namespace, config: Config) -> tuple[Config, Path | None]:
    """The dealing script (--script or [sim] script), read and checked before anything is
    started, and the configuration under its `# profile:` / `# game:` headers."""
    script: Path | None = args.script or config.sim.script
    if script is None:
        return config, None
    if not script.is_file():
        raise TableError(f"--script {script}: no such file")
    headers = trace_headers(script)
    config = _with_headers(config, args.config, script, headers, args.profile, None, "sim")
    return config, script


def cmd_sim(args: argparse.Namespace) -> int:
    """`tablectl sim [--config FILE] [--tables N]`: simulators + daemons + dealing, on a
    local broker; each table on its own virtual clock (simulated time). Every process and
    folder it starts goes away on any exit; the pages stay up until Ctrl-C."""
    if args.tournament is not None:  # a whole tournament: tablectl/tournament_sim.py
        from tablectl.tournament_sim import run_tournament_sim

        return run_tournament_sim(lambda house: _config(args.config, args.profile or house), args)
    if args.tables > 1 and args.keep_journal:
        raise TableError("--keep-journal runs one table (the configured journal is one table's)")
    config = _config(args.config, args.profile)
    config, script = _sim_script(args, config)
    trace = load_trace(script) if script is not None else None  # a bad script stops here
    hands = _sim_hands(args, config, trace)
    if not args.json:
        logging.getLogger().setLevel(logging.DEBUG if args.verbose else logging.WARNING)
    stop = threading.Event()
    stop_on_signals(stop, hangup=True)
    with contextlib.ExitStack() as cleanup:
        run = _Run(
            live=None if args.json else LiveView(make_console(), [], None),
            workdir=Path(tempfile.mkdtemp(prefix="tablectl-sim-")),
            keep_files=args.keep_files,
        )
        cleanup.callback(run.remove_workdir)
        broker = _sim_broker(args, config, run, cleanup)
        tables, configs = _sim_tables(args, config, broker, run, trace, hands)
        if run.live is not None:
            run.live = LiveView(
                run.live.console,
                [c.table.id for c in configs],
                None if trace is not None else hands,
            )
        identity = _sim_watcher(args, broker, run)
        tv = _start_sim_tv(args, broker, broker is not config.broker, config.table.id, run)
        if tv is not None:
            cleanup.callback(tv.service.stop)
        room = _sim_room(args, config, broker, configs, run, cleanup)
        for table in tables:
            cleanup.callback(table.daemon.stop)
            table.daemon.start()
        _sim_view(args, broker, identity, run, cleanup)
        speed = args.speed if args.speed is not None else config.sim.speed
        if args.tables > 1:  # a room: the tables spread over worker processes
            played = _sim_workers(args, broker, hands, script, speed, run, stop, cleanup)
        else:
            time.sleep(0.5)  # the reader boards say HELLO first
            _play_tables(tables, speed, stop)
            played = [
                _Played(t.config.table.id, t.played, t.daemon.applied, t.daemon.engine.seq, "")
                for t in tables
            ]
        _sim_end(args, run, played, room, tv, stop)
    return 0


def _sim_hands(args: argparse.Namespace, config: Config, trace: list[Event] | None) -> int | None:
    """How many demo hands to deal (None: until Ctrl-C)."""
    hands: int | None = args.hands if args.hands is not None else (config.sim.hands or None)
    if trace is None and hands == 0:
        hands = None  # 0: the demo deals until Ctrl-C
    if trace is None and hands is None and args.exit_when_done:
        raise TableError("--exit-when-done: give --hands N (the demo deals until Ctrl-C)")
    return hands


def _sim_broker(
    args: argparse.Namespace, config: Config, run: _Run, cleanup: contextlib.ExitStack
) -> BrokerConfig:
    """The configured broker, or a local mosquitto of the sim's own (stopped at exit)."""
    from controller.localbroker import LocalBroker

    broker = config.broker
    if broker.host is not None:
        return broker
    local = LocalBroker(args.broker_port)
    cleanup.callback(local.stop)
    local.start()
    broker = dataclasses.replace(broker, host="127.0.0.1", port=local.port)
    topics = _watch_prefix(broker.prefix, args.tables)
    watch = f"mosquitto_sub -h 127.0.0.1 -p {local.port} -t '{topics}/#' -v"
    run.link("broker", f"mqtt://127.0.0.1:{local.port} (watch: {watch})")
    if run.live is None:
        print(f"local mosquitto on 127.0.0.1:{local.port}; watch it with:\n  {watch}", flush=True)
    return broker


def _sim_tables(
    args: argparse.Namespace,
    config: Config,
    broker: BrokerConfig,
    run: _Run,
    trace: list[Event] | None,
    hands: int | None,
) -> tuple[list[_SimTable], list[Config]]:
    """Every table's configuration (journal and signing key in the sim's folder), and the
    one table played in this process (a room of them plays in worker processes)."""
    from sim.tables import sim_journal, table_config

    tables: list[_SimTable] = []
    configs: list[Config] = []
    assert run.workdir is not None
    for index in range(args.tables):
        journal = None if args.keep_journal else sim_journal(run.workdir, index)
        cfg = sim_signing_key(table_config(config, index, journal), run.workdir)
        configs.append(cfg)
        which = f" (table {cfg.table.id})" if args.tables > 1 else ""
        where = str(cfg.journal.directory or cfg.journal.path)
        run.files.append((f"journal{which}", where))
        run.files.append((f"signing key{which}", f"{cfg.seal.signing_key} (tablectl verify)"))
        if run.live is None:
            print(f"journal: {where}{which}", flush=True)
            print(f"signing key: {cfg.seal.signing_key} (tablectl verify --key)", flush=True)
        if args.tables == 1:
            table_broker = dataclasses.replace(cfg.broker, host=broker.host, port=broker.port)
            sim = _SimTable(cfg, table_broker, ())
            # the demo's dealer reads the table it deals at, and follows it
            sim.events = (
                trace
                if trace is not None
                else demo_events(cfg, hands, args.seed + index, live=sim.engine)
            )
            tables.append(sim)
    return tables, configs


def _sim_watcher(args: argparse.Namespace, broker: BrokerConfig, run: _Run) -> WatchIdentity | None:
    """The identity the sim reads the tables' messages with (None: --quiet, or none fit)."""
    if args.quiet:
        return None
    from controller.watch import watch_identity

    identity = watch_identity(broker, args.watch_credentials, args.watch_cert, args.watch_key)
    if identity is None:
        run.say(
            "not printing the messages: the broker wants an identity and the table's "
            "must not be used twice; give --watch-credentials (or --watch-cert and "
            "--watch-key) of a reading identity, e.g. the room's"
        )
    return identity


def _sim_room(
    args: argparse.Namespace,
    config: Config,
    broker: BrokerConfig,
    configs: list[Config],
    run: _Run,
    cleanup: contextlib.ExitStack,
) -> Any:
    """With --room, the room server on the same broker (room/sim.py); else None."""
    if not args.room:
        return None
    from room.sim import start_sim_room

    assert run.workdir is not None
    workdir = run.workdir / "room"
    workdir.mkdir(mode=0o700)
    keys = _sim_public_keys(workdir, configs)
    room = start_sim_room(
        config.table.room, broker.host or "127.0.0.1", broker.port, workdir, keys=keys
    )
    cleanup.callback(room.stop)
    run.files.append(("room database", str(workdir / "room.db")))
    run.link("room monitor", room.url, f"room server: {room.url} (API docs: {room.url}docs)")
    run.link("API docs", f"{room.url}docs", f"room monitor: {room.url} (open it in a browser)")
    return room


def _sim_view(
    args: argparse.Namespace,
    broker: BrokerConfig,
    identity: WatchIdentity | None,
    run: _Run,
    cleanup: contextlib.ExitStack,
) -> None:
    """The messages read and shown (the live view, or raw lines with --json)."""
    if identity is not None:
        sink: Sink
        if run.live is None:
            single = None if args.tables > 1 else broker.prefix.rpartition("/")[2]
            sink = run.printer = JudgingPrinter(single)
        else:
            sink = run.live
        feed = Feed(broker, identity, _watch_prefix(broker.prefix, args.tables), sink)
        cleanup.callback(feed.stop)
    if run.live is None:
        return
    run.live.header([*run.links, *run.files])
    if identity is not None:  # the view counts hands from the messages it reads
        run.live.start()
        cleanup.callback(run.live.stop)
    else:
        run.say("dealing (no hand lines: --quiet, or no reading identity)")


def _sim_workers(
    args: argparse.Namespace,
    broker: BrokerConfig,
    hands: int | None,
    script: Path | None,
    speed: float,
    run: _Run,
    stop: threading.Event,
    cleanup: contextlib.ExitStack,
) -> list[_Played]:
    """A room's tables played by worker processes; what each table did."""
    from sim.tables import SimWorkers, worker_args

    assert run.workdir is not None
    argv = worker_args(
        args.config, args.profile, broker.host or "127.0.0.1", broker.port,
        seed=args.seed, hands=hands or 0, script=script, speed=speed,
        workdir=run.workdir,
    )  # fmt: skip
    workers = SimWorkers(argv, args.tables, run.workdir)
    cleanup.callback(workers.stop)
    return [
        _Played(r.table, r.played, r.applied, r.seq,
                f", {r.sim_seconds:.1f} s of play in {r.wall_seconds:.1f} s")
        for r in workers.wait(stop)
    ]  # fmt: skip


def _sim_end(
    args: argparse.Namespace,
    run: _Run,
    played: list[_Played],
    room: Any,
    tv: SimTv | None,
    stop: threading.Event,
) -> None:
    """What the tables did, the room's check, then the pages kept up until Ctrl-C (unless
    --exit-when-done), and the summary."""
    interrupted = stop.is_set()
    if run.live is not None:
        time.sleep(0.3)  # the last hand's messages reach the view
        run.live.stop()
    elif not interrupted:
        for p in played:
            which = f" (table {p.table})" if args.tables > 1 else ""
            print(
                f"sim: played {p.played} script events, engine applied {p.applied}, "
                f"last seq {p.seq}{which}{p.pace}",
                flush=True,
            )
    _print_judged(run, args.tables, interrupted)
    if room is not None and not interrupted and played:
        run.say(room.summary(max(p.seq for p in played)))
        if args.tables > 1:
            from sim.tables import room_check

            run.say(room_check(room, sum(p.seq for p in played)))
    if not interrupted and not args.exit_when_done:
        where = ", ".join(url for _, url in run.links if url.startswith("http"))
        run.say(
            "sim: dealing done; the pages stay up until Ctrl-C" + (f" ({where})" if where else "")
        )
        stop.wait()
    elif tv is not None and not interrupted:
        tv.finish()
    if run.live is not None:
        kept = "kept" if args.keep_files else "removed at exit; --keep-files keeps it"
        files = [*run.files, ("temporary folder", f"{run.workdir} ({kept})")]
        run.live.summary(files, run.links)
    elif run.workdir is not None and args.keep_files:
        print(f"sim: files kept in {run.workdir}", flush=True)


def _print_judged(run: _Run, tables: int, interrupted: bool) -> None:
    """--json: pokerkit's count of the hands it judged (the view prints its own)."""
    if run.printer is not None and not interrupted:
        time.sleep(0.3)  # the last hand's messages reach the printer
        with run.printer.lock:
            print(run.printer.judge.summary(tables), flush=True)


def _sim_public_keys(workdir: Path, configs: Sequence[Config]) -> Path:
    """The simulated tables' public keys, registered with the sim's room (`<id>.pub`)."""
    from controller.chain import load_verifier

    keys = workdir / "keys"
    keys.mkdir(exist_ok=True)
    for cfg in configs:
        if cfg.seal.signing_key is not None:
            pem = load_verifier(cfg.seal.signing_key).pem()
            (keys / f"{cfg.table.id}.pub").write_text(pem, encoding="ascii")
    return keys


def _watch_prefix(prefix: str, tables: int) -> str:
    """What the printer subscribes to: the table's topics, or the room's for many tables."""
    return prefix if tables == 1 else prefix.rpartition("/")[0] or prefix


@dataclass(frozen=True, slots=True)
class _Played:
    """What one simulated table did: its script events played, the inputs its engine
    applied, its last event seq, and (a room's worker) its pace against real time."""

    table: str
    played: int
    applied: int
    seq: int
    pace: str


class _SimTable:
    """One simulated table of `tablectl sim`: its daemon on its own virtual clock
    (kernel/clock.py), which its script player steps, so --speed paces the game
    without changing it."""

    def __init__(self, config: Config, broker: BrokerConfig, events: Iterable[Event]) -> None:
        from controller.daemon import Daemon
        from kernel.clock import ManualClock

        self.config = config
        self.events = events
        self.clock = ManualClock(0.0, wall_start=float(int(time.time())))
        self.daemon = Daemon(config, broker=broker, clock=self.clock)
        self.played = 0

    def engine(self) -> Engine:
        """The table's engine, as its daemon has it now."""
        engine: Engine = self.daemon.engine
        return engine

    def play(self, speed: float, stop: threading.Event) -> None:
        """Play the script, then let the timers it left running fire; wait for the broker."""
        from sim.player import ScriptPlayer

        player = ScriptPlayer(self.daemon, speed=speed, clock=self.clock)
        self.played = player.play(self.events, stop)
        if stop.is_set():
            return
        # the timers left running, and every hole-card key still owed (TV shows the cards)
        tail = max(self.daemon.now() + SIM_TAIL, self.daemon.seal.last_due() or 0.0)
        player.advance(round(tail, 6))
        if self.daemon.publisher is not None:
            self.daemon.publisher.wait_idle(5.0)


def _play_tables(tables: Sequence[_SimTable], speed: float, stop: threading.Event) -> None:
    """Play every table at once, each in its own thread; the main thread stays free for
    Ctrl-C (signals reach only it)."""
    threads = [
        threading.Thread(
            target=t.play, args=(speed, stop), name=f"sim-{t.config.table.id}", daemon=True
        )
        for t in tables
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(0.2)
    if stop.is_set():
        for thread in threads:
            thread.join(10.0)  # a player stops at its next event


def _start_sim_tv(
    args: argparse.Namespace, broker: BrokerConfig, local: bool, table: str, run: _Run
) -> SimTv | None:
    """The TV service on the simulated table (docs/tv.md); None with --no-tv."""
    if args.no_tv:
        return None
    if not local:
        run.say("tv: not started (the config names a broker: run `tablectl tv`)")
        return None
    from broadcast.sim import start_sim_tv

    return start_sim_tv(
        broker,
        broker.prefix,
        table,
        delay=args.tv_delay,
        port=args.tv_port,
        say=run.say,
        link=run.link,
    )


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


def cmd_verify(args: argparse.Namespace) -> int:
    """`tablectl verify JOURNAL_OR_EXPORT [--config FILE]`: 0 when the signed chain holds."""
    from controller.chain import load_verifier
    from controller.verify import lines_of, table_of, verify_path

    verifier = _file_verifier(args.config, table_of(args.path)) if args.config else None
    if args.key is not None:
        verifier = load_verifier(args.key)
    report = verify_path(args.path, verifier)
    for line in lines_of(report):
        print(line, file=sys.stdout if report.ok else sys.stderr)
    return 0 if report.ok else 1


def _file_verifier(config_path: Path, table: str | None) -> Verifier | None:
    """The key a table file names ([seal] public_key, else signing_key), or the key a room
    file has registered for `table` ([keys] directory, `<table>.pub`)."""
    from controller.chain import load_verifier
    from controller.verify import table_verifier

    data = tomllib.loads(config_path.read_text(encoding="utf-8"))
    if "room" in data and "table" not in data:
        from room.config import load_room_config

        room = load_room_config(config_path)
        if room.keys.directory is None or table is None:
            return None
        key = room.keys.directory / f"{table}.pub"
        return load_verifier(key) if key.exists() else None
    return table_verifier(config_path)


def cmd_keygen(args: argparse.Namespace) -> int:
    """`tablectl keygen --out FILE`: the table's Ed25519 key pair (FILE private, FILE.pub)."""
    from controller.chain import generate_keys, public_key_path

    signer = generate_keys(args.out)
    print(
        f"keygen: {args.out} (private, 0600), {public_key_path(args.out)} (register it "
        f"with the room); key id {signer.key_id}"
    )
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


PORT = bounded_int(1, 65535)
CONFIG_HELP = "the table's TOML file (docs/configuration.md)"
PROFILE_HELP = f"rule profile instead of [rules] profile: {', '.join(PROFILES)}"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (the commands of README.md, "The command line")."""
    parser = argparse.ArgumentParser(prog="tablectl", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument(
        "--version", action="version", version=f"tablectl {__version__}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("run", help="the table daemon on the configured backends")
    p.add_argument("--config", type=Path, required=True, help=CONFIG_HELP)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "sim",
        help="a whole simulated table against a local broker",
        description="A whole simulated table: reader-board firmware simulators, the daemon, a "
        "dealer dealing a cash game, a local mosquitto, the TV service and (--room) the room "
        "server. Shows a line per hand, progress and a summary; the pages stay up until "
        "Ctrl-C. Every process and temporary folder it started goes away when it ends.",
    )
    p.add_argument(
        "--config", type=Path, default=None, help=f"{CONFIG_HELP}; default {DEFAULT_SIM_CONFIG}"
    )
    p.add_argument("--profile", default=None, help=PROFILE_HELP)
    p.add_argument(
        "--script",
        type=Path,
        default=None,
        help="a dealing script (trace format) instead of the demo; its '# profile:' and "
        "'# game:' headers are honoured",
    )
    p.add_argument(
        "--hands",
        type=bounded_int(0),
        default=None,
        help="demo hands to deal per table ([sim] hands; 0 or none: until Ctrl-C)",
    )
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
        type=bounded_int(1, MAX_TABLES),
        default=1,
        help=f"simulated tables in one run, 1 to {MAX_TABLES}, on one broker: each its own "
        "table id (t01, t02, ...), topics, journal, seed and clock; more than one are spread "
        "over worker processes (the README says how many keep real time)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print every published message raw, one per line, instead of the live view",
    )
    p.add_argument(
        "--exit-when-done",
        action="store_true",
        help="exit once the hands are dealt (for scripts and tests) instead of keeping the "
        "pages up until Ctrl-C",
    )
    p.add_argument(
        "--keep-files",
        action="store_true",
        help="keep the run's temporary folder (journals, room database) at exit",
    )
    p.add_argument(
        "--broker-port", type=PORT, default=None, help="the local mosquitto's port (default: free)"
    )
    p.add_argument(
        "--keep-journal",
        action="store_true",
        help="use the configured [journal] instead of a temporary one (one table)",
    )
    p.add_argument(
        "--quiet",
        action="store_true",
        help="do not show the hands (nor, with --json, the published messages)",
    )
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
    p.add_argument(
        "--tv-port",
        type=PORT,
        default=None,
        help="TV pages port (default 8088, or a free one, said, when 8088 is taken)",
    )
    p.add_argument(
        "--tv-delay", type=seconds_arg, default=None, help="TV secure delay in s (default 5)"
    )
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
    p.add_argument("--config", type=Path, required=True, help="the TV service's TOML file")
    p.set_defaults(func=cmd_tv)

    p = sub.add_parser("replay", help="feed a trace through the engine, print every message")
    p.add_argument(
        "trace", type=Path, help="a trace or journal file, or a journal directory (all segments)"
    )
    p.add_argument("--config", type=Path, required=True, help=CONFIG_HELP)
    p.add_argument(
        "--profile", default=None, help=PROFILE_HELP + " (or the trace's '# profile:' header)"
    )
    p.add_argument(
        "--game",
        default=None,
        help=f"{', '.join(GAMES)} instead of [rules] game (or the trace's '# game:' header)",
    )
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("export-phh", help="PHH hand histories of a journal or trace")
    p.add_argument("trace", type=Path, help="a trace or journal file, or a journal directory")
    p.add_argument("--config", type=Path, required=True, help=CONFIG_HELP)
    p.add_argument("--out", type=Path, default=Path("."), help="directory for the .phh files")
    p.set_defaults(func=cmd_export_phh)

    p = sub.add_parser("verify", help="a journal, room export or PHH file against the signed chain")
    p.add_argument("path", type=Path, help="a journal (file or directory), export or .phh file")
    p.add_argument("--config", type=Path, default=None, help="table or room file naming the key")
    p.add_argument("--key", type=Path, default=None, help="the table's public key file instead")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("keygen", help="make the table's signing key pair (docs/security.md)")
    p.add_argument("--out", type=Path, required=True, help="private key file (.pub beside it)")
    p.set_defaults(func=cmd_keygen)

    # `tablectl room --config FILE`, `tablectl room export --phh DIR ...`: parsed by room/cli.py
    p = sub.add_parser(  # every argument, options included, goes to room/cli.py
        "room",
        help="the room server and its tools (tablectl room --help)",
        add_help=False,
        prefix_chars="\x00",
    )
    p.add_argument("rest", nargs=argparse.REMAINDER, help="the room server's arguments")
    p.set_defaults(func=cmd_room)

    p = sub.add_parser("register-deck", help="register a deck's 52 tags, one card at a time")
    p.add_argument("--config", type=Path, required=True, help=CONFIG_HELP)
    p.add_argument("--out", type=Path, required=True, help="deck file to write")
    p.add_argument("--deck-id", required=True, help="the deck's id (letters, digits, - and _)")
    p.add_argument(
        "--antenna",
        default=None,
        help="antenna the cards are read on (default: 'register' if the card "
        "reader has one, else 'muck')",
    )
    p.add_argument(
        "--timeout", type=positive_seconds, default=600.0, help="give up after this many s"
    )
    p.add_argument(
        "--simulate",
        action="store_true",
        help="sim backend: place 52 simulated tags on the antenna",
    )
    p.set_defaults(func=cmd_register_deck)

    p = sub.add_parser("antennas", help="show live which antenna of a reader reads which tag")
    p.add_argument("--config", type=Path, required=True, help=CONFIG_HELP)
    p.add_argument(
        "--reader", default="cards", choices=["cards", "chips"], help="which reader board"
    )
    p.add_argument("--seconds", type=positive_seconds, default=None, help="stop after this many s")
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

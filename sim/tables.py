"""The tables of `tablectl sim --tables N`: each its own id, topics, identity and journal."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import logging
import math
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.children import end_with_parent
from controller.config import Config, load_config
from kernel.errors import ConfigError, TableError
from sim.demo import demo_events
from sim.player import ScriptPlayer

#: The most tables one `tablectl sim` runs (each has two reader-board simulators on ptys;
#: more than one are spread over worker processes). How many of them a machine runs at
#: real speed is in the README (measured).
MAX_TABLES = 500

#: The table file `tablectl sim` runs without --config (from the repository).
DEFAULT_SIM_CONFIG = Path("examples/sim-table.toml")
#: Simulated seconds the sim runs on after the script, for the timers it left running.
SIM_TAIL = 2.0

_NUMBERED = re.compile(r"^(?P<stem>.*?)(?P<number>[0-9]+)$")


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


def sim_table_file(path: Path | None, profile: str | None = None) -> Config:
    """The table file (`--config`, else the repository's sim table) under `profile`."""
    if path is None:
        if not DEFAULT_SIM_CONFIG.exists():
            raise TableError(
                f"no --config given and {DEFAULT_SIM_CONFIG} not found (run from the repository)"
            )
        path = DEFAULT_SIM_CONFIG
    return load_config(path, profile_override=profile)


def sim_signing_key(cfg: Config, workdir: Path) -> Config:
    """A simulated table without a [seal] signing_key signs its chain with a key made for
    the run (controller/chain.py) in the run's folder, its public half beside it for
    `tablectl verify`."""
    if cfg.seal.signing_key is not None:
        return cfg
    from controller.chain import generate_keys

    keys = workdir / "keys"
    keys.mkdir(mode=0o700, exist_ok=True)
    key = keys / f"{cfg.table.id}.key"
    if not key.exists():  # a room's worker finds the key its parent made for the table
        generate_keys(key)
    return dataclasses.replace(cfg, seal=dataclasses.replace(cfg.seal, signing_key=key))


def table_id(base: str, index: int) -> str:
    """The id of the `index`th table (0: `base` itself): a numbered id counts on, keeping
    its width (t01, t02, ...); any other gets a suffix (bar, bar-2, bar-3, ...)."""
    if index == 0:
        return base
    found = _NUMBERED.match(base)
    if found is None:
        return f"{base}-{index + 1}"
    number = found["number"]
    return f"{found['stem']}{int(number) + index:0{len(number)}d}"


def sim_journal(workdir: Path, index: int) -> Path:
    """The journal of the `index`th simulated table in a sim's folder (its folder made)."""
    journal = workdir / f"table-{index + 1}" / "sim.journal"
    journal.parent.mkdir(mode=0o700, exist_ok=True)
    return journal


def table_config(config: Config, index: int, journal: Path | None) -> Config:
    """The configuration of the `index`th simulated table: its id, its topic prefix (the
    base table's last level replaced), its MQTT identity (the base id in it replaced) and
    `journal` (a file of its own; None keeps the configured one, for table 0 only)."""
    if index > 0 and journal is None:
        raise ConfigError("every simulated table but the first needs a journal of its own")
    base, new = config.table.id, table_id(config.table.id, index)
    broker = config.broker
    parent, _, last = broker.prefix.rpartition("/")
    prefix = f"{parent}/{new}" if last == base and parent else f"{broker.prefix}-{new}"
    if base in broker.client_id:
        client_id = broker.client_id.replace(base, new)
    else:
        client_id = f"{broker.client_id}-{new}"
    if index == 0:
        prefix, client_id = broker.prefix, broker.client_id
    cfg = dataclasses.replace(
        config,
        table=dataclasses.replace(config.table, id=new),
        broker=dataclasses.replace(broker, prefix=prefix, client_id=client_id),
    )
    if journal is None:
        return cfg
    return dataclasses.replace(
        cfg, journal=dataclasses.replace(cfg.journal, path=journal, directory=None)
    )


# --------------------------------------------------------------------------- a room in one sim

#: Tables one worker process plays (`tablectl sim --tables N` starts ceil(N / this)
#: workers): a table is a dozen threads (its boards' firmware, drivers, loop, publisher),
#: and one process runs one of them at a time (the GIL); the machine's cores run the
#: processes side by side.
TABLES_PER_WORKER = 8


def spread(tables: int, per_worker: int = TABLES_PER_WORKER) -> list[list[int]]:
    """Table indices for each worker: as even as can be, table 0 in the first."""
    workers = max(1, -(-tables // max(1, per_worker)))
    return [list(range(w, tables, workers)) for w in range(workers)]


@dataclass(frozen=True, slots=True)
class TableResult:
    """What one simulated table did, as a worker reports it."""

    table: str
    journal: str
    played: int
    applied: int
    seq: int
    sim_seconds: float  # simulated time the table's script took
    wall_seconds: float  # real time it took to play it


class SimWorkers:
    """The worker processes of `tablectl sim --tables N`: each plays its share of the
    tables (`python -m sim.tables`), every one against the same broker, and
    reports them when done. Stopping (a signal) stops every worker's players and daemons."""

    def __init__(self, argv: Sequence[str], tables: int, workdir: Path) -> None:
        self.tables = tables
        self.workdir = workdir
        self.procs: list[tuple[subprocess.Popen[bytes], Path]] = []
        for n, indices in enumerate(spread(tables)):
            result = workdir / f"worker-{n}.jsonl"
            cmd = [
                sys.executable,
                "-m",
                "sim.tables",
                *argv,
                "--indices",
                ",".join(str(i) for i in indices),
                "--result",
                str(result),
                "--parent",
                str(os.getpid()),
            ]
            self.procs.append((subprocess.Popen(cmd), result))

    def wait(self, stop: threading.Event) -> list[TableResult]:
        """Wait for every worker (a set `stop` ends them); what their tables did."""
        stopped = False
        for proc, _result in self.procs:
            while proc.poll() is None:
                if stop.is_set() and not stopped:
                    stopped = True
                    for other, _r in self.procs:
                        if other.poll() is None:
                            other.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(0.5)
        results: list[TableResult] = []
        for proc, result in self.procs:
            if proc.returncode != 0:
                raise TableError(f"a sim worker failed (exit {proc.returncode})")
            with contextlib.suppress(FileNotFoundError):
                for line in result.read_text().splitlines():
                    results.append(TableResult(**json.loads(line)))
        return sorted(results, key=lambda r: r.table)

    def stop(self) -> None:
        """End every worker still running (after an error in the parent)."""
        for proc, _result in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc, _result in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(20)
            if proc.poll() is None:
                proc.kill()


def room_table(config: Config) -> Config:
    """A table of a room of simulated tables, as one machine can hold a room of them:

    - its simulated reader boards read their fields directly (`sim-field`: the same
      firmware, without the simulated radio, which is three quarters of a simulated
      table's CPU);
    - its journal (a temporary file) is not fdatasync'd (`fsync = "never"`: written to the
      OS before anything is published, as always, but not forced to the disk): a real
      table syncs to its own Pi's card, while here every table would queue on the one
      disk of the machine. Everything else is as configured."""
    readers: dict[str, Any] = {}
    for key in ("card_reader", "chip_reader"):
        reader = getattr(config, key)
        if reader.backend == "sim":
            readers[key] = dataclasses.replace(reader, backend="sim-field")
    journal = dataclasses.replace(config.journal, fsync="never")
    return dataclasses.replace(config, journal=journal, **readers)


def worker_args(
    config: Path | None,
    profile: str | None,
    host: str,
    port: int,
    *,
    seed: int,
    hands: int,
    script: Path | None,
    speed: float,
    workdir: Path,
) -> list[str]:
    """The arguments every worker gets (the parent's choices; `hands` 0: without end)."""
    argv = ["--host", host, "--port", str(port), "--seed", str(seed), "--hands", str(hands)]
    argv += ["--workdir", str(workdir)]
    argv += ["--speed", "max" if math.isinf(speed) else repr(speed)]
    if config is not None:
        argv += ["--config", str(config)]
    if profile is not None:
        argv += ["--profile", profile]
    if script is not None:
        argv += ["--script", str(script)]
    return argv


def _worker(argv: Sequence[str] | None = None) -> int:
    """One worker process: its tables, each in its own threads, on its own virtual clock."""
    import time

    from controller.daemon import Daemon
    from controller.trace import load_trace
    from kernel.clock import ManualClock

    parser = argparse.ArgumentParser(prog="python -m sim.tables")
    parser.add_argument("--config", type=Path, default=None)
    parser.add_argument("--profile", default=None)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hands", type=int, default=3)
    parser.add_argument("--script", type=Path, default=None)
    parser.add_argument("--speed", type=speed_arg, default=1.0)
    parser.add_argument("--indices", required=True)
    parser.add_argument("--result", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--parent", type=int, default=None)  # ends when that process does
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_a: stop.set())
    signal.signal(signal.SIGINT, lambda *_a: stop.set())
    end_with_parent(args.parent)
    base = room_table(sim_table_file(args.config, args.profile))
    script = args.script or base.sim.script
    tables = []
    for index in (int(i) for i in args.indices.split(",") if i):
        journal = sim_journal(args.workdir, index)
        cfg = sim_signing_key(table_config(base, index, journal), args.workdir)
        hands = args.hands or None  # 0: the demo deals until the sim is stopped
        broker = dataclasses.replace(cfg.broker, host=args.host, port=args.port)
        clock = ManualClock(0.0, wall_start=float(int(time.time())))
        daemon = Daemon(cfg, broker=broker, clock=clock)
        # the demo's dealer reads the table it deals at, and follows it
        events = (
            load_trace(script)
            if script
            else demo_events(cfg, hands, args.seed + index, live=functools.partial(_engine, daemon))
        )
        tables.append((cfg, events, clock, daemon))
    started = []
    results: list[TableResult] = []
    lock = threading.Lock()

    def play(cfg: Config, events: Iterable[Any], clock: ManualClock, daemon: Daemon) -> None:
        began = time.monotonic()
        player = ScriptPlayer(daemon, speed=args.speed, clock=clock)
        played = player.play(events, stop)
        if not stop.is_set():  # the timers left running, and every hole-card key still owed
            tail = max(daemon.now() + SIM_TAIL, daemon.seal.last_due() or 0.0)
            player.advance(round(tail, 6))
        wall = time.monotonic() - began
        if daemon.publisher is not None:
            daemon.publisher.wait_idle(5.0)
        result = TableResult(
            cfg.table.id,
            str(cfg.journal.path),
            played,
            daemon.applied,
            daemon.engine.seq,
            round(daemon.now(), 3),
            round(wall, 3),
        )
        with lock:
            results.append(result)

    try:
        for _cfg, _events, _clock, daemon in tables:
            daemon.start()
            started.append(daemon)
        time.sleep(0.5)  # the reader boards say HELLO first
        threads = [
            threading.Thread(target=play, args=table, name=f"sim-{table[0].table.id}")
            for table in tables
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)
    finally:
        for daemon in started:
            daemon.stop()
        args.result.write_text("".join(json.dumps(dataclasses.asdict(r)) + "\n" for r in results))
    return 0


def _engine(daemon: Any) -> Any:
    """A simulated table's engine, as its daemon has it now."""
    return daemon.engine


def room_check(room: Any, published: int, wait: float = 60.0) -> str:
    """Whether the room stored every event the tables published (waits `wait` s for it)."""
    import time

    deadline = time.monotonic() + wait
    rows = 0
    while True:
        rows = int(room.store.event_counts()["rows"])
        if rows >= published or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    verdict = "every one" if rows == published else f"{published - rows} missing"
    return f"room: {rows} of the {published} events the tables published stored ({verdict})"


if __name__ == "__main__":
    sys.exit(_worker())

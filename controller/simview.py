"""What `tablectl sim` shows in the terminal: one line per hand and table, a progress bar and
a closing summary (drawn with rich), or with `--json` every message as it was published.
Either way pokerkit judges every completed hand (controller/phh_verdict.py): a hand it
does not replay to the table's result says so on its line, and the summary counts them.

Both are fed from the broker, as the room and the TV crew are: `Feed` subscribes over the
broker's own TLS as a reading identity (never as the table) and hands each message to a
sink, so the view is the same whether the tables run in this process or elsewhere.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.config import BrokerConfig
from controller.phh_verdict import HandJudge, short

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from controller.watch import WatchIdentity

#: A sink: (topic relative to the watched prefix, payload bytes).
Sink = Callable[[str, bytes], None]

#: Events that are a dealing error or a procedure, and what the view calls them.
ERROR_EVENTS = {
    "misdeal": "misdeal",
    "four_card_flop": "four-card flop",
    "premature_card": "premature card",
    "procedure_violation": "procedure violation",
    "hand_killed": "hand killed",
    "fouled_deck": "fouled deck",
    "skipped_hand": "skipped hand",
    "out_of_turn": "out of turn",
}
#: How a procedure ended (`procedure_completed` outcome), in words.
OUTCOMES = {
    "redealt": "re-dealt",
    "verified": "remedy verified",
    "replaced": "card replaced",
    "hand_dead": "hand dead",
    "street_dealt": "street dealt",
    "misdeal": "ended in a misdeal",
    "hand_over": "hand over",
}


class Feed:
    """The broker subscription of the view: every message under `prefix`, as `identity`
    (controller/watch.py), handed to `sink` from the MQTT thread."""

    def __init__(
        self, broker: BrokerConfig, identity: WatchIdentity, prefix: str, sink: Sink
    ) -> None:
        from controller.watch import watch_client

        self.client = watch_client(broker, identity)
        self.prefix = prefix
        self.sink = sink
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
        self.sink(topic, getattr(msg, "payload", b""))

    def stop(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def raw_printer(topic: str, payload: bytes) -> None:
    """`--json`: every message but the state snapshots, one line each (as published)."""
    if topic == "state":
        return
    print(f"{topic:10} {payload.decode(errors='replace')}", flush=True)


def split_topic(single: str | None, topic: str) -> tuple[str, str]:
    """(table, kind) of a topic relative to the watched prefix (one table's, or a room's)."""
    if single is not None:
        return single, topic
    table, _, kind = topic.partition("/")
    return table, kind


class JudgingPrinter:
    """`--json`: every message printed as published (raw_printer), and pokerkit's verdict on
    each completed hand: a line `pokerkit   <table> hand N: <reason>` when it disagrees."""

    def __init__(self, single: str | None) -> None:
        self.single = single
        self.judge = HandJudge()
        self.lock = threading.Lock()

    def __call__(self, topic: str, payload: bytes) -> None:
        raw_printer(topic, payload)
        table, kind = split_topic(self.single, topic)
        message = _json_object(payload) if kind in ("state", "events") else None
        if message is None:
            return
        with self.lock:
            verdict = self.judge.see(table, kind, message)
        if verdict is not None:
            print(f"pokerkit   {table} hand {message.get('hand')}: {verdict}", flush=True)


def _json_object(payload: bytes) -> dict[str, Any] | None:
    """A message's JSON object, or None for anything else (never raises on bad input)."""
    try:
        message = json.loads(payload)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def money(value: Any) -> str:
    return f"{int(value):,}" if isinstance(value, int | float) else "?"


def words(text: Any) -> str:
    return str(text or "").replace("_", " ")


@dataclass
class TableTally:
    """What the view knows of one table: names, the hand in play, counts."""

    names: dict[str, str] = field(default_factory=dict)
    hand: int | None = None
    started: float | None = None
    errors: list[str] = field(default_factory=list)
    awards: list[dict[str, Any]] = field(default_factory=list)
    hands: int = 0
    error_kinds: Counter[str] = field(default_factory=Counter)
    alert_kinds: Counter[str] = field(default_factory=Counter)
    resolved: int = 0


def describe_awards(awards: list[dict[str, Any]], names: dict[str, str]) -> str:
    """Who won what: `Chiara wins 4,300 with two pair` / `Alice and Bruno split 800`."""

    def who(seat: Any) -> str:
        return names.get(str(seat)) or f"seat {seat}"

    parts = []
    for award in awards:
        winners = [who(s) for s in award.get("winners") or []]
        amount = money(award.get("amount"))
        if not winners:
            continue
        if len(winners) == 1:
            text = f"{winners[0]} wins {amount}"
        else:
            text = f"{', '.join(winners[:-1])} and {winners[-1]} split {amount}"
        if award.get("pot"):
            text += f" (side pot {award['pot']})"
        shown = award.get("showdown") or {}
        ranks = [
            str(v.get("rank"))
            for s, v in shown.items()
            if isinstance(v, dict) and v.get("rank") and int(s) in (award.get("winners") or [])
        ]
        if ranks:
            text += f" with {ranks[0]}"
        parts.append(text)
    return "; ".join(parts) or "no pot awarded"


class LiveView:
    """The default terminal view: a line per completed hand, a progress bar, a summary."""

    def __init__(
        self,
        console: Console,
        tables: list[str],
        hands: int | None,
    ) -> None:
        self.console = console
        self.tables = {t: TableTally() for t in tables}
        self.single = tables[0] if len(tables) == 1 else None
        self.total = None if hands is None else hands * len(tables)
        self.lock = threading.Lock()
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.done = 0
        self.counting = False  # the view reads the messages (start() was called)
        self.judge = HandJudge()  # pokerkit's verdict on every completed hand

    # ------------------------------------------------------------------ the feed

    def __call__(self, topic: str, payload: bytes) -> None:
        table, kind = split_topic(self.single, topic)
        tally = self.tables.get(table)
        if tally is None or kind not in ("state", "events", "alerts"):
            return
        message = _json_object(payload)
        if message is None:
            return
        with self.lock:
            if kind == "state":
                self.judge.see(table, kind, message)
                for seat, entry in (message.get("seats") or {}).items():
                    if isinstance(entry, dict) and entry.get("player"):
                        tally.names[str(seat)] = str(entry["player"])
            elif kind == "alerts":
                tally.alert_kinds[str(message.get("type"))] += 1
                if message.get("severity") == "critical":
                    self.console.print(
                        f"[bold]{table}[/] [red]alert[/] {words(message.get('type'))}: "
                        f"{message.get('message')}",
                        highlight=False,
                        markup=True,
                    )
            else:
                self._event(table, tally, message)

    def _event(self, table: str, tally: TableTally, e: dict[str, Any]) -> None:
        kind = str(e.get("type"))
        verdict = self.judge.see(table, "events", e)
        if kind == "hand_started":
            tally.hand, tally.started = e.get("hand"), e.get("t")
            tally.errors, tally.awards = [], []
        elif kind in ERROR_EVENTS:
            tally.error_kinds[ERROR_EVENTS[kind]] += 1
            detail = e.get("reason") or e.get("street") or e.get("procedure") or ""
            if kind == "hand_killed":
                detail = f"seat {e.get('seat')}, {words(e.get('reason'))}"
            elif kind == "out_of_turn":
                detail = f"seat {e.get('seat')} {e.get('action')}"
            rule = f", rule {e['rule']}" if e.get("rule") else ""
            text = ERROR_EVENTS[kind] + (f" ({words(detail)}{rule})" if detail or rule else "")
            tally.errors.append(text)
        elif kind == "procedure_completed":
            outcome = OUTCOMES.get(str(e.get("outcome")), words(e.get("outcome")))
            tally.resolved += 1
            tally.errors.append(f"{words(e.get('procedure'))} → {outcome}")
        elif kind == "floor_ruling":
            tally.errors.append("floor ruled")
        elif kind == "pot_awarded":
            tally.awards.append(e)
        elif kind == "hand_completed":
            tally.hands += 1
            self.done += 1
            self._hand_line(table, tally, e, verdict)
            if self.progress is not None and self.task is not None:
                self.progress.update(self.task, completed=self.done)

    def _hand_line(
        self, table: str, tally: TableTally, e: dict[str, Any], verdict: str | None = None
    ) -> None:
        from rich.text import Text

        line = Text()
        line.append(f"{table} ", style="bold cyan")
        line.append(f"hand {e.get('hand', tally.hand)!s:>4}  ", style="bold")
        line.append(describe_awards(tally.awards, tally.names))
        if tally.errors:
            line.append("  ·  " + "; ".join(dict.fromkeys(tally.errors)), style="yellow")
        started, ended = tally.started, e.get("t")
        if isinstance(started, int | float) and isinstance(ended, int | float):
            line.append(f"  ·  {ended - started:.1f} s", style="dim")
        if verdict is not None:
            line.append("  ·  " + short(verdict), style="bold red")
        self.console.print(line, highlight=False)

    # ------------------------------------------------------------------ the run

    def header(self, lines: list[tuple[str, str]]) -> None:
        """What was started and where (URLs, broker), before the first hand."""
        from rich.panel import Panel
        from rich.table import Table

        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold")
        grid.add_column()
        for name, value in lines:
            grid.add_row(name, value)
        self.console.print(Panel(grid, title="tablectl sim", expand=False))

    def start(self) -> None:
        """The progress bar (with `--hands N`: N per table; else a count)."""
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        columns = [SpinnerColumn(), TextColumn("dealing"), BarColumn()]
        columns += [MofNCompleteColumn() if self.total else TextColumn("{task.completed} hands")]
        columns += [TimeElapsedColumn()]
        self.counting = True
        self.progress = Progress(*columns, console=self.console, transient=False)
        self.task = self.progress.add_task("hands", total=self.total)
        self.progress.start()

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def note(self, text: str) -> None:
        self.console.print(text, highlight=False)

    def summary(self, files: list[tuple[str, str]], links: list[tuple[str, str]]) -> None:
        """Hands dealt per table, dealing errors and alerts by kind, files, every URL."""
        from rich.table import Table

        if not self.counting:
            self.note("hands not counted: the view read no message (--quiet)")
        with self.lock:
            hands = Table(title="hands dealt", title_justify="left")
            hands.add_column("table", style="bold cyan")
            hands.add_column("hands", justify="right")
            hands.add_column("dealing errors", justify="right")
            hands.add_column("procedures completed", justify="right")
            hands.add_column("alerts", justify="right")
            errors: Counter[str] = Counter()
            alerts: Counter[str] = Counter()
            for table, tally in self.tables.items():
                hands.add_row(
                    table,
                    str(tally.hands),
                    str(sum(tally.error_kinds.values())),
                    str(tally.resolved),
                    str(sum(tally.alert_kinds.values())),
                )
                errors.update(tally.error_kinds)
                alerts.update(tally.alert_kinds)
        if self.counting:
            self.console.print(hands)
            with self.lock:
                judged = self.judge.summary(len(self.tables))
            self.console.print(judged, style="red" if self.judge.disagreed else None)
        if errors or alerts:
            kinds = Table(title="by kind", title_justify="left")
            kinds.add_column("kind")
            kinds.add_column("", justify="right")
            for name, count in errors.most_common():
                kinds.add_row(f"dealing error: {name}", str(count))
            for name, count in alerts.most_common():
                kinds.add_row(f"alert: {words(name)}", str(count))
            self.console.print(kinds)
        places = Table.grid(padding=(0, 2))
        places.add_column(style="bold")
        places.add_column()
        for name, value in [*files, *links]:
            places.add_row(name, value)
        self.console.print(places)


def make_console() -> Console:
    """The view's console (stdout; colours and the live bar only on a terminal)."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)

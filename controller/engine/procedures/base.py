"""What every dealing procedure is, and what it may ask of the hand and the table (effects as
data: the hand's dealing flow carries them out, in order, as soon as they are returned)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from controller.engine.effects import Alert, CallFloor, Changed, Republish, Say, alert, say
from controller.engine.procedures.stage import Stage

# ------------------------------------------------------------------ effects


@dataclass(frozen=True, slots=True)
class Kill:
    """A seat's hand is dead by rule (30, 37, 38, 71-C): not an action, its chips stay in."""

    seat: int
    rule: str
    reason: str


@dataclass(frozen=True, slots=True)
class TakeFold:
    """A fold kept while the table was held (rule 39) is taken now."""

    seat: int


@dataclass(frozen=True, slots=True)
class CorrectBoard:
    """The board is these cards from now on (a remedy left them so)."""

    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PlanBurns:
    """The `street` comes after `allowed` burn cards, counted from `since` burns (None: as
    counted now)."""

    street: str
    allowed: int
    since: int | None = None


@dataclass(frozen=True, slots=True)
class Update:
    """Set fields of a procedure (or of the four-card flop's hold, or of the premature
    flop's announcement): what it asks changed of its own record, carried out in order."""

    target: Any
    fields: dict[str, Any]


def update(target: Any, **fields: Any) -> Update:
    """`target`'s `fields` set to these values."""
    return Update(target, fields)


@dataclass(frozen=True, slots=True)
class Begin:
    """A procedure starts: it is kept with the hand and its `procedure_required` alert given."""

    procedure: Procedure
    severity: str = "warning"


Effect = (
    Say
    | Alert
    | CallFloor
    | Changed
    | Republish
    | Kill
    | TakeFold
    | CorrectBoard
    | PlanBurns
    | Begin
    | Update
)


# ------------------------------------------------------------------ procedures


@dataclass(slots=True, kw_only=True)
class Procedure:
    """A remedy in progress: what the dealer must do, and what the readers must see.

    Each kind lives in the module named for its rule; it reads its own fields and returns
    what it needs done as effects, the changes of its own fields (`Update`) among them.
    """

    kind: str
    rule: str
    instruction: str
    street: str | None = None
    cards: list[str] = field(default_factory=list)
    seats: list[int] = field(default_factory=list)
    needs_floor: bool = False
    stage: Stage = Stage.PENDING

    #: Its cards are exposed ones: the public state lists them.
    SHOWS_CARDS: ClassVar[bool] = False
    #: The floor's ruling closes it, even once it no longer waits for the floor.
    FLOOR_CLOSES: ClassVar[bool] = False
    #: It changes how many burn cards the next street comes with (38, 39, RP-5, 35A-5).
    PLANS_BURNS: ClassVar[bool] = False

    @property
    def pending(self) -> bool:
        """Not yet resolved."""
        return self.stage != Stage.DONE

    def public(self) -> dict[str, Any]:
        """The procedure as the public state shows it (cards here are exposed ones)."""
        out: dict[str, Any] = {
            "procedure": self.kind,
            "rule": self.rule,
            "instruction": self.instruction,
            "stage": self.stage.value,
            "needs_floor": self.needs_floor,
        }
        if self.street is not None:
            out["street"] = self.street
        if self.SHOWS_CARDS:
            out["cards"] = list(self.cards)
        if self.seats:
            out["seats"] = list(self.seats)
        return out

    def announce(self, severity: str = "warning") -> list[Effect]:
        """The `procedure_required` alert that starts it."""
        return [
            alert(
                "procedure_required",
                severity,
                self.instruction,
                procedure=self.kind,
                rule=self.rule,
                floor=self.needs_floor,
            )
        ]

    def complete(self, **fields: Any) -> list[Effect]:
        """Done: `procedure_completed` with `fields` (the outcome)."""
        return [
            update(self, stage=Stage.DONE, needs_floor=False),
            say("procedure_completed", procedure=self.kind, rule=self.rule, **fields),
        ]

    def floor_ruled(self) -> list[Effect]:
        """The floor ruled at the table: the changes when that closes this procedure (it is
        done), else none."""
        if not (self.FLOOR_CLOSES or self.needs_floor):
            return []
        return [update(self, stage=Stage.DONE, needs_floor=False)]

    def on_street(self, street: str) -> list[Effect]:
        """A street was dealt (flop, turn, river): what that completes."""
        return []


def violation(proc: Procedure | None, expected: str, got: str, rule: str) -> list[Effect]:
    """The readers saw a remedy carried out otherwise than prescribed: say so, call the floor."""
    return [
        say(
            "procedure_violation",
            procedure=proc.kind if proc else "dealing",
            expected=expected,
            got=got,
            rule=rule,
        ),
        alert(
            "procedure_violation",
            "critical",
            f"{expected}; the readers saw: {got}. Floor called.",
            rule=rule,
        ),
        CallFloor(),
    ]


@dataclass(slots=True, kw_only=True)
class FloorCall(Procedure):
    """A house rule with no procedure for the error: the floor rules (TDA 2019 rule 1).

    Started for one extra card (35-A), a four-card flop (39) or a premature card (RP-5)
    under a profile whose text gives no remedy.
    """

    kind: str = "floor_call"
    needs_floor: bool = True

    FLOOR_CLOSES: ClassVar[bool] = True

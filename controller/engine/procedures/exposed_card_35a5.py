"""Cards exposed by the dealer on the deal, TDA 2019 rule 35A-5 (and the `boxed` panel button,
35A-1): a misdeal for one of the first two or two in all; house variants for a later one
(Campione: replaced by the top card and used as the flop's burn)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from controller.engine.effects import CallFloor, alert
from controller.engine.procedures.base import Begin, Effect, Procedure, update
from controller.engine.procedures.stage import Stage
from controller.rules.profiles import Profile


@dataclass(slots=True, kw_only=True)
class ExposedCard(Procedure):
    """One exposed card, replaced and burned (house `replace_as_burn`): `pending` until the
    card reaches the burn, `burned`, `replaced` once the seat has its new card, done when
    the flop comes with no other burn."""

    kind: str = "exposed_card"
    rule: str = "35A-5"

    PLANS_BURNS: ClassVar[bool] = True

    def burned(self, card: str) -> list[Effect]:
        """A card reached the burn."""
        if card in self.cards:
            return [update(self, stage=Stage.BURNED)]  # the seat's hand drops it
        return []

    def replaced(self, seat: int) -> list[Effect]:
        """A card reached `seat`: the replacement, once the exposed card was burned."""
        if seat not in self.seats or self.stage != Stage.BURNED:
            return []
        return [
            update(self, stage=Stage.REPLACED),  # done when the flop comes with no other burn
            alert(
                "procedure_step",
                "info",
                f"seat {seat}'s exposed card was replaced; it is the flop's burn: deal the "
                "flop without another burn",
                procedure=self.kind,
                rule=self.rule,
            ),
        ]

    def on_street(self, street: str) -> list[Effect]:
        """The flop came (its burns were counted as it came): done."""
        return self.complete(outcome="street_dealt", street=street)


@dataclass(slots=True)
class Exposure:
    """What one press of `exposed` means: the card it counts as exposed (None: not
    counted), the misdeal it makes (its event's details), and what else to do."""

    card: str | None = None
    misdeal: dict[str, Any] | None = None
    effects: list[Effect] = field(default_factory=list)


def pressed(profile: Profile, dealt: list[tuple[int, str]], exposed: list[str]) -> Exposure:
    """The dealer declares the last card dealt (`dealt`: seat and card, in order) exposed by
    dealer error; `exposed` are the cards already declared so."""
    if not dealt:
        return Exposure(
            effects=[
                alert(
                    "exposed_without_deal", "warning", "exposed pressed before any card was dealt"
                )
            ]
        )
    index = len(dealt) - 1
    seat, card = dealt[index]
    if card in exposed:
        return Exposure(
            effects=[
                alert(
                    "exposed_repeat",
                    "info",
                    "exposed pressed again for the same card: counted once",
                    seat=seat,
                )
            ]
        )
    count = len(exposed) + 1
    limit = profile.misdeal_exposed_downcards
    if index < 2:
        return Exposure(card, misdeal={"seat": seat, "card_index": index + 1})
    if limit is not None and count >= limit:
        return Exposure(card, misdeal={"seat": seat, "exposed": count})
    if profile.single_exposed_card == "replace_as_burn":
        replace = ExposedCard(
            instruction=(
                f"One exposed card at seat {seat}: finish the deal, then put the "
                "exposed card to the burn and give the seat the top card of the deck. "
                "The exposed card is the flop's burn."
            ),
            cards=[card],
            seats=[seat],
        )
        return Exposure(card, effects=[Begin(replace)])
    return Exposure(
        card,
        effects=[
            CallFloor(),
            alert(
                "exposed_card",
                "warning",
                f"one exposed card at seat {seat}: not a misdeal under {profile.name} "
                "(35A-5); the floor decides how it is replaced (rule 1)",
                seat=seat,
                rule="35A-5",
            ),
        ],
    )

"""Tests for rule profiles: loading, refusals, rule-number translation and house procedures."""

from __future__ import annotations

import pytest

from controller import config
from controller.rules import RuleError
from controller.rules.profiles import (
    PROFILES,
    Profile,
    Rake,
    cite,
    get_profile,
    misdeal_allowed,
    rake_amount,
    rule_ref,
)
from kernel.errors import ConfigError

NAMES = ("tda-2019", "tda-2015", "venezia", "casinos-austria", "campione")


@pytest.mark.parametrize("name", NAMES)
def test_every_profile_loads_under_its_name(name: str) -> None:
    profile = get_profile(name)
    assert isinstance(profile, Profile)
    assert profile.name == name
    assert profile.source and not profile.source.endswith(".txt")  # a document, not a file


def test_profiles_are_the_ones_the_config_accepts() -> None:
    assert tuple(PROFILES) == NAMES
    assert set(PROFILES) == set(config.PROFILES)


def test_unknown_profile_is_refused_naming_the_valid_ones() -> None:
    with pytest.raises(ConfigError) as err:
        get_profile("wsop-2023")
    message = str(err.value)
    assert "wsop-2023" in message
    for name in NAMES:
        assert name in message


@pytest.mark.parametrize(
    "rule", ["1", "23", "35A-2", "35-D", "39", "RP-5A", "16", "43", "45-B2", "53-B", "71"]
)
def test_tda_2019_numbering_is_the_identity(rule: str) -> None:
    profile = get_profile("tda-2019")
    assert rule_ref(profile, rule) == rule
    assert cite(profile, rule) == {"rule": rule, "profile_rule": rule}


@pytest.mark.parametrize(
    ("tda2019", "tda2015"),
    [
        ("23", "22"),  # 2015 rule 22, "Nuova mano e nuovi limiti"
        ("35", "34"),  # 2015 rule 34, "Misdeals"
        ("35A-2", "34A-2"),  # 2015 rule 34-A, item 2: first card to the wrong seat
        ("35A-5", "34A-6"),  # 2015 rule 34-A: item 5 is stud, item 6 flop games
        ("35-D", "34-D"),  # 2015 rule 34-D: no misdeal after substantial action
        ("36", "35"),  # 2015 rule 35, "Azione Sostanziale"
        ("39", "36"),  # 2015 rule 36, "Flop con 4 carte e carte girate prematuramente"
        ("16", "15"),  # 2015 rule 15, "Mostrare le carte per tutti gli All-in"
        ("44", "45"),  # 2015 rule 45, "Gettoni di più alta denominazione"
        ("45-B2", "46"),  # 2015 rule 46, "Puntata con più gettoni" (no parts)
        ("47", "44"),  # 2015 rule 44, "Riapertura dei rilanci"
        ("53-B", "40-B"),  # 2015 rule 40-B: skipped by an action out of turn
        ("29", "27"),  # 2015 rule 27, "Chiamare il tempo"
        ("28", "28"),  # 2015 rule 28, "Rabbit Hunting"
        ("RP-5A", "RP-5A"),  # 2015 RP-5 A: premature flop
    ],
)
def test_tda_2015_numbering_matches_the_2015_text(tda2019: str, tda2015: str) -> None:
    assert rule_ref(get_profile("tda-2015"), tda2019) == tda2015


def test_cite_keeps_the_tda_2019_number_next_to_the_profiles() -> None:
    assert cite(get_profile("tda-2015"), "23") == {"rule": "23", "profile_rule": "22"}
    assert cite(get_profile("tda-2015"), "rp-5b") == {"rule": "RP-5B", "profile_rule": "RP-5B"}


@pytest.mark.parametrize("rule", ["37", "38", "15", "35E", "RP-14"])
def test_rules_new_in_2019_are_given_as_tda_2019_in_tda_2015(rule: str) -> None:
    assert rule_ref(get_profile("tda-2015"), rule) == f"TDA 2019 {rule}"


@pytest.mark.parametrize(
    ("profile", "rule", "own"),
    [
        ("venezia", "23", "art. 17"),
        ("venezia", "35A-5", "art. 26A-6"),
        ("venezia", "35-D", "art. 26C"),
        ("venezia", "39", "art. 28"),
        ("venezia", "53-B", "art. 35-B"),
        ("venezia", "37", "TDA 37"),
        ("casinos-austria", "23", "art. 9"),
        ("casinos-austria", "35A-5", "art. 24"),
        ("casinos-austria", "39", "TDA 39"),
        ("campione", "35A-5", 'sez. "Forme di misdeal"'),
        ("campione", "51-B", 'sez. "Dead Money"'),
        ("campione", "23", "TDA 23"),
    ],
)
def test_house_profiles_cite_their_articles_or_tda(profile: str, rule: str, own: str) -> None:
    assert rule_ref(get_profile(profile), rule) == own


@pytest.mark.parametrize("bad", ["", "72", "RP-15", "35Z", "hello", "0"])
def test_a_rule_tda_2019_does_not_have_is_refused(bad: str) -> None:
    with pytest.raises(RuleError):
        rule_ref(get_profile("tda-2015"), bad)


def test_campione_has_straddle_and_rake_from_its_text() -> None:
    campione = get_profile("campione")
    assert campione.straddle_allowed
    assert campione.straddle is not None
    assert campione.straddle.multiple == 2
    assert campione.straddle.acts_last_preflop
    assert campione.rake == Rake(
        percent=5, cap=25, pot_step=20, no_flop_no_drop=True, main_pot_first=True
    )
    assert campione.single_exposed_card == "replace_as_burn"
    assert not get_profile("tda-2019").straddle_allowed
    assert get_profile("tda-2019").rake is None


@pytest.mark.parametrize(("pot", "rake"), [(18, 0), (20, 1), (79, 3), (132, 6), (339, 16)])
def test_campione_rake_reproduces_the_houses_examples(pot: int, rake: int) -> None:
    campione = get_profile("campione").rake
    assert campione is not None
    assert rake_amount(campione, pot, flop_dealt=True) == rake


def test_campione_rake_is_capped_and_not_taken_without_a_flop() -> None:
    campione = get_profile("campione").rake
    assert campione is not None
    assert rake_amount(campione, 10_000, flop_dealt=True) == 25
    assert rake_amount(campione, 339, flop_dealt=False) == 0


def test_casinos_austria_starts_on_the_first_card_and_misdeals_until_two_actions() -> None:
    austria = get_profile("casinos-austria")
    assert austria.hand_start == "dealer_lift"
    assert austria.hand_start_triggers == ("first_card",)
    assert austria.misdeal_max_actions == 2
    assert misdeal_allowed(austria, ["check"])
    assert not misdeal_allowed(austria, ["check", "check"])  # TDA 2019 would still allow it
    assert misdeal_allowed(get_profile("tda-2019"), ["check", "check"])


def test_tda_misdeal_window_is_substantial_action() -> None:
    tda = get_profile("tda-2019")
    assert tda.misdeal_max_actions is None
    assert misdeal_allowed(tda, [])
    assert not misdeal_allowed(tda, ["call", "fold"])
    assert not misdeal_allowed(tda, ["fold", "fold", "fold"])


def test_venezia_hand_starts_on_the_shuffler_button_only() -> None:
    venezia = get_profile("venezia")
    assert venezia.hand_start == "riffle_or_shuffler"
    assert venezia.hand_start_triggers == ("shuffler",)
    assert "shuffler" in get_profile("tda-2019").hand_start_triggers


def test_profiles_are_immutable() -> None:
    profile = get_profile("tda-2019")
    with pytest.raises(AttributeError):
        profile.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        PROFILES["x"] = profile  # type: ignore[index]

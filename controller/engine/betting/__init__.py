"""The betting rules, one module per rule (as the dealing procedures are): each works on the
hand's chips (`hand_chips.HandChips`, which `controller.engine.betting_flow.HandBetting` is)."""

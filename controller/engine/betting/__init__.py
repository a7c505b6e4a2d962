"""The betting rules, one module per rule (as the dealing procedures are): each reads the
hand's chips (`hand_chips.HandChips`, which `controller.engine.betting_flow.HandBetting` is)
and returns its changes (`changes.Change`), which the hand makes."""

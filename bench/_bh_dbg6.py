from bench import reader_hands as rh
from controller import focus as fo
hands = rh.deal(14, 3)
orig = fo.FocusTracker.update
T = {"t": 0}
def upd(self, state):
    r = orig(self, state)
    if 488 < state["t"] < 496:
        print("%.3f" % state["t"], state["street"], "to_act", state["to_act"], "bets", {k: v["bet"] for k, v in state["seats"].items() if v["bet"]}, "status", {k: v["status"][0] for k, v in state["seats"].items()}, "->", r.why, sorted(r.antennas), "bets mem", sorted(self._bets), "gather", sorted(self._gather))
    return r
fo.FocusTracker.update = upd
run = rh.play(hands, "focus", 15.0)
for m in run.moves:
    if 488 < m.t < 496 and (m.antenna.startswith("bet") or m.antenna.startswith("seat")):
        print("   move %.3f" % m.t, m.antenna, m.role, "in" if m.arrive else "out", m.latency and round(m.latency, 3))

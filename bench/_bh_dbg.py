from bench import reader_hands as rh
hands = rh.deal(14, 3)
run = rh.play(hands, "focus", 15.0)
bad = sorted([m for m in run.moves if m.focused is False and m.latency and m.latency > 1.0], key=lambda m: -m.latency)
for m in [b for b in bad if not b.antenna.startswith("pot")][:12]:
    print("%.3f" % m.t, m.antenna, m.tag, "in" if m.arrive else "out", m.role, "lat %.3f" % m.latency)

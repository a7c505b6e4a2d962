from bench import reader_hands as rh
from firmware_sim import modelled
import sys
hands = rh.deal(8, 7)
KIND, ANT = sys.argv[1], sys.argv[2]
log = []
orig = modelled.Board._advance
def adv(self, index):
    t0 = self.now_ms()
    r = orig(self, index)
    if self.kind == KIND:
        sc = self.scanner
        log.append((t0, self.now_ms(), self.names[index], "bg" if self.background else "fg", [self.names[i] for i in self.focused()], round(self.credit), len(sc.present[index]), r))
    return r
modelled.Board._advance = adv
run = rh.play(hands, "focus", 40.0)
off = run.start_us / 1000
bad = sorted([m for m in run.moves if m.antenna.startswith(ANT) and m.arrive and m.focused and m.latency], key=lambda m: -m.latency)[:3]
for m in bad:
    print("SLOW %.3f" % m.t, m.antenna, m.tag, "lat %.3f" % m.latency)
    t = m.t * 1000 + off
    for item in log:
        if t - 20 <= item[0] <= t + m.latency * 1000:
            print("   ", item)

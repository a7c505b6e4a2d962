from bench import reader_hands as rh
from firmware_sim import modelled
import sys
hands = rh.deal(6, 5)
LO, HI = float(sys.argv[1]), float(sys.argv[2])
orig = modelled.Board._advance
def adv(self, index):
    t0 = self.now_ms()
    r = orig(self, index)
    if self.kind == "chip" and LO < t0/1000 < HI:
        sc = self.scanner
        print("%.1f-%.1f" % (t0, self.now_ms()), self.names[index], "bg" if self.background else "fg", "focus", [self.names[i] for i in self.focused()], "credit %.0f" % self.credit, "present", len(sc.present[index]), "r", r, "missing", sc.missing(index))
    return r
modelled.Board._advance = adv
run = rh.play(hands, "focus", 40.0)
print("start", run.start_us)

from bench import reader_hands as rh
from firmware_sim import modelled
import sys
hands = rh.deal(3, 5)
# trace chip board turns between T0 and T1
T0, T1 = float(sys.argv[1]), float(sys.argv[2])
orig = modelled.Board.scan_turn
log = []
def turn(self):
    before = self.now_ms()
    idx_before = self.current
    orig(self)
    if self.kind == "chip":
        log.append((before, self.now_ms(), self.names[self.turns.index(max(self.turns))] if False else None, self.background, bin(self.focus), round(self.credit,1)))
modelled.Board.scan_turn = turn
orig_adv = modelled.Board._advance
def adv(self, index):
    t0 = self.now_ms()
    r = orig_adv(self, index)
    if self.kind == "chip":
        log.append(("adv", t0, self.now_ms(), self.names[index], "bg" if self.background else "fg", r))
    return r
modelled.Board._advance = adv
run = rh.play(hands, "focus", 40.0)
start = None
for b in [run.boards["chip"]]:
    pass
for item in log:
    if item[0] == "adv":
        t = item[1] / 1000
        if T0 <= t - 0 <= T1:
            print(item)

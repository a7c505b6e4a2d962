from bench import reader_hands as rh
import firmware.pn5180 as pn
hands = rh.deal(6, 5)
import sys
LO, HI = float(sys.argv[1]), float(sys.argv[2])
orig_step = pn.FieldRead.step
def step(self):
    chip = self.chip
    before_known = self.known
    r = orig_step(self)
    sim = chip.bus.frontends[chip.channel]
    t = chip.clock.now / 1000
    if chip.kind_name == "muck" and LO < t < HI:
        names = {v: k for k, v in RUN_UIDS.items()} if RUN_UIDS else {}
        print("%.1f" % t, "muck step", "field", sorted(names.get(tg.uid, "?") for tg in sim.tags), "found", sorted(names.get(u, "?") for u in self.found), "protocol", self.protocols[min(self.at, len(self.protocols)-1)] if self.protocols else None, "checked", self.checked, "known", None if before_known is None else len(before_known), "found", len(self.found), "field", len(sim.tags), "done", self.done, "new", len(r))
    return r
pn.FieldRead.step = step
orig_init = rh.ModelledBoard.__init__
def init(self, *a, **k):
    orig_init(self, *a, **k)
    for ant in self.board.scanner.antennas:
        for fe in ant.frontends:
            fe.kind_name = ant.name
rh.ModelledBoard.__init__ = init
RUN_UIDS = {}
orig_uids = rh._Uids.of
def of(self, name, chip):
    u = orig_uids(self, name, chip); RUN_UIDS[name] = u; return u
rh._Uids.of = of
run = rh.play(hands, "focus", 40.0)

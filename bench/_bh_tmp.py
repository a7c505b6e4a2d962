import json, time, sys
from bench import reader_hands as rh
hands = rh.deal(int(sys.argv[1]), int(sys.argv[3]) if len(sys.argv) > 3 else 5)
cpu = float(sys.argv[4]) if len(sys.argv) > 4 else 40.0
for mode in sys.argv[2].split(","):
    t0=time.time()
    run = rh.play(hands, mode, cpu)
    d = rh.summary(run, hands.ideal)
    print("==", mode, "play s %.1f" % (time.time()-t0), "moves", len(hands.moves), "modelled s %.0f" % hands.end)
    for k,v in d['latency'].items(): print('%-40s'%k, v)
    for k in ('fold, cards off the seat',"fold, muck to the engine's fold",'push settled after its last chip','rulings','alerts','focus_changes','not_reported'): print(k, d[k])

"""What sealing, chaining and signing cost per event and per hand, beside the release before.

The daemon's own path for every input (journal the input, apply it, journal what it made,
commit) is timed in process, input by input, over the same multi-hand session, with no
broker (the publisher's share does not change). Two trees in the same run, alternating:
the release before sealed hole cards (`--baseline`, a git revision, extracted to a
temporary directory) and this one, whose table seals every hole card (a key per message,
released at once: `delay = 0`, so every release is in the figures too), chains every event
and journal record, and signs every hand with its Ed25519 key. Both journal with
`fsync = "never"` (the CPU, not the disk) and again with `"always"` (latency as a table
runs). Usage: python -m bench.seal_cost [--hands 40] [--runs 3] [--baseline 8dd3a37]
[--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from bench.machine import machine

ROOT = Path(__file__).resolve().parent.parent

#: Run inside a tree (its own code on sys.path): the timings of one session, as JSON.
PROBE = r"""
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, ".")
from controller.config import load_config
from controller.daemon import Daemon
from controller.journal import open_journal
from tests.journal_session import EPOCH, TABLE_TOML, session

hands, fsync, sealed = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
tmp = Path(tempfile.mkdtemp())
toml = TABLE_TOML.replace("max_segment_mb = 0.01", "max_segment_mb = 64") + f'fsync = "{fsync}"\n'
if sealed:
    from controller.chain import generate_keys
    generate_keys(tmp / "t.key")
    toml += '\n[seal]\ndelay = 0\nsigning_key = "t.key"\n'
(tmp / "t01.toml").write_text(toml)
config = load_config(tmp / "t01.toml")
events = session(config, hands=hands)
daemon = Daemon(config, clock=lambda: EPOCH)
kwargs = {"signer": daemon.seal.signer} if sealed else {}
daemon.journal = open_journal(config.journal, "t01", now=EPOCH, **kwargs)
daemon.epoch = daemon.journal.epoch
if sealed:  # every key due at once (the inputs keep their times): timed with its card
    outgoing = daemon.seal.outgoing
    daemon.seal.outgoing = lambda src, messages, now: outgoing(src, messages, 1e9)
per_input, per_message, published = [], [], 0
cpu0 = time.process_time()
for event in events:
    t0 = time.perf_counter()
    out = daemon.handle([event])
    dt = time.perf_counter() - t0
    per_input.append(dt)
    published += len(out)
    if out:
        per_message.append(dt / len(out))
cpu = time.process_time() - cpu0
daemon.journal.close()
size = sum(p.stat().st_size for p in (tmp / "journal").iterdir())
print(json.dumps({
    "inputs": len(events), "published": published, "hands": daemon.engine.hand_number,
    "cpu_s": cpu, "input_p50_us": 1e6 * sorted(per_input)[len(per_input) // 2],
    "input_p99_us": 1e6 * sorted(per_input)[int(len(per_input) * 0.99)],
    "message_p50_us": 1e6 * sorted(per_message)[len(per_message) // 2],
    "journal_bytes": size,
}))
"""


def extract(revision: str, into: Path) -> Path:
    """The tree of a git revision, extracted (not a worktree: nothing of git changes)."""
    archive = into / "tree.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), revision], check=True)
    tree = into / "tree"
    tree.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


def probe(tree: Path, hands: int, fsync: str, sealed: bool) -> dict[str, Any]:
    """One session's timings in `tree`."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(hands), fsync, "1" if sealed else "0"],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", default="8dd3a37")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = extract(args.baseline, Path(tmp))
        report: dict[str, Any] = {"machine": machine(), "hands": args.hands, "runs": args.runs}
        for fsync in ("never", "always"):
            runs: dict[str, list[dict[str, Any]]] = {"baseline": [], "sealed": []}
            for _ in range(args.runs):  # alternating, so load changes hit both alike
                runs["baseline"].append(probe(base, args.hands, fsync, False))
                runs["sealed"].append(probe(ROOT, args.hands, fsync, True))
            summary: dict[str, Any] = {}
            hands = {name: {r["hands"] for r in results} for name, results in runs.items()}
            assert hands["baseline"] == hands["sealed"], f"not the same session: {hands}"
            for name, results in runs.items():
                hands = results[0]["hands"]
                summary[name] = {
                    "cpu_per_hand_ms": statistics.median(1e3 * r["cpu_s"] / hands for r in results),
                    "cpu_per_message_us": statistics.median(
                        1e6 * r["cpu_s"] / r["published"] for r in results
                    ),
                    "input_p50_us": statistics.median(r["input_p50_us"] for r in results),
                    "input_p99_us": statistics.median(r["input_p99_us"] for r in results),
                    "message_p50_us": statistics.median(r["message_p50_us"] for r in results),
                    "published_per_hand": results[0]["published"] / hands,
                    "journal_bytes_per_hand": results[0]["journal_bytes"] / hands,
                }
            summary["ratio"] = {
                key: round(summary["sealed"][key] / summary["baseline"][key], 3)
                for key in summary["baseline"]
            }
            report[f"fsync_{fsync}"] = summary
            print(f"fsync = {fsync}:\n{json.dumps(summary, indent=1)}", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()

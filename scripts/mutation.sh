#!/usr/bin/env bash
# Mutation testing (docs/testing.md): mutmut mutates the rules, pots, framing, journal,
# delivery and publisher modules ([tool.mutmut] in pyproject.toml) and runs, for each
# mutant, the in-process tests that cover it; a mutant no test fails "survived".
#   bash scripts/mutation.sh                      # every module, at most an hour
#   bash scripts/mutation.sh "controller.rules.pots*"     # one module (mutant name glob)
#   MUTATION_MINUTES=20 MUTATION_JOBS=2 bash scripts/mutation.sh
# Results are kept in mutants/ (git-ignored) and a run resumes where the last one stopped;
# `rm -rf mutants` starts over. `.venv/bin/mutmut show NAME` prints one mutant's diff.
# Not part of scripts/test.sh: a whole run takes about an hour on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m pip install -q -e '.[test,mutation]'
minutes=${MUTATION_MINUTES:-60}
status=0
timeout --signal=INT --kill-after=60 "${minutes}m" \
    .venv/bin/mutmut run --max-children "${MUTATION_JOBS:-2}" "$@" || status=$?
if [ "$status" -eq 124 ]; then
    echo "mutation: stopped after ${minutes} min; run again to go on" >&2
fi
.venv/bin/mutmut results --all true > mutants/results.txt || true
.venv/bin/python - <<'PY'
"""Per module: mutants tried, killed (a test failed, or it timed out), survived."""
import collections
import re

counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
for line in open("mutants/results.txt", encoding="utf-8"):
    match = re.match(r"\s*([\w.]+?)\.x\S*__mutmut_\d+: (.+)$", line.strip())
    if match:
        counts[match.group(1)][match.group(2).strip()] += 1
print(f"{'module':36} {'tried':>6} {'killed':>7} {'survived':>9} {'rate':>6}")
for module, c in sorted(counts.items()):
    tried = sum(v for k, v in c.items() if k != "not checked")
    survived = c["survived"] + c["no tests"]
    killed = tried - survived
    rate = f"{100 * survived / tried:.1f}%" if tried else "-"
    print(f"{module:36} {tried:6} {killed:7} {survived:9} {rate:>6}")
PY

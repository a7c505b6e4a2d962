import json, tempfile
from pathlib import Path
from bench.reader_cycle import micropython_per_spi
with tempfile.TemporaryDirectory() as tmp:
    print(json.dumps(micropython_per_spi(Path(tmp)), indent=1))

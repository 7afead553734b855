"""TEST DOUBLE: `python3 -m sglang.launch_server` → engine_double.py (the simulator)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOUBLE = Path(__file__).resolve().parents[2] / "engine_double.py"
python = os.environ["INFERSWEEP_SIM_PYTHON"]
os.execv(python, [python, str(DOUBLE), "sglang", *sys.argv[1:]])

"""TEST DOUBLE: `python -m sglang_router.launch_router` → engine_double.py (the sim router)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOUBLE = Path(__file__).resolve().parents[2] / "engine_double.py"
python = os.environ["INFERSWEEP_SIM_PYTHON"]
os.execv(python, [python, str(DOUBLE), "sglang_router", *sys.argv[1:]])

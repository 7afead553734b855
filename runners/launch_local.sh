#!/usr/bin/env bash
# Launcher of the local fleet (the runner itself, simulated engines): settings in configs/fleets.yaml.
set -euo pipefail
exec infersweep launch --fleet local "$@"

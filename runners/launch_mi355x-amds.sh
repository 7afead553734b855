#!/usr/bin/env bash
# Launcher of the mi355x-amds fleet: every setting is in configs/fleets.yaml.
set -euo pipefail
exec infersweep launch --fleet mi355x-amds "$@"

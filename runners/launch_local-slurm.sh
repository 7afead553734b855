#!/usr/bin/env bash
# Launcher of the local test fleet (scripts/slurm-local-cluster): settings in configs/fleets.yaml.
set -euo pipefail
exec infersweep launch --fleet local-slurm "$@"

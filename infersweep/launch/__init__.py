"""Launching matrix rows as jobs: executors (local simulator, srt-slurm), job tracking, manifests."""

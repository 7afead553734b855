"""Launching matrix rows as jobs: executors (local simulator, srt-slurm), Slurm job tracking,
manifests."""

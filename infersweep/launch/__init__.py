"""Launching rows as jobs: Slurm job tracking (`slurm`), job names and tags (`jobtag`)."""

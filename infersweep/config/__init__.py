"""Loading and validating the config catalog (master configs and runners file)."""

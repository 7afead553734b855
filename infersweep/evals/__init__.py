"""GSM8K accuracy evals: lm-eval's task, filters and metrics behind our own HTTP transport."""

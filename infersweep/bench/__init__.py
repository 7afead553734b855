"""The serving benchmark client: a multi-process load generator for OpenAI-compatible servers."""

"""The agentic-coding scenario: coding-agent traces replayed with their real timing.

``traces`` reads, checks and generates Weka-format trace corpora; ``sources`` names the corpus
a row replays; ``replaycmd`` builds the pinned replay client's command for a row; ``result``
turns the client's exports into one result per row and concurrency, and ``gate`` judges it.
"""

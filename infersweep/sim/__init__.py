"""The engine simulator: an OpenAI-compatible streaming server with a performance model.

It is a simulator, not a model: output text is filler, token counts and timing follow the
configured model, and every token's send time is recorded as ground truth.
"""

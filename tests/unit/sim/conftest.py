import orjson
import pytest


class FakeConn:
    closed = False


class FakeResp:
    """Stands in for the HTTP responder: records what the simulator would send."""

    def __init__(self):
        self.conn = FakeConn()
        self.status = None
        self.obj = None
        self.chunks: list[bytes] = []
        self.ended = False
        self.streaming = False

    def json(self, status, obj):
        self.status, self.obj = status, obj

    def send(self, status, body, ctype="application/json"):
        self.status, self.obj = status, body

    def start_stream(self):
        self.streaming = True
        self.status = 200

    def write(self, data):
        self.chunks.append(data)

    def end_stream(self):
        self.ended = True

    def abort(self):
        self.ended = True

    def events(self):
        raw = b"".join(self.chunks)
        return [orjson.loads(e[6:]) for e in raw.split(b"\n\n")
                if e.startswith(b"data: {")]


class FakeReq:
    def __init__(self, body, path="/v1/completions"):
        self.method = "POST"
        self.path = path
        self.headers = {}
        self.body = orjson.dumps(body)
        self.arrival_ns = 0


@pytest.fixture
def fake():
    return FakeResp, FakeReq

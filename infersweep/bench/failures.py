"""The classes of a failed request: one name per kind of problem, defined once.

A request's record carries its class in ``error_class`` (and a one-line ``error``); the
result counts failures by class in ``infersweep.errors``. Protocol problems (``protocol.*``)
fail the request at once and close its connection, whatever the timeouts say.
"""

from __future__ import annotations

try:
    from enum import StrEnum
except ImportError:  # Python 3.10 (an engine container's interpreter)
    from enum import Enum

    class StrEnum(str, Enum):  # noqa: UP042 - enum.StrEnum is what 3.10 lacks
        """Python 3.11's StrEnum: members are their values, in str() and format() too."""

        def __str__(self) -> str:
            return str.__str__(self)

        def __format__(self, spec: str) -> str:
            return str.__format__(str.__str__(self), spec)


class Failure(StrEnum):
    # the server answered, with an error status
    HTTP_4XX = "http_4xx"
    HTTP_5XX = "http_5xx"
    HTTP_OTHER = "http_other"
    # the connection
    CONNECT_ERROR = "connect_error"          # refused, unreachable, name not found
    CONNECT_TIMEOUT = "connect_timeout"
    CONNECTION_CLOSED = "connection.closed"  # reset or closed before the response ended
    TLS_VERIFY = "tls.verify"                # certificate or host name not trusted
    TLS_ERROR = "tls.error"                  # handshake or record-layer failure
    TIMEOUT = "timeout"                      # --request-timeout or --idle-timeout
    # the response does not follow HTTP/1.1, SSE or the OpenAI streaming format
    BAD_STATUS = "protocol.bad_status"  # status line not "HTTP/1.x NNN ..."
    BAD_HEADER = "protocol.bad_header"  # malformed header, Content-Length not a number, ...
    BAD_CHUNK = "protocol.bad_chunk"    # invalid chunked transfer encoding
    BAD_JSON = "protocol.bad_json"      # an event's data is not a JSON object
    BAD_FIELD = "protocol.bad_field"    # a field of the wrong type or value (choices, usage, ...)
    # the stream was well formed but is not a successful generation
    STREAM_ERROR = "stream_error"    # an error object or event mid-stream
    MISSING_USAGE = "missing_usage"  # ended without usage: completion tokens unknown
    NO_TOKENS = "no_tokens"          # ended without any token chunk
    OUTPUT_OVER_LIMIT = "output_over_limit"  # usage says more tokens than max_tokens allowed
    # a defect of the client itself (reported, never raised out of a socket callback)
    CLIENT_ERROR = "client.internal_error"


class RequestFailure(Exception):
    """A request failed; ``error_class`` is a :class:`Failure` value."""

    def __init__(self, error_class: str, message: str):
        super().__init__(message)
        self.error_class = str(error_class)


class ProtocolError(RequestFailure):
    """The response broke the protocol: the request fails now and its connection is closed."""

"""Which database a store is, and an engine for it with errors people can act on.

The URL comes from the caller, else ``INFERSWEEP_DB_URL``, else a SQLite file at
:data:`DEFAULT_PATH` under the current folder. A value without ``://`` is a SQLite file path.
PostgreSQL goes through psycopg 3 (``postgresql+psycopg://``; ``postgresql://`` and
``postgres://`` mean the same).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import orjson
import sqlalchemy as sa
from sqlalchemy.engine import URL, make_url

from infersweep.diagnostics import Diagnostic, InputError

URL_ENV = "INFERSWEEP_DB_URL"
DEFAULT_PATH = Path("results") / "infersweep.db"
CONNECT_TIMEOUT_S = 5
WRITE = "infersweep_write"  # execution option of a transaction that writes (see writer())
_URL_HINT = ("use sqlite:///PATH (or a plain file path) or "
             "postgresql+psycopg://USER:PASSWORD@HOST:PORT/DATABASE")


@dataclass(frozen=True)
class Target:
    url: URL
    origin: str  # where the URL came from: "--db", INFERSWEEP_DB_URL or "default"

    @property
    def dialect(self) -> str:
        return self.url.get_backend_name()

    @property
    def shown(self) -> str:
        """The URL without its password, for messages."""
        return self.url.render_as_string(hide_password=True)

    @property
    def sqlite_path(self) -> Path | None:
        db = self.url.database
        if self.dialect != "sqlite" or not db or db == ":memory:":
            return None
        return Path(db)


def _bad(origin: str, message: str, hint: str = _URL_HINT) -> InputError:
    return InputError(Diagnostic(origin, 0, 0, message, hint, "store-url"))


def resolve(url: str | None, origin: str = "--db") -> Target:
    """The store's URL: ``url``, else ``$INFERSWEEP_DB_URL``, else the default SQLite file."""
    if url is None or not url.strip():
        env = os.environ.get(URL_ENV, "").strip()
        if env:
            url, origin = env, URL_ENV
        else:
            return Target(make_url(f"sqlite:///{DEFAULT_PATH.as_posix()}"), "default")
    url = url.strip()
    if "://" not in url:
        return _file_backed(Target(URL.create("sqlite", database=url), origin))
    try:
        parsed = make_url(url)
    except (sa.exc.ArgumentError, ValueError) as exc:
        raise _bad(origin, f"not a database URL: {exc}") from None
    # from the text: asking SQLAlchemy for the driver loads the dialect, which may not exist
    backend, _, driver = parsed.drivername.partition("+")
    if backend in ("postgresql", "postgres") and driver in ("", "psycopg", "psycopg2"):
        parsed = parsed.set(drivername="postgresql+psycopg")
        if not parsed.host and not parsed.query.get("host"):
            raise _bad(origin, "the PostgreSQL URL names no host")
        if not parsed.database:
            raise _bad(origin, "the PostgreSQL URL names no database")
        if parsed.port is not None and not 1 <= parsed.port <= 65535:
            raise _bad(origin, f"port {parsed.port} is not in the range 1-65535")
    elif backend == "sqlite" and driver in ("", "pysqlite"):
        if not parsed.database:
            raise _bad(origin, "the SQLite URL names no file",
                       "use sqlite:///relative/path.db or sqlite:////absolute/path.db")
    else:
        raise _bad(origin, f"unsupported database {parsed.drivername!r}: the store runs on "
                           "SQLite or PostgreSQL")
    return _file_backed(Target(parsed, origin))


def _file_backed(target: Target) -> Target:
    """Refuse an in-memory SQLite database: each connection gets a new, empty one, so a
    store there would say it staged a run and keep nothing."""
    db = target.url.database or ""
    if target.dialect == "sqlite" and (db == ":memory:" or db.startswith("file::memory:")
                                       or target.url.query.get("mode") == "memory"):
        raise _bad(target.origin, "an in-memory SQLite database keeps nothing once its "
                                  "connection closes: the store would say it staged a run and "
                                  "hold none of it",
                   "name a file, e.g. sqlite:///results/infersweep.db")
    return target


def _sqlite_transactions(engine: sa.Engine) -> None:
    """Let SQLAlchemy, not the sqlite3 module, begin transactions, so DDL and DML roll back
    together; enforce foreign keys; wait for a writer instead of failing at once."""

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None
        cur = dbapi_connection.cursor()
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(conn):
        # A write takes the write lock first: two deferred transactions that both read and
        # then write deadlock, and SQLite fails one at once ("database is locked") instead of
        # letting it wait out busy_timeout (two first ingests into a new file, say).
        write = conn.get_execution_options().get(WRITE)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _dumps(value) -> str:
    return orjson.dumps(value).decode()


def writer(engine: sa.Engine) -> sa.Engine:
    """``engine`` for transactions that write: on SQLite they begin IMMEDIATE, so concurrent
    writers queue on busy_timeout instead of failing."""
    return engine.execution_options(**{WRITE: True})


def engine_for(target: Target) -> sa.Engine:
    """The engine; a URL option the driver cannot take (``?timeout=abc``) or would silently
    ignore (``sqlite:///x.db?mode=ro`` without ``uri=true``) is a located error, not a
    traceback or a warning that the option did nothing."""
    kwargs = {"json_serializer": _dumps, "json_deserializer": orjson.loads}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sa.exc.SAWarning)
            if target.dialect == "postgresql":
                engine = sa.create_engine(
                    target.url, pool_pre_ping=True,
                    connect_args={"connect_timeout": CONNECT_TIMEOUT_S}, **kwargs)
            else:
                engine = sa.create_engine(target.url, **kwargs)
    except (sa.exc.SAWarning, sa.exc.ArgumentError, ValueError, TypeError) as exc:
        raise _bad(target.origin, f"the URL's options are not valid: {_first_line(exc)}",
                   "remove or fix the options after '?' of the URL") from None
    if target.dialect == "sqlite":
        _sqlite_transactions(engine)
    return engine


def unreachable(target: Target, exc: Exception) -> InputError:
    """What to check when the database cannot be reached."""
    reason = _first_line(exc)
    if target.dialect == "postgresql":
        u = target.url
        where = f"{_one(u.host or u.query.get('host'))}:{_port(u)}"
        return InputError(Diagnostic(
            target.origin, 0, 0,
            f"cannot connect to PostgreSQL at {where} (database {u.database!r}, user "
            f"{u.username!r}): {reason}",
            "check that the server runs and listens on that host and port, and the URL's "
            f"user, password and database; the URL comes from {target.origin}", "store-connect"))
    return InputError(Diagnostic(
        target.sqlite_path.as_posix() if target.sqlite_path else target.shown, 0, 0,
        f"cannot open the SQLite store: {reason}",
        "check that the folder exists and is writable and that the file is a SQLite "
        "database", "store-connect"))


def _one(value) -> str:
    """A URL query value as text (libpq takes a list of hosts or ports as several values)."""
    return ",".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value)


def _port(u: URL) -> str:
    """The port libpq will use: the URL's, else its ``?port=`` option, else 5432."""
    return _one(u.port or u.query.get("port") or 5432)


def _first_line(exc: Exception) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()
    return text[0] if text else type(orig).__name__

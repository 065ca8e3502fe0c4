"""nbgrader's gradebook, for processes that grade side by side.

`make grade` records scores from several processes at once, each through nbgrader's own
Gradebook API (inside nbgrader's autograde). Two settings make that safe and quick:

* `shared_url`: SQLite lets one writer in at a time, and a writer that finds the file locked
  fails at once by default. With a lock wait in the URL, the others wait their turn (up to a
  minute) instead, so no submission is lost to a busy gradebook.
* `reuse_engines`: nbgrader opens a new SQLAlchemy engine for every Gradebook it makes (about nine
  per notebook), and a compiled query is cached on its engine, so every query would be compiled
  again each time. This gives nbgrader one engine per URL for the life of the process.
  (Gradebook.close disposes of the engine's connections; the engine and its cache stay usable.)
"""
from __future__ import annotations

from typing import Any

import nbgrader.api
from sqlalchemy import Engine, create_engine

LOCK_WAIT_SECONDS = 60


def shared_url(db_url: str) -> str:
    """`db_url` with a lock wait, when it is a SQLite file without other options."""
    if db_url.startswith("sqlite:") and "?" not in db_url:
        return f"{db_url}?timeout={LOCK_WAIT_SECONDS}"
    return db_url


_ENGINES: dict[tuple, Engine] = {}


def _engine_for(url: str, **options: Any) -> Engine:
    key = (url, tuple(sorted(options.items())))
    if key not in _ENGINES:
        _ENGINES[key] = create_engine(url, **options)
    return _ENGINES[key]


def reuse_engines() -> None:
    """From now on, in this process (and those it forks), nbgrader's Gradebooks share engines by URL."""
    nbgrader.api.create_engine = _engine_for

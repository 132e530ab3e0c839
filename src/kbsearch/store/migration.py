"""Tables added to files made before them: a newer kbsearch opens an older index and gives it
the table it lacks (the kept counts, the vector moments), filled from the tables it has."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from .database import Database


def add_missing_table(
    database: Database, name: str, sql: str, fill: Callable[[sqlite3.Connection], None]
) -> bool:
    """Give a file made before table ``name`` that table in ``database``: created by ``sql``
    and filled by ``fill(connection)`` in one transaction (unless another process added it
    between our look and our lock). ``True`` when the file has the table (now or before); ``False``
    for a read-only file without it, left as it is (its reader computes the table's
    content in memory). The database is closed when this fails.

    Raises:
        StorageError: the file cannot be written to add it (locked, full).
    """
    if database.tables_found is None or name in database.tables_found:
        return True
    if database.read_only:
        return False
    try:
        with database.transaction() as con:
            found = con.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
            ).fetchone()
            if found is None:
                con.execute(sql)
                fill(con)
    except BaseException:
        database.close()
        raise
    return True

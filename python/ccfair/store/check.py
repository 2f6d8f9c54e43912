"""The catalog's shape, checked before any reader or the writer uses it.

A results directory may come from someone else, and DuckDB stores more than tables: a view or a macro in the
catalog runs its SQL when a query names it, a column default or generated column computes a value. So a
catalog must hold exactly what :mod:`ccfair.store.writer` makes: the tables ``meta``, ``plans``, ``cells``,
``runs`` (and ``flows``, ``classes`` once a run is done) in the schema ``main``, with their columns and
types, no defaults or generated columns, only NOT NULL and PRIMARY KEY constraints, and nothing else (no
view, macro, sequence, index, type or schema). ``runs`` may have more columns (the plans' coordinates, the
metrics of newer versions) and ``flows`` and ``classes`` take the columns of ``RunResult``, each of a
plain scalar type. Anything else is refused naming the directory and what is wrong; no value stored in the
catalog is read before the check passes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ccfair import json_text
from ccfair.errors import InputError
from ccfair.store.schema import ADDED_IN, RUN_COLUMNS, SCHEMA_VERSION, TABLE_COLUMNS

REQUIRED_TABLES = ("meta", "plans", "cells", "runs")
RESULT_TABLES = ("flows", "classes")  # created from the first done run's frames
COORDINATE_TYPES = frozenset({"BIGINT", "DOUBLE", "BOOLEAN", "VARCHAR"})  # schema.value_type's types
SCALAR_TYPES = frozenset(
    {
        "BOOLEAN",
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "FLOAT",
        "DOUBLE",
        "VARCHAR",
    }
)
ALLOWED_CONSTRAINTS = frozenset({"NOT NULL", "PRIMARY KEY"})
NAME_SHOWN_CHARS = 40

# Everything but tables that the catalog database itself holds (system objects live in other databases or
# are marked internal).
_OTHER_OBJECTS = """
SELECT 'schema', schema_name FROM duckdb_schemas() WHERE database_name = $db AND schema_name <> 'main'
UNION ALL SELECT 'view', view_name FROM duckdb_views() WHERE database_name = $db AND NOT internal
UNION ALL SELECT 'macro', function_name FROM duckdb_functions() WHERE database_name = $db AND NOT internal
UNION ALL SELECT 'sequence', sequence_name FROM duckdb_sequences() WHERE database_name = $db
UNION ALL SELECT 'index', index_name FROM duckdb_indexes() WHERE database_name = $db
UNION ALL SELECT 'type', type_name FROM duckdb_types() WHERE database_name = $db AND NOT internal
"""
_TABLES = "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = $db"
_COLUMNS = """
SELECT table_name, column_name, data_type, column_default IS NOT NULL
FROM duckdb_columns() WHERE database_name = $db ORDER BY table_name, column_index
"""
_CONSTRAINTS = """
SELECT DISTINCT table_name, constraint_type FROM duckdb_constraints() WHERE database_name = $db
"""


def _name(text: object) -> str:
    shown = repr(str(text))
    return shown if len(shown) <= NAME_SHOWN_CHARS else shown[: NAME_SHOWN_CHARS - 3] + "..."


def refused(root: Path, what: str) -> InputError:
    return InputError(str(root), f"not a catalog written by ccfair ({what}); refusing to read it")


def check_catalog(con: Any, root: Path, allow_empty: bool = False) -> int:
    """Checks the catalog open on ``con`` (see the module docstring); returns its schema version, or 0 for
    a catalog holding nothing at all if ``allow_empty`` (a new one). An InputError on ``root`` says what
    is wrong."""
    db = con.execute("SELECT current_database()").fetchone()[0]
    params = {"db": db}
    for kind, name in con.execute(_OTHER_OBJECTS, params).fetchall():
        raise refused(root, f"it holds a {kind} {_name(name)}")
    tables: set[str] = set()
    for schema, table in con.execute(_TABLES, params).fetchall():
        if schema != "main" or table not in (*REQUIRED_TABLES, *RESULT_TABLES):
            raise refused(root, f"it holds a table {_name(schema + '.' + table)}")
        tables.add(table)
    if not tables and allow_empty:
        return 0
    missing = [t for t in REQUIRED_TABLES if t not in tables]
    if missing:
        raise refused(root, f"no table {', '.join(missing)}")
    columns: dict[str, dict[str, str]] = {t: {} for t in tables}
    for table, column, sql_type, computed in con.execute(_COLUMNS, params).fetchall():
        if computed:
            raise refused(root, f"{table}.{_name(column)} has a default or computed value")
        columns[table][column] = sql_type
    for table, constraint in con.execute(_CONSTRAINTS, params).fetchall():
        if constraint not in ALLOWED_CONSTRAINTS:
            raise refused(root, f"table {table} has a {constraint} constraint")
    for table in ("meta", "plans", "cells"):
        _exactly(root, table, columns[table], dict(TABLE_COLUMNS[table]))
    version = schema_version(con, root)
    _runs(root, columns["runs"], version)
    for table in RESULT_TABLES:
        if table in columns:
            _result_table(root, table, columns[table])
    return version


def _exactly(root: Path, table: str, have: dict[str, str], want: dict[str, str]) -> None:
    if have != want:
        expected = _columns_text(want)
        raise refused(root, f"table {table} has columns {_columns_text(have)}, expected {expected}")


def _columns_text(columns: dict[str, str]) -> str:
    return ", ".join(f"{_name(n)} {t}" for n, t in columns.items())


def _runs(root: Path, have: dict[str, str], version: int) -> None:
    for name, declared in RUN_COLUMNS:
        if version < ADDED_IN.get(name, 1) and name not in have:
            continue
        sql_type = declared.split()[0]
        if have.get(name) != sql_type:
            found = f"a {have[name]} column" if name in have else "no column"
            raise refused(root, f"runs.{name} should be {sql_type}, found {found}")
    known = {n for n, _ in RUN_COLUMNS}
    for name, sql_type in have.items():
        if name not in known and sql_type not in COORDINATE_TYPES:
            raise refused(root, f"runs.{_name(name)} has type {_name(sql_type)}")


def _result_table(root: Path, table: str, have: dict[str, str]) -> None:
    if have.get("run_id") != "VARCHAR":
        raise refused(root, f"table {table} has no VARCHAR run_id column")
    for name, sql_type in have.items():
        if sql_type not in SCALAR_TYPES:
            raise refused(root, f"{table}.{_name(name)} has type {_name(sql_type)}")


def schema_version(con: Any, root: Path) -> int:
    """``meta.schema_version``: an integer from 1 to :data:`SCHEMA_VERSION`. A newer one asks for a newer
    ccfair; anything else is a damaged catalog."""
    rows = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
    if len(rows) != 1:
        raise refused(root, "meta has no schema_version")
    text = rows[0][0]
    if not isinstance(text, str) or not text.isascii() or not text.isdigit() or len(text) > 6:
        raise refused(root, f"meta.schema_version is {_name(text)}, expected a whole number")
    version = int(text)
    if version > SCHEMA_VERSION:
        raise InputError(str(root), f"written by a newer ccfair (catalog schema {version}); upgrade ccfair")
    if version < 1:
        raise refused(root, f"meta.schema_version is {version}, expected 1 to {SCHEMA_VERSION}")
    return version


# A plan definition or scenario nests a few levels (plan -> scenario -> flows -> flow -> cc_params -> ...);
# deeper JSON in a catalog is not one ccfair wrote (read by ccfair.json_text.parse_json).
MAX_JSON_DEPTH = json_text.MAX_DEPTH
parse_json = json_text.parse_json


def plan_definition(text: object, what: str) -> dict[str, Any]:
    """A ``plans.definition`` document checked for the shape :meth:`ccfair.sweep.plan.Plan.to_json` writes
    and figures read: an object whose ``axes`` are ``{"paths": [str, ...], "points": [[value per path],
    ...]}``, ``repetitions`` and ``seed`` integers, ``flip_start_order`` a boolean, ``scenario`` and
    ``study`` objects, ``backend`` a string."""
    definition = parse_json(text, what)
    if not isinstance(definition, dict):
        raise InputError(what, "expected a JSON object")
    expected: dict[str, tuple[type, ...]] = {
        "axes": (list,),
        "scenario": (dict,),
        "repetitions": (int,),
        "seed": (int,),
        "flip_start_order": (bool,),
        "backend": (str,),
        "study": (dict,),
    }
    for key, types in expected.items():
        value = definition.get(key)
        wrong = not isinstance(value, types) or (types == (int,) and isinstance(value, bool))
        if value is not None and wrong:
            raise InputError(f"{what}.{key}", f"expected {types[0].__name__}, got {type(value).__name__}")
    for i, axis in enumerate(definition.get("axes") or []):
        field = f"{what}.axes[{i}]"
        if not isinstance(axis, dict):
            raise InputError(field, "expected an object with paths and points")
        paths, points = axis.get("paths"), axis.get("points")
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
            raise InputError(f"{field}.paths", "expected a non-empty list of paths")
        if not isinstance(points, list) or not all(
            isinstance(p, list) and len(p) == len(paths) for p in points
        ):
            raise InputError(f"{field}.points", f"expected a list of lists of {len(paths)} values")
    return definition

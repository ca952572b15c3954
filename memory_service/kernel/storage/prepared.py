"""How a prepared statement runs on the driver's cursor (`Plan`), apart from how it is scoped.

`kernel/storage/scoped.py` builds every statement run here and makes the tenant guard's check before
each one, since no listener sees a statement on this path; this module only compiles, fills in
parameters and reads rows back, so it knows nothing of tenants.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any, cast

from sqlalchemy import Delete, Select, Update
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.exc import MultipleResultsFound, NoResultFound
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.dml import Insert


class Rows:
    """What a prepared statement gives back: its rows, read whole (by position or by column
    name), or the number of rows an UPDATE or DELETE changed."""

    __slots__ = ("_rows", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)

    def all(self) -> list[Any]:
        return self._rows

    def first(self) -> Any:
        return self._rows[0] if self._rows else None

    def one(self) -> Any:
        if len(self._rows) != 1:
            raise (NoResultFound if not self._rows else MultipleResultsFound)(
                f"expected one row, got {len(self._rows)}"
            )
        return self._rows[0]

    def scalar_one(self) -> Any:
        return self.one()[0]

    def scalars(self) -> list[Any]:
        return [row[0] for row in self._rows]


# Plans by statement and driver (SQLite and PostgreSQL engines may share a process: the tests).
_plans: dict[Hashable, Plan | None] = {}


def plan_of(statement: Any, dialect: Dialect, params: Mapping[str, Any]) -> Plan | None:
    """The compiled form of a prepared statement for this database, or None when it needs
    what only SQLAlchemy's execution does (values computed at run time, tuple expansions).
    An INSERT's or UPDATE's columns follow the parameters' names: one plan for each set."""
    key: Hashable = (id(statement), dialect.name, dialect.driver)
    if not isinstance(statement, Select):
        key = (key, frozenset(params))
    plan = _plans.get(key, _plans)
    if plan is _plans:
        plan = _plans.setdefault(key, Plan.of(statement, dialect, params))
    return cast("Plan | None", plan)


class Plan:
    """A prepared statement compiled once per dialect, run on the DBAPI cursor: the SQL text
    (one per length of each IN list), the driver's parameters in order, SQLAlchemy's own bind
    and result processors, and rows that read like SQLAlchemy's (by position or column name).
    Through the connection, execution-context and result set-up would cost a statement more
    than the database takes to answer it."""

    def __init__(
        self,
        statement: Any,
        compiled: SQLCompiler,
        dialect: Dialect,
        defaults: dict[str, Any],
        expanding: tuple[str, ...],
    ) -> None:
        self.statement = statement  # kept alive: the plan is found by its id
        self.compiled = compiled
        self.dialect = dialect
        self.defaults = defaults
        self.expanding = expanding
        self.forms: dict[tuple[int, ...], _Form] = {}
        self.row: type[tuple[Any, ...]] | None = None
        self.processors: tuple[tuple[int, Callable[[Any], Any]], ...] = ()

    @classmethod
    def of(cls, statement: Any, dialect: Dialect, params: Mapping[str, Any]) -> Plan | None:
        if not isinstance(statement, Select | Update | Delete | Insert):
            return None
        compiled = statement.compile(dialect=dialect, column_keys=sorted(params))
        if (
            not isinstance(compiled, SQLCompiler)
            or compiled.literal_execute_params
            or compiled.escaped_bind_names
            or compiled.insert_prefetch  # Python-side column defaults, computed per execution
            or compiled.update_prefetch
        ):
            return None
        expanding = []
        for parameter in compiled.post_compile_params:
            if parameter.type._is_tuple_type or parameter.literal_execute:
                return None
            expanding.append(compiled.bind_names[parameter])
        defaults: dict[str, Any] = {}
        for parameter, name in compiled.bind_names.items():
            if parameter.callable is not None:
                return None
            if name not in params and not parameter.required:
                defaults[name] = parameter.value
        return cls(statement, compiled, dialect, defaults, tuple(expanding))

    def form(self, values: Mapping[str, Any]) -> _Form:
        lengths = tuple(len(values[name]) for name in self.expanding)
        form = self.forms.get(lengths)
        if form is None:
            form = _Form.of(self.compiled, values, self.expanding)
            if len(self.forms) < 64:  # IN lists of many lengths: each new one compiled anew
                self.forms[lengths] = form
        return form

    def values(self, params: dict[str, Any]) -> dict[str, Any]:
        """The call's parameters, with the statement's own constants for those it leaves out."""
        return {**self.defaults, **params} if self.defaults else params

    def run(self, connection: Connection, form: _Form, values: dict[str, Any]) -> Rows:
        """Runs one SQL text of the plan (`form`) with the call's `values`. No listener sees it:
        the tenant guard's check is the caller's to make first (`scoped._run_plan`)."""
        arguments = form.arguments(values)
        cursor = connection.connection.cursor()
        try:
            try:
                cursor.execute(form.sql, arguments)
                description = cursor.description
                rows = cursor.fetchall() if description is not None else []
            except Exception as error:
                connection._handle_dbapi_exception(error, form.sql, arguments, cursor, None)
            if description is None:
                return Rows([], cursor.rowcount)
            return Rows(self.rows(rows, description), cursor.rowcount)
        finally:
            cursor.close()

    def rows(self, rows: Sequence[Any], description: Sequence[Any]) -> list[Any]:
        row = self.row
        if row is None:
            columns = self.compiled._result_columns
            self.processors = tuple(
                (index, processor)
                for index, (column, described) in enumerate(zip(columns, description, strict=True))
                if (processor := column.type._cached_result_processor(self.dialect, described[1]))
            )
            self.row = row = _row_type(tuple(column.keyname for column in columns))
        if not self.processors:
            return [row(values) for values in rows]
        processors = self.processors
        decoded = []
        for values in rows:
            values = list(values)
            for index, decode in processors:
                # NULL is NULL to every processor: most of a revision's times are NULL, and
                # a context decodes several hundred of them (no call for those).
                if (value := values[index]) is not None:
                    values[index] = decode(value)
            decoded.append(row(values))
        return decoded


class _Form:
    """One SQL text of a plan and how to fill its parameters: each is a value of the call (or
    the statement's own constant), the item of an IN list, through the type's bind processor."""

    __slots__ = ("named", "slots", "sql")

    def __init__(self, sql: str, slots: tuple[_Slot, ...], named: bool) -> None:
        self.sql = sql
        self.slots = slots
        self.named = named

    @classmethod
    def of(
        cls, compiled: SQLCompiler, values: Mapping[str, Any], expanding: Sequence[str]
    ) -> _Form:
        state = compiled.construct_expanded_state(dict(values))
        processors: dict[str, Any] = {
            name: processor
            for name, processor in compiled._bind_processors.items()
            if callable(processor)
        }
        processors.update(state.processors)
        item: dict[str, tuple[str, int]] = {}
        for name in expanding:
            for index, expanded in enumerate(state.parameter_expansion.get(name, ())):
                item[expanded] = (name, index)
        names = state.positiontup if state.positiontup is not None else list(state.parameters)
        slots = tuple((name, *item.get(name, (name, -1)), processors.get(name)) for name in names)
        return cls(state.statement, slots, state.positiontup is None)

    def arguments(self, values: Mapping[str, Any]) -> Any:
        filled = []
        for _, source, index, processor in self.slots:
            value = values[source] if index < 0 else values[source][index]
            filled.append(value if processor is None else processor(value))
        if self.named:
            return dict(zip((slot[0] for slot in self.slots), filled, strict=True))
        return filled


_Slot = tuple[str, str, int, Any]


def _row_type(keys: tuple[str, ...]) -> type[tuple[Any, ...]]:
    """A tuple whose columns also read by name, as SQLAlchemy's rows do, attributes or
    `_mapping` (a name two columns share reads by neither)."""
    unique = {key: index for index, key in enumerate(keys) if keys.count(key) == 1}
    attributes: dict[str, Any] = {
        "__slots__": (),
        "_mapping": property(lambda row: {key: row[index] for key, index in unique.items()}),
    }
    for key, index in unique.items():
        if key.isidentifier() and not hasattr(tuple, key):
            attributes[key] = property(itemgetter(index))
    return type("Row", (tuple,), attributes)

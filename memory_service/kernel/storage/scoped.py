"""Tenant scoping, enforced in one place (I7).

Every table holds one tenant's rows (each has a `tenant_id` column), and every statement against
one is built here: `TenantScoped` writes the tenant predicate (or, for an insert, the tenant
column) into the statement before a repository adds its own conditions, and `AllTenants` is the
one named way to work across tenants (the outbox drain, the import lease, retention purges).

Two checks keep it that way. `scripts/check_tenant_scope.py` (part of `make lint`) fails when
code anywhere else builds a statement on a tenant table. `guard_tenant_scope` looks at every
statement a unit of work sends to the database and raises `TenantScopeViolation` unless each
tenant table it reads or writes is limited to the unit of work's tenant by a top-level
`tenant_id = <that tenant>` condition; raw SQL that names a tenant table is refused outright.
The test suite and its servers run with the guard on (`MEMORY_CHECK_TENANT_SCOPE=1`).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Delete,
    Engine,
    Select,
    Table,
    Update,
    bindparam,
    delete,
    event,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.sql import operators, visitors
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.dml import Insert
from sqlalchemy.sql.elements import BinaryExpression, BooleanClauseList, ColumnClause, Grouping
from sqlalchemy.sql.selectable import Alias, FromClause, Join, TableClause

from memory_service.kernel.domain.errors import WriteConflict
from memory_service.kernel.storage.models import Base
from memory_service.kernel.storage.prepared import Plan, Rows, plan_of

TENANT_COLUMN = "tenant_id"
TENANT_TABLES = frozenset(
    table.name for table in Base.metadata.sorted_tables if TENANT_COLUMN in table.c
)
TENANT_MODELS = frozenset(
    mapper.class_.__name__
    for mapper in Base.registry.mappers
    if cast(Table, mapper.local_table).name in TENANT_TABLES
)
SCOPE_OPTION = "crmmem_tenant_scope"
ACROSS = "crmmem_across_tenants"  # set only by TenantScoped._ids_in_any_tenant
# The bound parameter a prepared statement's tenant predicate reads: it has no value of its own,
# so a prepared statement cannot run without the unit of work's tenant (`TenantScoped._run`).
TENANT_PARAM = "crmmem_tenant"
_NAMES_A_TENANT_TABLE = re.compile(
    r"\b(" + "|".join(sorted(TENANT_TABLES, key=len, reverse=True)) + r")\b", re.IGNORECASE
)


@dataclass(frozen=True)
class TenantScope:
    """What a unit of work's connection may touch: one tenant's rows, or (None) every tenant's."""

    tenant_id: str | None


EVERY_TENANT = TenantScope(None)


class TenantScopeViolation(RuntimeError):
    """A statement reached a tenant table without being limited to the unit of work's tenant."""


def _table(model: type[Base]) -> Table:
    return cast(Table, model.__table__)


class Prepare:
    """What a prepared statement is built from: the same scoped starts as `TenantScoped`'s, with
    the tenant as the bound parameter `TENANT_PARAM` instead of a value. Other values are
    `bindparam`s too, so one statement (and its compiled form) serves every call and tenant."""

    @staticmethod
    def mine(model: type[Base]) -> ColumnElement[bool]:
        """The tenant predicate alone, for a table joined in (its ON clause)."""
        return _table(model).c[TENANT_COLUMN] == bindparam(TENANT_PARAM)

    def select(self, model: type[Base], *columns: Any) -> Select[Any]:
        return select(*(columns or _table(model).columns)).where(self.mine(model))

    def update(self, model: type[Base]) -> Update:
        return update(_table(model)).where(self.mine(model))

    def delete(self, model: type[Base]) -> Delete:
        return delete(_table(model)).where(self.mine(model))

    @staticmethod
    def row(*lookups: Any) -> Select[Any]:
        """One row of several lookups, each a scalar subquery or EXISTS built from the scoped
        starts above (so each carries its own tenant predicate): one statement, not one each."""
        return select(*lookups)


PREPARE = Prepare()
# Prepared statements by their shape (a name, and what else decides the statement's form).
_prepared: dict[Hashable, Any] = {}


def _plain(connection: Connection) -> bool:
    """Whether a statement may go straight to the driver's cursor: no listener wants to see
    it but the tenant guard, which `_run_plan` calls itself (tracing, and tests that count or
    break statements, take SQLAlchemy's path)."""
    dispatch = connection.dispatch
    return not dispatch.after_cursor_execute and all(
        listener is _check_statement for listener in dispatch.before_cursor_execute
    )


def _run_plan(plan: Plan, connection: Connection, params: dict[str, Any]) -> Rows:
    """A plan run on the driver's cursor, where no listener sees it: the guard's check is
    made here, before it is sent, as `_check_statement` makes it on SQLAlchemy's path."""
    values = plan.values(params)
    scope = connection.get_execution_options().get(SCOPE_OPTION)
    form = plan.form(values)
    if isinstance(scope, TenantScope) and scope.tenant_id is not None:
        check_compiled(plan.compiled, (values,), scope.tenant_id, form.sql)
    return plan.run(connection, form, values)


class TenantScoped:
    """The base of every repository: statements on tenant tables start here, already scoped.

    The hot paths (BuildContext, a correction) run prepared statements (`_run`): built once,
    their SQL compiled once, executed on the connection without the ORM's result layer. Building
    a statement and working out its cache key cost more than running it on SQLite."""

    def __init__(self, session: Session, tenant_id: str) -> None:
        self._session = session
        self._tenant_id = tenant_id

    def _run(self, shape: Hashable, build: Callable[[Prepare], Any], **params: Any) -> Rows:
        """Runs the statement `build` makes for `shape` (built on first use) with `params` and
        this unit of work's tenant. `build` may not depend on anything but `shape`."""
        statement = _prepared.get(shape)
        if statement is None:
            statement = _prepared.setdefault(shape, build(PREPARE))
        params[TENANT_PARAM] = self._tenant_id
        connection = self._session.connection()
        if _plain(connection):
            plan = plan_of(statement, connection.dialect, params)
            if plan is not None:
                return _run_plan(plan, connection, params)
        result = connection.execute(statement, params)
        if result.returns_rows:
            return Rows(list(result.all()), result.rowcount)
        return Rows([], result.rowcount)

    def _mine(self, model: type[Base]) -> ColumnElement[bool]:
        return _table(model).c[TENANT_COLUMN] == self._tenant_id

    def _select(self, model: type[Base], *columns: Any) -> Select[Any]:
        """Plain rows, not ORM entities: reads are the hot path and need no identity map."""
        return select(*(columns or _table(model).columns)).where(self._mine(model))

    def _update(self, model: type[Base]) -> Update:
        return update(model).where(self._mine(model)).execution_options(synchronize_session=False)

    def _delete(self, model: type[Base]) -> Delete:
        return delete(model).where(self._mine(model)).execution_options(synchronize_session=False)

    def _insert(self, model: type[Base], **values: Any) -> None:
        """One row in this tenant; a unique-key clash is a `WriteConflict`."""
        values[TENANT_COLUMN] = self._tenant_id
        try:
            self._insert_row(model, values)
        except IntegrityError as error:
            raise WriteConflict(str(error.orig)) from error

    def _insert_row(self, model: type[Base], values: dict[str, Any]) -> None:
        """An INSERT of one row: on the cursor as prepared statements run (`_run`)."""
        statement = _insert_of(model)
        connection = self._session.connection()
        if _plain(connection):
            plan = plan_of(statement, connection.dialect, values)
            if plan is not None:
                _run_plan(plan, connection, values)
                return
        connection.execute(statement, values)

    def _ids_in_any_tenant(self, model: type[Base], ids: Sequence[str]) -> set[str]:
        """Which of `ids` a row of `model` has in ANY tenant: ids are unique across tenants,
        so a restore must not reuse one. The one read of a tenant unit of work that crosses
        tenants, named so; only the ids come back, never whose they are."""
        table = _table(model)
        statement = (
            select(table.c.id).where(table.c.id.in_(ids)).execution_options(**{ACROSS: True})
        )
        return {row.id for row in self._session.execute(statement)}

    def _insert_many(self, model: type[Base], rows: Sequence[Mapping[str, Any]]) -> None:
        """One executemany INSERT on the connection, no ORM objects kept until commit: through
        the session's ORM layer it cost about as much again as the rows themselves."""
        tenant = self._tenant_id
        if len(rows) == 1:
            self._insert_row(model, {**rows[0], TENANT_COLUMN: tenant})
        elif rows:
            self._session.connection().execute(
                _insert_of(model), [{**row, TENANT_COLUMN: tenant} for row in rows]
            )


_inserts: dict[type[Base], Insert] = {}


def _insert_of(model: type[Base]) -> Insert:
    """One INSERT per table: its columns come from each call's parameters, the tenant's too."""
    statement = _inserts.get(model)
    if statement is None:
        statement = _inserts.setdefault(model, insert(_table(model)))
    return statement


class AllTenants:
    """The unit of work that spans tenants, for work that serves every tenant by design: the
    outbox drain, the import lease and retention purges. Its statements carry no tenant
    predicate, and the guard lets them through only on a connection opened as this."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def select(self, model: type[Base], *columns: Any) -> Select[Any]:
        """ORM rows of `model` when no columns are named."""
        return select(*(columns or (model,)))

    def update(self, model: type[Base]) -> Update:
        return update(model).execution_options(synchronize_session=False)

    def delete(self, model: type[Base]) -> Delete:
        return delete(model).execution_options(synchronize_session=False)

    def insert_many(self, model: type[Base], rows: Sequence[Mapping[str, Any]]) -> None:
        """Each row names its own tenant."""
        if rows:
            self.session.execute(insert(_table(model)), list(rows))

    def upsert(self, model: type[Base]) -> postgresql.Insert | sqlite.Insert:
        """An INSERT that can take ON CONFLICT DO UPDATE, in the dialect of this database."""
        if self.session.get_bind().dialect.name == "postgresql":
            return postgresql.insert(_table(model))
        return sqlite.insert(_table(model))


_guarded: weakref.WeakSet[Engine] = weakref.WeakSet()
# Compiled statements are cached by SQLAlchemy, so each shape is analysed once: the names of the
# bound parameters that must equal the tenant, or why the shape can never be scoped.
_requirements: weakref.WeakKeyDictionary[SQLCompiler, tuple[str, ...] | str] = (
    weakref.WeakKeyDictionary()
)


def guard_tenant_scope(engine: Engine) -> None:
    """Checks every statement sent on a connection that a unit of work opened with a
    `TenantScope` (connections without one, such as migrations, are not units of work)."""
    if engine in _guarded:
        return
    _guarded.add(engine)
    event.listen(engine, "before_cursor_execute", _check_statement, retval=True)


def _check_statement(
    conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
) -> tuple[str, Any]:
    """Listened to with `retval` (the statement goes on unchanged), so that `_plain` can tell
    this listener from any other."""
    scope = conn.get_execution_options().get(SCOPE_OPTION)
    if (
        isinstance(scope, TenantScope)
        and scope.tenant_id is not None
        and (context is None or not context.execution_options.get(ACROSS))
    ):
        check_statement(statement, context, scope.tenant_id)
    return statement, parameters


def check_statement(statement: str, context: Any, tenant_id: str) -> None:
    """Raises `TenantScopeViolation` unless the statement stays inside `tenant_id`."""
    compiled = getattr(context, "compiled", None)
    node = getattr(compiled, "statement", None)
    if not isinstance(compiled, SQLCompiler) or not isinstance(
        node, Select | Update | Delete | Insert
    ):
        # Raw SQL (text, driver SQL, DDL): nothing to inspect but its words.
        if found := _NAMES_A_TENANT_TABLE.search(statement):
            raise TenantScopeViolation(
                f"raw SQL names the tenant table {found.group(1)}: {statement[:200]}"
            )
        return
    check_compiled(compiled, context.compiled_parameters, tenant_id, statement)


def check_compiled(
    compiled: SQLCompiler,
    parameter_sets: Iterable[Mapping[str, Any]],
    tenant_id: str,
    statement: str,
) -> None:
    """Raises `TenantScopeViolation` unless each tenant table the compiled statement reads or
    writes is limited to `tenant_id` in every one of its parameter sets."""
    required = _requirements.get(compiled)
    if required is None:
        required = _analyse(compiled)
        _requirements[compiled] = required
    if isinstance(required, str):
        raise TenantScopeViolation(f"{required}: {statement[:200]}")
    for parameters in parameter_sets:
        for name in required:
            if parameters.get(name) != tenant_id:
                raise TenantScopeViolation(
                    f"a tenant predicate names another tenant than the unit of work's: "
                    f"{statement[:200]}"
                )


def _analyse(compiled: SQLCompiler) -> tuple[str, ...] | str:
    """The bound parameters that must hold the tenant id, one per tenant table the statement
    (or any statement nested in it) reads or writes; or the reason it is unscoped."""
    names: list[str] = []
    for node in visitors.iterate(compiled.statement):
        if isinstance(node, Insert):
            if _name(node.table) in TENANT_TABLES:
                names.append(TENANT_COLUMN)  # an INSERT's parameters are named by column
            continue
        if isinstance(node, Select):
            froms = node.get_final_froms()
            targets = [t for f in froms for t in _tables(f)]
            # an outer-joined table carries its tenant predicate in the join's ON clause
            where = [node.whereclause, *(on for f in froms for on in _ons(f))]
        elif isinstance(node, Update | Delete):
            targets = list(_tables(node.table))
            where = [node.whereclause]
        else:
            continue
        for target in targets:
            bound = _tenant_bind(where, target)
            if bound is None or bound not in compiled.bind_names:
                return f"{target.name} is read or written without a top-level tenant predicate"
            names.append(compiled.bind_names[bound])
    return tuple(names)


def _name(table: Any) -> str:
    return str(getattr(table, "name", ""))


def _tables(clause: FromClause) -> Iterator[TableClause | Alias]:
    """The tenant tables (or aliases of one) a FROM item reads; subqueries are checked as
    statements of their own."""
    if isinstance(clause, Join):
        yield from _tables(clause.left)
        yield from _tables(clause.right)
    elif isinstance(clause, TableClause | Alias) and _tenant_table(clause):
        yield clause


def _tenant_table(clause: TableClause | Alias) -> bool:
    return _name(clause.element if isinstance(clause, Alias) else clause) in TENANT_TABLES


def _ons(clause: FromClause) -> Iterator[Any]:
    if isinstance(clause, Join):
        yield clause.onclause
        yield from _ons(clause.left)
        yield from _ons(clause.right)


def _conjuncts(clause: Any) -> Iterator[Any]:
    """The conditions that all must hold: an OR anywhere above a condition takes it out."""
    if isinstance(clause, Grouping):
        yield from _conjuncts(clause.element)
    elif isinstance(clause, BooleanClauseList) and clause.operator is operators.and_:
        for part in clause.clauses:
            yield from _conjuncts(part)
    elif clause is not None:
        yield clause


def _tenant_bind(where: list[Any], target: TableClause | Alias) -> BindParameter[Any] | None:
    for condition in (c for clause in where for c in _conjuncts(clause)):
        if not isinstance(condition, BinaryExpression) or condition.operator is not operators.eq:
            continue
        for column, value in ((condition.left, condition.right), (condition.right, condition.left)):
            if (
                isinstance(column, ColumnClause)
                and column.name == TENANT_COLUMN
                and _name(column.table) == target.name
                and isinstance(value, BindParameter)
            ):
                return value
    return None

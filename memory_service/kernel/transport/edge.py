"""What every request passes before a servicer sees it: it must decode, and every string and
timestamp in it must be storable. One walk over the request's descriptor does this for all
RPCs, so SQLite and PostgreSQL refuse exactly the same input, with the field's proto path."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message as ProtoMessage

from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.rules import (
    MAX_BATCH_ITEMS,
    MAX_CONTEXT_CUSTOMERS,
    MAX_DISPLAY_NAME_CHARS,
    MAX_EVIDENCE_MESSAGES,
    MAX_EVIDENCE_REF_CHARS,
    MAX_EXCERPT_CHARS,
    MAX_FILTER_CHARS,
    MAX_ID_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_PAGE_TOKEN_CHARS,
    MAX_QUERY_CHARS,
    MAX_QUOTE_CHARS,
    MAX_REPEATED_ITEMS,
    MAX_REQUEST_ID_CHARS,
    MAX_RESOURCE_NAME_CHARS,
    MAX_TASK_STATUS_CHARS,
    MAX_VALUE_CHARS,
    text_problem,
)
from memory_service.kernel.transport.errors import to_status

# Longest accepted text by field name; any other string field holds an id (MAX_ID_CHARS).
LIMITS = {
    "value": MAX_VALUE_CHARS,
    "quote": MAX_QUOTE_CHARS,
    "text": MAX_MESSAGE_CHARS,
    "query": MAX_QUERY_CHARS,
    "value_contains": MAX_FILTER_CHARS,
    "display_name": MAX_DISPLAY_NAME_CHARS,
    "page_token": MAX_PAGE_TOKEN_CHARS,
    "request_id": MAX_REQUEST_ID_CHARS,
    "transcript_message": MAX_EVIDENCE_REF_CHARS,
    "import_item": MAX_EVIDENCE_REF_CHARS,
    "uri": MAX_EVIDENCE_REF_CHARS,
    "excerpt": MAX_EXCERPT_CHARS,
    "kept_memory": MAX_RESOURCE_NAME_CHARS,
    "memory": MAX_RESOURCE_NAME_CHARS,
    "evidence_messages": MAX_EVIDENCE_REF_CHARS,
    "name": MAX_RESOURCE_NAME_CHARS,
    "parent": MAX_RESOURCE_NAME_CHARS,
    "conversation": MAX_RESOURCE_NAME_CHARS,
    "task": MAX_RESOURCE_NAME_CHARS,
    "status_text": MAX_TASK_STATUS_CHARS,
}
# Where a field name means something else in one message.
LIMITS_BY_FULL_NAME = {"crmmem.memory.v1.CustomerReference.name": MAX_DISPLAY_NAME_CHARS}
# Most items a repeated request field takes, by full name; any other takes MAX_REPEATED_ITEMS.
# Checked before the field's items are walked, so a flood costs nothing but its decoding.
MAX_ITEMS = {
    "crmmem.memory.v1.BuildContextRequest.customers": MAX_CONTEXT_CUSTOMERS,
    "crmmem.memory.v1.ProposeMemoryRequest.evidence_messages": MAX_EVIDENCE_MESSAGES,
    "crmmem.memory.v1.BatchCreateMemoriesRequest.requests": MAX_BATCH_ITEMS,
    "crmmem.memory.v1.BatchAppendMessagesRequest.requests": MAX_BATCH_ITEMS,
}
TIMESTAMP = "google.protobuf.Timestamp"
MIN_SECONDS = -62_135_596_800  # 0001-01-01T00:00:00Z
MAX_SECONDS = 253_402_300_799  # 9999-12-31T23:59:59Z


def limit_of(field: FieldDescriptor) -> int:
    return LIMITS_BY_FULL_NAME.get(field.full_name) or LIMITS.get(field.name, MAX_ID_CHARS)


def max_items_of(field: FieldDescriptor) -> int:
    return MAX_ITEMS.get(field.full_name, MAX_REPEATED_ITEMS)


def check_request(request: ProtoMessage) -> None:
    """Refuses NUL, over-long strings, unrepresentable timestamps and over-long repeated fields
    anywhere in `request`."""
    for path, field, value in _values(request, ""):
        if field.type == FieldDescriptor.TYPE_STRING:
            problem = text_problem(value, limit_of(field))
            if problem is not None:
                raise InvalidArgument(path, problem)
        elif not MIN_SECONDS <= value.seconds <= MAX_SECONDS or not 0 <= value.nanos < 10**9:
            raise InvalidArgument(path, "is not a valid timestamp (years 0001 to 9999)")


def _values(message: ProtoMessage, prefix: str) -> Iterator[tuple[str, FieldDescriptor, Any]]:
    """(proto path, field, value) for every set string and Timestamp, depth first."""
    for field, value in message.ListFields():
        path = f"{prefix}{field.name}"
        if field.is_repeated and len(value) > max_items_of(field):
            raise InvalidArgument(path, f"takes at most {max_items_of(field)} items")
        items = list(value) if field.is_repeated else [value]
        for index, item in enumerate(items):
            item_path = f"{path}[{index}]" if field.is_repeated else path
            if field.type == FieldDescriptor.TYPE_STRING:
                yield item_path, field, item
            elif field.message_type is not None:
                if field.message_type.full_name == TIMESTAMP:
                    yield item_path, field, item
                elif not field.message_type.GetOptions().map_entry:
                    yield from _values(item, f"{item_path}.")


class Undecodable:
    """Stands in for a request whose bytes are not a valid encoding of its message."""


def _lenient(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any]:
    def parse(data: bytes) -> Any:
        if deserializer is None:
            return data
        try:
            return deserializer(data)
        except Exception:
            return Undecodable()

    return parse


class LenientServices:
    """Undecodable bytes are the client's fault: INVALID_ARGUMENT, not gRPC's own INTERNAL.

    gRPC answers a request its deserializer cannot parse with INTERNAL and logs a traceback;
    here the bytes reach the handler as `Undecodable`, which is refused like any bad field.
    This stands where the generated `add_*_to_server` functions expect the server and wraps
    each unary-request method's handler once, as it is registered: an interceptor would do it
    on every call, a noticeable share of what a call refused at once (recall with the breaker
    open) costs the server.
    """

    def __init__(
        self,
        server: Any,
        pool: ThreadPoolExecutor | None = None,
        methods: frozenset[str] | None = None,
    ) -> None:
        """`pool`: the services registered here run on it instead of the server's handler
        threads (a service whose calls may wait on the client as long as it likes); with
        `methods` (full paths, `/package.Service/Method`), only those methods do."""
        self._server = server  # a grpc.Server (the stubs lack add_registered_method_handlers)
        self._pool = pool
        self._methods = methods

    def add_registered_method_handlers(
        self, service_name: str, method_handlers: dict[str, Any]
    ) -> None:
        self._server.add_registered_method_handlers(
            service_name,
            {
                name: self._wrap(handler, f"/{service_name}/{name}")
                for name, handler in method_handlers.items()
            },
        )

    def add_generic_rpc_handlers(self, handlers: Iterable[Any]) -> None:
        self._server.add_generic_rpc_handlers(
            tuple(_LenientGeneric(h, self._wrap) for h in handlers)
        )

    def _wrap(self, handler: Any, method: str) -> Any:
        handler = lenient(handler)
        if self._pool is None or (self._methods is not None and method not in self._methods):
            return handler
        return _on_pool(handler, self._pool)


def _on_pool(handler: Any, pool: ThreadPoolExecutor) -> Any:
    """`handler` run on `pool` (gRPC reads the behaviour's `experimental_thread_pool`)."""
    field = next(
        name
        for name in ("unary_unary", "unary_stream", "stream_unary", "stream_stream")
        if getattr(handler, name) is not None
    )
    behavior = getattr(handler, field)

    def run(*args: Any) -> Any:
        return behavior(*args)

    for name in _NON_BLOCKING:
        if hasattr(behavior, name):
            setattr(run, name, getattr(behavior, name))
    run.experimental_thread_pool = pool  # type: ignore[attr-defined]
    return handler._replace(**{field: run})


class _LenientGeneric(grpc.GenericRpcHandler):  # type: ignore[type-arg]
    """A generic handler (what gRPC falls back to for a method it did not match by name)
    whose handlers are wrapped once per method."""

    def __init__(
        self, handler: Any, wrap: Callable[[Any, str], Any] = lambda h, _: lenient(h)
    ) -> None:
        self._handler = handler
        self._wrap = wrap
        # method -> (the handler found, its wrapped form); only methods that exist, so a
        # client naming methods at random cannot grow it.
        self._wrapped: dict[str, tuple[Any, Any]] = {}

    def service(self, handler_call_details: Any) -> Any:
        handler = self._handler.service(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        known = self._wrapped.get(method)
        if known is not None and known[0] is handler:
            return known[1]
        wrapped = self._wrap(handler, method)
        self._wrapped[method] = (handler, wrapped)
        return wrapped


_NON_BLOCKING = ("experimental_non_blocking", "experimental_thread_pool")


def lenient(handler: Any) -> Any:
    """`handler` with a lenient deserializer, refusing `Undecodable` requests; a streaming
    request's handler as it is."""
    if handler.request_streaming:
        return handler
    behavior = handler.unary_unary or handler.unary_stream

    def checked(request: Any, context: grpc.ServicerContext, *callback: Any) -> Any:
        if isinstance(request, Undecodable):
            error = InvalidArgument("request", "is not a valid protobuf encoding")
            context.abort_with_status(to_status(error))
        return behavior(request, context, *callback)

    # A handler that answers through a callback (health's Watch) holds no thread while it
    # waits; gRPC learns that from these attributes, so the wrapper keeps them: without them
    # each open Watch held one of the server's handler threads until the client left.
    for name in _NON_BLOCKING:
        if hasattr(behavior, name):
            setattr(checked, name, getattr(behavior, name))
    factory = (
        grpc.unary_unary_rpc_method_handler
        if handler.unary_unary is not None
        else grpc.unary_stream_rpc_method_handler
    )
    return factory(
        checked,
        request_deserializer=_lenient(handler.request_deserializer),
        response_serializer=handler.response_serializer,
    )

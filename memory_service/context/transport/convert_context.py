"""Proto <-> domain for the context service: overrides, proposals and BuildContext."""

from __future__ import annotations

from datetime import datetime

from crmmem.memory.v1 import context_service_pb2 as ctx_pb
from crmmem.memory.v1 import memory_pb2 as pb

from memory_service.context.app.context import BuiltContext
from memory_service.context.domain.context import (
    Applicability,
    ContextRequest,
    CustomerRef,
    ExclusionReason,
    ReferenceStatus,
)
from memory_service.context.domain.overrides import Expiry, OverrideDraft
from memory_service.context.domain.proposals import Decision, Proposal
from memory_service.context.domain.proposals import Outcome as ProposalOutcome
from memory_service.kernel.domain import names
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.model import Override
from memory_service.kernel.domain.ports import SearchUnavailable
from memory_service.kernel.transport.fields import (
    KINDS,
    METHODS,
    SCOPE_TYPES,
    EnumMap,
    check_request_id,
    key_field,
    set_time,
    subject_id,
    to_time,
)
from memory_service.memories.public import add_recalled, fill_memory, memory_proto, revision_proto
from memory_service.memories.public import scope as read_scope
from memory_service.tasks.public import task_proto
from memory_service.transcripts.public import add_messages

MAX_WINDOW = 100
DEFAULT_WINDOW = 10

DECISIONS = EnumMap.named(Decision, ctx_pb.ProposalDecision)
REFERENCE_STATUSES = EnumMap.named(ReferenceStatus, ctx_pb.ReferenceStatus)
APPLICABILITY = EnumMap.named(Applicability, ctx_pb.ApplicabilityReason)
EXCLUSIONS = EnumMap.named(ExclusionReason, ctx_pb.ExclusionReason)


def override_draft(override: ctx_pb.Override) -> OverrideDraft:
    value = override.value.strip()
    if not value:
        raise InvalidArgument("override.value", "is required")
    return OverrideDraft(
        key=key_field(override.key, "override.key", required=True),
        key_context=key_field(override.key_context, "override.key_context", required=False),
        scope=read_scope(override.scope, "override.scope", customer_id_required=False),
        value=value,
        evidence_ref=override.transcript_message,
    )


def expiry(request: ctx_pb.CreateOverrideRequest) -> Expiry:
    if not request.HasField("expiry"):
        raise InvalidArgument("expiry", "is required: overrides always end")
    which = request.expiry.WhichOneof("expiry")
    if which == "expire_time":
        return Expiry(expire_time=to_time(request.expiry, "expire_time", "expiry"))
    if which == "end_of_day_time_zone":
        return Expiry(end_of_day_time_zone=request.expiry.end_of_day_time_zone)
    if which == "ttl_seconds":
        return Expiry(ttl_seconds=request.expiry.ttl_seconds)
    raise InvalidArgument("expiry", "set expire_time, end_of_day_time_zone or ttl_seconds")


def proposal(request: ctx_pb.ProposeMemoryRequest) -> Proposal:
    check_request_id(request.request_id)
    memory = request.memory
    scope = read_scope(memory.scope, "memory.scope", customer_id_required=False)
    value = request.value.strip()
    if not value:
        raise InvalidArgument("value", "is required")
    if not request.evidence_messages:
        raise InvalidArgument("evidence_messages", "needs at least one transcript message")
    return Proposal(
        scope=scope,
        key=key_field(memory.key, "memory.key", required=True),
        key_context=key_field(memory.key_context, "memory.key_context", required=False),
        kind=KINDS.required(memory.kind, "memory.kind"),
        value=value,
        method=METHODS.required(request.method, "method"),
        evidence=list(request.evidence_messages),
        valid_from=to_time(request, "valid_from", "valid_from"),
    )


def context_request(request: ctx_pb.BuildContextRequest, instant: datetime) -> ContextRequest:
    conversation_id = ""
    if request.conversation:
        conversation_id = names.parse_conversation(request.conversation, "conversation")
    task_id = ""
    if request.task:
        task_id = names.parse_task(request.task, "task")
    if request.window_size < 0 or request.window_size > MAX_WINDOW:
        raise InvalidArgument("window_size", f"must be between 0 and {MAX_WINDOW}")
    customers = []
    for index, reference in enumerate(request.customers):
        which = reference.WhichOneof("reference")
        field = f"customers[{index}]"
        if which == "customer_id":
            customers.append(
                CustomerRef(
                    customer_id=subject_id(
                        reference.customer_id, f"{field}.customer_id", required=True
                    )
                )
            )
        elif which == "name" and reference.name.strip():
            customers.append(CustomerRef(name=reference.name.strip()))
        else:
            raise InvalidArgument(field, "needs a customer_id or a name")
    return ContextRequest(
        conversation_id=conversation_id,
        task_id=task_id,
        instant=instant,
        customers=customers,
        window_size=request.window_size or DEFAULT_WINDOW,
        exclude_source_changed=request.exclude_source_changed,
    )


def override_proto(override: Override) -> ctx_pb.Override:
    out = ctx_pb.Override(
        name=names.override(override.parent_type, override.parent_id, override.id),
        key=override.key,
        key_context=override.key_context,
        scope=pb.Scope(type=SCOPE_TYPES.proto(override.scope.type), id=override.scope.id),
        value=override.value,
        author_user_id=override.author_user_id,
        transcript_message=override.evidence_ref,
    )
    set_time(out.expire_time, override.expire_time)
    set_time(out.create_time, override.create_time)
    return out


def proposal_proto(outcome: ProposalOutcome, now: datetime) -> ctx_pb.ProposeMemoryResponse:
    response = ctx_pb.ProposeMemoryResponse(
        decision=DECISIONS.proto(outcome.decision), reason=outcome.reason
    )
    if outcome.memory is not None:
        response.memory.CopyFrom(memory_proto(outcome.memory, now))
    if outcome.revision is not None:
        response.revision.CopyFrom(revision_proto(outcome.revision, now))
    if outcome.override is not None:
        response.override.CopyFrom(override_proto(outcome.override))
    return response


def context_proto(built: BuiltContext) -> ctx_pb.BuildContextResponse:
    context = built.context
    instant = context.instant
    out = ctx_pb.BuildContextResponse(
        conflicts=[
            ctx_pb.Conflict(
                key=conflict.key,
                key_context=conflict.key_context,
                memories=[names.memory(item.memory.id) for item in conflict.memories],
                values=[item.revision.value for item in conflict.memories],
            )
            for conflict in context.conflicts
        ],
        excluded=[
            ctx_pb.Exclusion(subject=subject, reason=EXCLUSIONS.proto(reason))
            for subject, reason in context.excluded
        ],
        customers=[
            ctx_pb.CustomerResolution(
                reference=(
                    ctx_pb.CustomerReference(customer_id=r.reference.customer_id)
                    if r.reference.customer_id
                    else ctx_pb.CustomerReference(name=r.reference.name)
                ),
                status=REFERENCE_STATUSES.proto(r.status),
                customer_id=r.customer_id,
                candidate_ids=list(r.candidates),
            )
            for r in context.customers
        ],
    )
    add_messages(out.recent_messages, context.window)
    add_memory, reasons = out.memories.add, APPLICABILITY.protos
    for applying in context.memories:
        applied = add_memory(reason=reasons[applying.reason])
        if applying.revision.source_change_time is not None:  # false is proto3's default
            applied.source_changed = True
        fill_memory(applied.memory, applying.shown)
    if context.task is not None:
        out.task_state.CopyFrom(task_proto(context.task, None))  # open: no purge time yet
    for item in context.overrides:
        entry = out.overrides.add(override=override_proto(item.override))
        if item.shadowed is not None:
            entry.shadowed_memory = names.memory(item.shadowed.memory.id)
            entry.shadowed_value = item.shadowed.revision.value
    set_time(out.as_of, instant)
    if isinstance(built.recall, SearchUnavailable):
        out.recall_degraded = True
    elif built.recall is not None:
        add_recalled(out.recalled, built.recall)
    return out

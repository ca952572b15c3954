"""gRPC servicer for imports; large archives are parsed later by the import worker."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import grpc
from crmmem.memory.v1 import import_service_pb2 as imp_pb
from crmmem.memory.v1 import import_service_pb2_grpc as imp_grpc

from memory_service.imports.app.imports import ImportCommands, ImportQueries, SubmitImport
from memory_service.imports.domain.parsers import MAX_ARCHIVE_BYTES
from memory_service.kernel.domain import names
from memory_service.kernel.domain.errors import InvalidArgument
from memory_service.kernel.domain.model import (
    ArchiveFormat,
    Identity,
    ImportBatch,
    ImportItem,
    ImportState,
    ItemOutcome,
    ItemReview,
    RestoreMode,
    SkipReason,
)
from memory_service.kernel.transport.fields import (
    KINDS,
    SCOPE_TYPES,
    SPEAKERS,
    EnumMap,
    key_field,
    set_time,
    subject_id,
)
from memory_service.kernel.transport.idempotency import request_key
from memory_service.kernel.transport.paging import ORDINAL
from memory_service.kernel.transport.rpc import ServicerBase, rpc
from memory_service.memories.public import (
    ShowsCurrentMemory,
    memory_proto,
    receipt_proto,
    revision_proto,
)

log = logging.getLogger("memory_service.transport.import_servicer")

FORMATS = EnumMap.named(ArchiveFormat, imp_pb.ArchiveFormat)
STATES = EnumMap.named(ImportState, imp_pb.ImportState)
OUTCOMES = EnumMap.named(ItemOutcome, imp_pb.ItemOutcome)
SKIPS = EnumMap.named(SkipReason, imp_pb.SkipReason)
RESTORE_MODES = EnumMap.named(RestoreMode, imp_pb.RestoreMode)
REVIEWS = EnumMap.named(ItemReview, imp_pb.ItemReview)


def batch_proto(batch: ImportBatch) -> imp_pb.ImportBatch:
    out = imp_pb.ImportBatch(
        name=names.import_batch(batch.id),
        format=FORMATS.proto(batch.format),
        state=STATES.proto(batch.state),
        archive_sha256=batch.archive_sha256,
        error=batch.error,
        accepted_count=batch.accepted_count,
        skipped_count=batch.skipped_count,
        unresolved_count=batch.unresolved_count,
        missing_attachment_count=batch.missing_count,
    )
    set_time(out.create_time, batch.create_time)
    set_time(out.complete_time, batch.complete_time)
    return out


def item_proto(item: ImportItem) -> imp_pb.ImportItem:
    out = imp_pb.ImportItem(
        name=names.import_item(item.batch_id, item.id),
        ordinal=item.ordinal,
        outcome=OUTCOMES.proto(item.outcome),
        skip_reason=(
            SKIPS.proto(item.skip_reason)
            if item.skip_reason is not SkipReason.NONE
            else imp_pb.SKIP_REASON_UNSPECIFIED
        ),
        speaker=SPEAKERS.proto(item.speaker),
        text=item.text,
        source_ref=item.source_ref,
        attachment=item.attachment,
        review=REVIEWS.proto(item.review),
        memory=names.memory(item.memory_id) if item.memory_id else "",
    )
    set_time(out.source_time, item.source_time)
    return out


@dataclass(eq=False)
class ImportServicer(ShowsCurrentMemory, ServicerBase, imp_grpc.ImportServiceServicer):
    submit: SubmitImport
    commands: ImportCommands
    queries: ImportQueries

    @rpc
    def DeleteImportBatch(
        self,
        request: imp_pb.DeleteImportBatchRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> imp_pb.DeleteImportBatchResponse:
        batch_id = names.parse_import_batch(request.name)

        return self.commands.delete_batch(
            identity,
            request_key("DeleteImportBatch", request, imp_pb.DeleteImportBatchResponse),
            batch_id,
            lambda removed, receipt: imp_pb.DeleteImportBatchResponse(
                removed_item_count=removed, receipt=receipt_proto(receipt)
            ),
        )

    @rpc
    def CreateImportBatch(
        self,
        request: imp_pb.CreateImportBatchRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> imp_pb.CreateImportBatchResponse:
        archive_format = FORMATS.required(request.format, "format")
        mode = RESTORE_MODES.optional(request.restore_mode, "restore_mode") or RestoreMode.CLEAN
        if mode is RestoreMode.MERGE and archive_format is not ArchiveFormat.CRMMEM_EXPORT:
            raise InvalidArgument("restore_mode", "applies to ARCHIVE_FORMAT_CRMMEM_EXPORT only")
        archive = request.archive  # each read of a bytes field is a copy
        if not archive:
            raise InvalidArgument("archive", "is required")
        if len(archive) > MAX_ARCHIVE_BYTES:
            raise InvalidArgument(
                "archive", f"is larger than {MAX_ARCHIVE_BYTES // (1024 * 1024)} MiB"
            )

        return self.submit(
            identity,
            request_key("CreateImportBatch", request, imp_pb.CreateImportBatchResponse),
            archive_format,
            archive,
            lambda batch, again: imp_pb.CreateImportBatchResponse(
                batch=batch_proto(batch), already_imported=again
            ),
            mode,
        )

    @rpc
    def GetImportBatch(
        self,
        request: imp_pb.GetImportBatchRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> imp_pb.GetImportBatchResponse:
        batch_id = names.parse_import_batch(request.name)
        batch = self.queries.batch(identity, batch_id)
        return imp_pb.GetImportBatchResponse(batch=batch_proto(batch))

    @rpc
    def ListImportItems(
        self,
        request: imp_pb.ListImportItemsRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> imp_pb.ListImportItemsResponse:
        batch_id = names.parse_import_batch(request.parent, "parent")
        outcome = OUTCOMES.optional(request.outcome, "outcome")
        page = self.pages.page(request, identity, [ORDINAL])
        after_ordinal = page.cursor(-1)
        items = self.queries.items(identity, batch_id, outcome, after_ordinal, page.fetch)
        shown, token = page.respond(items, lambda i: (i.ordinal,))
        return imp_pb.ListImportItemsResponse(
            items=[item_proto(i) for i in shown], next_page_token=token
        )

    @rpc
    def ConfirmImportItem(
        self,
        request: imp_pb.ConfirmImportItemRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> imp_pb.ConfirmImportItemResponse:
        _, item_id = names.parse_import_item(request.name)
        memory = request.memory
        scope_type = SCOPE_TYPES.optional(memory.scope.type, "memory.scope.type")
        if scope_type is not None and scope_type.value != "USER":
            raise InvalidArgument("memory.scope.type", "imports confirm into user memory only")
        scope_id = subject_id(memory.scope.id, "memory.scope.id", required=False)
        if scope_id and scope_id != identity.user_id:
            # Never silently ignored: the caller asked for somebody else's memory.
            raise InvalidArgument(
                "memory.scope.id", "imports confirm into the caller's own memory: empty or yours"
            )
        key = key_field(memory.key, "memory.key", required=True)
        key_context = key_field(memory.key_context, "memory.key_context", required=False)
        kind = KINDS.required(memory.kind, "memory.kind")
        value = request.value.strip()

        return self.commands.confirm_item(
            identity,
            request_key("ConfirmImportItem", request, imp_pb.ConfirmImportItemResponse),
            item_id,
            (key, key_context, kind),
            value,
            lambda item, confirmed, revision, now: imp_pb.ConfirmImportItemResponse(
                item=item_proto(item),
                memory=memory_proto(confirmed, now),
                revision=revision_proto(revision, now),
            ),
        )

    @rpc
    def RejectImportItem(
        self,
        request: imp_pb.RejectImportItemRequest,
        context: grpc.ServicerContext,
        identity: Identity,
    ) -> imp_pb.RejectImportItemResponse:
        _, item_id = names.parse_import_item(request.name)

        return self.commands.reject_item(
            identity,
            request_key("RejectImportItem", request, imp_pb.RejectImportItemResponse),
            item_id,
            lambda item: imp_pb.RejectImportItemResponse(item=item_proto(item)),
        )

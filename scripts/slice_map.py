"""Where every file of `memory_service/` goes in the feature-slice layout (issue #39).

Read by `scripts/move_to_slices.py` (which moves the files and rewrites every reference) and by
`scripts/check_slices.py` (which knows the slices and layers). Paths are relative to
`memory_service/`. A key ending in "/" moves a whole folder (the Alembic migrations). A file
that is in neither MOVES nor STAYS makes the move script stop and name it, so a module added on
main since this table was written is placed by a person, not guessed.

Layout: `memory_service/<slice>/<layer>/` with layer one of LAYERS, over `memory_service/kernel/`
(the same layers, shared by every slice, importing none). The wiring (bootstrap, __main__,
config, the command lines, the gRPC server, the SQL unit of work that composes every slice's
repository) stays at the top, and so does `testing/`.
"""

from __future__ import annotations

SLICES = (
    "memories",
    "transcripts",
    "context",
    "imports",
    "exports",
    "access",
    "tasks",
    "review",
    "documents",
)
KERNEL = "kernel"
LAYERS = ("domain", "app", "storage", "transport", "adapters", "workers")
# Each slice's one public module: another slice imports this, never the slice's internals.
PUBLIC = "public"

MOVES: dict[str, str] = {
    # ---- kernel: what every slice shares; imports no slice ----
    "domain/__init__.py": "kernel/domain/__init__.py",
    "domain/model.py": "kernel/domain/model.py",  # records, enums, Identity, utcnow
    "domain/names.py": "kernel/domain/names.py",  # resource names
    "domain/errors.py": "kernel/domain/errors.py",  # errors and their reasons
    "domain/rules.py": "kernel/domain/rules.py",  # time, limits, field patterns, supersede
    "domain/etags.py": "kernel/domain/etags.py",
    "domain/ports.py": "kernel/domain/ports.py",  # every port (one file; see docs/layout.md)
    "domain/authorization.py": "kernel/domain/authorization.py",  # scoping: AccessPolicy
    "domain/conversations.py": "kernel/domain/conversations.py",  # who may read a conversation
    # The secret rule guards every text any slice stores (memories, tasks, documents, overrides,
    # imports): shared, so kernel; card_numbers and call_memo serve it (and grounding).
    "domain/secrets.py": "kernel/domain/secrets.py",
    "domain/card_numbers.py": "kernel/domain/card_numbers.py",
    "domain/call_memo.py": "kernel/domain/call_memo.py",
    "app/__init__.py": "kernel/app/__init__.py",
    "app/transactions.py": "kernel/app/transactions.py",  # units of work + request ids
    "storage/__init__.py": "kernel/storage/__init__.py",
    "storage/models.py": "kernel/storage/models.py",  # one metadata, one migration history
    "storage/scoped.py": "kernel/storage/scoped.py",  # the tenant-scoped statement helper
    "storage/prepared.py": "kernel/storage/prepared.py",
    "storage/rows.py": "kernel/storage/rows.py",
    "storage/idempotency.py": "kernel/storage/idempotency.py",  # request ids, for Transactions
    "storage/checkpoint.py": "kernel/storage/checkpoint.py",
    "storage/migrate.py": "kernel/storage/migrate.py",
    "storage/migrations/": "kernel/storage/migrations/",
    "transport/__init__.py": "kernel/transport/__init__.py",
    "transport/auth.py": "kernel/transport/auth.py",
    "transport/deadline.py": "kernel/transport/deadline.py",
    "transport/paging.py": "kernel/transport/paging.py",
    "transport/readiness.py": "kernel/transport/readiness.py",
    "transport/worker_pool.py": "kernel/transport/worker_pool.py",
    "adapters/__init__.py": "kernel/adapters/__init__.py",
    "adapters/secret_scanning.py": "kernel/adapters/secret_scanning.py",  # the SecretScanner port
    "workers/__init__.py": "kernel/workers/__init__.py",
    "workers/outage.py": "kernel/workers/outage.py",  # every worker's outage log
    "workers/thread.py": "kernel/workers/thread.py",  # a periodic worker's thread, start and stop
    # ---- memories: memories, revisions, evidence, grounding, recall, the index ----
    "domain/authority.py": "memories/domain/authority.py",
    "domain/grounding.py": "memories/domain/grounding.py",
    "domain/wording.py": "memories/domain/wording.py",
    "domain/lexicon.py": "memories/domain/lexicon.py",
    "domain/evidence.py": "memories/domain/evidence.py",
    "domain/evidence_resolution.py": "memories/domain/evidence_resolution.py",
    "domain/memory_reads.py": "memories/domain/memory_reads.py",
    "domain/shown.py": "memories/domain/shown.py",
    "domain/memory_requests.py": "memories/domain/memory_requests.py",
    "domain/memory_writes.py": "memories/domain/memory_writes.py",
    "domain/receipts.py": "memories/domain/receipts.py",
    "domain/recall.py": "memories/domain/recall.py",
    "domain/indexing.py": "memories/domain/indexing.py",
    "app/memories.py": "memories/app/memories.py",
    "app/recall.py": "memories/app/recall.py",
    "app/index_watch.py": "memories/app/index_watch.py",
    "storage/memories.py": "memories/storage/memories.py",
    "storage/memory_listing.py": "memories/storage/memory_listing.py",
    "storage/memory_rows.py": "memories/storage/memory_rows.py",
    "storage/outbox.py": "memories/storage/outbox.py",
    "storage/usage.py": "memories/storage/usage.py",
    "adapters/retrieval_client.py": "memories/adapters/retrieval_client.py",
    "adapters/thesaurus.py": "memories/adapters/thesaurus.py",
    "workers/outbox.py": "memories/workers/outbox.py",
    "workers/usage.py": "memories/workers/usage.py",
    # The gRPC plumbing every servicer uses (rpc, errors, edge, idempotency) is the kernel's.
    # After the move, convert.py's shared fields went to kernel/transport/fields.py, and its
    # customers and messages to access/ and transcripts/ (convert_access.py,
    # convert_transcripts.py), by hand: the map records where each old file went.
    "transport/convert.py": "memories/transport/convert.py",
    "transport/errors.py": "kernel/transport/errors.py",
    "transport/edge.py": "kernel/transport/edge.py",
    "transport/idempotency.py": "kernel/transport/idempotency.py",
    "transport/rpc.py": "kernel/transport/rpc.py",
    "transport/memory_servicer.py": "memories/transport/memory_servicer.py",
    # ---- transcripts ----
    "domain/transcripts.py": "transcripts/domain/transcripts.py",
    "storage/transcripts.py": "transcripts/storage/transcripts.py",
    "transport/transcript_servicer.py": "transcripts/transport/transcript_servicer.py",
    # ---- context: BuildContext, overrides, proposals ----
    "domain/context.py": "context/domain/context.py",
    "domain/overrides.py": "context/domain/overrides.py",
    "domain/proposals.py": "context/domain/proposals.py",
    "domain/language.py": "context/domain/language.py",
    "app/context.py": "context/app/context.py",
    "storage/overrides.py": "context/storage/overrides.py",
    "transport/context_servicer.py": "context/transport/context_servicer.py",
    "transport/convert_context.py": "context/transport/convert_context.py",
    # ---- imports: archives in, restore ----
    "domain/importing/__init__.py": "imports/domain/__init__.py",
    "domain/importing/chunks.py": "imports/domain/chunks.py",
    "domain/importing/fields.py": "imports/domain/fields.py",
    "domain/importing/parsers.py": "imports/domain/parsers.py",
    "domain/importing/restore.py": "imports/domain/restore.py",
    "domain/importing/restore_run.py": "imports/domain/restore_run.py",
    "domain/importing/service.py": "imports/domain/service.py",
    "app/imports.py": "imports/app/imports.py",
    "storage/imports.py": "imports/storage/imports.py",
    "storage/archive.py": "imports/storage/archive.py",  # export's reads and restore's id checks
    "transport/import_servicer.py": "imports/transport/import_servicer.py",
    "workers/imports.py": "imports/workers/imports.py",
    # ---- exports: the export format ----
    "domain/export.py": "exports/domain/export.py",
    # ---- access: customers and grants ----
    "domain/access.py": "access/domain/access.py",
    "app/access.py": "access/app/access.py",
    "storage/access.py": "access/storage/access.py",
    "transport/access_servicer.py": "access/transport/access_servicer.py",
    # ---- tasks ----
    "domain/tasks.py": "tasks/domain/tasks.py",
    "app/tasks.py": "tasks/app/tasks.py",
    "storage/tasks.py": "tasks/storage/tasks.py",
    "transport/task_servicer.py": "tasks/transport/task_servicer.py",
    "transport/convert_tasks.py": "tasks/transport/convert_tasks.py",
    "workers/retention.py": "tasks/workers/retention.py",
    # ---- review: the review queue, conflicts ----
    "domain/review.py": "review/domain/review.py",
    "app/review.py": "review/app/review.py",
    "storage/review.py": "review/storage/review.py",
    "transport/review_servicer.py": "review/transport/review_servicer.py",
    # ---- documents: document sources and their versions ----
    "domain/documents.py": "documents/domain/documents.py",
    # ---- wiring, at the top ----
    "transport/server.py": "server.py",  # builds the gRPC server from every slice's servicer
    "storage/unit_of_work.py": "unit_of_work.py",  # composes every slice's repository
}

# Files that keep their place.
STAYS = (
    "__init__.py",
    "__main__.py",
    "bootstrap.py",
    "cli.py",
    "config.py",
    "review_cli.py",
    "memoryctl/",
    "testing/",
    # what the move itself creates
    "kernel/",
    *(f"{name}/" for name in SLICES),
    "server.py",
    "unit_of_work.py",
)

# Classes that move out of a file into another, by name (the file itself moves by MOVES first).
# app/access.py holds the transcript entries beside the access ones; apart, neither slice needs
# the other's app.
SPLITS: dict[str, dict[str, tuple[str, ...]]] = {
    "access/app/access.py": {
        "transcripts/app/transcripts.py": ("TranscriptCommands", "TranscriptQueries"),
    },
}
SPLIT_DOCS = {
    "transcripts/app/transcripts.py": (
        "Transcript use cases, one entry each. A write: the unit of work under the request id,\n"
        "the domain's decision, the answer stored, commit. A read: one read unit of work, the\n"
        "domain's answer."
    ),
}

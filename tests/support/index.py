"""An index for tests that drive the real outbox drain: it keeps the text it was last sent for
each memory, so a test can ask what is searchable (`ids`) and as what (`texts`)."""

from __future__ import annotations

from collections.abc import KeysView, Sequence

from memory_service.memories.domain.indexing import IndexDocument


class RecordingIndex:
    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    @property
    def ids(self) -> KeysView[str]:
        return self.texts.keys()

    def tenant_points(self, tenant_id: str) -> int:
        return len(self.texts)

    def upsert(self, documents: Sequence[IndexDocument], deadline: float | None = None) -> None:
        self.texts.update((document.memory_id, document.text) for document in documents)

    def delete(
        self,
        tenant_id: str,
        memory_ids: Sequence[str],
        deadline: float | None = None,
        versions: Sequence[int] = (),
    ) -> None:
        for memory_id in memory_ids:
            self.texts.pop(memory_id, None)

    def delete_tenant(self, tenant_id: str, deadline: float | None = None) -> None:
        self.texts.clear()

"""The embedder asks for huge pages over the memory its session mapped, and only that memory."""

from __future__ import annotations

import ctypes
import mmap

from retrieval_service.embedding.hugepages import HUGE_PAGE, added, advise, writable_anonymous


def test_only_what_was_mapped_since_counts() -> None:
    """A mapping that was there is left alone; a heap that grew counts with its new part."""
    before = [(0x1000, 0x9000), (0x20000, 0x30000)]
    after = [(0x1000, 0x9000), (0x18000, 0x38000), (0x50000, 0x60000)]
    assert added(before, after) == [(0x18000, 0x20000), (0x30000, 0x38000), (0x50000, 0x60000)]
    assert added(after, after) == []


def test_a_new_mapping_is_found_and_advised_in_whole_huge_pages() -> None:
    before = writable_anonymous()
    memory = mmap.mmap(-1, 4 * HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        memory.write(b"\1" * len(memory))
        start = ctypes.addressof(ctypes.c_char.from_buffer(memory))
        end = start + len(memory)
        new = added(before, writable_anonymous())
        assert any(a <= start and end <= b for a, b in new), (hex(start), new)
        # 3 or 4 whole 2 MiB pages fit in 8 MiB depending on its alignment.
        assert advise([(start, end)]) >= 3 * HUGE_PAGE
        assert advise([(start, start + HUGE_PAGE - 1)]) == 0
        assert memory[:] == b"\1" * len(memory)  # advice changes no content
    finally:
        memory.close()

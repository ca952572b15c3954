"""What other slices may use of the transcripts slice: they import these names from
here, never from the slice's modules (scripts/check_slices.py). Kept to what they
use; first written by scripts/move_to_slices.py."""

from __future__ import annotations

from memory_service.transcripts.storage.transcripts import (
    SqlTranscriptRepository as SqlTranscriptRepository,
)
from memory_service.transcripts.storage.transcripts import message_of as message_of
from memory_service.transcripts.transport.convert_transcripts import add_messages as add_messages

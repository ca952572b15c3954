"""Archive parsing for imports: strict and total. Every input either parses completely or fails
with an ArchiveError naming where it broke; nothing else escapes."""

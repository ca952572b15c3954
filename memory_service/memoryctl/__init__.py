"""memoryctl's parts: reaching the service (connection.py), the client and its tables
(client.py), the memory commands (memories.py) and export and import (archives.py). The
console entry point, its parser and the command table are `memory_service/cli.py`."""

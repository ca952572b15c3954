"""docs/deployment.md's commands, checked in the order a reader runs them, as far as this machine
can without a container engine or a cluster: the images its `docker build`s tag are the ones the
overlays deploy; each `docker run` publishes a port its image exposes and listens on at 0.0.0.0,
mounts volumes where the image's user may write, passes variables the code reads (secrets from
the shell, never expanded onto docker's command line), calls containers it started on the network
it made and waits for PostgreSQL before the memory service uses it; every `kubectl` command names
an overlay that renders or a namespace that exists by then, and the Secrets it creates (run with
`--dry-run=client`) are exactly the ones the overlay applied after them refers to."""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import shlex
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.integration.test_manifests import KUBECTL, READ, ROOT, find
from tests.integration.test_manifests import render as render_once

DOCS = ROOT / "docs" / "deployment.md"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
# The address memoryctl and the examples use when MEMORY_ADDRESS is unset
# (memory_service/memoryctl/connection.py).
CLIENT_DEFAULT = "127.0.0.1:50051"
SERVICE_USER = "10001"
# Each image's listen and data-folder variables, by Dockerfile stage.
LISTEN = {"memory-service": "MEMORY_LISTEN", "retrieval-sidecar": "RETRIEVAL_LISTEN"}
DATA_DIR = {"memory-service": "MEMORY_DATA_DIR", "retrieval-sidecar": "RETRIEVAL_DATA_DIR"}
# The container of the rendered pod each stage's image runs in.
CONTAINER = {"memory-service": "memory", "retrieval-sidecar": "retrieval"}
# Each overlay rendered once for the module (the tests only read the documents).
render = functools.cache(render_once)


@dataclass
class Stage:
    """What one Dockerfile stage ends with: its environment, exposed ports, user and the folders
    it creates for the service's user (`install -d -o USER`), its parents' included."""

    env: dict[str, str] = field(default_factory=dict)
    exposed: set[int] = field(default_factory=set)
    owned: set[str] = field(default_factory=set)
    user: str = "root"


def dockerfile() -> dict[str, Stage]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    stages: dict[str, Stage] = {}
    current = Stage()
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        instruction, args = words[0].upper(), words[1:]
        if instruction == "FROM":
            parent = stages.get(args[0])
            current = (
                Stage(dict(parent.env), set(parent.exposed), set(parent.owned), parent.user)
                if parent
                else Stage()
            )
            stages[args[-1]] = current
        elif instruction == "ENV":
            current.env.update({arg.partition("=")[0]: arg.partition("=")[2] for arg in args})
        elif instruction == "EXPOSE":
            current.exposed |= {int(port.split("/")[0]) for port in args}
        elif instruction == "USER":
            current.user = args[0]
        elif instruction == "RUN" and args[:2] == ["install", "-d"]:
            owner = args[args.index("-o") + 1]
            if owner in (SERVICE_USER, "crmmem"):
                current.owned |= {a for a in args[2:] if a.startswith("/")}
    return stages


def documented_commands() -> list[str]:
    """Every command of the page in document order: the lines of its ```sh blocks (continuations
    joined) and the inline code spans that start with `docker` or `kubectl`."""
    text = DOCS.read_text()
    commands: list[str] = []
    for match in re.finditer(r"```(\w*)\n(.*?)```|`([^`\n]+(?:\n[^`\n]+)?)`", text, re.DOTALL):
        language, block, inline = match.groups()
        if block is not None:
            if language == "sh":
                commands += [
                    line for line in block.replace("\\\n", " ").splitlines() if line.strip()
                ]
        elif inline.startswith(("docker ", "kubectl ")) and len(inline.split()) > 3:
            commands.append(inline.replace("\n", " "))  # not a mere name: `kubectl apply -k`
    return commands


def rendered_images(overlay: str) -> dict[str, str]:
    pod = find(render(overlay), "Deployment", "memory-service")["spec"]["template"]["spec"]
    return {c["name"]: c["image"] for c in pod["initContainers"] + pod["containers"]}


def third_party_images() -> set[str]:
    """The images the overlays pin that the project does not build (Qdrant, PostgreSQL)."""
    images: set[str] = set()
    for overlay in ("dev", "production"):
        for doc in render(overlay):
            spec = doc.get("spec", {}).get("template", {}).get("spec", {})
            images |= {c["image"] for c in spec.get("containers", [])}
    return {image for image in images if not image.startswith("crmmem")}


def referenced_secrets(docs: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(Secret, key) of every secretKeyRef, and (Secret, "*") of every secret volume."""
    found: set[tuple[str, str]] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "secretKeyRef" in node:
                found.add((node["secretKeyRef"]["name"], node["secretKeyRef"]["key"]))
            if isinstance(node.get("secret"), dict) and "secretName" in node["secret"]:
                found.add((node["secret"]["secretName"], "*"))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(docs)
    return found


def namespace_of(docs: list[dict[str, Any]]) -> str:
    namespaces = {str(d["metadata"]["namespace"]) for d in docs if "namespace" in d["metadata"]}
    [namespace] = namespaces
    return namespace


def dry_run(command: str, home: Path) -> dict[str, Any]:
    """A documented `kubectl … create …` line, run by the shell (so `$(openssl …)` expands)
    with --dry-run=client: the object it would create, without a cluster."""
    line = command.replace("kubectl", shlex.quote(str(KUBECTL)), 1)
    output = subprocess.run(
        ["bash", "-c", f"{line} --dry-run=client -o json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "HOME": str(home), "KUBECONFIG": str(home / "none")},
    ).stdout
    result: dict[str, Any] = json.loads(output)
    return result


@dataclass
class Container:
    image: str
    network: str
    env: dict[str, str]


class Reader:
    """Follows the page's commands in order, holding what they made so far."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.stages = dockerfile()
        self.built: dict[str, str] = {}  # image reference -> Dockerfile stage
        self.networks: set[str] = set()
        self.volumes: set[str] = set()
        self.exported: dict[str, str] = {}  # name -> the value as written (unexpanded)
        self.ready: set[str] = set()  # database containers waited for since they started
        self.running: dict[str, Container] = {}
        self.started: set[str] = set()  # every image a `docker run` ran
        self.namespaces: set[str] = set()
        self.secrets: dict[str, set[tuple[str, str]]] = {}
        self.applied: dict[str, list[dict[str, Any]]] = {}

    def read(self, command: str) -> None:
        words = shlex.split(command, comments=True)
        if words[:1] == ["export"]:
            self.exported |= dict(word.partition("=")[::2] for word in words[1:])
        elif words[:1] == ["until"]:
            self.wait(command)
        elif words[:2] == ["docker", "build"]:
            self.docker_build(words[2:])
        elif words[:3] == ["docker", "network", "create"]:
            self.networks.add(words[3])
        elif words[:2] == ["docker", "run"]:
            self.docker_run(words[2:])
        elif words[:3] in (["docker", "volume", "rm"], ["docker", "network", "rm"]):
            made = self.volumes if words[1] == "volume" else self.networks
            assert set(words[3:]) == made, f"{command}: not what the page made: {made}"
        elif words[:3] == ["docker", "rm", "-f"]:
            for name in words[3:]:
                assert name in self.running, f"{command}: {name} was never started"
                del self.running[name]
        elif words[:1] == ["kubectl"]:
            self.kubectl(command, words[1:])

    def wait(self, command: str) -> None:
        """`until docker exec NAME pg_isready … -h 127.0.0.1 …; do sleep N; done`: over TCP, as
        the memory service connects (the image's first-start server takes no TCP connections)."""
        match = re.fullmatch(
            r"until (docker exec (\S+) pg_isready [^;]*); do sleep \d+; done", command
        )
        assert match, f"a wait this test does not check: {command}"
        words = shlex.split(match[1])
        name = match[2]
        assert self.running[name].image.startswith("postgres:"), f"{command}: not PostgreSQL"
        assert words[words.index("-h") + 1] == "127.0.0.1", f"{command}: not over TCP"
        assert words[words.index("-U") + 1] == self.running[name].env["POSTGRES_USER"]
        self.ready.add(name)

    def value(self, given: str) -> str:
        """What a container gets for `given`: `$NAME` (`-e NAME`) is NAME's exported value."""
        return self.exported[given[1:]] if given.startswith("$") else given

    def docker_build(self, args: list[str]) -> None:
        target, tag = args[args.index("--target") + 1], args[args.index("-t") + 1]
        assert target in self.stages, f"no stage {target} in the Dockerfile"
        assert args[-1] == ".", "built from the repository's root"
        assert tag.rsplit(":", 1)[1] == VERSION, f"{tag}: the tag is the package's version"
        self.built[tag] = target

    def docker_run(self, args: list[str]) -> None:
        options: dict[str, list[str]] = {}
        while args[0].startswith("-"):
            flag = args.pop(0)
            if flag in ("-d", "--rm"):
                continue
            assert flag in ("--name", "--network", "-p", "-e", "-v"), f"unchecked option {flag}"
            if flag == "-e":  # a secret expanded into docker's arguments is on its command line
                assert "$" not in args[0], f"-e {args[0]}: export it and pass -e NAME instead"
            options.setdefault(flag, []).append(args.pop(0))
        image = args[0]
        [name], [network] = options["--name"], options["--network"]
        self.volumes |= {volume.split(":")[0] for volume in options.get("-v", [])}
        assert network in self.networks, f"{name}: network {network} was never created"
        assert name not in self.running, f"{name} is already running"
        given: dict[str, str] = {}
        for variable in options.get("-e", []):  # `-e NAME` passes NAME from the shell
            key, _, value = variable.partition("=")
            given[key] = value if "=" in variable else f"${key}"
        for variable, value in given.items():
            if value == f"${variable}":
                assert variable in self.exported, f"{name}: -e {variable} is never exported"
        if image not in self.built:
            assert image in third_party_images(), f"{name}: {image} is not the pinned image"
            assert "-p" not in options, f"{name}: only the memory service is published"
            self.running[name] = Container(image, network, given)
            self.ready.discard(name)
            self.started.add(image)
            return
        stage_name = self.built[image]
        stage = self.stages[stage_name]
        env = {**stage.env, **given}
        unread = sorted(set(given) - READ)
        assert unread == [], f"{name} passes variables the code never reads: {unread}"
        assert stage.user == SERVICE_USER
        host, port = env[LISTEN[stage_name]].rsplit(":", 1)
        assert host == "0.0.0.0", f"{name} listens on {host}: -p would reach nothing"
        for publish in options.get("-p", []):
            assert int(publish.rsplit(":", 1)[1]) == int(port)
            assert int(port) in stage.exposed
            assert publish.rsplit(":", 1)[0] == CLIENT_DEFAULT.split(":")[0] + ":" + port
        for volume in options.get("-v", []):
            source, target = volume.split(":")
            assert not source.startswith("/"), "a named volume, not a folder of the host"
            assert target in stage.owned, f"{name}: {target} is not the service user's in the image"
            data_dir = env[DATA_DIR[stage_name]]
            assert data_dir == target or data_dir.startswith(target + "/")
        assert "RETRIEVAL_SHARED_SECRET" in given
        if stage_name == "memory-service":
            assert "MEMORY_JWT_SECRET" in given
            self.check_peer(name, network, given["MEMORY_RETRIEVAL_ADDRESS"], "retrieval-sidecar")
            if "MEMORY_DATABASE_URL" in given:
                url = urlsplit(self.value(given["MEMORY_DATABASE_URL"]))
                peer = self.running[str(url.hostname)]
                assert peer.image.startswith("postgres:")
                assert peer.network == network
                assert (url.username, url.path) == (
                    peer.env["POSTGRES_USER"],
                    "/" + peer.env["POSTGRES_DB"],
                )
                # The same shell variable the database got its password from.
                assert str(url.password).strip("${}") == peer.env["POSTGRES_PASSWORD"].lstrip("$")
                assert url.hostname in self.ready, f"{name} starts before {url.hostname} is ready"
        if "QDRANT_URL" in given:
            url = urlsplit(given["QDRANT_URL"])
            peer = self.running[str(url.hostname)]
            assert peer.image.startswith("qdrant/")
            assert peer.network == network
            qdrant = find(render("dev"), "Service", "qdrant")["spec"]["ports"]
            assert url.port == next(p["port"] for p in qdrant if p["name"] == "grpc")
            assert self.value(peer.env["QDRANT__SERVICE__API_KEY"]) == "$" + "QDRANT_API_KEY"
            assert given["QDRANT_API_KEY"] == "$QDRANT_API_KEY"
        self.running[name] = Container(image, network, env)
        self.started.add(image)

    def check_peer(self, name: str, network: str, address: str, stage_name: str) -> None:
        host, port = address.rsplit(":", 1)
        assert host in self.running, f"{name} calls {host}, which is not running"
        peer = self.running[host]
        assert self.built.get(peer.image) == stage_name
        assert peer.network == network
        assert peer.env[LISTEN[stage_name]] == f"0.0.0.0:{port}"

    def kubectl(self, command: str, args: list[str]) -> None:
        namespace = ""
        if args[0] == "-n":
            namespace, args = args[1], args[2:]
            assert namespace in self.namespaces, f"{command}: namespace {namespace} not created yet"
        if args[:2] == ["apply", "-k"] or args[:2] == ["delete", "-k"]:
            docs = render(Path(args[2]).name)
            assert args[2] == f"k8s/overlays/{Path(args[2]).name}"
            if args[0] == "delete":
                return
            made_here = {d["metadata"]["name"] for d in docs if d["kind"] == "Namespace"}
            target = namespace_of(docs)
            assert target in self.namespaces | made_here, f"{command}: no namespace {target}"
            self.namespaces |= made_here
            generated = {
                (d["metadata"]["name"], key)
                for d in docs
                if d["kind"] == "Secret"
                for key in [*d.get("data", {}), "*"]
            }
            available = generated | self.secrets.get(target, set())
            missing = referenced_secrets(docs) - available
            assert missing == set(), f"{command}: Secrets it needs are not created: {missing}"
            self.applied[target] = docs
        elif args[:2] == ["create", "namespace"]:
            assert dry_run(command, self.home)["kind"] == "Namespace"
            self.namespaces.add(args[2])
        elif args[:3] == ["create", "secret", "generic"]:
            secret = dry_run(command, self.home)
            assert secret["metadata"]["namespace"] == namespace
            keys = {(secret["metadata"]["name"], key) for key in [*secret["data"], "*"]}
            self.secrets.setdefault(namespace, set()).update(keys)
        elif args[0] in ("rollout", "logs", "port-forward"):
            docs = self.applied[namespace]
            kind, name = args[2 if args[0] == "rollout" else 1].split("/")
            kinds = {"deployment": "Deployment", "statefulset": "StatefulSet", "service": "Service"}
            resource = find(docs, kinds[kind], name)
            if args[0] == "logs":
                pod = resource["spec"]["template"]["spec"]
                names = {c["name"] for c in pod["containers"] + pod.get("initContainers", [])}
                assert args[args.index("-c") + 1] in names
            if args[0] == "port-forward":
                local, remote = args[2].split(":")
                assert int(remote) in {p["port"] for p in resource["spec"]["ports"]}
                assert local == CLIENT_DEFAULT.rsplit(":", 1)[1]
        else:
            assert args[0] == "label", f"a kubectl command this test does not check: {command}"


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Reader:
    reader = Reader(tmp_path_factory.mktemp("kube-home"))
    for command in documented_commands():
        reader.read(command)
    return reader


def test_every_command_reads_in_order(reader: Reader) -> None:
    """The walk itself checks each command; here, that it saw the page's whole story."""
    assert set(reader.built.values()) == {"memory-service", "retrieval-sidecar"}
    assert reader.started == set(reader.built) | third_party_images()
    assert reader.running == {}, "the page's last step removes every container it started"
    assert set(reader.applied) == {namespace_of(render(o)) for o in ("dev", "production")}


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_the_overlays_deploy_the_images_the_page_builds(reader: Reader, overlay: str) -> None:
    images = rendered_images(overlay)
    for image, stage in reader.built.items():
        assert images[CONTAINER[stage]] == image
    assert images["migrate"] == images["memory"]
    mentioned = set(re.findall(r"(?<![\w./=@-])crmmem(?:-retrieval)?:[\w.]+", DOCS.read_text()))
    assert mentioned <= set(reader.built), f"image references not built: {mentioned}"


def test_production_secrets_are_exactly_the_ones_the_manifests_use(reader: Reader) -> None:
    docs = render("production")
    created = reader.secrets[namespace_of(docs)]
    assert {name for name, _ in created} == {name for name, _ in referenced_secrets(docs)}
    assert referenced_secrets(docs) <= created


def test_dev_namespace_comes_first_and_production_leaves_it_to_the_operators() -> None:
    dev = render("dev")
    assert dev[0]["kind"] == "Namespace"
    assert dev[0]["metadata"]["name"] == namespace_of(dev)
    assert not [d for d in render("production") if d["kind"] == "Namespace"]


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_every_object_can_be_applied_again(overlay: str) -> None:
    """`kubectl apply -k` of a new release must not meet a field it cannot change: no Job (its
    pod template is immutable) and no generated name (which apply refuses)."""
    docs = render(overlay)
    assert not [d for d in docs if d["kind"] in ("Job", "CronJob")]
    assert all("name" in d["metadata"] and "generateName" not in d["metadata"] for d in docs)


def test_the_dev_token_key_on_the_page_is_the_dev_overlays() -> None:
    literals = set(re.findall(r"MEMORY_JWT_SECRET=([^\s\"'$)]+)", DOCS.read_text()))
    [secret] = [
        d
        for d in render("dev")
        if d["kind"] == "Secret" and d["metadata"]["name"].startswith("memory-jwt")
    ]
    assert literals == {base64.b64decode(secret["data"]["secret"]).decode()}


def test_the_images_listen_beyond_loopback_and_keep_their_data_where_they_may_write() -> None:
    """A read-only root filesystem (the pods) must never meet a folder the service would
    tighten: the memory service's data folder is not made by the image, only its parent."""
    stages = dockerfile()
    for stage_name, variable in LISTEN.items():
        stage = stages[stage_name]
        host, port = stage.env[variable].rsplit(":", 1)
        assert host == "0.0.0.0"
        assert stage.exposed == {int(port)}
        assert stage.user == SERVICE_USER
    memory = stages["memory-service"]
    data = Path(memory.env["MEMORY_DATA_DIR"])
    assert str(data) not in memory.owned
    assert str(data.parent) in memory.owned
    sidecar = stages["retrieval-sidecar"]
    assert sidecar.env["RETRIEVAL_DATA_DIR"] in sidecar.owned

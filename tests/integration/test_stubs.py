"""Every language gets stubs (issue 38, item 4): each proto names its Go, Java and C# package;
`make descriptors` writes one self-contained descriptor set that Node.js loads and decodes error
details with, exactly as docs/clients.md shows; and buf.gen.yaml generates Go, Java and Node.js
code with the plugins installed here (scripts/install-stub-plugins.sh, run by .ci/run)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from crmmem.memory.v1 import memory_pb2
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

ROOT = Path(__file__).parents[2]
BUF = ROOT / ".venv" / "bin" / "buf"
CLIENTS_DOC = ROOT / "docs" / "clients.md"
NODE_MODULES = ROOT / "clients" / "node" / "node_modules"
PROTOC_GEN_ES = NODE_MODULES / ".bin" / "protoc-gen-es"
DEBIAN_TOOLS = ("protoc-gen-go", "protoc-gen-go-grpc", "protoc", "grpc_java_plugin")


@pytest.fixture(scope="module")
def descriptor_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`make descriptors`, written into a folder of the test's own (run from the checkout)."""
    out = tmp_path_factory.mktemp("descriptors") / "build" / "crmmem.binpb"
    out.parent.mkdir()
    subprocess.run(
        ["make", "-s", "descriptors", f"DESCRIPTORS={out}"], cwd=ROOT, check=True, timeout=300
    )
    return out


@pytest.fixture(scope="module")
def descriptor_set(descriptor_file: Path) -> descriptor_pb2.FileDescriptorSet:
    return descriptor_pb2.FileDescriptorSet.FromString(descriptor_file.read_bytes())


def ours(files: descriptor_pb2.FileDescriptorSet) -> list[descriptor_pb2.FileDescriptorProto]:
    return [f for f in files.file if f.name.startswith("crmmem/")]


def test_every_proto_names_its_package_in_each_language(
    descriptor_set: descriptor_pb2.FileDescriptorSet,
) -> None:
    files = ours(descriptor_set)
    assert sorted(f.name for f in files) == sorted(
        str(p.relative_to(ROOT / "protos")) for p in (ROOT / "protos").rglob("*.proto")
    )
    for file in files:
        _, api, version = file.package.split(".")
        options = file.options
        path = file.package.replace(".", "/")
        assert options.go_package == f"crmmem.dev/api/go/{path};{api}{version}", file.name
        assert options.java_package == f"dev.{file.package}", file.name
        assert options.java_multiple_files, file.name
        assert options.csharp_namespace == f"Crmmem.{api.title()}.{version.title()}", file.name


def test_the_descriptor_set_holds_everything_it_imports_and_the_error_details(
    descriptor_set: descriptor_pb2.FileDescriptorSet,
) -> None:
    """A client loads this one file and nothing else: a pool built from it alone resolves every
    service, and google.rpc's Status, ErrorInfo and BadRequest for the trailer."""
    names = {f.name for f in descriptor_set.file}
    assert {d for f in descriptor_set.file for d in f.dependency} <= names
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_set.file:  # dependencies come first in a built set
        pool.Add(file)
    for file in ours(descriptor_set):
        for service in file.service:
            assert pool.FindServiceByName(f"{file.package}.{service.name}").methods
    for message in ("google.rpc.Status", "google.rpc.ErrorInfo", "google.rpc.BadRequest"):
        assert pool.FindMessageTypeByName(message)


def snippet(marker: str) -> str:
    """The ```js block of docs/clients.md that contains `marker`."""
    blocks: list[str] = re.findall(r"```js\n(.*?)```", CLIENTS_DOC.read_text(), re.DOTALL)
    [block] = [b for b in blocks if marker in b]
    return block


def packed(message: Message) -> any_pb2.Any:
    value = any_pb2.Any()
    value.Pack(message)
    return value


def test_node_loads_the_descriptor_set_and_decodes_error_details_as_documented(
    descriptor_file: Path, descriptor_set: descriptor_pb2.FileDescriptorSet
) -> None:
    """docs/clients.md's two Node.js snippets, run as written against a stale-etag status and
    a refused field, with the descriptor set in ./build as the page has it."""
    status = status_pb2.Status(
        code=10,
        message="etag mismatch",
        details=[
            packed(
                error_details_pb2.ErrorInfo(
                    reason="ETAG_MISMATCH",
                    domain="crmmem.memory.v1",
                    metadata={"current_etag": '"v2"'},
                )
            ),
            packed(
                error_details_pb2.BadRequest(
                    field_violations=[
                        error_details_pb2.BadRequest.FieldViolation(
                            field="memory.key", description="too long"
                        )
                    ]
                )
            ),
            packed(memory_pb2.Memory(name="memories/abc", etag='"v2"')),
        ],
    )
    script = "\n".join(
        [
            'const fs = require("node:fs");',
            'const grpc = require("@grpc/grpc-js");',
            'const protoLoader = require("@grpc/proto-loader");',
            "const trailer = Buffer.from(process.env.STATUS, 'base64');",
            "const error = { metadata: { get: (key) =>",
            "  key === 'grpc-status-details-bin' ? [trailer] : [] } };",
            snippet("loadFileDescriptorSetFromBuffer"),
            snippet("function errorDetails"),
            "console.log(JSON.stringify({",
            "  services: Object.keys(v1).filter((name) => name.endsWith('Service')).sort(),",
            "  info, badRequest,",
            "  memory: details.find((d) => d.type === 'crmmem.memory.v1.Memory'),",
            "}));",
        ]
    )
    output = subprocess.run(
        ["node", "-e", script],
        cwd=descriptor_file.parents[1],
        env={
            **os.environ,
            "NODE_PATH": str(NODE_MODULES),
            "STATUS": base64.b64encode(status.SerializeToString()).decode(),
        },
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    seen = json.loads(output)
    assert seen["services"] == sorted(
        service.name
        for file in ours(descriptor_set)
        if file.package == "crmmem.memory.v1"
        for service in file.service
    )
    assert seen["info"]["reason"] == "ETAG_MISMATCH"
    assert seen["info"]["metadata"] == {"current_etag": '"v2"'}
    assert seen["badRequest"]["field_violations"] == [
        {"field": "memory.key", "description": "too long"}
    ]
    assert seen["memory"]["etag"] == '"v2"'


def require_generators() -> None:
    """The plugins buf.gen.yaml runs. CI installs them (.ci/run), so there a missing one fails;
    elsewhere the test is skipped with what to run."""
    missing = [tool for tool in DEBIAN_TOOLS if shutil.which(tool) is None]
    if not PROTOC_GEN_ES.exists():
        missing.append(str(PROTOC_GEN_ES.relative_to(ROOT)))
    if missing:
        message = f"missing {missing}: run scripts/install-stub-plugins.sh (as root) and make node"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`buf generate` with buf.gen.yaml as it is, into a folder of the test's own."""
    require_generators()
    out = tmp_path_factory.mktemp("stubs")
    subprocess.run([str(BUF), "generate", "-o", str(out)], cwd=ROOT, check=True, timeout=300)
    return out / "build" / "stubs"


def test_go_stubs_are_generated_in_the_packages_the_protos_name(
    stubs: Path, descriptor_set: descriptor_pb2.FileDescriptorSet
) -> None:
    for file in ours(descriptor_set):
        stem = stubs / "go" / file.name.removesuffix(".proto")
        go_name = file.options.go_package.split(";")[1]
        code = stem.with_name(stem.name + ".pb.go").read_text()
        assert f"\npackage {go_name}\n" in code
        for service in file.service:
            grpc_code = stem.with_name(stem.name + "_grpc.pb.go").read_text()
            assert f"func New{service.name}Client(" in grpc_code
    assert not (stubs / "go" / "google").exists()  # imported from genproto, not generated


def test_the_go_snippets_name_what_the_stubs_define(stubs: Path) -> None:
    code = "".join(p.read_text() for p in (stubs / "go" / "crmmem" / "memory" / "v1").glob("*.go"))
    used = set(re.findall(r"memoryv1\.(\w+)", CLIENTS_DOC.read_text()))
    assert used
    undefined = sorted(n for n in used if not re.search(rf"^(type {n} |func {n}\()", code, re.M))
    assert undefined == []


def test_java_stubs_have_a_class_per_message_and_per_service(
    stubs: Path, descriptor_set: descriptor_pb2.FileDescriptorSet
) -> None:
    for file in ours(descriptor_set):
        folder = stubs / "java" / file.options.java_package.replace(".", "/")
        for message in file.message_type:
            assert (folder / f"{message.name}.java").exists(), message.name
        for service in file.service:
            assert (folder / f"{service.name}Grpc.java").exists(), service.name


def test_node_stubs_encode_and_decode_a_request(stubs: Path) -> None:
    script = """
const { create, toBinary, fromBinary } = require("@bufbuild/protobuf");
const v1 = require(process.env.STUB);
const request = create(v1.GetMemoryRequestSchema, { name: "memories/abc" });
const back = fromBinary(v1.GetMemoryRequestSchema, toBinary(v1.GetMemoryRequestSchema, request));
console.log(JSON.stringify({ service: v1.MemoryService.typeName, name: back.name }));
"""
    stub = stubs / "node" / "crmmem" / "memory" / "v1" / "memory_service_pb.js"
    output = subprocess.run(
        ["node", "-e", script],
        env={**os.environ, "NODE_PATH": str(NODE_MODULES), "STUB": str(stub)},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert json.loads(output) == {
        "service": "crmmem.memory.v1.MemoryService",
        "name": "memories/abc",
    }


def make_stubs(out: Path, work: Path) -> None:
    """`make stubs` as docs/clients.md runs it, writing build/stubs under `out` (the stubs of
    `make gen` regenerated into `work`, so the shared checkout and venv are left as they are)."""
    installed = work / ".installed"
    installed.touch()
    subprocess.run(
        [
            "make",
            "-s",
            "stubs",
            f"STUBS_OUT={out}",
            f"GEN={work / 'gen'}",
            f"GOOGLE={work / 'protos'}",
            f"GEN_PTH={work / 'crmmem_gen.pth'}",
            f"INSTALLED={installed}",
        ],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if not k.startswith("MAKE")},
        check=True,
        capture_output=True,
        timeout=300,
    )


def test_make_stubs_again_keeps_the_go_module_the_docs_have_you_create(tmp_path: Path) -> None:
    """docs/clients.md: `make stubs`, then `go mod init` and `go mod tidy` in build/stubs/go. The
    next `make stubs` replaces the generated files (a stale one goes) and keeps go.mod and
    go.sum (buf's `clean` deleted the folder whole)."""
    require_generators()
    assert "go mod init crmmem.dev/api/go" in CLIENTS_DOC.read_text()
    out, work = tmp_path / "out", tmp_path / "work"
    work.mkdir()
    make_stubs(out, work)
    go = out / "build" / "stubs" / "go"
    written = {"go.mod": "module crmmem.dev/api/go\n\ngo 1.22\n", "go.sum": "", "notes.txt": "x"}
    for name, text in written.items():
        (go / name).write_text(text)
    package = go / "crmmem" / "memory" / "v1"
    stale = package / "renamed_service.pb.go"  # from a proto since renamed
    stale.write_text("package memoryv1\n")
    make_stubs(out, work)
    assert {name: (go / name).read_text() for name in written} == written
    assert not stale.exists()
    assert (package / "memory_service.pb.go").exists()
    assert list((out / "build" / "stubs" / "java").rglob("*Grpc.java"))
    assert list((out / "build" / "stubs" / "node").rglob("*_pb.js"))


def test_the_java_runtime_note_names_the_generators_installed_here(stubs: Path) -> None:
    """docs/clients.md pins the Java runtimes from the generators' versions: they must be the
    ones `make stubs` runs here, and the annotation the note is about must be in the output."""
    section = " ".join(
        CLIENTS_DOC.read_text().split("### Java", 1)[1].split("\n### ", 1)[0].split()
    )
    protoc = subprocess.run(["protoc", "--version"], capture_output=True, text=True, check=True)
    version = protoc.stdout.split()[-1]  # libprotoc 3.21.12
    assert f"`protobuf-compiler`, {version};" in section
    assert f"protobuf-java` {version} or a later {version.split('.')[0]}.x" in section
    package = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", "protobuf-compiler-grpc-java-plugin"],
        capture_output=True,
        text=True,
    )
    if package.returncode == 0:  # the plugin does not print its version; Debian's package does
        plugin = package.stdout.split("+")[0]
        assert f"(Debian's {plugin})" in section
        assert f"`grpc-netty-shaded`, {plugin} or later" in section
    grpc_java = stubs / "java" / "dev" / "crmmem" / "memory" / "v1" / "MemoryServiceGrpc.java"
    assert "@javax.annotation.Generated(" in grpc_java.read_text()


def test_the_node_stubs_are_messages_and_service_descriptors_as_the_docs_say(stubs: Path) -> None:
    code = (stubs / "node" / "crmmem" / "memory" / "v1" / "memory_service_pb.js").read_text()
    assert "exports.MemoryService = MemoryService;" in code
    assert "serviceDesc(" in code
    assert "grpc" not in code.lower()  # no client: calls go through @grpc/grpc-js (section 1)

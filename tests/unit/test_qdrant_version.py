"""The sidecar refuses a Qdrant server older than the adapter needs, before it writes anything:
an older server would drop the conditional upsert's filter and let an older version overwrite
a newer one. The fake server speaks real gRPC on 127.0.0.1 (tests/support/fake_qdrant.py)."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import grpc
import pytest
import yaml
from qdrant_client import QdrantClient

from retrieval_service.index.qdrant_server import (
    MIN_SERVER_VERSION,
    QdrantClientIndex,
    QdrantUnusable,
    dotted,
    parse_version,
    require_server_version,
)
from tests.support.fake_qdrant import fake_qdrant

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("reported", "parsed"),
    [
        ("1.16.0", (1, 16, 0)),
        ("v1.18.2", (1, 18, 2)),
        ("1.17.0-rc1", (1, 17, 0)),
        ("1.16", (1, 16, 0)),
        ("2.0.0", (2, 0, 0)),
        ("dev", None),
        ("", None),
    ],
)
def test_a_reported_version_is_read_as_numbers(
    reported: str, parsed: tuple[int, int, int] | None
) -> None:
    assert parse_version(reported) == parsed


@pytest.mark.parametrize(
    ("reported", "accepted"),
    [
        ("1.9.0", False),  # by numbers, not text: "1.9" sorts after "1.16" as a string
        ("1.15.0", False),
        ("1.15.9", False),
        ("1.16.0", True),
        ("1.16.2", True),
        ("1.100.0", True),
        ("2.0.0", True),
        ("master", False),  # unreadable: nothing says the features are there
    ],
)
def test_the_server_version_is_compared_with_the_minimum(reported: str, accepted: bool) -> None:
    with fake_qdrant(reported) as (url, _fake):
        port = int(url.rsplit(":", 1)[1])
        client = QdrantClient(url=url, grpc_port=port, prefer_grpc=True, check_compatibility=False)
        try:
            if accepted:
                assert require_server_version(client, url) == reported
            else:
                with pytest.raises(QdrantUnusable, match=dotted(MIN_SERVER_VERSION)):
                    require_server_version(client, url)
        finally:
            client.close()


def test_an_old_server_is_refused_in_one_line_before_anything_is_asked_of_it() -> None:
    with fake_qdrant("1.15.0") as (url, fake), pytest.raises(QdrantUnusable) as refused:
        QdrantClientIndex.connect(url.replace("http://", "http://reader:pw-Zq81x@"), "c", 8)
    line = str(refused.value)
    assert "\n" not in line
    assert "1.15.0" in line
    assert "1.16.0 or later" in line
    assert "reader:***@127.0.0.1" in line  # where, without the password
    assert "pw-Zq81x" not in line
    assert fake.calls == ["/qdrant.Qdrant/HealthCheck"]  # no collection looked up or created


def test_a_new_enough_server_is_used() -> None:
    """Past the check, the adapter goes on to its collection (which the fake does not have):
    a failure there is one line too."""
    with (
        fake_qdrant(dotted(MIN_SERVER_VERSION)) as (url, fake),
        pytest.raises(QdrantUnusable, match=r"failed the sidecar's first calls \(UNIMPLEMENTED"),
    ):
        QdrantClientIndex.connect(url, "c", 8)
    assert fake.calls[0] == "/qdrant.Qdrant/HealthCheck"
    assert fake.calls[1].startswith("/qdrant.Collections/")


@pytest.mark.parametrize(
    "code", [grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED]
)
def test_a_key_qdrant_refuses_is_named_in_one_line(code: grpc.StatusCode) -> None:
    """Qdrant's HealthCheck needs no key, so the version check passes a wrong one."""
    with (
        fake_qdrant(dotted(MIN_SERVER_VERSION), refuse=code) as (url, _fake),
        pytest.raises(QdrantUnusable) as refused,
    ):
        QdrantClientIndex.connect(url, "c", 8, api_key="wrong-key")
    line = str(refused.value)
    assert "\n" not in line
    assert f"refused the sidecar's API key ({code.name}: Invalid api-key)" in line
    assert "QDRANT__SERVICE__API_KEY" in line


def test_a_server_that_does_not_answer_is_refused_in_one_line() -> None:
    with socket.socket() as bound:  # bound, never listening: connections are refused
        bound.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{bound.getsockname()[1]}"
        with pytest.raises(QdrantUnusable) as refused:
            QdrantClientIndex.connect(url, "c", 8)
    line = str(refused.value)
    assert "\n" not in line
    assert "did not say its version" in line
    assert "gRPC port" in line


def test_the_pinned_server_image_has_every_feature_the_adapter_uses() -> None:
    """The manifests and the minimum cannot drift apart: k8s/base pins a Qdrant image at or
    past MIN_SERVER_VERSION (it pinned 1.15.0 while the adapter needed 1.16)."""
    documents = yaml.safe_load_all((ROOT / "k8s" / "base" / "qdrant.yaml").read_text())
    images = [
        container["image"]
        for document in documents
        if document and document.get("kind") == "StatefulSet"
        for container in document["spec"]["template"]["spec"]["containers"]
        if container["image"].startswith("qdrant/qdrant:")
    ]
    assert images, "no Qdrant image in k8s/base/qdrant.yaml"
    for image in images:
        version = parse_version(image.split(":", 1)[1])
        assert version is not None, f"{image}: pin a version, not a moving tag"
        assert version >= MIN_SERVER_VERSION, f"{image} is older than the adapter needs"


def test_docs_state_the_minimum_the_code_enforces() -> None:
    text = (ROOT / "docs" / "qdrant.md").read_text()
    minimum = re.search(r"Minimum server version: \*\*v?([\d.]+)\*\*", text)
    assert minimum is not None, "docs/qdrant.md must state the minimum server version"
    assert parse_version(minimum.group(1)) == MIN_SERVER_VERSION

"""The attack tests use the same callers as the end-to-end tests (two users and an admin of one
fresh tenant, and callers of another tenant)."""

from tests.e2e.conftest import (  # noqa: F401
    admin,
    alice,
    alice_elsewhere,
    bob,
    carol,
    other_admin,
    other_tenant,
)

"""Task state: tasks per owner and their checkpoints, purged some time after the task ends.

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

from memory_service.kernel.storage.models import UtcDateTime

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tasks",
        sa.Column("tenant_id", sa.String(128), primary_key=True),
        sa.Column("owner_user_id", sa.String(128), primary_key=True),
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("checkpoint_count", sa.Integer(), nullable=False),
        sa.Column("create_time", UtcDateTime(), nullable=False),
        sa.Column("update_time", UtcDateTime(), nullable=False),
        sa.Column("end_time", UtcDateTime(), nullable=True),
    )
    op.create_index("ix_tasks_id", "tasks", ["tenant_id", "id"])
    op.create_index("ix_tasks_end_time", "tasks", ["end_time"])
    op.create_table(
        "task_checkpoints",
        sa.Column("tenant_id", sa.String(128), primary_key=True),
        sa.Column("owner_user_id", sa.String(128), primary_key=True),
        sa.Column("task_id", sa.String(128), primary_key=True),
        sa.Column("sequence", sa.Integer(), primary_key=True),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("total_steps", sa.Integer(), nullable=False),
        sa.Column("status_text", sa.Text(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("create_time", UtcDateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("task_checkpoints")
    op.drop_index("ix_tasks_end_time", "tasks")
    op.drop_index("ix_tasks_id", "tasks")
    op.drop_table("tasks")

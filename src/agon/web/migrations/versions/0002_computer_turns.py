"""The computer's turns waiting to be played, one row each, taken by any server process.

Every unfinished game with a computer seat is queued at its revision: a turn that is not the
computer's is dropped when it is taken (whose turn it is needs the rules, not SQL)."""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "turns",
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("revision", sa.Integer(), primary_key=True),
        sa.Column("queued", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_turns_queued", "turns", ["queued"])
    op.execute(
        "INSERT INTO turns (game_id, revision, queued) "
        "SELECT id, revision, updated FROM games WHERE status = 'active' "
        "AND (black_agent IS NOT NULL OR white_agent IS NOT NULL)"
    )


def downgrade() -> None:
    op.drop_table("turns")

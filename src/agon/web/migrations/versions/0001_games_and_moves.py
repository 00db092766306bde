"""The games and their moves (the schema before migrations: a database made then is marked as
at this revision, not made again)."""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "games",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("black_agent", sa.String(64)),
        sa.Column("white_agent", sa.String(64)),
        sa.Column("black_level", sa.String(32)),
        sa.Column("white_level", sa.String(32)),
        sa.Column("black_token", sa.String(64)),
        sa.Column("white_token", sa.String(64)),
        sa.Column("host", sa.String(8)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("result", sa.String(32)),
        sa.Column("reason", sa.String(200)),
        sa.Column("resigned", sa.String(8)),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_games_status", "games", ["status"])
    op.create_index("ix_games_updated", "games", ["updated"])
    op.create_table(
        "moves",
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("ply", sa.Integer(), primary_key=True),
        sa.Column("text", sa.String(32), nullable=False),
        sa.Column("played", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("moves")
    op.drop_table("games")

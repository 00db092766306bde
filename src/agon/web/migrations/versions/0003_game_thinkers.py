"""Which server process thinks for each game's computer: the one whose agent for the game played
its last turn (kept with its tree and tables), which other processes leave the game's next turn
to for a while (:data:`agon.web.store.THINKER_GRACE_S`)."""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("games", sa.Column("thinker", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("games") as games:
        games.drop_column("thinker")

"""How Alembic reaches the database: the connection :func:`agon.web.store.upgrade_schema`
hands it, or else (``alembic`` on the command line) the arena's own database URL."""

from alembic import context
from sqlalchemy import create_engine

from agon.web.config import database_url
from agon.web.store import Base

connection = context.config.attributes.get("connection")
if connection is None:
    with create_engine(database_url()).begin() as own_connection:
        context.configure(connection=own_connection, target_metadata=Base.metadata,
                          render_as_batch=True)
        context.run_migrations()
else:
    # render_as_batch: SQLite alters a table by copying it, which Alembic's batch mode does
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
    context.run_migrations()

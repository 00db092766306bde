"""The arena's schema, as Alembic migrations: ``agon db upgrade`` (and every ``agon serve``
start) brings a database to the newest; ``alembic -c src/agon/web/migrations/alembic.ini
revision --autogenerate -m "…"`` writes the next one from a change to :mod:`agon.web.store`
(see docs/web.md, *Schema changes*)."""

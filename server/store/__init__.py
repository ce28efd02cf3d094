"""Storage: SQLAlchemy models, the Alembic-managed schema, accounts, the archive and the live-game journal."""

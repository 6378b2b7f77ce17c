"""The store's schema migrations (Alembic): ``versions/`` holds one revision a change.

:func:`flyswat.server.store.upgrade` brings any store to the newest revision; a store made
before Alembic (its ``flyswat_meta`` table says schema 1) is taken up by the first revision,
which creates only what is missing. Write a new revision with
``uv run alembic -c src/flyswat/server/migrations/alembic.ini revision -m "what"``.
"""

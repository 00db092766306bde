"""The web arena: FastAPI app, game store, live updates and the pages (``agon serve``).

Kept free of imports so that worker processes (which only need ``agon.web.levels``) start fast.
"""

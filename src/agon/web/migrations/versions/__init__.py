"""One module a schema change, applied in the order their ``down_revision`` links them."""

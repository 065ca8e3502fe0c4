"""`make test-machines`: the kit on fresh machines (machines/__main__.py says which and what runs)."""

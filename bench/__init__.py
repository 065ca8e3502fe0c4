"""`make bench`: this kit against stock nbgrader on generated classes (see __main__.py and docs/scaling.md)."""

"""nbgrader preprocessors of the kit, one per module."""

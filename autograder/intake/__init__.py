"""Every file of a submission, from whatever route brought it, up to the notebook the grader reads."""

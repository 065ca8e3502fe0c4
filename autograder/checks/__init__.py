"""The hidden suites: found, expanded, run against a submission's answers, and under pytest itself."""

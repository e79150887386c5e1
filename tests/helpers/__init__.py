"""Helpers shared by the tests: repository paths, running the workflow, reference VIF."""

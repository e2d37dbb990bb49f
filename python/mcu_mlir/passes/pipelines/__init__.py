"""The named pipelines: sequences of passes, built as pass instances."""

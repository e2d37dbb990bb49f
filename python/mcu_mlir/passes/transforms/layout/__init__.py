"""Shared helpers of the layout passes: permutation algebra, TOSA op roles, constant data."""

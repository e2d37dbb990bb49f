"""Passes that rewrite the IR within a dialect: layout, tiling, memory planning."""

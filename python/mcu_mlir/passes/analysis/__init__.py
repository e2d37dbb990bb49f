"""Passes that check or measure the IR and change nothing."""

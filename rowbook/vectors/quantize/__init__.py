"""Quantised tables (placeholder docstring, rewritten below)."""

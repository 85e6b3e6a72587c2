"""Textual screens: help and drill-downs."""

"""One module per source behind one async protocol (see base.py)."""

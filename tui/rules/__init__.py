"""Pure functions: snapshots (+ `now`, thresholds) in, findings out. No I/O, no Textual."""

"""StacktopApp's jobs, one part each: the app (tui.app) composes them and keeps only the Textual wiring."""

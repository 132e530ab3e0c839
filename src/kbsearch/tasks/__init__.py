"""The tasks that the CLI and the HTTP service run on top of the facade, and the bundled
demo."""

"""The phone panel: a web server that owns no hardware (docs/web.md)."""

"""Stage 6, edits: findings turned into text edits (forwarding stubs, Protocol declarations, suppression
comments)."""

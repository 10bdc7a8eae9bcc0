"""Rewrites shared by rules: each module builds the replacement code for one kind of fix."""

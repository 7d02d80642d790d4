"""What several rules, the fixes and the manifest share (below rules/, above source)."""

"""Observe the live site, plan the difference (pure), apply it, and keep the ownership state."""

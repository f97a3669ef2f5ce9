"""The long-running reconciler: file watching, schedule, health and metrics."""

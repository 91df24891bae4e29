"""What every page uses: the off-GUI-thread worker, shared widgets, table models, icons and
the page base."""

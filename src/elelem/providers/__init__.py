"""elelem.providers (see DESIGN.md §1)."""

"""elelem.transport (see DESIGN.md §1)."""

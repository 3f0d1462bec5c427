"""elelem.shapes (see DESIGN.md §1)."""

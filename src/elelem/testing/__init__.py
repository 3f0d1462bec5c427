"""elelem.testing (see DESIGN.md §1)."""

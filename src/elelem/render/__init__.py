"""elelem.render (see DESIGN.md §1)."""

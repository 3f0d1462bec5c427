"""elelem.conversation (see DESIGN.md §1)."""

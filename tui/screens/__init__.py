"""Screens of the Textual app: the dashboard (the dialogs and help live with the widgets)."""

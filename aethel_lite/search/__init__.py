"""``aethel index`` / ``aethel search``: the index format, its builder and its reader."""

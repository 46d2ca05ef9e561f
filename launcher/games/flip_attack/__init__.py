"""UNO Flip Attack: the rules on small integers (``core``), the hand as objects (``state``),
their pure interface (``rules``), the table that plays them (``table``), its players
(``bots``), its summary (``summary``) and its ``GameSpec`` (``spec``)."""

"""Classic UNO, UNO Splash and UNO Flip: one engine (``rules``) over small-integer cards,
the two other members of the family (``splash``, ``flip``) and their players (``bots``)."""

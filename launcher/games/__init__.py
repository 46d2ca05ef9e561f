"""Rule engines that play whole card games against the launcher, and their bots."""

"""The words the censor plugin hides."""
BANNED = frozenset(["darn", "heck", "blasted"])

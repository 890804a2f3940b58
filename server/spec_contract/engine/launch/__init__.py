"""Before the launch: a launch command (or a model and an algorithm) → the verdict of its classes, and the
support matrix of every registered architecture × algorithm (see :mod:`.preflight` and :mod:`.matrix`)."""

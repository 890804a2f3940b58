"""Stage 3, resolved classes: names across modules, MROs, what each class provides and the inner
models a wrapper holds."""
